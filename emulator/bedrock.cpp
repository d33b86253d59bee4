// Bedrock Converse (POST /model/{modelId}/converse and /converse-stream): the SigV4 header's
// presence and shape (the signature itself is not verified), ValidationException texts for
// alternation, blank text and toolUse/toolResult pairing, cachePoint prefix caching (its writes
// split by TTL in usage.cacheDetails, caching.125), reasoningContent answered and bound to its
// prefix (wire.195, wire.197), and the AWS event-stream framing for ConverseStream.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator.hpp"
#include "event_stream.hpp"
#include "json.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"
#include "reply.hpp"
#include "thinking.hpp"
#include "thinking_binding.hpp"

namespace nucleo::emulator {
namespace {

using json::quote;

Response aws_error(ErrorClass cls, int status, const std::string& type,
                   const std::string& message) {
    Response r = error_response(cls, status, R"({"message":)" + quote(message) + "}");
    r.headers.emplace_back("x-amzn-ErrorType", type);
    return r;
}

/// The fields Converse requires, then the rule book of the Bedrock Converse wire family
/// (wire.130-wire.142, the same code the core audits with). Returns Bedrock's message.
std::optional<std::string> validate(const json::Value& doc) {
    if (!doc.IsObject())
        return "Malformed input request, please reformat your input and try again.";
    const json::Value* messages = json::member(doc, "messages");
    if (messages == nullptr || !messages->IsArray() || messages->Empty()) {
        return "A conversation must start with a user message. Try again with a conversation "
               "that starts with a user message.";
    }
    if (auto v = contract::check_request(contract::WireFamily::kBedrockConverse, doc,
                                         contract::Scope::kProvider)) {
        return v->message;
    }
    return std::nullopt;
}

struct Prefix {
    PrefixHasher hasher;
    std::vector<Breakpoint> breakpoints;
};

/// Tools, then system, then messages; a cachePoint ends the prefix at the block before it.
Prefix build_prefix(const json::Value& doc, const std::string& model,
                    std::chrono::seconds default_ttl) {
    Prefix p{PrefixHasher("bedrock\x1f" + model), {}};
    const auto block = [&](const json::Value& b) {
        if (const json::Value* cp = json::member(b, "cachePoint")) {
            if (p.hasher.marks().empty()) return;  // nothing before it to cache
            const bool hour = json::string_member(*cp, "ttl") == "1h";
            p.breakpoints.push_back({p.hasher.marks().size() - 1,
                                     hour ? std::chrono::seconds(3600) : default_ttl, hour});
            return;
        }
        p.hasher.append(json::write(b));
        p.hasher.mark();
    };
    if (const json::Value* tc = json::member(doc, "toolConfig")) {
        if (const json::Value* tools = json::member(*tc, "tools");
            tools != nullptr && tools->IsArray()) {
            for (const auto& t : tools->GetArray()) block(t);
        }
    }
    if (const json::Value* system = json::member(doc, "system");
        system != nullptr && system->IsArray()) {
        for (const auto& b : system->GetArray()) block(b);
    }
    for (const auto& m : json::member(doc, "messages")->GetArray()) {
        p.hasher.append(R"({"role":)" + quote(json::string_member(m, "role")) + "}");
        for (const auto& b : json::member(m, "content")->GetArray()) block(b);
    }
    return p;
}

std::string result_text(const json::Value& result) {
    std::string out;
    const json::Value* content = json::member(result, "content");
    if (content == nullptr || !content->IsArray()) return out;
    for (const auto& c : content->GetArray()) {
        if (!out.empty()) out += "\n";
        if (const json::Value* t = json::member(c, "text"); t != nullptr && t->IsString())
            out += t->GetString();
        if (const json::Value* j = json::member(c, "json")) out += json::write(*j);
    }
    return out;
}

ReplyInput reply_input(const json::Value& doc, const std::string& digest,
                       const contract::ModelRules* rules, const ModelCatalog::Thinking& traits) {
    ReplyInput in;
    in.id_prefix = "tooluse_emu_";
    in.conversation_digest = digest;
    // wire.197, wire.198: Anthropic's thinking passed through additionalModelRequestFields, the
    // effort in outputConfig.effort (else the passed-through output_config.effort).
    ThinkingAsk ask;
    const json::Value* extra = json::member(doc, "additionalModelRequestFields");
    if (extra != nullptr) {
        ask.thinking = json::member(*extra, "thinking");
        if (const json::Value* oc = json::member(*extra, "output_config"))
            ask.effort = json::string_member(*oc, "effort");
    }
    if (const json::Value* oc = json::member(doc, "outputConfig"); oc != nullptr) {
        if (std::string e = json::string_member(*oc, "effort"); !e.empty()) ask.effort = e;
    }
    apply_thinking(ask, rules, traits, in);
    if (const json::Value* ic = json::member(doc, "inferenceConfig")) {
        in.max_tokens = json::int_member(*ic, "maxTokens", 4096);
        in.stop_sequences = stop_sequences_from(json::member(*ic, "stopSequences"));
    }
    // Tools rendered as text (no toolConfig) are not tools to the emulator: it answers in text.
    if (const json::Value* tc = json::member(doc, "toolConfig")) {
        if (const json::Value* tools = json::member(*tc, "tools");
            tools != nullptr && tools->IsArray()) {
            for (const auto& t : tools->GetArray()) {
                const json::Value* spec = json::member(t, "toolSpec");
                if (spec == nullptr || !spec->IsObject()) continue;
                const json::Value* schema = json::member(*spec, "inputSchema");
                in.tools.push_back({json::string_member(*spec, "name"),
                                    schema != nullptr ? json::member(*schema, "json") : nullptr});
            }
        }
        if (const json::Value* choice = json::member(*tc, "toolChoice")) {
            if (const json::Value* tool = json::member(*choice, "tool"))
                in.forced_tool = json::string_member(*tool, "name");
        }
    }
    const auto& messages = json::member(doc, "messages")->GetArray();
    for (const auto& m : messages)
        in.assistant_turns += json::string_member(m, "role") == "assistant";
    for (rapidjson::SizeType i = messages.Size(); i-- > 0;) {
        if (json::string_member(messages[i], "role") != "user") continue;
        for (const auto& b : json::member(messages[i], "content")->GetArray()) {
            if (const json::Value* t = json::member(b, "text"); t != nullptr && t->IsString()) {
                in.question += (in.question.empty() ? "" : "\n") + std::string(t->GetString());
            }
            const json::Value* res = json::member(b, "toolResult");
            if (res == nullptr) continue;
            in.has_tool_result = true;
            in.tool_result_text = result_text(*res);
            in.tool_result_error = json::string_member(*res, "status") == "error";
            const std::string id = json::string_member(*res, "toolUseId");
            if (i > 0) {
                for (const auto& u : json::member(messages[i - 1], "content")->GetArray()) {
                    const json::Value* use = json::member(u, "toolUse");
                    if (use != nullptr && json::string_member(*use, "toolUseId") == id) {
                        in.tool_result_name = json::string_member(*use, "name");
                    }
                }
            }
        }
        in.last_is_question = i + 1 == messages.Size() && !in.has_tool_result;
        break;
    }
    return in;
}

std::string stop_reason(const Reply& r) {
    if (r.truncated) return "max_tokens";
    if (r.tool_call) return "tool_use";
    return r.stop_sequence.empty() ? "end_turn" : "stop_sequence";
}

/// caching.125: the cache writes split by the TTL of the cachePoint that wrote them, as
/// caching.101 splits Anthropic's `cache_creation`, 1h before 5m as the API sorts them; none
/// when nothing was written.
std::string cache_details(const CacheUsage& u) {
    if (u.creation == 0) return "";
    std::string out;
    const auto detail = [&out](const char* ttl, std::int64_t tokens) {
        if (tokens == 0) return;
        out += std::string(out.empty() ? "" : ",") + R"({"ttl":")" + ttl + R"(","inputTokens":)" +
               std::to_string(tokens) + "}";
    };
    detail("1h", u.creation_1h);
    detail("5m", u.creation - u.creation_1h);
    return R"(,"cacheDetails":[)" + out + "]";
}

std::string usage_json(const CacheUsage& u, long long output) {
    return R"({"inputTokens":)" + std::to_string(u.input) + R"(,"outputTokens":)" +
           std::to_string(output) + R"(,"totalTokens":)" + std::to_string(u.total() + output) +
           R"(,"cacheReadInputTokens":)" + std::to_string(u.read) + R"(,"cacheWriteInputTokens":)" +
           std::to_string(u.creation) + cache_details(u) + "}";
}

Response render(const Reply& r, const CacheUsage& u, bool streaming) {
    if (!streaming) {
        // wire.197: the thinking comes first, as a reasoningContent block with its signature.
        std::string block;
        if (r.has_thinking) {
            block = R"({"reasoningContent":{"reasoningText":{"text":)" + quote(r.thinking) +
                    R"(,"signature":)" + quote(r.thinking_signature) + "}}},";
        }
        // A tool call cut off by maxTokens has no parseable input: it comes back empty.
        block += r.tool_call ? R"({"toolUse":{"toolUseId":)" + quote(r.tool_id) + R"(,"name":)" +
                                   quote(r.tool_name) + R"(,"input":)" +
                                   (r.truncated ? "{}" : r.tool_input) + "}}"
                             : R"({"text":)" + quote(r.text) + "}";
        return json_response(200, R"({"output":{"message":{"role":"assistant","content":[)" +
                                      block + R"(]}},"stopReason":)" + quote(stop_reason(r)) +
                                      R"(,"usage":)" + usage_json(u, r.output_tokens) +
                                      R"(,"metrics":{"latencyMs":0}})");
    }
    Response out;
    out.streamed = true;
    out.content_type = "application/vnd.amazon.eventstream";
    auto& ev = out.chunks;
    ev.push_back(event_stream_event("messageStart", R"({"role":"assistant"})"));
    std::string at = R"({"contentBlockIndex":0)";
    if (r.has_thinking) {
        // wire.197: the reasoning's text deltas, then its signature, in block 0.
        for (const auto& piece : split_for_stream(r.thinking)) {
            ev.push_back(event_stream_event(
                "contentBlockDelta",
                at + R"(,"delta":{"reasoningContent":{"text":)" + quote(piece) + "}}}"));
        }
        ev.push_back(event_stream_event("contentBlockDelta",
                                        at + R"(,"delta":{"reasoningContent":{"signature":)" +
                                            quote(r.thinking_signature) + "}}}"));
        ev.push_back(event_stream_event("contentBlockStop", at + "}"));
        at = R"({"contentBlockIndex":1)";
    }
    if (r.tool_call) {
        ev.push_back(event_stream_event(
            "contentBlockStart", at + R"(,"start":{"toolUse":{"toolUseId":)" + quote(r.tool_id) +
                                     R"(,"name":)" + quote(r.tool_name) + "}}}"));
        for (const auto& piece : split_for_stream(r.tool_input)) {
            ev.push_back(
                event_stream_event("contentBlockDelta",
                                   at + R"(,"delta":{"toolUse":{"input":)" + quote(piece) + "}}}"));
        }
    } else {
        for (const auto& piece : split_for_stream(r.text)) {
            ev.push_back(event_stream_event("contentBlockDelta",
                                            at + R"(,"delta":{"text":)" + quote(piece) + "}}"));
        }
    }
    ev.push_back(event_stream_event("contentBlockStop", at + "}"));
    ev.push_back(
        event_stream_event("messageStop", R"({"stopReason":)" + quote(stop_reason(r)) + "}"));
    ev.push_back(event_stream_event("metadata", R"({"usage":)" + usage_json(u, r.output_tokens) +
                                                    R"(,"metrics":{"latencyMs":0}})"));
    return out;
}

class Bedrock final : public Dialect {
  public:
    explicit Bedrock(bool streaming) : streaming_(streaming) {}

    std::optional<Response> check_auth(const Request& req) const override {
        const std::string auth = req.header("authorization");
        if (auth.empty()) {
            return aws_error(ErrorClass::kAuthentication, 403,
                             "MissingAuthenticationTokenException", "Missing Authentication Token");
        }
        // channel.103: a Bedrock API key rides as `Authorization: Bearer KEY`, unsigned.
        if (auth.starts_with("Bearer ")) {
            if (json::has_non_whitespace(auth.substr(7))) return std::nullopt;
            return aws_error(ErrorClass::kAuthentication, 403, "UnrecognizedClientException",
                             "The security token included in the request is invalid.");
        }
        std::string problems;
        const auto require = [&](bool ok, const std::string& text) {
            if (!ok) problems += (problems.empty() ? "" : " ") + text;
        };
        require(auth.starts_with("AWS4-HMAC-SHA256 "),
                "Authorization header requires 'AWS4-HMAC-SHA256' as its algorithm.");
        require(auth.find("Credential=") != std::string::npos,
                "Authorization header requires 'Credential' parameter.");
        require(auth.find("SignedHeaders=") != std::string::npos,
                "Authorization header requires 'SignedHeaders' parameter.");
        require(auth.find("Signature=") != std::string::npos,
                "Authorization header requires 'Signature' parameter.");
        require(
            !req.header("x-amz-date").empty(),
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
        if (problems.empty()) return std::nullopt;
        return aws_error(ErrorClass::kAuthentication, 403, "IncompleteSignatureException",
                         problems);
    }

    std::pair<std::string, std::string> request_id(std::uint64_t n) const override {
        return {"x-amzn-RequestId", "00000000-0000-4000-8000-" + hex_id(n, 12)};
    }

    Response error(ErrorClass cls, const std::string& message) const override {
        const auto text = [&message](const char* fallback) {
            return message.empty() ? std::string(fallback) : message;
        };
        switch (cls) {
            case ErrorClass::kInvalidRequest:
                return aws_error(cls, 400, "ValidationException", text("Invalid request"));
            case ErrorClass::kAuthentication:
                return aws_error(cls, 403, "UnrecognizedClientException",
                                 text("The security token included in the request is invalid."));
            case ErrorClass::kRateLimited:
                return aws_error(cls, 429, "ThrottlingException",
                                 text("Too many requests, please wait before trying again."));
            case ErrorClass::kServer:
                return aws_error(
                    cls, 500, "InternalServerException",
                    text("The system encountered an unexpected error during processing. "
                         "Try your request again."));
            case ErrorClass::kOverloaded:
                return aws_error(cls, 503, "ServiceUnavailableException",
                                 text("Bedrock is unable to process your request."));
        }
        return aws_error(cls, 500, "InternalServerException", text("Internal error"));
    }

    Response serve(const Request& req, const Faults& faults, Context& ctx) const override {
        rapidjson::Document doc;
        std::string parse_error;
        if (!json::parse(req.body, doc, parse_error)) {
            return error(ErrorClass::kInvalidRequest,
                         "Malformed input request, please reformat your input and try again.");
        }
        if (auto e = validate(doc)) return error(ErrorClass::kInvalidRequest, *e);
        const std::string model = req.path_params.empty() ? "" : req.path_params.front();
        // wire.183-wire.185: the model's catalog record, when the catalog has it (wire.186).
        const contract::ModelRules* rules =
            ctx.catalog.find(contract::WireFamily::kBedrockConverse, model);
        if (rules != nullptr) {
            if (auto v = contract::check_model_request(contract::WireFamily::kBedrockConverse, doc,
                                                       *rules)) {
                return aws_error(ErrorClass::kInvalidRequest, v->status, v->error_type, v->message);
            }
        }
        // wire.195: reasoningContent sent back is checked against its prefix, as on Anthropic.
        const ModelCatalog::Thinking traits =
            ctx.catalog.thinking(contract::WireFamily::kBedrockConverse, model);
        const PrefixBinding binding(BindingDialect::kConverse, doc);
        if (traits.bound_to_prefix) {
            const BindingVerdict verdict =
                check_binding(BindingDialect::kConverse, doc, binding,
                              wants_drop_block(BindingDialect::kConverse, req, doc));
            if (verdict.refusal) {
                return error(ErrorClass::kInvalidRequest,
                             "The model returned the following errors: " + *verdict.refusal);
            }
            drop_blocks(doc, verdict.dropped);
        }
        Prefix prefix =
            build_prefix(doc, model, std::chrono::seconds(ctx.options.cache_ttl_seconds));
        const CacheUsage usage = explicit_cache(ctx.cache, prefix.hasher, prefix.breakpoints,
                                                min_cacheable(ctx.options, rules, model));
        record_cache(ctx.stats, usage);
        ReplyInput in = reply_input(doc, prefix.hasher.digest(), rules, traits);
        in.thinking_binding = binding.whole();
        apply_reply_faults(faults, in);
        return render(make_reply(in), usage, streaming_);
    }

  private:
    bool streaming_;
};

}  // namespace

std::unique_ptr<Dialect> make_bedrock(bool streaming) {
    return std::make_unique<Bedrock>(streaming);
}

}  // namespace nucleo::emulator
