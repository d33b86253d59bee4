// decode: a Responses API answer (one Response object, or the SSE body of a streamed answer) →
// the normalized response (docs/spec/openai-responses.md responses.9-responses.11).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"
#include "responses.hpp"

namespace nucleo::responses {
namespace {

using json::member;
using json::text;
using json::Value;
using json::Writer;

[[noreturn]] void off_format(int32_t status, const std::string& what, std::string_view body) {
    throw plugin::Failure(NUCLEO_ERR_PROTOCOL,
                          "openai-responses: HTTP " + std::to_string(status) + " answer " + what +
                              "; first bytes: " + json::quote_first_bytes(body),
                          status);
}

int32_t status_for_http(int32_t http) {
    if (http == 429) return NUCLEO_ERR_RATE_LIMITED;
    if (http >= 500 || http == 408) return NUCLEO_ERR_OVERLOADED;
    if (http == 401 || http == 403) return NUCLEO_ERR_CONFIG;
    if (http == 404) return NUCLEO_ERR_NOT_FOUND;
    if (http >= 400) return NUCLEO_ERR_INVALID_ARGUMENT;
    return NUCLEO_ERR_PROTOCOL;
}

/// responses.11: the status an error `code` inside a 200 answer (a failed response, an `error`
/// event) maps to.
int32_t status_for_code(std::string_view code) {
    if (code == "rate_limit_exceeded" || code == "insufficient_quota")
        return NUCLEO_ERR_RATE_LIMITED;
    if (code == "server_error" || code.empty() || code.ends_with("_timeout"))
        return NUCLEO_ERR_OVERLOADED;
    return NUCLEO_ERR_INVALID_ARGUMENT;
}

/// The text of an error object: "type/code: message (param)".
std::string error_text(const Value* e) {
    std::string message(text(member(e, "message")));
    const std::string_view code = text(member(e, "code"));
    const std::string_view type = text(member(e, "type"));
    const std::string_view param = text(member(e, "param"));
    std::string out;
    if (!type.empty()) out.append(type);
    if (!code.empty()) out.append(out.empty() ? "" : "/").append(code);
    if (!out.empty()) out.append(": ");
    out.append(message);
    if (!param.empty()) out.append(" (param ").append(param).append(")");
    return out;
}

/// responses.11: {"error": {"message", "type", "param", "code"}} → the mapped status.
[[noreturn]] void error_answer(int32_t http, std::string_view body) {
    rapidjson::Document d;
    std::string why;
    std::string message;
    if (json::parse(body, d, why)) message = error_text(member(d, "error"));
    if (message.empty()) message = "first bytes: " + json::quote_first_bytes(body);
    throw plugin::Failure(status_for_http(http),
                          "openai-responses: HTTP " + std::to_string(http) + ": " + message, http);
}

[[noreturn]] void failed_in_answer(int32_t http, const Value* e, std::string_view what) {
    const std::string message = error_text(e);
    throw plugin::Failure(status_for_code(text(member(e, "code"))),
                          "openai-responses: " + std::string(what) +
                              (message.empty() ? std::string() : ": " + message),
                          http);
}

void key_string(Writer& w, std::string_view k, std::string_view v) {
    json::key(w, k);
    json::string(w, v);
}

/// responses.9: a function call's arguments as the tool_use input: the object they parse to, or
/// {"_raw": "..."} when they are not one (cut short at the output limit, or malformed).
void write_arguments(Writer& w, std::string_view args) {
    rapidjson::Document d;
    std::string why;
    if (json::parse(args, d, why) && d.IsObject()) {
        d.Accept(w);
        return;
    }
    w.StartObject();
    key_string(w, "_raw", args);
    w.EndObject();
}

struct Summary {
    bool calls = false;
    bool refusal = false;
};

void write_item(Writer& w, const Value& item, std::string_view model, Summary& s) {
    const std::string_view type = text(member(item, "type"));
    if (type == "reasoning") {
        // responses.5: the item as it came, then its summary as a thinking block.
        w.StartObject();
        key_string(w, "type", "provider_block");
        key_string(w, "wire_family", kWireFamily);
        json::key(w, "block");
        w.StartObject();
        key_string(w, "type", kReasoningBlock);
        key_string(w, "model", model);
        json::key(w, "item");
        item.Accept(w);
        w.EndObject();
        w.EndObject();
        std::string summary;
        if (const Value* parts = member(item, "summary"); parts != nullptr && parts->IsArray()) {
            for (const auto& p : parts->GetArray()) {
                const std::string_view t = text(member(p, "text"));
                if (t.empty()) continue;
                if (!summary.empty()) summary += "\n\n";
                summary += t;
            }
        }
        if (!summary.empty()) {
            w.StartObject();
            key_string(w, "type", "thinking");
            key_string(w, "thinking", summary);
            w.EndObject();
        }
    } else if (type == "message") {
        const Value* content = member(item, "content");
        if (content == nullptr || !content->IsArray()) return;
        for (const auto& c : content->GetArray()) {
            const std::string_view ct = text(member(c, "type"));
            std::string_view t;
            if (ct == "output_text") t = text(member(c, "text"));
            if (ct == "refusal") {
                t = text(member(c, "refusal"));
                s.refusal = true;
            }
            if (t.empty()) continue;
            w.StartObject();
            key_string(w, "type", "text");
            key_string(w, "text", t);
            w.EndObject();
        }
    } else if (type == "function_call") {
        s.calls = true;
        w.StartObject();
        key_string(w, "type", "tool_use");
        std::string_view id = text(member(item, "call_id"));
        if (id.empty()) id = text(member(item, "id"));
        key_string(w, "id", id);
        key_string(w, "name", text(member(item, "name")));
        json::key(w, "input");
        write_arguments(w, text(member(item, "arguments")));
        w.EndObject();
    }
    // Hosted tools' items (web_search_call, ...) are not asked for by this dialect: left out.
}

/// responses.9, responses.10: the normalized document of a Response object, its output items
/// `items` (the response's own, or those a stream's events carried).
std::string normalized(const Value& r, const std::vector<const Value*>& items) {
    rapidjson::StringBuffer b;
    Writer w(b);
    const std::string_view model = text(member(r, "model"));
    w.StartObject();
    json::key(w, "schema_version");
    w.Int(1);
    key_string(w, "model", model);
    if (const std::string_view id = text(member(r, "id")); !id.empty())
        key_string(w, "response_id", id);
    json::key(w, "blocks");
    w.StartArray();
    Summary s;
    for (const Value* item : items) write_item(w, *item, model, s);
    w.EndArray();
    const std::string_view status = text(member(r, "status"));
    const std::string_view reason = text(member(member(r, "incomplete_details"), "reason"));
    std::string_view stop = "end_turn";
    if (status == "incomplete")
        stop = reason == "max_output_tokens" ? "max_tokens"
               : reason == "content_filter"  ? "content_filter"
                                             : "other";
    else if (s.calls)
        stop = "tool_use";
    else if (s.refusal)
        stop = "refusal";
    key_string(w, "stop_reason", stop);
    const Value* u = member(r, "usage");
    const std::int64_t input = json::count(member(u, "input_tokens"));
    const Value* details = member(u, "input_tokens_details");
    const std::int64_t cached = json::count(member(details, "cached_tokens"));
    const std::int64_t written = json::count(member(details, "cache_write_tokens"));
    json::key(w, "usage");
    w.StartObject();
    json::key(w, "input_tokens");
    w.Int64(input > cached + written ? input - cached - written : 0);
    json::key(w, "output_tokens");
    w.Int64(json::count(member(u, "output_tokens")));
    json::key(w, "cache_read_tokens");
    w.Int64(cached);
    json::key(w, "cache_write_tokens");
    w.Int64(written);
    w.EndObject();
    w.EndObject();
    return {b.GetString(), b.GetSize()};
}

/// Checks a Response object's status and decodes it (responses.9, responses.11).
std::string decode_object(int32_t http, const Value& r, const std::vector<const Value*>& items,
                          std::string_view body) {
    if (!r.IsObject()) off_format(http, "carries a response that is no object", body);
    const std::string_view status = text(member(r, "status"));
    if (status == "failed") failed_in_answer(http, member(r, "error"), "the response failed");
    if (status == "cancelled") off_format(http, "reports a cancelled response", body);
    if (status != "completed" && status != "incomplete")
        off_format(http,
                   status.empty() ? "has no status" : "has status \"" + std::string(status) + "\"",
                   body);
    if (const Value* u = member(r, "usage"); u == nullptr || !u->IsObject())
        off_format(http, "has no usage", body);
    return normalized(r, items);
}

std::vector<const Value*> output_of(const Value& r) {
    std::vector<const Value*> out;
    const Value* output = member(r, "output");
    if (output != nullptr && output->IsArray())
        for (const auto& item : output->GetArray())
            if (item.IsObject()) out.push_back(&item);
    return out;
}

bool is_sse(std::string_view headers_json, std::string_view body) {
    std::size_t i = 0;
    while (i < body.size() && (body[i] == ' ' || body[i] == '\r' || body[i] == '\n')) ++i;
    const std::string_view rest = body.substr(i);
    if (rest.starts_with("data:") || rest.starts_with("event:")) return true;
    return headers_json.find("text/event-stream") != std::string_view::npos;
}

/// responses.10: the `data:` payloads of an SSE body, each event's lines joined by '\n'.
void sse_events(std::string_view body, std::vector<std::string>& events) {
    std::string data;
    bool has_data = false;
    std::size_t pos = 0;
    while (pos < body.size()) {
        std::size_t end = body.find('\n', pos);
        const bool last_line = end == std::string_view::npos;
        std::string_view line = body.substr(pos, last_line ? std::string_view::npos : end - pos);
        pos = last_line ? body.size() : end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            if (has_data) events.push_back(std::move(data));
            data.clear();
            has_data = false;
            continue;
        }
        if (line.starts_with("data:")) {
            line.remove_prefix(5);
            if (line.starts_with(" ")) line.remove_prefix(1);
            if (has_data) data += '\n';
            data.append(line);
            has_data = true;
        }
    }
    // An event no blank line closed is not taken: a stream cut inside it has no terminal event.
}

std::string decode_stream(int32_t http, std::string_view body) {
    std::vector<std::string> events;
    sse_events(body, events);
    std::vector<rapidjson::Document> docs(events.size());
    std::map<std::int64_t, const Value*> done_items;
    const Value* terminal = nullptr;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i] == "[DONE]") continue;
        std::string why;
        if (!json::parse(events[i], docs[i], why))
            off_format(http, "carries a stream event that is not JSON (" + why + ")", body);
        const Value& d = docs[i];
        if (!d.IsObject()) off_format(http, "carries a stream event that is no object", body);
        const std::string_view type = text(member(d, "type"));
        if (type == "error") failed_in_answer(http, &d, "the stream reported an error");
        if (type == "response.output_item.done") {
            const Value* item = member(d, "item");
            const Value* index = member(d, "output_index");
            if (item != nullptr && item->IsObject() && index != nullptr && index->IsInt64())
                done_items[index->GetInt64()] = item;
        }
        if (type == "response.completed" || type == "response.incomplete" ||
            type == "response.failed") {
            terminal = member(d, "response");
            if (terminal == nullptr || !terminal->IsObject())
                off_format(http, "ends its stream with a terminal event without a response", body);
            break;
        }
    }
    if (terminal == nullptr)
        off_format(http, "ends its stream without response.completed (cut short)", body);
    std::vector<const Value*> items = output_of(*terminal);
    if (items.empty())
        for (const auto& [index, item] : done_items) items.push_back(item);
    return decode_object(http, *terminal, items, body);
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    if (http_status < 200 || http_status > 299) error_answer(http_status, body);
    if (is_sse(headers_json, body)) return decode_stream(http_status, body);
    rapidjson::Document d;
    std::string why;
    if (!json::parse(body, d, why)) off_format(http_status, "is not JSON (" + why + ")", body);
    if (!d.IsObject()) off_format(http_status, "is not a JSON object", body);
    if (const Value* e = member(d, "error");
        e != nullptr && e->IsObject() && text(member(d, "status")) != "failed")
        failed_in_answer(http_status, e, "the answer is an error");
    return decode_object(http_status, d, output_of(d), body);
}

}  // namespace nucleo::responses
