// Google Gemini (POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse,
// docs/spec/gemini.md gemini.30-gemini.33): the family's rule book (role alternation, function
// response pairing, the thought-signature rule) with the API's own texts in its error envelope
// {"error":{"code","message","status"}}, implicit caching reported as cachedContentTokenCount,
// thought signatures on the parts the docs name, and `data:` chunks without a terminator.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator.hpp"
#include "json.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"
#include "reply.hpp"

namespace nucleo::emulator {
namespace {

using json::quote;

Response envelope(ErrorClass cls, int status, const std::string& grpc, const std::string& message) {
    return error_response(cls, status,
                          R"({"error":{"code":)" + std::to_string(status) + R"(,"message":)" +
                              quote(message) + R"(,"status":)" + quote(grpc) + "}}");
}

/// The text parts of a content, joined.
std::string text_of(const json::Value& content) {
    std::string out;
    const json::Value* parts = json::member(content, "parts");
    if (parts == nullptr || !parts->IsArray()) return out;
    for (const auto& p : parts->GetArray()) {
        const json::Value* t = json::member(p, "text");
        const json::Value* thought = json::member(p, "thought");
        if (t == nullptr || !t->IsString() || (thought != nullptr && thought->IsTrue())) continue;
        if (!out.empty()) out += "\n";
        out += t->GetString();
    }
    return out;
}

ReplyInput reply_input(const json::Value& doc, const std::string& digest) {
    ReplyInput in;
    in.id_prefix = "gc_emu_";
    in.conversation_digest = digest;
    const json::Value* config = json::member(doc, "generationConfig");
    in.max_tokens = config != nullptr ? json::int_member(*config, "maxOutputTokens", 8192) : 8192;
    if (config != nullptr)
        in.stop_sequences = stop_sequences_from(json::member(*config, "stopSequences"));
    if (const json::Value* tools = json::member(doc, "tools");
        tools != nullptr && tools->IsArray()) {
        for (const auto& t : tools->GetArray()) {
            const json::Value* decls = json::member(t, "functionDeclarations");
            if (decls == nullptr || !decls->IsArray()) continue;
            for (const auto& d : decls->GetArray()) {
                const json::Value* schema = json::member(d, "parametersJsonSchema");
                if (schema == nullptr) schema = json::member(d, "parameters");
                in.tools.push_back({json::string_member(d, "name"), schema});
            }
        }
    }
    if (const json::Value* fc = json::member(doc, "toolConfig")) {
        if (const json::Value* c = json::member(*fc, "functionCallingConfig")) {
            const std::string mode = json::string_member(*c, "mode");
            in.tool_choice_none = mode == "NONE";
            const json::Value* allowed = json::member(*c, "allowedFunctionNames");
            if (mode == "ANY" && allowed != nullptr && allowed->IsArray() && allowed->Size() == 1 &&
                (*allowed)[0].IsString())
                in.forced_tool = (*allowed)[0].GetString();
        }
    }
    const auto& contents = json::member(doc, "contents")->GetArray();
    for (const auto& c : contents) in.assistant_turns += json::string_member(c, "role") == "model";
    const json::Value& last = contents[contents.Size() - 1];
    if (const json::Value* parts = json::member(last, "parts");
        parts != nullptr && parts->IsArray()) {
        for (const auto& p : parts->GetArray()) {
            const json::Value* r = json::member(p, "functionResponse");
            if (r == nullptr) continue;
            in.has_tool_result = true;
            in.tool_result_name = json::string_member(*r, "name");
            const json::Value* response = json::member(*r, "response");
            const json::Value* output =
                response != nullptr ? json::member(*response, "output") : nullptr;
            const json::Value* error =
                response != nullptr ? json::member(*response, "error") : nullptr;
            in.tool_result_error = error != nullptr;
            const json::Value* shown = output != nullptr  ? output
                                       : error != nullptr ? error
                                                          : response;
            in.tool_result_text = shown == nullptr    ? ""
                                  : shown->IsString() ? shown->GetString()
                                                      : json::write(*shown);
            break;
        }
    }
    for (rapidjson::SizeType i = contents.Size(); i-- > 0;) {
        if (json::string_member(contents[i], "role") != "user") continue;
        const std::string text = text_of(contents[i]);
        if (text.empty() && in.has_tool_result && i + 1 == contents.Size()) continue;
        in.question = text;
        in.last_is_question = i + 1 == contents.Size() && !in.has_tool_result;
        break;
    }
    return in;
}

/// gemini.31: the thought tokens a thinkingConfig asks for, a small count per level (the
/// emulator writes a one-line summary, it only reports its tokens); 0 without thinking.
long long thought_tokens_for(const json::Value& doc) {
    const json::Value* config = json::member(doc, "generationConfig");
    const json::Value* thinking =
        config != nullptr ? json::member(*config, "thinkingConfig") : nullptr;
    if (thinking == nullptr) return 0;
    const std::string level = json::string_member(*thinking, "thinkingLevel");
    if (level == "MINIMAL" || level == "minimal") return 8;
    if (level == "LOW" || level == "low") return 16;
    if (level == "HIGH" || level == "high") return 64;
    if (!level.empty()) return 32;
    return std::clamp(json::int_member(*thinking, "thinkingBudget", 32), 0LL, 64LL);
}

bool include_thoughts(const json::Value& doc) {
    const json::Value* config = json::member(doc, "generationConfig");
    const json::Value* thinking =
        config != nullptr ? json::member(*config, "thinkingConfig") : nullptr;
    const json::Value* include =
        thinking != nullptr ? json::member(*thinking, "includeThoughts") : nullptr;
    return include != nullptr && include->IsTrue();
}

std::string usage_json(const CacheUsage& u, long long candidates, long long thoughts) {
    const long long prompt = u.total();
    return R"({"promptTokenCount":)" + std::to_string(prompt) +
           (u.read > 0 ? R"(,"cachedContentTokenCount":)" + std::to_string(u.read)
                       : std::string()) +
           R"(,"candidatesTokenCount":)" + std::to_string(candidates) +
           (thoughts > 0 ? R"(,"thoughtsTokenCount":)" + std::to_string(thoughts) : std::string()) +
           R"(,"totalTokenCount":)" + std::to_string(prompt + candidates + thoughts) + "}";
}

/// gemini.32: the emulator's signature: a base64 text derived from the conversation, so the
/// same request gets the same answer.
std::string signature_of(const std::string& digest) {
    static constexpr char kB64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const std::string raw = "emu-thought:" + digest;
    std::string out;
    for (std::size_t i = 0; i < raw.size(); i += 3) {
        const std::uint32_t n =
            (static_cast<unsigned char>(raw[i]) << 16U) |
            (i + 1 < raw.size() ? static_cast<unsigned char>(raw[i + 1]) << 8U : 0U) |
            (i + 2 < raw.size() ? static_cast<unsigned char>(raw[i + 2]) : 0U);
        out += kB64[(n >> 18U) & 63U];
        out += kB64[(n >> 12U) & 63U];
        out += i + 1 < raw.size() ? kB64[(n >> 6U) & 63U] : '=';
        out += i + 2 < raw.size() ? kB64[n & 63U] : '=';
    }
    return out;
}

Response render(const std::string& model, bool stream, const Reply& r, const CacheUsage& u,
                const std::string& digest, long long thoughts, bool summaries) {
    const std::string signature = signature_of(digest);
    const std::string finish = r.truncated ? "MAX_TOKENS" : "STOP";
    const std::string tail = R"(,"usageMetadata":)" + usage_json(u, r.output_tokens, thoughts) +
                             R"(,"modelVersion":)" + quote(model) + R"(,"responseId":)" +
                             quote("emu-" + digest) + "}";
    const std::string thought_part =
        summaries && thoughts > 0 ? R"({"text":"Working out what is asked.","thought":true})" : "";
    // gemini.32: the signature is on the first function call, or on the last part of an answer
    // without one.
    const std::string call_part =
        r.tool_call ? R"({"functionCall":{"name":)" + quote(r.tool_name) + R"(,"args":)" +
                          (r.truncated ? std::string("{}") : r.tool_input) +
                          R"(},"thoughtSignature":)" + quote(signature) + "}"
                    : "";
    const auto candidate = [&](const std::string& parts, bool last) {
        return R"({"candidates":[{"content":{"role":"model","parts":[)" + parts + "]}" +
               (last ? R"(,"finishReason":)" + quote(finish) : std::string()) + R"(,"index":0}])";
    };
    if (!stream) {
        std::string parts = thought_part;
        const std::string main = r.tool_call
                                     ? call_part
                                     : R"({"text":)" + quote(r.text) + R"(,"thoughtSignature":)" +
                                           quote(signature) + "}";
        parts += (parts.empty() ? "" : ",") + main;
        return json_response(200, candidate(parts, true) + tail);
    }
    Response out;
    out.streamed = true;
    out.content_type = "text/event-stream";
    const std::string mid_tail =
        R"(,"modelVersion":)" + quote(model) + R"(,"responseId":)" + quote("emu-" + digest) + "}";
    if (!thought_part.empty())
        out.chunks.push_back("data: " + candidate(thought_part, false) + mid_tail + "\r\n\r\n");
    if (r.tool_call) {
        out.chunks.push_back("data: " + candidate(call_part, true) + tail + "\r\n\r\n");
        return out;
    }
    for (const auto& piece : split_for_stream(r.text))
        out.chunks.push_back("data: " + candidate(R"({"text":)" + quote(piece) + "}", false) +
                             mid_tail + "\r\n\r\n");
    out.chunks.push_back(
        "data: " + candidate(R"({"text":"","thoughtSignature":)" + quote(signature) + "}", true) +
        tail + "\r\n\r\n");
    return out;
}

class Gemini final : public Dialect {
  public:
    std::optional<Response> check_auth(const Request& req) const override {
        // gemini.8: the key in x-goog-api-key (or the `key` query parameter).
        if (!req.header("x-goog-api-key").empty() || req.query.count("key") != 0)
            return std::nullopt;
        return error(ErrorClass::kAuthentication, "");
    }

    std::pair<std::string, std::string> request_id(std::uint64_t n) const override {
        return {"x-request-id", "emu" + hex_id(n, 24)};
    }

    Response error(ErrorClass cls, const std::string& message) const override {
        const auto text = [&message](const char* fallback) {
            return message.empty() ? std::string(fallback) : message;
        };
        switch (cls) {
            case ErrorClass::kInvalidRequest:
                return envelope(cls, 400, "INVALID_ARGUMENT",
                                text("Request contains an invalid argument."));
            case ErrorClass::kAuthentication:
                return envelope(
                    cls, 403, "PERMISSION_DENIED",
                    text("Method doesn't allow unregistered callers (callers without "
                         "established identity). Please use API Key or other form of API "
                         "consumer identity to call this API."));
            case ErrorClass::kRateLimited:
                return envelope(cls, 429, "RESOURCE_EXHAUSTED",
                                text("You exceeded your current quota, please check your plan and "
                                     "billing details."));
            case ErrorClass::kServer:
                return envelope(cls, 500, "INTERNAL", text("An internal error has occurred."));
            case ErrorClass::kOverloaded:
                return envelope(cls, 503, "UNAVAILABLE",
                                text("The model is overloaded. Please try again later."));
        }
        return envelope(cls, 500, "INTERNAL", text("An internal error has occurred."));
    }

    Response serve(const Request& req, const Faults& faults, Context& ctx) const override {
        const std::string model = req.path_params.at(0);
        const bool stream = req.path_params.at(1) == "streamGenerateContent";
        rapidjson::Document doc;
        std::string parse_error;
        if (!json::parse(req.body, doc, parse_error))
            return error(ErrorClass::kInvalidRequest,
                         "Invalid JSON payload received. " + parse_error);
        if (!doc.IsObject())
            return error(ErrorClass::kInvalidRequest, "Invalid JSON payload received.");
        // gemini.30: the family's rule book, the same code the core audits with.
        if (auto v = contract::check_request(contract::WireFamily::kGeminiGenerate, doc,
                                             contract::Scope::kProvider))
            return error(ErrorClass::kInvalidRequest, v->message);
        const contract::ModelRules* rules =
            ctx.catalog.find(contract::WireFamily::kGeminiGenerate, model);
        if (rules != nullptr) {
            if (auto v = contract::check_model_request(contract::WireFamily::kGeminiGenerate, doc,
                                                       *rules))
                return envelope(ErrorClass::kInvalidRequest, v->status, v->error_type, v->message);
        }
        // gemini.33: implicit caching over the prompt in order (system, tools, contents), read
        // back as cachedContentTokenCount; the steps are the emulator's OpenAI-like ones.
        PrefixHasher hasher("gemini\x1f" + model);
        hasher.set_auto_marks(
            static_cast<std::size_t>(min_cacheable(ctx.options, rules, model)) * 4,
            kOpenAiCacheStepBytes);
        for (const char* key : {"systemInstruction", "tools"})
            if (const json::Value* v = json::member(doc, key)) hasher.append(json::write(*v));
        for (const auto& c : json::member(doc, "contents")->GetArray())
            hasher.append(json::write(c));
        const CacheUsage usage =
            automatic_cache(ctx.cache, hasher, std::chrono::seconds(ctx.options.cache_ttl_seconds));
        const std::string digest = hasher.digest();
        record_cache(ctx.stats, usage);
        ReplyInput in = reply_input(doc, digest);
        apply_reply_faults(faults, in);
        // Thinking is spent out of maxOutputTokens, at least one token left for the answer.
        const long long thoughts =
            std::min(thought_tokens_for(doc), std::max(0LL, in.max_tokens - 1));
        in.max_tokens -= thoughts;
        return render(model, stream, make_reply(in), usage, digest, thoughts,
                      include_thoughts(doc));
    }
};

}  // namespace

std::unique_ptr<Dialect> make_gemini() {
    return std::make_unique<Gemini>();
}

}  // namespace nucleo::emulator
