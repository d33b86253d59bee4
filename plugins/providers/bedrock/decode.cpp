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
// max_tokens (the answer was cut off: the core must never take it for a whole answer, nor hand a
// cut-off tool call to a tool); malformed_model_output, malformed_tool_use and anything unknown
// -> other.
//
// usage: Bedrock reports inputTokens WITHOUT the cached tokens -- cacheReadInputTokens and
// cacheWriteInputTokens are separate counts and totalTokens is the sum of all four (AWS prompt
// caching guide; the same split as Anthropic's) -- so input_tokens = inputTokens,
// cache_read_tokens = cacheReadInputTokens, cache_write_tokens = cacheWriteInputTokens. Should
// an answer's totalTokens show that its inputTokens already includes the cached tokens
// (totalTokens == inputTokens + outputTokens while cache counts are non-zero), those are
// subtracted, so every dialect reports the same split.
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
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "converse.hpp"
#include "nucleo/plugin.hpp"

namespace nucleo::bedrock {

std::string quote_first_bytes(std::string_view body) {
    constexpr std::size_t kMax = 200;
    std::size_t n = std::min(body.size(), kMax);
    // Do not cut a UTF-8 character in two.
    while (n < body.size() && n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0U) == 0x80U) --n;
    std::string out = "\"";
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(body[i]);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20 || c == 0x7F) {
            static constexpr char kHex[] = "0123456789abcdef";
            out.append("\\x");
            out.push_back(kHex[c >> 4U]);
            out.push_back(kHex[c & 0xFU]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    out.push_back('"');
    if (n < body.size()) out.append("...");
    return out;
}

namespace {

using nucleo::plugin::Failure;
using rapidjson::SizeType;
using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string_view view(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

const Value* member(const Value& obj, std::string_view key) {
    if (!obj.IsObject()) return nullptr;
    const Value name(rapidjson::StringRef(key.data(), static_cast<SizeType>(key.size())));
    const auto it = obj.FindMember(name);
    return it == obj.MemberEnd() ? nullptr : &it->value;
}

const Value* string_member(const Value& obj, std::string_view key) {
    const Value* v = member(obj, key);
    return v != nullptr && v->IsString() ? v : nullptr;
}

[[noreturn]] void protocol(int32_t status, const std::string& what, std::string_view body) {
    throw Failure(NUCLEO_ERR_PROTOCOL,
                  "bedrock: " + what + "; the answer began: " + quote_first_bytes(body), status);
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
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
        if (iequals(type, r.type)) return r.status;
    }
    if (http_status == 429) return NUCLEO_ERR_RATE_LIMITED;
    if (http_status >= 500) return NUCLEO_ERR_OVERLOADED;
    if (http_status == 401 || http_status == 403) return NUCLEO_ERR_CONFIG;
    if (http_status == 404) return NUCLEO_ERR_NOT_FOUND;
    if (http_status == 408) return NUCLEO_ERR_OVERLOADED;
    if (http_status >= 400) return NUCLEO_ERR_INVALID_ARGUMENT;
    return NUCLEO_ERR_PROTOCOL;
}

/// A header's value from the host's {"name":"value"} document ("" when absent).
std::string header(std::string_view headers_json, std::string_view name) {
    if (headers_json.empty()) return {};
    rapidjson::Document doc;
    doc.Parse(headers_json.data(), headers_json.size());
    if (doc.HasParseError() || !doc.IsObject()) return {};
    for (const auto& m : doc.GetObject()) {
        if (m.value.IsString() && iequals(view(m.name), name)) return std::string(view(m.value));
    }
    return {};
}

[[noreturn]] void error_answer(int32_t http_status, std::string_view headers_json,
                               std::string_view body) {
    std::string type = header(headers_json, "x-amzn-errortype");
    if (const auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    std::string message;
    if (!doc.HasParseError() && doc.IsObject()) {
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
    if (r == "model_context_window_exceeded") return "max_tokens";
    return "other";
}

struct Usage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
};

bool read_count(const Value& usage, std::string_view key, std::int64_t& out) {
    const Value* v = member(usage, key);
    if (v == nullptr) return false;
    if (!v->IsInt64() || v->GetInt64() < 0) return false;
    out = v->GetInt64();
    return true;
}

Usage read_usage(const Value& usage, int32_t status, std::string_view body) {
    Usage u;
    if (!usage.IsObject()) protocol(status, "the answer lacks \"usage\"", body);
    if (!read_count(usage, "inputTokens", u.input)) {
        protocol(status, "the answer lacks \"usage.inputTokens\" (a count)", body);
    }
    if (!read_count(usage, "outputTokens", u.output)) {
        protocol(status, "the answer lacks \"usage.outputTokens\" (a count)", body);
    }
    read_count(usage, "cacheReadInputTokens", u.cache_read);
    read_count(usage, "cacheWriteInputTokens", u.cache_write);
    std::int64_t total = 0;
    const std::int64_t cached = u.cache_read + u.cache_write;
    if (cached > 0 && read_count(usage, "totalTokens", total) && total == u.input + u.output &&
        u.input >= cached) {
        u.input -= cached;  // a total that already held the cached tokens
    }
    return u;
}

void write_string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<SizeType>(s.size()));
}

void write_tail(Writer& w, std::string_view stop_reason, const Usage& u) {
    w.Key("stop_reason");
    w.String(normalized_stop_reason(stop_reason));
    w.Key("usage");
    w.StartObject();
    w.Key("input_tokens");
    w.Int64(u.input);
    w.Key("output_tokens");
    w.Int64(u.output);
    w.Key("cache_read_tokens");
    w.Int64(u.cache_read);
    w.Key("cache_write_tokens");
    w.Int64(u.cache_write);
    w.EndObject();
    w.EndObject();
}

void write_head(Writer& w) {
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("blocks");
}

void write_thinking(Writer& w, std::string_view text, std::string_view signature) {
    w.StartObject();
    w.Key("type");
    w.String("thinking");
    w.Key("thinking");
    write_string(w, text);
    w.Key("signature");
    write_string(w, signature);
    w.EndObject();
}

void write_redacted(Writer& w, std::string_view data) {
    w.StartObject();
    w.Key("type");
    w.String("redacted_thinking");
    w.Key("data");
    write_string(w, data);
    w.EndObject();
}

void write_text(Writer& w, std::string_view text) {
    w.StartObject();
    w.Key("type");
    w.String("text");
    w.Key("text");
    write_string(w, text);
    w.EndObject();
}

void write_block(Writer& w, const Value& block, std::size_t k, int32_t status,
                 std::string_view body) {
    const std::string where = "output.message.content[" + std::to_string(k) + "]";
    if (!block.IsObject()) protocol(status, where + " is not an object", body);
    if (const Value* text = string_member(block, "text")) {
        write_text(w, view(*text));
    } else if (const Value* use = member(block, "toolUse")) {
        const Value* id = string_member(*use, "toolUseId");
        const Value* name = string_member(*use, "name");
        if (id == nullptr || name == nullptr) {
            protocol(status, where + ".toolUse lacks \"toolUseId\" or \"name\"", body);
        }
        w.StartObject();
        w.Key("type");
        w.String("tool_use");
        w.Key("id");
        write_string(w, view(*id));
        w.Key("name");
        write_string(w, view(*name));
        w.Key("input");
        const Value* input = member(*use, "input");
        if (input != nullptr && input->IsObject()) {
            input->Accept(w);
        } else {
            w.StartObject();
            w.EndObject();
        }
        w.EndObject();
    } else if (const Value* reasoning = member(block, "reasoningContent")) {
        if (const Value* rt = member(*reasoning, "reasoningText")) {
            const Value* text = string_member(*rt, "text");
            if (text == nullptr) protocol(status, where + ".reasoningText lacks \"text\"", body);
            const Value* sig = string_member(*rt, "signature");
            write_thinking(w, view(*text), sig != nullptr ? view(*sig) : std::string_view());
        } else if (const Value* redacted = string_member(*reasoning, "redactedContent")) {
            write_redacted(w, view(*redacted));
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
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError()) {
        protocol(status,
                 std::string("the answer is not JSON or is cut off (byte offset ") +
                     std::to_string(doc.GetErrorOffset()) + ": " +
                     rapidjson::GetParseError_En(doc.GetParseError()) + ")",
                 body);
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
    const Usage u = read_usage(*usage, status, body);

    rapidjson::StringBuffer out;
    Writer w(out);
    write_head(w);
    w.StartArray();
    for (SizeType k = 0; k < content->Size(); ++k) write_block(w, (*content)[k], k, status, body);
    w.EndArray();
    write_tail(w, view(*stop), u);
    return {out.GetString(), out.GetSize()};
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
    Usage usage;
    for (const StreamEvent& ev : read_event_stream(body)) {
        if (ev.message_type == "exception" || ev.message_type == "error") {
            rapidjson::Document doc;
            doc.Parse(ev.payload.data(), ev.payload.size());
            std::string message;
            if (!doc.HasParseError() && doc.IsObject()) {
                if (const Value* m = string_member(doc, "message")) message = view(*m);
            }
            throw Failure(error_status(ev.event_type, 0),
                          "bedrock: stream " + ev.event_type + ": " +
                              (message.empty() ? quote_first_bytes(ev.payload) : message),
                          status);
        }
        rapidjson::Document doc;
        doc.Parse(ev.payload.data(), ev.payload.size());
        if (doc.HasParseError() || !doc.IsObject()) {
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

    rapidjson::StringBuffer out;
    Writer w(out);
    write_head(w);
    w.StartArray();
    const bool cut = normalized_stop_reason(stop_reason) == std::string_view("max_tokens");
    for (const auto& [index, p] : blocks) {
        switch (p.kind) {
            case Partial::Kind::kText:
                write_text(w, p.text);
                break;
            case Partial::Kind::kThinking:
                write_thinking(w, p.text, p.signature);
                break;
            case Partial::Kind::kRedacted:
                write_redacted(w, p.text);
                break;
            case Partial::Kind::kToolUse: {
                rapidjson::Document input;
                if (!p.text.empty()) input.Parse(p.text.data(), p.text.size());
                const bool whole = !p.text.empty() && !input.HasParseError() && input.IsObject();
                if (!whole && !p.text.empty() && !cut) {
                    protocol(
                        status,
                        "the streamed input of tool call \"" + p.id + "\" is not a JSON object",
                        p.text);
                }
                w.StartObject();
                w.Key("type");
                w.String("tool_use");
                w.Key("id");
                write_string(w, p.id);
                w.Key("name");
                write_string(w, p.name);
                w.Key("input");
                if (whole) {
                    input.Accept(w);
                } else {  // no input, or cut off by max_tokens: never a half call
                    w.StartObject();
                    w.EndObject();
                }
                w.EndObject();
                break;
            }
            case Partial::Kind::kNone:
                break;
        }
    }
    w.EndArray();
    write_tail(w, stop_reason, usage);
    return {out.GetString(), out.GetSize()};
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    if (http_status < 200 || http_status >= 300) error_answer(http_status, headers_json, body);
    const std::string type = header(headers_json, "content-type");
    if (type.rfind("application/vnd.amazon.eventstream", 0) == 0) {
        return decode_stream(http_status, body);
    }
    return decode_json(http_status, body);
}

}  // namespace nucleo::bedrock
