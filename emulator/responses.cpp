// OpenAI Responses (POST /v1/responses, docs/spec/openai-responses.md responses.30-responses.33):
// the family's rule book (call/output pairing, reasoning items) with the API's own texts in
// OpenAI's error envelope, reasoning items whose encrypted content only the same model family
// takes back, caching as the Chat Completions emulator does it for the same models, and the
// typed `event:`/`data:` stream ending in response.completed or response.incomplete.
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

constexpr contract::WireFamily kFamily = contract::WireFamily::kOpenAIResponses;

/// A model's family: the name without a dated snapshot suffix (responses.5).
std::string family_of(const std::string& model) {
    if (model.size() > 11) {
        const std::string tail = model.substr(model.size() - 11);
        bool dated = tail[0] == '-' && tail[5] == '-' && tail[8] == '-';
        for (std::size_t i = 1; dated && i < tail.size(); ++i)
            if (i != 5 && i != 8 && (tail[i] < '0' || tail[i] > '9')) dated = false;
        if (dated) return model.substr(0, model.size() - 11);
    }
    return model;
}

/// responses.32: the emulator's encrypted reasoning: the family that wrote it and the digest.
std::string encrypted_for(const std::string& model, const std::string& digest) {
    return "emu1." + family_of(model) + "." + digest;
}

/// The text of a message's content (a string, or its text parts).
std::string text_of(const json::Value* content) {
    if (content == nullptr) return "";
    if (content->IsString()) return content->GetString();
    std::string out;
    if (!content->IsArray()) return out;
    for (const auto& part : content->GetArray()) {
        const std::string type = json::string_member(part, "type");
        if (type != "input_text" && type != "output_text") continue;
        if (!out.empty()) out += "\n";
        out += json::string_member(part, "text");
    }
    return out;
}

ReplyInput reply_input(const json::Value& doc, const std::string& digest) {
    ReplyInput in;
    in.id_prefix = "call_emu_";
    in.conversation_digest = digest;
    in.max_tokens = json::int_member(doc, "max_output_tokens", 4096);
    if (const json::Value* tools = json::member(doc, "tools"); tools != nullptr && tools->IsArray())
        for (const auto& t : tools->GetArray())
            if (json::string_member(t, "type") == "function")
                in.tools.push_back({json::string_member(t, "name"), json::member(t, "parameters")});
    if (const json::Value* choice = json::member(doc, "tool_choice")) {
        if (choice->IsString()) in.tool_choice_none = std::string(choice->GetString()) == "none";
        if (choice->IsObject()) in.forced_tool = json::string_member(*choice, "name");
    }
    const json::Value* input = json::member(doc, "input");
    if (input->IsString()) {
        in.question = input->GetString();
        in.last_is_question = true;
        return in;
    }
    const auto& items = input->GetArray();
    for (const auto& m : items)
        in.assistant_turns += json::string_member(m, "type") == "function_call" ||
                              json::string_member(m, "role") == "assistant";
    const json::Value& last = items[items.Size() - 1];
    if (json::string_member(last, "type") == "function_call_output") {
        in.has_tool_result = true;
        const json::Value* output = json::member(last, "output");
        in.tool_result_text = text_of(output);
        const std::string id = json::string_member(last, "call_id");
        for (const auto& m : items)
            if (json::string_member(m, "type") == "function_call" &&
                json::string_member(m, "call_id") == id)
                in.tool_result_name = json::string_member(m, "name");
        in.tool_result_error = in.tool_result_text.starts_with("Error: ");
    }
    for (rapidjson::SizeType i = items.Size(); i-- > 0;) {
        if (json::string_member(items[i], "role") != "user") continue;
        in.question = text_of(json::member(items[i], "content"));
        in.last_is_question = i + 1 == items.Size();
        break;
    }
    return in;
}

/// The reasoning an effort other than `none` asks for, as the Chat Completions emulator counts
/// it (wire.187); 0 without one.
long long reasoning_tokens_for(const json::Value& doc) {
    const json::Value* reasoning = json::member(doc, "reasoning");
    const std::string effort =
        reasoning != nullptr ? json::string_member(*reasoning, "effort") : std::string();
    if (effort.empty() || effort == "none") return 0;
    if (effort == "minimal") return 8;
    if (effort == "low") return 16;
    if (effort == "high") return 64;
    if (effort == "xhigh") return 128;
    if (effort == "max") return 256;
    return 32;
}

bool wants_summary(const json::Value& doc) {
    const json::Value* reasoning = json::member(doc, "reasoning");
    const std::string summary =
        reasoning != nullptr ? json::string_member(*reasoning, "summary") : std::string();
    return !summary.empty();
}

bool wants_encrypted(const json::Value& doc) {
    const json::Value* include = json::member(doc, "include");
    if (include == nullptr || !include->IsArray()) return false;
    for (const auto& v : include->GetArray())
        if (v.IsString() && std::string(v.GetString()) == "reasoning.encrypted_content")
            return true;
    return false;
}

/// responses.32: a reasoning item goes back to the family that wrote it: its encrypted content
/// must be the emulator's for this model's family.
std::optional<ApiError> check_reasoning(const json::Value& doc, const std::string& model) {
    const json::Value* input = json::member(doc, "input");
    if (input == nullptr || !input->IsArray()) return std::nullopt;
    const std::string family = family_of(model);
    for (rapidjson::SizeType i = 0; i < input->Size(); ++i) {
        const json::Value& item = (*input)[i];
        if (json::string_member(item, "type") != "reasoning") continue;
        const std::string content = json::string_member(item, "encrypted_content");
        if (content.empty()) continue;  // a stored item: the rule book's responses.25
        const std::string prefix = "emu1." + family + ".";
        if (content.starts_with(prefix) && content.size() > prefix.size()) continue;
        return ApiError{"The encrypted content for item " + json::string_member(item, "id") +
                            " could not be verified.",
                        "input[" + std::to_string(i) + "].encrypted_content",
                        "invalid_encrypted_content"};
    }
    return std::nullopt;
}

std::string usage_json(const CacheUsage& u, long long output, long long reasoning, bool writes) {
    const long long input = u.total();
    return R"({"input_tokens":)" + std::to_string(input) +
           R"(,"input_tokens_details":{"cached_tokens":)" + std::to_string(u.read) +
           (writes ? R"(,"cache_write_tokens":)" + std::to_string(u.creation) : std::string()) +
           R"(},"output_tokens":)" + std::to_string(output) +
           R"(,"output_tokens_details":{"reasoning_tokens":)" + std::to_string(reasoning) +
           R"(},"total_tokens":)" + std::to_string(input + output) + "}";
}

/// The answer's output items, each as its JSON text, in order.
struct Output {
    std::string reasoning;  ///< "" without reasoning
    std::string main;       ///< the message or the function call
};

class Renderer {
  public:
    Renderer(const json::Value& doc, const Reply& r, const std::string& digest, long long reasoning)
        : doc_(doc), r_(r), digest_(digest), reasoning_(reasoning) {
        model_ = json::string_member(doc, "model");
    }

    [[nodiscard]] std::string reasoning_item(bool done) const {
        if (reasoning_ == 0) return "";
        const bool summary = wants_summary(doc_);
        std::string item = R"({"id":)" + quote("rs_emu_" + digest_) + R"(,"type":"reasoning",)";
        item += R"("summary":[)";
        if (done && summary) item += R"({"type":"summary_text","text":)" + quote(kSummary) + "}";
        item += "]";
        if (wants_encrypted(doc_))
            item += R"(,"encrypted_content":)" + quote(encrypted_for(model_, digest_));
        return item + "}";
    }

    [[nodiscard]] std::string main_item(bool done) const {
        const std::string status =
            done ? (r_.truncated ? "incomplete" : "completed") : "in_progress";
        if (r_.tool_call)
            return R"({"id":)" + quote("fc_emu_" + digest_) +
                   R"(,"type":"function_call","status":)" + quote(status) + R"(,"call_id":)" +
                   quote(r_.tool_id) + R"(,"name":)" + quote(r_.tool_name) + R"(,"arguments":)" +
                   quote(done ? r_.tool_input : "") + "}";
        return R"({"id":)" + quote("msg_emu_" + digest_) + R"(,"type":"message","status":)" +
               quote(status) + R"(,"role":"assistant","content":[)" +
               (done ? text_part(r_.text) : std::string()) + "]}";
    }

    static std::string text_part(const std::string& text) {
        return R"({"type":"output_text","text":)" + quote(text) +
               R"(,"annotations":[],"logprobs":[]})";
    }

    [[nodiscard]] std::string response(const std::string& status, const std::string& output,
                                       const std::string& usage) const {
        const json::Value* reasoning = json::member(doc_, "reasoning");
        const json::Value* instructions = json::member(doc_, "instructions");
        const json::Value* store = json::member(doc_, "store");
        const json::Value* tools = json::member(doc_, "tools");
        const json::Value* max_output = json::member(doc_, "max_output_tokens");
        return R"({"id":)" + quote("resp_emu_" + digest_) +
               R"(,"object":"response","created_at":)" + std::to_string(std::time(nullptr)) +
               R"(,"status":)" + quote(status) + R"(,"error":null,"incomplete_details":)" +
               (status == "incomplete" ? R"({"reason":"max_output_tokens"})" : "null") +
               R"(,"instructions":)" +
               (instructions != nullptr ? json::write(*instructions) : std::string("null")) +
               R"(,"max_output_tokens":)" +
               (max_output != nullptr ? json::write(*max_output) : std::string("null")) +
               R"(,"model":)" + quote(model_) + R"(,"output":[)" + output +
               R"(],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":)" +
               (reasoning != nullptr ? json::write(*reasoning)
                                     : std::string(R"({"effort":null,"summary":null})")) +
               R"(,"store":)" + (store != nullptr && store->IsFalse() ? "false" : "true") +
               R"(,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":)" +
               (tools != nullptr ? json::write(*tools) : std::string("[]")) +
               R"(,"top_p":1.0,"truncation":"disabled","usage":)" +
               (usage.empty() ? std::string("null") : usage) + R"(,"metadata":{}})";
    }

    static constexpr const char* kSummary = "Working out what is asked.";

  private:
    const json::Value& doc_;
    const Reply& r_;
    const std::string& digest_;
    long long reasoning_;
    std::string model_;
};

Response render(const json::Value& doc, const Reply& r, const CacheUsage& u,
                const std::string& digest, long long reasoning, bool writes) {
    const Renderer out(doc, r, digest, reasoning);
    const std::string status = r.truncated ? "incomplete" : "completed";
    const std::string usage = usage_json(u, r.output_tokens + reasoning, reasoning, writes);
    const std::string reasoning_done = out.reasoning_item(true);
    const std::string main_done = out.main_item(true);
    const std::string all = reasoning_done.empty() ? main_done : reasoning_done + "," + main_done;
    const json::Value* stream = json::member(doc, "stream");
    if (stream == nullptr || !stream->IsTrue())
        return json_response(200, out.response(status, all, usage));

    // responses.33: the typed events, each `event: <type>` with its `data:`.
    Response res;
    res.streamed = true;
    res.content_type = "text/event-stream";
    long long seq = 0;
    const auto event = [&](const std::string& type, const std::string& fields) {
        res.chunks.push_back("event: " + type + "\ndata: " + R"({"type":)" + quote(type) +
                             R"(,"sequence_number":)" + std::to_string(seq++) + fields + "}\n\n");
    };
    event("response.created", R"(,"response":)" + out.response("in_progress", "", ""));
    event("response.in_progress", R"(,"response":)" + out.response("in_progress", "", ""));
    long long index = 0;
    if (!reasoning_done.empty()) {
        const std::string id = quote("rs_emu_" + digest);
        const std::string at = R"(,"output_index":)" + std::to_string(index);
        event("response.output_item.added", at + R"(,"item":)" + out.reasoning_item(false));
        if (wants_summary(doc)) {
            const std::string part = R"(,"item_id":)" + id + at + R"(,"summary_index":0)";
            event("response.reasoning_summary_part.added",
                  part + R"(,"part":{"type":"summary_text","text":""})");
            event("response.reasoning_summary_text.delta",
                  part + R"(,"delta":)" + quote(Renderer::kSummary));
            event("response.reasoning_summary_text.done",
                  part + R"(,"text":)" + quote(Renderer::kSummary));
            event("response.reasoning_summary_part.done",
                  part + R"(,"part":{"type":"summary_text","text":)" + quote(Renderer::kSummary) +
                      "}");
        }
        event("response.output_item.done", at + R"(,"item":)" + reasoning_done);
        ++index;
    }
    const std::string at = R"(,"output_index":)" + std::to_string(index);
    event("response.output_item.added", at + R"(,"item":)" + out.main_item(false));
    if (r.tool_call) {
        const std::string item = R"(,"item_id":)" + quote("fc_emu_" + digest) + at;
        for (const auto& piece : split_for_stream(r.tool_input))
            event("response.function_call_arguments.delta", item + R"(,"delta":)" + quote(piece));
        event("response.function_call_arguments.done",
              item + R"(,"name":)" + quote(r.tool_name) + R"(,"arguments":)" + quote(r.tool_input));
    } else {
        const std::string part =
            R"(,"item_id":)" + quote("msg_emu_" + digest) + at + R"(,"content_index":0)";
        event("response.content_part.added",
              part + R"(,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]})");
        for (const auto& piece : split_for_stream(r.text))
            event("response.output_text.delta",
                  part + R"(,"delta":)" + quote(piece) + R"(,"logprobs":[])");
        event("response.output_text.done",
              part + R"(,"text":)" + quote(r.text) + R"(,"logprobs":[])");
        event("response.content_part.done", part + R"(,"part":)" + Renderer::text_part(r.text));
    }
    event("response.output_item.done", at + R"(,"item":)" + main_done);
    event(r.truncated ? "response.incomplete" : "response.completed",
          R"(,"response":)" + out.response(status, all, usage));
    return res;
}

class Responses final : public OpenAiDialect {
  public:
    Response serve(const Request& req, const Faults& faults, Context& ctx) const override {
        rapidjson::Document doc;
        std::string parse_error;
        if (!json::parse(req.body, doc, parse_error))
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error",
                            {"We could not parse the JSON body of your request. (HINT: This likely "
                             "means you aren't using your HTTP library correctly. The OpenAI API "
                             "expects a JSON payload, but what was sent was not valid JSON.)",
                             "", ""});
        // responses.30: the family's rule book, the same code the core audits with.
        if (auto v = contract::check_request(kFamily, doc, contract::Scope::kProvider))
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error",
                            {v->message, v->where, ""});
        const std::string model = json::string_member(doc, "model");
        if (auto e = check_reasoning(doc, model))
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error", *e);
        const contract::ModelRules* rules = ctx.catalog.find(kFamily, model);
        if (rules != nullptr)
            if (auto v = contract::check_model_request(kFamily, doc, *rules))
                return envelope(ErrorClass::kInvalidRequest, v->status, v->error_type,
                                {v->message, v->param, v->code});
        // responses.31: the prompt-cache parameters and caching of the Chat Completions emulator
        // for the same model (caching.120-caching.124), over `instructions` and `input`.
        const OpenAiCaching caching = openai_caching(ctx.catalog.cache_breakpoints(kFamily, model));
        if (auto e = check_prompt_cache_params(doc, caching, model, OpenAiApi::kResponses))
            return envelope(ErrorClass::kInvalidRequest, 400, "invalid_request_error",
                            {e->message, e->param, e->code});
        CacheUsage usage;
        std::string digest;
        const json::Value* input = json::member(doc, "input");
        if (caching == OpenAiCaching::kExplicit && input->IsArray()) {
            BreakpointCacheResult cached =
                breakpoint_cache(ctx.cache, doc, model, min_cacheable(ctx.options, rules, model),
                                 OpenAiApi::kResponses);
            usage = cached.usage;
            digest = std::move(cached.digest);
        } else {
            PrefixHasher hasher("responses\x1f" + model);
            hasher.set_auto_marks(kOpenAiFirstCachedBytes, kOpenAiCacheStepBytes);
            for (const char* key : {"tools", "instructions"})
                if (const json::Value* v = json::member(doc, key)) hasher.append(json::write(*v));
            if (input->IsArray())
                for (const auto& item : input->GetArray()) hasher.append(json::write(item));
            else
                hasher.append(json::write(*input));
            usage = automatic_cache(ctx.cache, hasher,
                                    std::chrono::seconds(ctx.options.cache_ttl_seconds));
            digest = hasher.digest();
        }
        record_cache(ctx.stats, usage);
        ReplyInput in = reply_input(doc, digest);
        apply_reply_faults(faults, in);
        // The reasoning is spent out of max_output_tokens; at least one token is left.
        const long long reasoning =
            std::min(reasoning_tokens_for(doc), std::max(0LL, in.max_tokens - 1));
        in.max_tokens -= reasoning;
        return render(doc, make_reply(in), usage, digest, reasoning,
                      caching == OpenAiCaching::kExplicit);
    }
};

}  // namespace

std::unique_ptr<Dialect> make_responses() {
    return std::make_unique<Responses>();
}

}  // namespace nucleo::emulator
