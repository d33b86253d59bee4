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
//  - Content blocks modelled: text, tool_use, thinking (with its signature, which the next
//    request must send back) and redacted_thinking. Every other kind (compaction, server tools,
//    tool search, MCP, a kind added later) is kept verbatim as a provider block (answers.110),
//    which the next request sends back in its place: the API asks for the assistant content
//    whole and in order. Streamed, such a block is the content_block_start's, with its deltas
//    merged: input_json_delta into "input", compaction_delta's content appended and its
//    encrypted_content set, signature_delta into "signature"; a delta of another kind is logged
//    and not merged. Citations on text are not carried (the conversation document has no field
//    for them).
//  - The answer's "id" is the response_id, and "diagnostics.cache_miss_reason" the cache_miss
//    (caching.131): its "type" the reason, "cache_missed_input_tokens" the count, null "pending"
//    (the comparison was not done when the answer was written), a type this plugin does not know
//    passed as it is.
//  - stop_reason: end_turn, max_tokens, tool_use, stop_sequence, pause_turn, refusal and
//    compaction pass as they are; model_context_window_exceeded is context_window_exceeded (the
//    input left no room to answer: the core refuses it as a context overflow, never as an output
//    truncation); anything else, or null, is "other". An empty content (documented after tool
//    results, and with a refusal) is an answer with no blocks.
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
//    carries the provider's error type and text, then "(error_code: CODE)" from error.details
//    (wire.211), retry-after and request-id when present.
//  - A 2xx body that is empty, not JSON, cut off or without a required field (content,
//    stop_reason, usage.input_tokens, usage.output_tokens; a block's own fields) is
//    NUCLEO_ERR_PROTOCOL naming what and quoting the first 200 bytes. `model` is optional.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "anthropic.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::anthropic {
namespace {

using nucleo::plugin::Failure;
using nucleo::plugin::Host;
using providers::member;
using providers::quote_first_bytes;
using providers::view;
using rapidjson::Value;

[[noreturn]] void off_format(int32_t http_status, const std::string& what, std::string_view body) {
    providers::off_format("anthropic", http_status, what, body);
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

/// The answer's headers (lower-case names); an unreadable document counts as no headers.
struct Headers {
    std::string content_type, retry_after, request_id;
};

Headers read_headers(std::string_view headers_json) {
    return {providers::header(headers_json, "content-type"),
            providers::header(headers_json, "retry-after"),
            providers::header(headers_json, "request-id")};
}

/// Throws the mapped failure for an error answer. `by_type`: an error inside a 2xx answer (an
/// error event of a stream, or an error object sent with 200), mapped by its error type and
/// reported with the status that type comes with.
[[noreturn]] void fail_with_error(int32_t http_status, const Value* error, std::string_view body,
                                  const Headers& headers, bool by_type) {
    const Value* type = error != nullptr ? member(*error, "type") : nullptr;
    const Value* message = error != nullptr ? member(*error, "message") : nullptr;
    const std::string_view type_name =
        type != nullptr && type->IsString() ? view(*type) : std::string_view();
    int32_t code = providers::status_for_http(http_status);
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
        text += " and a body that is not an Anthropic error: " + quote_first_bytes(body);
    } else {
        text += " " + std::string(type_name) + ": " + std::string(view(*message));
        if (code == NUCLEO_ERR_INVALID_ARGUMENT &&
            view(*message).find("prompt is too long") != std::string_view::npos) {
            code = NUCLEO_ERR_CONTEXT_OVERFLOW;
        }
    }
    // wire.211: the error's `details.error_code` (the SDK raises ThreadNotFoundError and the
    // others from it), so the core can tell a thread it must replay; kept only when it reads as
    // a code (lower-case letters, digits and '_', at most 64).
    if (const Value* details = error != nullptr ? member(*error, "details") : nullptr;
        details != nullptr && details->IsObject()) {
        const Value* code_value = member(*details, "error_code");
        if (code_value != nullptr && code_value->IsString()) {
            const std::string_view c = view(*code_value);
            const bool plain =
                !c.empty() && c.size() <= 64 && std::all_of(c.begin(), c.end(), [](char ch) {
                    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
                });
            if (plain) text += " (error_code: " + std::string(c) + ")";
        }
    }
    if (!headers.retry_after.empty()) text += " (retry-after: " + headers.retry_after + ")";
    if (!headers.request_id.empty()) text += " (request-id: " + headers.request_id + ")";
    throw Failure(code, text, http_status);
}

std::string_view normalize_stop_reason(const Value* v) {
    if (v == nullptr || !v->IsString()) return "other";
    const std::string_view s = view(*v);
    for (std::string_view known : {"end_turn", "max_tokens", "tool_use", "stop_sequence",
                                   "pause_turn", "refusal", "compaction"}) {
        if (s == known) return known;
    }
    if (s == "model_context_window_exceeded") return "context_window_exceeded";
    return "other";
}

std::string compact(const Value& v) {
    rapidjson::StringBuffer buf;
    providers::JsonWriter w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

/// One decoded content block. text: a = text; tool_use: a = id, b = name, input = compact JSON
/// (in a stream: the concatenated partial JSON until the end); thinking: a = thinking,
/// b = signature; redacted_thinking: a = data. kProvider: input = the block's compact JSON (in a
/// stream: the content_block_start's), a = streamed content, b = streamed signature, partial =
/// streamed input JSON, encrypted = the last encrypted_content (see the decisions above).
struct Block {
    enum Kind { kText, kToolUse, kThinking, kRedacted, kProvider } kind = kText;
    std::string a, b, input;
    std::string partial, encrypted;
    bool has_encrypted = false;
};

/// caching.131: the answer's diagnostics, read leniently (a shape off the SDK's gives none).
void read_diagnostics(const Value& message, std::string& reason, std::int64_t& missed) {
    const Value* d = member(message, "diagnostics");
    if (d == nullptr || !d->IsObject()) return;
    const Value* why = member(*d, "cache_miss_reason");
    if (why == nullptr) return;
    if (why->IsNull()) {
        reason = "pending";
        return;
    }
    if (!why->IsObject()) return;
    const Value* type = member(*why, "type");
    if (type == nullptr || !type->IsString()) return;
    reason = view(*type);
    if (const Value* n = member(*why, "cache_missed_input_tokens");
        n != nullptr && n->IsInt64() && n->GetInt64() >= 0)
        missed = n->GetInt64();
}

struct Response {
    std::string id;
    std::string cache_miss;
    std::int64_t cache_missed = -1;
    std::string model;
    std::vector<Block> blocks;
    std::string_view stop_reason = "other";
    providers::Usage usage;
};

class Reader {
  public:
    Reader(int32_t http_status, std::string_view body) : status_(http_status), body_(body) {}

    [[noreturn]] void lacks(const std::string& where, const char* field) const {
        off_format(status_, where + " lacks \"" + field + "\"", body_);
    }

    std::string string(const Value& object, const char* key, const std::string& where,
                       bool optional = false) const {
        const Value* v = member(object, key);
        if (v != nullptr && v->IsString()) return std::string(view(*v));
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
            const Value* input = member(b, "input");
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
            out.kind = Block::kProvider;  // answers.110: kept as the API wrote it
            out.input = compact(b);
        }
        return out;
    }

    void usage(const Value& u, Response& r, bool partial) const {
        static constexpr const char* kFields[4] = {"input_tokens", "output_tokens",
                                                   "cache_read_input_tokens",
                                                   "cache_creation_input_tokens"};
        std::int64_t* counts[4] = {&r.usage.input, &r.usage.output, &r.usage.cache_read,
                                   &r.usage.cache_write};
        for (int i = 0; i < 4; ++i) {
            const Value* v = member(u, kFields[i]);
            if (v != nullptr && v->IsInt64() && v->GetInt64() >= 0) {
                *counts[i] = v->GetInt64();
            } else if (v != nullptr && !v->IsNull()) {
                off_format(status_, std::string("usage.") + kFields[i] + " is not a count", body_);
            } else if (i < 2 && !partial) {
                lacks("usage", kFields[i]);
            }
        }
        // caching.108: the 1-hour part of the writes, priced apart by the core.
        if (const Value* split = member(u, "cache_creation");
            split != nullptr && split->IsObject()) {
            const Value* hour = member(*split, "ephemeral_1h_input_tokens");
            if (hour != nullptr && hour->IsInt64() && hour->GetInt64() >= 0)
                r.usage.cache_write_1h = std::min(hour->GetInt64(), r.usage.cache_write);
        }
    }

    Response message(const Value& m) const {
        Response r;
        if (const Value* id = member(m, "id"); id != nullptr && id->IsString()) r.id = view(*id);
        read_diagnostics(m, r.cache_miss, r.cache_missed);
        const Value* model = member(m, "model");
        if (model != nullptr && model->IsString()) r.model = view(*model);
        const Value* content = member(m, "content");
        if (content == nullptr || !content->IsArray()) lacks("the message", "content");
        for (rapidjson::SizeType i = 0; i < content->Size(); ++i) {
            const Value& b = (*content)[i];
            const std::string where = "content[" + std::to_string(i) + "]";
            if (!b.IsObject()) off_format(status_, where + " is not an object", body_);
            r.blocks.push_back(block(b, where, false));
        }
        const Value* stop = member(m, "stop_reason");
        if (stop == nullptr) lacks("the message", "stop_reason");
        r.stop_reason = normalize_stop_reason(stop);
        const Value* u = member(m, "usage");
        if (u == nullptr || !u->IsObject()) lacks("the message", "usage");
        usage(*u, r, false);
        return r;
    }

    /// Assembles a server-sent event stream into the message it carries.
    Response stream(const Headers& headers) const {
        Response r;
        bool started = false, stopped = false;
        auto dispatch = [&](std::string_view data) {
            if (data.empty()) return;
            rapidjson::Document event;
            // limits.120: a stream event is read under the guard, the limit named when hit.
            if (const auto refusal = json_guard::parse(event, data)) {
                off_format(status_,
                           "carries a stream event that is not JSON (" + refusal->text() + "; " +
                               quote_first_bytes(data) + ")",
                           body_);
            }
            if (!event.IsObject()) {
                off_format(
                    status_,
                    "carries a stream event that is not JSON (" + quote_first_bytes(data) + ")",
                    body_);
            }
            const std::string type = string(event, "type", "a stream event");
            if (type == "error") {
                fail_with_error(status_, member(event, "error"), body_, headers, true);
            } else if (type == "message_start") {
                const Value* m = member(event, "message");
                if (m == nullptr || !m->IsObject()) lacks("message_start", "message");
                const Value* model = member(*m, "model");
                if (model != nullptr && model->IsString()) r.model = view(*model);
                if (const Value* id = member(*m, "id"); id != nullptr && id->IsString())
                    r.id = view(*id);
                read_diagnostics(*m, r.cache_miss, r.cache_missed);
                if (const Value* u = member(*m, "usage"); u != nullptr && u->IsObject()) {
                    usage(*u, r, true);
                }
                started = true;
            } else if (type == "content_block_start") {
                const Value* b = member(event, "content_block");
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
                const Value* delta = member(event, "delta");
                if (delta == nullptr) lacks("content_block_delta", "delta");
                Block& b = r.blocks[at];
                const std::string kind = string(*delta, "type", "content_block_delta.delta");
                if (b.kind == Block::kProvider) {
                    provider_delta(b, *delta, kind);
                } else if (kind == "text_delta") {
                    b.a += string(*delta, "text", "text_delta");
                } else if (kind == "input_json_delta") {
                    b.input += string(*delta, "partial_json", "input_json_delta");
                } else if (kind == "thinking_delta") {
                    b.a += string(*delta, "thinking", "thinking_delta");
                } else if (kind == "signature_delta") {
                    b.b += string(*delta, "signature", "signature_delta");
                }
            } else if (type == "message_delta") {
                const Value* delta = member(event, "delta");
                if (delta == nullptr) lacks("message_delta", "delta");
                r.stop_reason = normalize_stop_reason(member(*delta, "stop_reason"));
                if (const Value* u = member(event, "usage"); u != nullptr && u->IsObject()) {
                    usage(*u, r, true);
                }
            } else if (type == "message_stop") {
                stopped = true;
            }
            // ping, content_block_stop and unknown events carry nothing to keep.
        };
        providers::for_each_sse_data(body_, dispatch);
        if (!started) off_format(status_, "is a stream without message_start", body_);
        if (!stopped) off_format(status_, "is a stream cut off before message_stop", body_);
        for (Block& b : r.blocks) {
            if (b.kind == Block::kProvider) merge_provider_deltas(b);
            if (b.kind != Block::kToolUse) continue;
            if (b.input.empty()) b.input = "{}";
            rapidjson::Document input;
            const auto refusal = json_guard::parse(input, b.input);
            if (!refusal && input.IsObject()) {
                b.input = compact(input);
            } else if (r.stop_reason == "max_tokens" ||
                       r.stop_reason == "context_window_exceeded") {
                b.input = "{}";  // cut off: the core never hands it to a tool
            } else {
                off_format(status_,
                           "streams tool_use " + b.a +
                               " with an input that is not a "
                               "JSON object (" +
                               (refusal ? refusal->text() + "; " : std::string()) +
                               quote_first_bytes(b.input) + ")",
                           body_);
            }
        }
        return r;
    }

  private:
    /// A delta of a provider block, kept until the stream ends (merge_provider_deltas).
    void provider_delta(Block& b, const Value& delta, const std::string& kind) const {
        if (kind == "input_json_delta") {
            b.partial += string(delta, "partial_json", "input_json_delta");
        } else if (kind == "compaction_delta") {
            b.a += string(delta, "content", "compaction_delta", true);
            if (const Value* e = member(delta, "encrypted_content");
                e != nullptr && e->IsString()) {
                b.encrypted = view(*e);
                b.has_encrypted = true;
            }
        } else if (kind == "signature_delta") {
            b.b += string(delta, "signature", "signature_delta");
        } else {
            Host::warn("anthropic: a \"" + kind + "\" delta of a provider block was not merged");
        }
    }

    /// The streamed parts of a provider block put into the block content_block_start opened.
    void merge_provider_deltas(Block& b) const {
        if (b.partial.empty() && b.a.empty() && b.b.empty() && !b.has_encrypted) return;
        rapidjson::Document block;
        block.Parse(b.input.data(), b.input.size());  // written by compact(): valid JSON
        auto& alloc = block.GetAllocator();
        const auto set = [&](const char* key, Value value) {
            if (Value* at = member_mut(block, key)) {
                *at = std::move(value);
            } else {
                block.AddMember(Value(key, alloc), std::move(value), alloc);
            }
        };
        if (!b.partial.empty()) {
            rapidjson::Document input(&alloc);
            const auto refusal = json_guard::parse(input, b.partial);
            if (refusal || !input.IsObject())
                off_format(status_,
                           "streams a provider block whose input is not a JSON object (" +
                               quote_first_bytes(b.partial) + ")",
                           body_);
            set("input", Value(input, alloc));
        }
        if (!b.a.empty()) {
            std::string content;
            if (const Value* c = member(block, "content"); c != nullptr && c->IsString())
                content = view(*c);
            content += b.a;
            set("content",
                Value(content.c_str(), static_cast<rapidjson::SizeType>(content.size()), alloc));
        }
        if (b.has_encrypted)
            set("encrypted_content",
                Value(b.encrypted.c_str(), static_cast<rapidjson::SizeType>(b.encrypted.size()),
                      alloc));
        if (!b.b.empty())
            set("signature",
                Value(b.b.c_str(), static_cast<rapidjson::SizeType>(b.b.size()), alloc));
        b.input = compact(block);
    }

    static Value* member_mut(Value& object, const char* key) {
        const auto it = object.FindMember(key);
        return it == object.MemberEnd() ? nullptr : &it->value;
    }

    std::size_t index(const Value& event, const char* where) const {
        const Value* i = member(event, "index");
        if (i == nullptr || !i->IsUint64()) lacks(where, "index");
        return static_cast<std::size_t>(i->GetUint64());
    }

    int32_t status_;
    std::string_view body_;
};

std::string write(const Response& r) {
    providers::ResponseWriter w(r.model);
    for (const Block& b : r.blocks) {
        switch (b.kind) {
            case Block::kText:
                w.text(b.a);
                break;
            case Block::kToolUse:
                w.tool_use_raw(b.a, b.b, b.input);
                break;
            case Block::kThinking:
                w.thinking(b.a, b.b);
                break;
            case Block::kRedacted:
                w.redacted_thinking(b.a);
                break;
            case Block::kProvider:
                w.provider_block(kWireFamily, b.input);
                break;
        }
    }
    w.response_id(r.id);
    if (!r.cache_miss.empty()) w.cache_miss(r.cache_miss, r.cache_missed);
    return w.finish(r.stop_reason, r.usage);
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
        const bool parsed = !json_guard::parse(doc, body) && doc.IsObject();
        fail_with_error(http_status, parsed ? member(doc, "error") : nullptr, body, headers, false);
    }
    const Reader reader(http_status, body);
    if (looks_like_stream(headers, body)) return write(reader.stream(headers));
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        off_format(http_status, "has an empty body", body);
    }
    rapidjson::Document doc;
    // limits.120 to limits.122: depth-bounded (a 10^5-deep tool input is refused naming the
    // limit), no duplicate key, no raw NUL.
    if (const auto refusal = json_guard::parse(doc, body)) {
        off_format(
            http_status,
            refusal->offset != json_guard::Refusal::kNoOffset && refusal->offset >= body.size()
                ? "is cut off: the JSON ends after " + std::to_string(body.size()) + " bytes"
                : "is not JSON: " + providers::refusal_words(*refusal),
            body);
    }
    if (!doc.IsObject()) off_format(http_status, "is not a JSON object", body);
    if (const Value* type = member(doc, "type");
        type != nullptr && type->IsString() && view(*type) == "error") {
        fail_with_error(http_status, member(doc, "error"), body, headers, true);
    }
    return write(reader.message(doc));
}

}  // namespace nucleo::anthropic
