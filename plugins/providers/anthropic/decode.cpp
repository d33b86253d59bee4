// decode: an HTTP answer of POST /v1/messages → the normalized response
// (docs/provider-abi-documents.md "decode").
//
// Shapes read (the Messages API reference):
//  - a Message: {"id", "type": "message", "role": "assistant", "model", "content": [...],
//    "stop_reason", "stop_sequence", "usage": {"input_tokens", "output_tokens",
//    "cache_creation_input_tokens", "cache_read_input_tokens", ...}};
//  - a server-sent event stream (`"stream": true`): message_start, content_block_start /
//    _delta (text_delta, input_json_delta, thinking_delta, signature_delta) / _stop,
//    message_delta, message_stop, ping, error — assembled into the same normalized response;
//  - an error: {"type": "error", "error": {"type", "message"}, "request_id"}.
//
// Decisions where the docs are silent:
//  - Content blocks kept: text, tool_use, thinking (with its signature, which the next request
//    must send back) and redacted_thinking. Other kinds belong to server tools this plugin never
//    declares; they are skipped with a warning to the host log rather than failing the answer.
//    Citations on text are not carried (the conversation document has no field for them).
//  - stop_reason: end_turn, max_tokens, tool_use, stop_sequence, pause_turn and refusal pass as
//    they are; model_context_window_exceeded is max_tokens (the API says: treat as truncated);
//    anything else, or null, is "other".
//  - usage: input_tokens is already the uncached part (Anthropic's split);
//    cache_creation_input_tokens → cache_write_tokens, cache_read_input_tokens →
//    cache_read_tokens; a missing or null cache count is 0. In a stream, message_delta's counts
//    (cumulative) replace message_start's.
//  - A streamed tool_use whose input JSON is cut off is kept with input {} when the answer
//    stopped at max_tokens (the core sees the truncation and never hands it to a tool); otherwise
//    the stream is off its format.
//  - Errors map by HTTP status: 429 rate limited, 529 and 5xx overloaded, 401/402/403 config
//    (credentials, billing, permission), 404 not found, other 4xx invalid argument — except a 400
//    whose message says the prompt is too long, which is context overflow (what the core can act
//    on by compacting). An error event inside a 200 stream maps by its error type. The message
//    carries the provider's error type and text, retry-after and request-id when present.
//  - A 2xx body that is empty, not JSON, cut off or without a required field (content,
//    stop_reason, usage.input_tokens, usage.output_tokens; a block's own fields) is
//    NUCLEO_ERR_PROTOCOL naming what and quoting the first 200 bytes. `model` is optional.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "anthropic.hpp"
#include "nucleo/plugin.hpp"

namespace nucleo::anthropic {
namespace {

using nucleo::plugin::Failure;
using nucleo::plugin::Host;
using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::size_t kQuoteBytes = 200;

std::string_view str(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

const Value* find(const Value& object, const char* key) {
    if (!object.IsObject()) return nullptr;
    const auto it = object.FindMember(key);
    return it == object.MemberEnd() ? nullptr : &it->value;
}

/// The first bytes of a body as one printable line: `"..."` with control and non-ASCII bytes as
/// \xNN, cut at 200 bytes with the total size said.
std::string quote(std::string_view body) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "\"";
    for (std::size_t i = 0; i < body.size() && i < kQuoteBytes; ++i) {
        const auto c = static_cast<unsigned char>(body[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7F) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
    if (body.size() > kQuoteBytes) out += " (of " + std::to_string(body.size()) + " bytes)";
    return out;
}

[[noreturn]] void off_format(int32_t http_status, const std::string& what, std::string_view body) {
    throw Failure(NUCLEO_ERR_PROTOCOL,
                  "anthropic: HTTP " + std::to_string(http_status) + " answer " + what +
                      "; first bytes: " + quote(body),
                  http_status);
}

/// The Messages API's error types, the HTTP status each comes with and the status it maps to.
struct ErrorType {
    std::string_view type;
    int32_t http_status;
    int32_t code;
};
constexpr ErrorType kErrorTypes[] = {
    {"invalid_request_error", 400, NUCLEO_ERR_INVALID_ARGUMENT},
    {"authentication_error", 401, NUCLEO_ERR_CONFIG},
    {"billing_error", 402, NUCLEO_ERR_CONFIG},
    {"permission_error", 403, NUCLEO_ERR_CONFIG},
    {"not_found_error", 404, NUCLEO_ERR_NOT_FOUND},
    {"request_too_large", 413, NUCLEO_ERR_INVALID_ARGUMENT},
    {"rate_limit_error", 429, NUCLEO_ERR_RATE_LIMITED},
    {"api_error", 500, NUCLEO_ERR_OVERLOADED},
    {"timeout_error", 504, NUCLEO_ERR_OVERLOADED},
    {"overloaded_error", 529, NUCLEO_ERR_OVERLOADED},
};

int32_t code_for_status(int32_t http_status) {
    if (http_status == 429) return NUCLEO_ERR_RATE_LIMITED;
    if (http_status >= 500) return NUCLEO_ERR_OVERLOADED;  // 529 overloaded and every 5xx
    if (http_status == 401 || http_status == 402 || http_status == 403) return NUCLEO_ERR_CONFIG;
    if (http_status == 404) return NUCLEO_ERR_NOT_FOUND;
    if (http_status >= 400) return NUCLEO_ERR_INVALID_ARGUMENT;  // 400, 413, 422, ...
    return NUCLEO_ERR_PROTOCOL;  // 1xx and 3xx are not answers the core should hand over
}

/// The answer's headers (lower-case names); an unreadable document counts as no headers.
struct Headers {
    std::string content_type, retry_after, request_id;
};

Headers read_headers(std::string_view headers_json) {
    Headers h;
    rapidjson::Document doc;
    doc.Parse(headers_json.data(), headers_json.size());
    if (doc.HasParseError() || !doc.IsObject()) return h;
    auto get = [&](const char* name, std::string& into) {
        const Value* v = find(doc, name);
        if (v != nullptr && v->IsString()) into = str(*v);
    };
    get("content-type", h.content_type);
    get("retry-after", h.retry_after);
    get("request-id", h.request_id);
    return h;
}

/// Throws the mapped failure for an error answer. `by_type`: an error inside a 2xx answer (an
/// error event of a stream, or an error object sent with 200), mapped by its error type and
/// reported with the status that type comes with.
[[noreturn]] void fail_with_error(int32_t http_status, const Value* error, std::string_view body,
                                  const Headers& headers, bool by_type) {
    const Value* type = error != nullptr ? find(*error, "type") : nullptr;
    const Value* message = error != nullptr ? find(*error, "message") : nullptr;
    const std::string_view type_name =
        type != nullptr && type->IsString() ? str(*type) : std::string_view();
    int32_t code = code_for_status(http_status);
    std::string text = "anthropic: HTTP " + std::to_string(http_status);
    if (by_type) {
        text += " carrying an error";
        code = NUCLEO_ERR_PLUGIN;  // an error type this plugin does not know
        for (const ErrorType& e : kErrorTypes) {
            if (e.type == type_name) {
                code = e.code;
                http_status = e.http_status;
            }
        }
    }
    if (type_name.empty() || message == nullptr || !message->IsString()) {
        text += " and a body that is not an Anthropic error: " + quote(body);
    } else {
        text += " " + std::string(type_name) + ": " + std::string(str(*message));
        if (code == NUCLEO_ERR_INVALID_ARGUMENT &&
            str(*message).find("prompt is too long") != std::string_view::npos) {
            code = NUCLEO_ERR_CONTEXT_OVERFLOW;
        }
    }
    if (!headers.retry_after.empty()) text += " (retry-after: " + headers.retry_after + ")";
    if (!headers.request_id.empty()) text += " (request-id: " + headers.request_id + ")";
    throw Failure(code, text, http_status);
}

std::string_view normalize_stop_reason(const Value* v) {
    if (v == nullptr || !v->IsString()) return "other";
    const std::string_view s = str(*v);
    for (std::string_view known :
         {"end_turn", "max_tokens", "tool_use", "stop_sequence", "pause_turn", "refusal"}) {
        if (s == known) return known;
    }
    if (s == "model_context_window_exceeded") return "max_tokens";
    return "other";
}

std::string compact(const Value& v) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

/// One decoded content block. text: a = text; tool_use: a = id, b = name, input = compact JSON
/// (in a stream: the concatenated partial JSON until the end); thinking: a = thinking,
/// b = signature; redacted_thinking: a = data. kSkipped: a kind this plugin does not carry.
struct Block {
    enum Kind { kText, kToolUse, kThinking, kRedacted, kSkipped } kind = kSkipped;
    std::string a, b, input;
};

struct Response {
    std::string model;
    std::vector<Block> blocks;
    std::string_view stop_reason = "other";
    std::uint64_t usage[4] = {};  // input, output, cache read, cache write
};

class Reader {
  public:
    Reader(int32_t http_status, std::string_view body) : status_(http_status), body_(body) {}

    [[noreturn]] void lacks(const std::string& where, const char* field) const {
        off_format(status_, where + " lacks \"" + field + "\"", body_);
    }

    std::string string(const Value& object, const char* key, const std::string& where,
                       bool optional = false) const {
        const Value* v = find(object, key);
        if (v != nullptr && v->IsString()) return std::string(str(*v));
        if (optional && (v == nullptr || v->IsNull())) return {};
        lacks(where, key);
    }

    /// A content block as the Message (or content_block_start) carries it.
    Block block(const Value& b, const std::string& where, bool streamed) const {
        Block out;
        const std::string type = string(b, "type", where);
        if (type == "text") {
            out.kind = Block::kText;
            out.a = string(b, "text", where);
        } else if (type == "tool_use") {
            out.kind = Block::kToolUse;
            out.a = string(b, "id", where);
            out.b = string(b, "name", where);
            const Value* input = find(b, "input");
            if (input == nullptr || !input->IsObject()) lacks(where, "input");
            // A stream starts every tool_use with input {} and sends the real one as deltas.
            if (!streamed) out.input = compact(*input);
        } else if (type == "thinking") {
            out.kind = Block::kThinking;
            out.a = string(b, "thinking", where);
            out.b = string(b, "signature", where, true);
        } else if (type == "redacted_thinking") {
            out.kind = Block::kRedacted;
            out.a = string(b, "data", where);
        } else {
            Host::warn("anthropic: skipped a \"" + type + "\" content block of the answer");
        }
        return out;
    }

    void usage(const Value& u, Response& r, bool partial) const {
        static constexpr const char* kFields[4] = {"input_tokens", "output_tokens",
                                                   "cache_read_input_tokens",
                                                   "cache_creation_input_tokens"};
        for (int i = 0; i < 4; ++i) {
            const Value* v = find(u, kFields[i]);
            if (v != nullptr && v->IsUint64()) {
                r.usage[i] = v->GetUint64();
            } else if (i < 2 && !partial) {
                lacks("usage", kFields[i]);
            } else if (v != nullptr && !v->IsNull()) {
                off_format(status_, std::string("usage.") + kFields[i] + " is not a count", body_);
            }
        }
    }

    Response message(const Value& m) const {
        Response r;
        const Value* model = find(m, "model");
        if (model != nullptr && model->IsString()) r.model = str(*model);
        const Value* content = find(m, "content");
        if (content == nullptr || !content->IsArray()) lacks("the message", "content");
        for (rapidjson::SizeType i = 0; i < content->Size(); ++i) {
            const Value& b = (*content)[i];
            const std::string where = "content[" + std::to_string(i) + "]";
            if (!b.IsObject()) off_format(status_, where + " is not an object", body_);
            r.blocks.push_back(block(b, where, false));
        }
        const Value* stop = find(m, "stop_reason");
        if (stop == nullptr) lacks("the message", "stop_reason");
        r.stop_reason = normalize_stop_reason(stop);
        const Value* u = find(m, "usage");
        if (u == nullptr || !u->IsObject()) lacks("the message", "usage");
        usage(*u, r, false);
        return r;
    }

    /// Assembles a server-sent event stream into the message it carries.
    Response stream(const Headers& headers) const {
        Response r;
        bool started = false, stopped = false;
        std::string data;
        auto dispatch = [&] {
            if (data.empty()) return;
            rapidjson::Document event;
            event.Parse(data.data(), data.size());
            if (event.HasParseError() || !event.IsObject()) {
                off_format(status_, "carries a stream event that is not JSON (" + quote(data) + ")",
                           body_);
            }
            data.clear();
            const std::string type = string(event, "type", "a stream event");
            if (type == "error") {
                fail_with_error(status_, find(event, "error"), body_, headers, true);
            } else if (type == "message_start") {
                const Value* m = find(event, "message");
                if (m == nullptr || !m->IsObject()) lacks("message_start", "message");
                const Value* model = find(*m, "model");
                if (model != nullptr && model->IsString()) r.model = str(*model);
                if (const Value* u = find(*m, "usage"); u != nullptr && u->IsObject()) {
                    usage(*u, r, true);
                }
                started = true;
            } else if (type == "content_block_start") {
                const Value* b = find(event, "content_block");
                if (b == nullptr || !b->IsObject()) lacks("content_block_start", "content_block");
                const std::size_t at = index(event, "content_block_start");
                if (at != r.blocks.size()) {
                    off_format(status_,
                               "starts content block " + std::to_string(at) + " out of order",
                               body_);
                }
                r.blocks.push_back(block(*b, "content_block_start", true));
            } else if (type == "content_block_delta") {
                const std::size_t at = index(event, "content_block_delta");
                if (at >= r.blocks.size()) {
                    off_format(status_,
                               "has a delta for content block " + std::to_string(at) +
                                   ", which never started",
                               body_);
                }
                const Value* delta = find(event, "delta");
                if (delta == nullptr) lacks("content_block_delta", "delta");
                Block& b = r.blocks[at];
                const std::string kind = string(*delta, "type", "content_block_delta.delta");
                if (kind == "text_delta") {
                    b.a += string(*delta, "text", "text_delta");
                } else if (kind == "input_json_delta") {
                    b.input += string(*delta, "partial_json", "input_json_delta");
                } else if (kind == "thinking_delta") {
                    b.a += string(*delta, "thinking", "thinking_delta");
                } else if (kind == "signature_delta") {
                    b.b += string(*delta, "signature", "signature_delta");
                }
            } else if (type == "message_delta") {
                const Value* delta = find(event, "delta");
                if (delta == nullptr) lacks("message_delta", "delta");
                r.stop_reason = normalize_stop_reason(find(*delta, "stop_reason"));
                if (const Value* u = find(event, "usage"); u != nullptr && u->IsObject()) {
                    usage(*u, r, true);
                }
            } else if (type == "message_stop") {
                stopped = true;
            }
            // ping, content_block_stop and unknown events carry nothing to keep.
        };
        std::size_t pos = 0;
        while (pos < body_.size()) {
            std::size_t end = body_.find('\n', pos);
            if (end == std::string_view::npos) end = body_.size();
            std::string_view line = body_.substr(pos, end - pos);
            pos = end + 1;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (line.empty()) {
                dispatch();
            } else if (line.starts_with("data:")) {
                line.remove_prefix(5);
                if (line.starts_with(' ')) line.remove_prefix(1);
                if (!data.empty()) data += '\n';
                data += line;
            }
        }
        dispatch();
        if (!started) off_format(status_, "is a stream without message_start", body_);
        if (!stopped) off_format(status_, "is a stream cut off before message_stop", body_);
        for (Block& b : r.blocks) {
            if (b.kind != Block::kToolUse) continue;
            if (b.input.empty()) b.input = "{}";
            rapidjson::Document input;
            input.Parse(b.input.data(), b.input.size());
            if (!input.HasParseError() && input.IsObject()) {
                b.input = compact(input);
            } else if (r.stop_reason == "max_tokens") {
                b.input = "{}";  // cut off by the output limit: never handed to a tool
            } else {
                off_format(status_,
                           "streams tool_use " + b.a +
                               " with an input that is not a "
                               "JSON object (" +
                               quote(b.input) + ")",
                           body_);
            }
        }
        return r;
    }

  private:
    std::size_t index(const Value& event, const char* where) const {
        const Value* i = find(event, "index");
        if (i == nullptr || !i->IsUint64()) lacks(where, "index");
        return static_cast<std::size_t>(i->GetUint64());
    }

    int32_t status_;
    std::string_view body_;
};

std::string write(const Response& r) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    auto s = [&](const std::string& v) {
        w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    };
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("model");
    s(r.model);
    w.Key("blocks");
    w.StartArray();
    for (const Block& b : r.blocks) {
        if (b.kind == Block::kSkipped) continue;
        w.StartObject();
        w.Key("type");
        switch (b.kind) {
            case Block::kText:
                w.String("text");
                w.Key("text");
                s(b.a);
                break;
            case Block::kToolUse:
                w.String("tool_use");
                w.Key("id");
                s(b.a);
                w.Key("name");
                s(b.b);
                w.Key("input");
                w.RawValue(b.input.data(), b.input.size(), rapidjson::kObjectType);
                break;
            case Block::kThinking:
                w.String("thinking");
                w.Key("thinking");
                s(b.a);
                w.Key("signature");
                s(b.b);
                break;
            case Block::kRedacted:
                w.String("redacted_thinking");
                w.Key("data");
                s(b.a);
                break;
            case Block::kSkipped:
                break;
        }
        w.EndObject();
    }
    w.EndArray();
    w.Key("stop_reason");
    w.String(r.stop_reason.data(), static_cast<rapidjson::SizeType>(r.stop_reason.size()));
    w.Key("usage");
    w.StartObject();
    static constexpr const char* kNames[4] = {"input_tokens", "output_tokens", "cache_read_tokens",
                                              "cache_write_tokens"};
    for (int i = 0; i < 4; ++i) {
        w.Key(kNames[i]);
        w.Uint64(r.usage[i]);
    }
    w.EndObject();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

bool looks_like_stream(const Headers& headers, std::string_view body) {
    if (headers.content_type.find("text/event-stream") != std::string::npos) return true;
    const std::size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return false;
    const std::string_view rest = body.substr(first);
    return rest.starts_with("event:") || rest.starts_with("data:");
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    const Headers headers = read_headers(headers_json);
    if (http_status < 200 || http_status >= 300) {
        rapidjson::Document doc;
        doc.Parse(body.data(), body.size());
        const bool parsed = !doc.HasParseError() && doc.IsObject();
        fail_with_error(http_status, parsed ? find(doc, "error") : nullptr, body, headers, false);
    }
    const Reader reader(http_status, body);
    if (looks_like_stream(headers, body)) return write(reader.stream(headers));
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        off_format(http_status, "has an empty body", body);
    }
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError()) {
        const std::size_t at = doc.GetErrorOffset();
        off_format(http_status,
                   at >= body.size()
                       ? "is cut off: the JSON ends after " + std::to_string(body.size()) + " bytes"
                       : std::string("is not JSON: ") +
                             rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                             std::to_string(at),
                   body);
    }
    if (!doc.IsObject()) off_format(http_status, "is not a JSON object", body);
    if (const Value* type = find(doc, "type");
        type != nullptr && type->IsString() && str(*type) == "error") {
        fail_with_error(http_status, find(doc, "error"), body, headers, true);
    }
    return write(reader.message(doc));
}

}  // namespace nucleo::anthropic
