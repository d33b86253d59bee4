// OpenAI Chat Completions (POST /v1/chat/completions): tool_calls pairing with the API's own
// texts, automatic prefix caching (prompt_tokens_details.cached_tokens), caching at explicit
// breakpoints for the models whose record says so (openai_cache.cpp, caching.120-caching.124) and
// `data:` chunk streaming ending in `data: [DONE]`. Any OpenAI-compatible client can talk to it.
#include <algorithm>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator.hpp"
#include "json.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"
#include "openai_cache.hpp"
#include "openai_errors.hpp"
#include "reply.hpp"

namespace nucleo::emulator {
namespace {

using json::quote;

std::string text_of(const json::Value& content) {
    if (content.IsString()) return content.GetString();
    std::string out;
    if (!content.IsArray()) return out;
    for (const auto& part : content.GetArray()) {
        if (json::string_member(part, "type") != "text") continue;
        if (!out.empty()) out += "\n";
        out += json::string_member(part, "text");
    }
    return out;
}

std::optional<ApiError> validate(const json::Value& doc) {
    if (!doc.IsObject()) return ApiError{"Invalid type for body: expected an object.", "", ""};
    if (json::member(doc, "model") == nullptr) {
        return ApiError{"you must provide a model parameter", "", ""};
    }
    const json::Value* messages = json::member(doc, "messages");
    if (messages == nullptr) {
        return ApiError{"Missing required parameter: 'messages'.", "messages",
                        "missing_required_parameter"};
    }
    if (!messages->IsArray() || messages->Empty()) {
        return ApiError{
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            "messages", "empty_array"};
    }
    // The rule book of the OpenAI Chat wire family (wire.120-wire.125), the same code the core
    // audits with; only the rules the API itself enforces.
    if (auto v = contract::check_request(contract::WireFamily::kOpenAIChat, doc,
                                         contract::Scope::kProvider)) {
        return ApiError{v->message, v->where, v->rule == "wire.122" ? "invalid_value" : ""};
    }
    return std::nullopt;
}

ReplyInput reply_input(const json::Value& doc, const std::string& digest) {
    ReplyInput in;
    in.id_prefix = "call_emu_";
    in.conversation_digest = digest;
    in.max_tokens =
        json::int_member(doc, "max_completion_tokens", json::int_member(doc, "max_tokens", 4096));
    in.stop_sequences = stop_sequences_from(json::member(doc, "stop"));
    if (const json::Value* tools = json::member(doc, "tools");
        tools != nullptr && tools->IsArray()) {
        for (const auto& t : tools->GetArray()) {
            const json::Value* fn = json::member(t, "function");
            if (fn == nullptr) continue;
            in.tools.push_back({json::string_member(*fn, "name"), json::member(*fn, "parameters")});
        }
    }
    if (const json::Value* choice = json::member(doc, "tool_choice")) {
        if (choice->IsString())
            in.tool_choice_none = std::string_view(choice->GetString()) == "none";
        if (const json::Value* fn = json::member(*choice, "function")) {
            in.forced_tool = json::string_member(*fn, "name");
        }
    }
    const auto& messages = json::member(doc, "messages")->GetArray();
    for (const auto& m : messages)
        in.assistant_turns += json::string_member(m, "role") == "assistant";
    const json::Value& last = messages[messages.Size() - 1];
    if (json::string_member(last, "role") == "tool") {
        in.has_tool_result = true;
        const json::Value* content = json::member(last, "content");
        in.tool_result_text = content != nullptr ? text_of(*content) : "";
        const std::string id = json::string_member(last, "tool_call_id");
        for (const auto& m : messages) {
            const json::Value* calls = json::member(m, "tool_calls");
            if (calls == nullptr || !calls->IsArray()) continue;
            for (const auto& c : calls->GetArray()) {
                const json::Value* fn = json::member(c, "function");
                if (fn != nullptr && json::string_member(c, "id") == id) {
                    in.tool_result_name = json::string_member(*fn, "name");
                }
            }
        }
    }
    for (rapidjson::SizeType i = messages.Size(); i-- > 0;) {
        if (json::string_member(messages[i], "role") != "user") continue;
        const json::Value* content = json::member(messages[i], "content");
        in.question = content != nullptr ? text_of(*content) : "";
        in.last_is_question = i + 1 == messages.Size();
        break;
    }
    return in;
}

/// wire.188: a call forced by a named tool_choice ({"type":"function","function":{"name":...}})
/// ends with "stop", as the API answers it; an unforced or `required` call with "tool_calls".
bool named_tool_choice(const json::Value& doc) {
    const json::Value* choice = json::member(doc, "tool_choice");
    return choice != nullptr && choice->IsObject() && json::member(*choice, "function") != nullptr;
}

std::string finish_reason(const Reply& r, bool named_choice) {
    if (r.truncated) return "length";
    return r.tool_call && !named_choice ? "tool_calls" : "stop";
}

/// wire.187: the reasoning a `reasoning_effort` other than `none` asks for, a small count per
/// level (the emulator writes no reasoning, it only reports its tokens); 0 without one.
long long reasoning_tokens_for(const json::Value& doc) {
    const std::string effort = json::string_member(doc, "reasoning_effort");
    if (effort.empty() || effort == "none") return 0;
    if (effort == "minimal") return 8;
    if (effort == "low") return 16;
    if (effort == "high") return 64;
    if (effort == "xhigh") return 128;
    if (effort == "max") return 256;
    return 32;  // medium, and a level the emulator does not know
}

/// `completion` counts every output token, the reasoning ones included, as the API reports it.
/// caching.123: a model caching at breakpoints also reports its cache writes (`writes`).
std::string usage_json(const CacheUsage& u, long long completion, long long reasoning,
                       bool writes) {
    const long long prompt = u.total();
    return R"({"prompt_tokens":)" + std::to_string(prompt) + R"(,"completion_tokens":)" +
           std::to_string(completion) + R"(,"total_tokens":)" +
           std::to_string(prompt + completion) + R"(,"prompt_tokens_details":{"cached_tokens":)" +
           std::to_string(u.read) +
           (writes ? R"(,"cache_write_tokens":)" + std::to_string(u.creation) : std::string()) +
           R"(,"audio_tokens":0},"completion_tokens_details":{)" + R"("reasoning_tokens":)" +
           std::to_string(reasoning) +
           R"(,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})";
}

Response render(const json::Value& doc, const Reply& r, const CacheUsage& u,
                const std::string& digest, long long reasoning, bool writes) {
    const bool named = named_tool_choice(doc);
    const long long completion = r.output_tokens + reasoning;
    const std::string head = R"({"id":)" + quote("chatcmpl-emu-" + digest) + R"(,"object":)";
    const std::string tail = R"(,"created":)" + std::to_string(std::time(nullptr)) +
                             R"(,"model":)" + quote(json::string_member(doc, "model")) +
                             R"(,"system_fingerprint":"fp_emulator")";
    const json::Value* stream = json::member(doc, "stream");
    if (stream == nullptr || !stream->IsBool() || !stream->GetBool()) {
        std::string message = R"({"role":"assistant","content":)" +
                              (r.tool_call ? std::string("null") : quote(r.text)) +
                              R"(,"refusal":null)";
        if (r.tool_call) {
            message += R"(,"tool_calls":[{"id":)" + quote(r.tool_id) +
                       R"(,"type":"function","function":{"name":)" + quote(r.tool_name) +
                       R"(,"arguments":)" + quote(r.tool_input) + "}}]";
        }
        message += "}";
        return json_response(200, head + R"("chat.completion")" + tail +
                                      R"(,"choices":[{"index":0,"message":)" + message +
                                      R"(,"logprobs":null,"finish_reason":)" +
                                      quote(finish_reason(r, named)) + R"(}],"usage":)" +
                                      usage_json(u, completion, reasoning, writes) + "}");
    }
    bool include_usage = false;
    if (const json::Value* opts = json::member(doc, "stream_options")) {
        const json::Value* iu = json::member(*opts, "include_usage");
        include_usage = iu != nullptr && iu->IsBool() && iu->GetBool();
    }
    Response out;
    out.streamed = true;
    out.content_type = "text/event-stream";
    const std::string chunk_head = head + R"("chat.completion.chunk")" + tail;
    const auto chunk = [&](const std::string& delta, const std::string& finish) {
        out.chunks.push_back("data: " + chunk_head + R"(,"choices":[{"index":0,"delta":)" + delta +
                             R"(,"logprobs":null,"finish_reason":)" + finish + "}]" +
                             (include_usage ? R"(,"usage":null)" : "") + "}\n\n");
    };
    if (r.tool_call) {
        chunk(R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":)" +
                  quote(r.tool_id) + R"(,"type":"function","function":{"name":)" +
                  quote(r.tool_name) + R"(,"arguments":""}}]})",
              "null");
        for (const auto& piece : split_for_stream(r.tool_input)) {
            chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":)" + quote(piece) + "}}]}",
                  "null");
        }
    } else {
        chunk(R"({"role":"assistant","content":"","refusal":null})", "null");
        for (const auto& piece : split_for_stream(r.text))
            chunk(R"({"content":)" + quote(piece) + "}", "null");
    }
    chunk("{}", quote(finish_reason(r, named)));
    if (include_usage) {
        out.chunks.push_back("data: " + chunk_head + R"(,"choices":[],"usage":)" +
                             usage_json(u, completion, reasoning, writes) + "}\n\n");
    }
    out.chunks.push_back("data: [DONE]\n\n");
    return out;
}

class OpenAi final : public OpenAiDialect {
  public:
    Response serve(const Request& req, const Faults& faults, Context& ctx) const override {
        rapidjson::Document doc;
        std::string parse_error;
        if (!json::parse(req.body, doc, parse_error)) {
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error",
                            {"We could not parse the JSON body of your request. (HINT: This likely "
                             "means you aren't using your HTTP library correctly. The OpenAI API "
                             "expects a JSON payload, but what was sent was not valid JSON. If you "
                             "have trouble figuring out how to fix this, please contact us through "
                             "our help center at help.openai.com.)",
                             "", ""});
        }
        if (auto e = validate(doc))
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error", *e);
        // wire.182, wire.185: the model's catalog record, when the catalog has it (wire.186).
        const std::string model = json::string_member(doc, "model");
        const contract::ModelRules* rules =
            ctx.catalog.find(contract::WireFamily::kOpenAIChat, model);
        if (rules != nullptr) {
            if (auto v =
                    contract::check_model_request(contract::WireFamily::kOpenAIChat, doc, *rules)) {
                return envelope(ErrorClass::kInvalidRequest, v->status, v->error_type,
                                {v->message, v->param, v->code});
            }
        }
        // caching.120, caching.124: the prompt-cache parameters the record's caching takes.
        const OpenAiCaching caching =
            openai_caching(ctx.catalog.cache_breakpoints(contract::WireFamily::kOpenAIChat, model));
        if (auto e = check_prompt_cache_params(doc, caching, model)) {
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error",
                            {e->message, e->param, e->code});
        }

        CacheUsage usage;
        std::string digest;
        if (caching == OpenAiCaching::kExplicit) {
            // caching.121-caching.123: read and written at the request's breakpoints only.
            BreakpointCacheResult cached =
                breakpoint_cache(ctx.cache, doc, model, min_cacheable(ctx.options, rules, model));
            usage = cached.usage;
            digest = std::move(cached.digest);
        } else {
            // Automatic caching covers the whole prompt in order: tools, then messages.
            PrefixHasher hasher("openai\x1f" + model);
            hasher.set_auto_marks(kOpenAiFirstCachedBytes, kOpenAiCacheStepBytes);
            if (const json::Value* tools = json::member(doc, "tools");
                tools != nullptr && tools->IsArray()) {
                for (const auto& t : tools->GetArray()) hasher.append(json::write(t));
            }
            for (const auto& m : json::member(doc, "messages")->GetArray())
                hasher.append(json::write(m));
            usage = automatic_cache(ctx.cache, hasher,
                                    std::chrono::seconds(ctx.options.cache_ttl_seconds));
            digest = hasher.digest();
        }
        record_cache(ctx.stats, usage);

        ReplyInput in = reply_input(doc, digest);
        apply_reply_faults(faults, in);
        // wire.187: the reasoning is spent out of the output limit, as max_completion_tokens
        // counts it; at least one token is left for the answer.
        const long long reasoning =
            std::min(reasoning_tokens_for(doc), std::max(0LL, in.max_tokens - 1));
        in.max_tokens -= reasoning;
        return render(doc, make_reply(in), usage, digest, reasoning,
                      caching == OpenAiCaching::kExplicit);
    }
};

}  // namespace

std::unique_ptr<Dialect> make_openai() {
    return std::make_unique<OpenAi>();
}

}  // namespace nucleo::emulator
