// decode: Bedrock's HTTP answer -> the normalized response (docs/provider-abi-documents.md).
//
// A 2xx Converse answer is {"output":{"message":{"role":"assistant","content":[...]}},
// "stopReason":..., "usage":{...}, "metrics":{...}} (API reference, ConverseResponse). Blocks:
//   {"text"}                                           -> {"type":"text","text"}
//   {"toolUse":{"toolUseId","name","input"}}           -> {"type":"tool_use","id","name","input"}
//   {"reasoningContent":{"reasoningText":{"text","signature"}}}
//                                                      ->
//                                                      {"type":"thinking","thinking","signature"}
//   {"reasoningContent":{"redactedContent": base64}}   -> {"type":"redacted_thinking","data"}
// Other kinds (citations, guard content, images a model may return) are skipped with a warning
// in the host log: the normalized document has no place for them. In the text tool dialect the
// text comes back as written: parsing calls out of it (and minting their ids) is the core's job.
//
// stopReason: end_turn, tool_use, max_tokens and stop_sequence keep their names;
// guardrail_intervened and content_filtered -> content_filter; model_context_window_exceeded ->
// context_window_exceeded (the input left no room: the core refuses it as a context overflow,
// never as an output truncation); malformed_model_output, malformed_tool_use and anything unknown
// -> other. An empty content is an answer with no blocks.
//
// usage: Bedrock reports inputTokens WITHOUT the cached tokens -- cacheReadInputTokens and
// cacheWriteInputTokens are separate counts and totalTokens is the sum of all four (AWS prompt
// caching guide; the same split as Anthropic's) -- so input_tokens = inputTokens,
// cache_read_tokens = cacheReadInputTokens, cache_write_tokens = cacheWriteInputTokens. Should
// an answer's totalTokens show that its inputTokens already includes the cached tokens
// (totalTokens == inputTokens + outputTokens while cache counts are non-zero), those are
// subtracted, so every dialect reports the same split. usage.cacheDetails splits the writes by
// TTL ({"ttl": "5m"|"1h", "inputTokens": N}); the "1h" entries are cache_write_1h (at most the
// writes), which the core prices at the 1-hour rate; an entry of another TTL or shape counts as
// a 5-minute write, never an error.
//
// Errors: {"message": ...} with the type in the x-amzn-errortype header (anything after ':' in
// it dropped; a body "__type" after '#' is the fallback). ThrottlingException and
// ServiceQuotaExceededException -> NUCLEO_ERR_RATE_LIMITED; ServiceUnavailableException,
// InternalServerException, ModelNotReadyException, ModelTimeoutException, ModelErrorException,
// ModelStreamErrorException -> NUCLEO_ERR_OVERLOADED (transient: the model side failed, a retry
// may pass); ValidationException -> NUCLEO_ERR_INVALID_ARGUMENT; AccessDeniedException and the
// signature/credential exceptions -> NUCLEO_ERR_CONFIG; ResourceNotFoundException ->
// NUCLEO_ERR_NOT_FOUND. An unknown type falls back on the status: 429 rate limited, 5xx
// overloaded, 401/403 config, 404 not found, other 4xx invalid argument. The message carries the
// type and Bedrock's own text.
//
// A streamed answer (content-type application/vnd.amazon.eventstream, from /converse-stream) is
// decoded whole: its events are assembled into the same normalized response; an exception event
// maps like an error answer; a stream without messageStop or metadata is cut off.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "converse.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::bedrock {

namespace {

using nucleo::plugin::Failure;
using providers::member;
using providers::quote_first_bytes;
using providers::string_member;
using providers::view;
using rapidjson::SizeType;
using rapidjson::Value;

[[noreturn]] void protocol(int32_t status, const std::string& what, std::string_view body) {
    throw Failure(NUCLEO_ERR_PROTOCOL,
                  "bedrock: " + what + "; the answer began: " + quote_first_bytes(body), status);
}

/// The plugin.h status of a Bedrock error type (case-insensitive: the event stream spells them
/// in lower camel case), else of the HTTP status.
int32_t error_status(std::string_view type, int32_t http_status) {
    struct Rule {
        const char* type;
        int32_t status;
    };
    static constexpr Rule kRules[] = {
        {"ThrottlingException", NUCLEO_ERR_RATE_LIMITED},
        {"ServiceQuotaExceededException", NUCLEO_ERR_RATE_LIMITED},
        {"ServiceUnavailableException", NUCLEO_ERR_OVERLOADED},
        {"InternalServerException", NUCLEO_ERR_OVERLOADED},
        {"InternalFailure", NUCLEO_ERR_OVERLOADED},
        {"ModelNotReadyException", NUCLEO_ERR_OVERLOADED},
        {"ModelTimeoutException", NUCLEO_ERR_OVERLOADED},
        {"ModelErrorException", NUCLEO_ERR_OVERLOADED},
        {"ModelStreamErrorException", NUCLEO_ERR_OVERLOADED},
        {"ValidationException", NUCLEO_ERR_INVALID_ARGUMENT},
        {"AccessDeniedException", NUCLEO_ERR_CONFIG},
        {"UnrecognizedClientException", NUCLEO_ERR_CONFIG},
        {"IncompleteSignatureException", NUCLEO_ERR_CONFIG},
        {"MissingAuthenticationTokenException", NUCLEO_ERR_CONFIG},
        {"InvalidSignatureException", NUCLEO_ERR_CONFIG},
        {"ExpiredTokenException", NUCLEO_ERR_CONFIG},
        {"InvalidClientTokenId", NUCLEO_ERR_CONFIG},
        {"ResourceNotFoundException", NUCLEO_ERR_NOT_FOUND},
    };
    for (const Rule& r : kRules) {
        if (providers::iequals(type, r.type)) return r.status;
    }
    return providers::status_for_http(http_status);
}

[[noreturn]] void error_answer(int32_t http_status, std::string_view headers_json,
                               std::string_view body) {
    std::string type = providers::header(headers_json, "x-amzn-errortype");
    if (const auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
    rapidjson::Document doc;
    std::string message;
    if (!json_guard::parse(doc, body) && doc.IsObject()) {
        if (const Value* m = string_member(doc, "message"))
            message = view(*m);
        else if (const Value* m2 = string_member(doc, "Message"))
            message = view(*m2);
        if (type.empty()) {
            if (const Value* t = string_member(doc, "__type")) {
                const std::string_view full = view(*t);
                const auto hash = full.rfind('#');
                type = hash == std::string_view::npos ? full : full.substr(hash + 1);
            }
        }
    }
    std::string text = "bedrock: " + (type.empty() ? "HTTP " + std::to_string(http_status) : type);
    if (!message.empty()) {
        text += ": " + message;
    } else {
        text += " without a message; the answer began: " + quote_first_bytes(body);
    }
    throw Failure(error_status(type, http_status), text, http_status);
}

const char* normalized_stop_reason(std::string_view r) {
    if (r == "end_turn") return "end_turn";
    if (r == "tool_use") return "tool_use";
    if (r == "max_tokens") return "max_tokens";
    if (r == "stop_sequence") return "stop_sequence";
    if (r == "guardrail_intervened" || r == "content_filtered") return "content_filter";
    if (r == "model_context_window_exceeded") return "context_window_exceeded";
    return "other";
}

bool read_count(const Value& usage, std::string_view key, std::int64_t& out) {
    const Value* v = member(usage, key);
    if (v == nullptr) return false;
    if (!v->IsInt64() || v->GetInt64() < 0) return false;
    out = v->GetInt64();
    return true;
}

providers::Usage read_usage(const Value& usage, int32_t status, std::string_view body) {
    providers::Usage u;
    if (!usage.IsObject()) protocol(status, "the answer lacks \"usage\"", body);
    if (!read_count(usage, "inputTokens", u.input)) {
        protocol(status, "the answer lacks \"usage.inputTokens\" (a count)", body);
    }
    if (!read_count(usage, "outputTokens", u.output)) {
        protocol(status, "the answer lacks \"usage.outputTokens\" (a count)", body);
    }
    read_count(usage, "cacheReadInputTokens", u.cache_read);
    read_count(usage, "cacheWriteInputTokens", u.cache_write);
    // caching.117: the writes by TTL; the 1-hour part is priced apart by the core (caching.108).
    if (const Value* details = member(usage, "cacheDetails");
        details != nullptr && details->IsArray()) {
        std::int64_t hour = 0;
        for (const Value& d : details->GetArray()) {
            const Value* ttl = d.IsObject() ? string_member(d, "ttl") : nullptr;
            std::int64_t n = 0;
            if (ttl != nullptr && view(*ttl) == "1h" && read_count(d, "inputTokens", n)) hour += n;
        }
        u.cache_write_1h = std::min(hour, u.cache_write);
    }
    std::int64_t total = 0;
    const std::int64_t cached = u.cache_read + u.cache_write;
    if (cached > 0 && read_count(usage, "totalTokens", total) && total == u.input + u.output &&
        u.input >= cached) {
        u.input -= cached;  // a total that already held the cached tokens
    }
    return u;
}

void write_block(providers::ResponseWriter& w, const Value& block, std::size_t k, int32_t status,
                 std::string_view body) {
    const std::string where = "output.message.content[" + std::to_string(k) + "]";
    if (!block.IsObject()) protocol(status, where + " is not an object", body);
    if (const Value* text = string_member(block, "text")) {
        w.text(view(*text));
    } else if (const Value* use = member(block, "toolUse")) {
        const Value* id = string_member(*use, "toolUseId");
        const Value* name = string_member(*use, "name");
        if (id == nullptr || name == nullptr) {
            protocol(status, where + ".toolUse lacks \"toolUseId\" or \"name\"", body);
        }
        const Value* input = member(*use, "input");
        w.tool_use(view(*id), view(*name), input != nullptr && input->IsObject() ? input : nullptr);
    } else if (const Value* reasoning = member(block, "reasoningContent")) {
        if (const Value* rt = member(*reasoning, "reasoningText")) {
            const Value* text = string_member(*rt, "text");
            if (text == nullptr) protocol(status, where + ".reasoningText lacks \"text\"", body);
            const Value* sig = string_member(*rt, "signature");
            w.thinking(view(*text), sig != nullptr ? view(*sig) : std::string_view());
        } else if (const Value* redacted = string_member(*reasoning, "redactedContent")) {
            w.redacted_thinking(view(*redacted));
        } else {
            protocol(status,
                     where +
                         ".reasoningContent holds neither reasoningText nor "
                         "redactedContent",
                     body);
        }
    } else {
        std::string kind = block.MemberCount() > 0 ? std::string(view(block.MemberBegin()->name))
                                                   : std::string("(empty)");
        nucleo::plugin::Host::warn("bedrock: skipped an answer block of kind \"" + kind + "\" at " +
                                   where + " (no normalized form)");
    }
}

std::string decode_json(int32_t status, std::string_view body) {
    rapidjson::Document doc;
    // limits.120 to limits.122: depth-bounded, no duplicate key, no raw NUL.
    if (const auto refusal = json_guard::parse(doc, body)) {
        protocol(status, "the answer is not JSON or is cut off (" + refusal->text() + ")", body);
    }
    if (!doc.IsObject()) protocol(status, "the answer is not a JSON object", body);
    const Value* output = member(doc, "output");
    const Value* message = output != nullptr ? member(*output, "message") : nullptr;
    const Value* content = message != nullptr ? member(*message, "content") : nullptr;
    if (content == nullptr || !content->IsArray()) {
        protocol(status, "the answer lacks \"output.message.content\" (an array)", body);
    }
    const Value* stop = string_member(doc, "stopReason");
    if (stop == nullptr) protocol(status, "the answer lacks \"stopReason\"", body);
    const Value* usage = member(doc, "usage");
    if (usage == nullptr) protocol(status, "the answer lacks \"usage\"", body);
    const providers::Usage u = read_usage(*usage, status, body);

    providers::ResponseWriter w({}, false);
    for (SizeType k = 0; k < content->Size(); ++k) write_block(w, (*content)[k], k, status, body);
    return w.finish(normalized_stop_reason(view(*stop)), u);
}

/// One content block being assembled from stream deltas.
struct Partial {
    enum class Kind { kNone, kText, kToolUse, kThinking, kRedacted } kind = Kind::kNone;
    std::string text;  ///< text, reasoning text, tool input JSON or redacted data
    std::string signature;
    std::string id;
    std::string name;
};

std::string decode_stream(int32_t status, std::string_view body) {
    std::map<std::int64_t, Partial> blocks;
    std::string stop_reason;
    bool stopped = false;
    bool have_usage = false;
    providers::Usage usage;
    for (const StreamEvent& ev : read_event_stream(body)) {
        if (ev.message_type == "exception" || ev.message_type == "error") {
            rapidjson::Document doc;
            std::string message;
            if (!json_guard::parse(doc, ev.payload) && doc.IsObject()) {
                if (const Value* m = string_member(doc, "message")) message = view(*m);
            }
            throw Failure(error_status(ev.event_type, 0),
                          "bedrock: stream " + ev.event_type + ": " +
                              (message.empty() ? quote_first_bytes(ev.payload) : message),
                          status);
        }
        rapidjson::Document doc;
        if (const auto refusal = json_guard::parse(doc, ev.payload)) {
            protocol(
                status,
                "the stream event \"" + ev.event_type + "\" is not JSON (" + refusal->text() + ")",
                ev.payload);
        }
        if (!doc.IsObject()) {
            protocol(status, "the stream event \"" + ev.event_type + "\" is not a JSON object",
                     ev.payload);
        }
        const Value* index = member(doc, "contentBlockIndex");
        const std::int64_t i = index != nullptr && index->IsInt64() ? index->GetInt64() : 0;
        if (ev.event_type == "contentBlockStart") {
            const Value* start = member(doc, "start");
            const Value* use = start != nullptr ? member(*start, "toolUse") : nullptr;
            if (use != nullptr) {
                Partial& p = blocks[i];
                p.kind = Partial::Kind::kToolUse;
                if (const Value* id = string_member(*use, "toolUseId")) p.id = view(*id);
                if (const Value* name = string_member(*use, "name")) p.name = view(*name);
            }
        } else if (ev.event_type == "contentBlockDelta") {
            const Value* delta = member(doc, "delta");
            if (delta == nullptr) continue;
            Partial& p = blocks[i];
            if (const Value* text = string_member(*delta, "text")) {
                if (p.kind == Partial::Kind::kNone) p.kind = Partial::Kind::kText;
                p.text.append(view(*text));
            } else if (const Value* use = member(*delta, "toolUse")) {
                p.kind = Partial::Kind::kToolUse;
                if (const Value* input = string_member(*use, "input")) p.text.append(view(*input));
            } else if (const Value* r = member(*delta, "reasoningContent")) {
                if (const Value* t = string_member(*r, "text")) {
                    p.kind = Partial::Kind::kThinking;
                    p.text.append(view(*t));
                } else if (const Value* s = string_member(*r, "signature")) {
                    p.kind = Partial::Kind::kThinking;
                    p.signature.append(view(*s));
                } else if (const Value* d = string_member(*r, "redactedContent")) {
                    p.kind = Partial::Kind::kRedacted;
                    p.text.append(view(*d));
                }
            }
        } else if (ev.event_type == "messageStop") {
            const Value* r = string_member(doc, "stopReason");
            if (r == nullptr) protocol(status, "the messageStop event lacks \"stopReason\"", body);
            stop_reason = view(*r);
            stopped = true;
        } else if (ev.event_type == "metadata") {
            const Value* u = member(doc, "usage");
            if (u == nullptr) protocol(status, "the metadata event lacks \"usage\"", body);
            usage = read_usage(*u, status, body);
            have_usage = true;
        }
    }
    if (!stopped) protocol(status, "the event stream is cut off (no messageStop event)", body);
    if (!have_usage) protocol(status, "the event stream is cut off (no metadata event)", body);

    providers::ResponseWriter w({}, false);
    const std::string_view normalized = normalized_stop_reason(stop_reason);
    const bool cut = normalized == "max_tokens" || normalized == "context_window_exceeded";
    for (const auto& [index, p] : blocks) {
        switch (p.kind) {
            case Partial::Kind::kText:
                w.text(p.text);
                break;
            case Partial::Kind::kThinking:
                w.thinking(p.text, p.signature);
                break;
            case Partial::Kind::kRedacted:
                w.redacted_thinking(p.text);
                break;
            case Partial::Kind::kToolUse: {
                rapidjson::Document input;
                std::optional<json_guard::Refusal> refusal;
                if (!p.text.empty()) refusal = json_guard::parse(input, p.text);
                const bool whole = !p.text.empty() && !refusal && input.IsObject();
                if (!whole && !p.text.empty() && !cut) {
                    protocol(status,
                             "the streamed input of tool call \"" + p.id +
                                 "\" is not a JSON object" +
                                 (refusal ? " (" + refusal->text() + ")" : std::string()),
                             p.text);
                }
                // no input, or cut off by max_tokens: never a half call
                w.tool_use(p.id, p.name, whole ? &input : nullptr);
                break;
            }
            case Partial::Kind::kNone:
                break;
        }
    }
    return w.finish(normalized_stop_reason(stop_reason), usage);
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    if (http_status < 200 || http_status >= 300) error_answer(http_status, headers_json, body);
    const std::string type = providers::header(headers_json, "content-type");
    if (type.rfind("application/vnd.amazon.eventstream", 0) == 0) {
        return decode_stream(http_status, body);
    }
    return decode_json(http_status, body);
}

}  // namespace nucleo::bedrock
