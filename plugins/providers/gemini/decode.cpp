// decode: a generateContent answer (one JSON body, or the SSE body of streamGenerateContent) →
// the normalized response (docs/spec/gemini.md gemini.9-gemini.12).
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gemini.hpp"
#include "json.hpp"

namespace nucleo::gemini {
namespace {

using json::member;
using json::text;
using json::Value;

[[noreturn]] void off_format(int32_t status, const std::string& what, std::string_view body) {
    throw plugin::Failure(NUCLEO_ERR_PROTOCOL,
                          "gemini: HTTP " + std::to_string(status) + " answer " + what +
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

/// gemini.11: {"error": {"code", "message", "status"}} → the mapped status with the text.
[[noreturn]] void error_answer(int32_t http, std::string_view body) {
    rapidjson::Document d;
    std::string why;
    std::string message;
    if (json::parse(body, d, why)) {
        const Value* e = member(d, "error");
        const std::string_view status = text(member(e, "status"));
        message = std::string(text(member(e, "message")));
        if (!status.empty()) message = std::string(status) + ": " + message;
    }
    if (message.empty()) message = "first bytes: " + json::quote_first_bytes(body);
    throw plugin::Failure(status_for_http(http),
                          "gemini: HTTP " + std::to_string(http) + ": " + message, http);
}

/// One element of the answer, in order: a text or thought run, or a function call, each with
/// the signature its part carried (gemini.6).
struct Element {
    enum class Kind { kText, kThought, kCall, kEmptySigned } kind;
    std::string text;  ///< text, thought, or the call's name
    std::string args;  ///< a call's args as compact JSON
    std::string id;    ///< a call's id when Gemini gave one
    std::string signature;
};

struct Answer {
    std::vector<Element> elements;
    std::string model;
    std::string response_id;
    std::string finish;
    bool blocked = false;  ///< promptFeedback.blockReason without candidates
    std::int64_t prompt = 0, cached = 0, candidates = 0, thoughts = 0, tool_prompt = 0;
    bool usage_seen = false;
};

/// Adds one GenerateContentResponse (a whole answer or one streamed chunk) to `a`.
void add_chunk(const Value& r, Answer& a, bool streamed) {
    if (const std::string_view v = text(member(r, "modelVersion")); !v.empty()) a.model = v;
    if (const std::string_view v = text(member(r, "responseId")); !v.empty()) a.response_id = v;
    if (const Value* u = member(r, "usageMetadata"); u != nullptr && u->IsObject()) {
        a.usage_seen = true;
        a.prompt = json::count(member(u, "promptTokenCount"));
        a.cached = json::count(member(u, "cachedContentTokenCount"));
        a.candidates = json::count(member(u, "candidatesTokenCount"));
        a.thoughts = json::count(member(u, "thoughtsTokenCount"));
        a.tool_prompt = json::count(member(u, "toolUsePromptTokenCount"));
    }
    const Value* cands = member(r, "candidates");
    if (cands == nullptr || !cands->IsArray() || cands->Empty()) {
        if (!text(member(member(r, "promptFeedback"), "blockReason")).empty()) a.blocked = true;
        return;
    }
    const Value& c = (*cands)[0];
    if (const std::string_view f = text(member(c, "finishReason")); !f.empty()) a.finish = f;
    const Value* parts = member(member(c, "content"), "parts");
    if (parts == nullptr || !parts->IsArray()) return;
    bool first = true;
    for (const auto& p : parts->GetArray()) {
        const bool continues = streamed && std::exchange(first, false);
        const std::string_view signature = text(member(p, "thoughtSignature"));
        if (const Value* call = member(p, "functionCall"); call != nullptr && call->IsObject()) {
            Element e{Element::Kind::kCall, std::string(text(member(call, "name"))), "{}",
                      std::string(text(member(call, "id"))), std::string(signature)};
            const Value* args = member(call, "args");
            if (args != nullptr && args->IsObject()) e.args = json::compact(*args);
            a.elements.push_back(std::move(e));
            continue;
        }
        const Value* t = member(p, "text");
        if (t == nullptr || !t->IsString()) {
            // A part this dialect does not model (executableCode, inlineData out) keeps only its
            // signature's place.
            if (!signature.empty())
                a.elements.push_back(
                    {Element::Kind::kEmptySigned, "", "", "", std::string(signature)});
            continue;
        }
        const Value* thought = member(p, "thought");
        const bool is_thought = thought != nullptr && thought->IsTrue();
        const Element::Kind kind = is_thought ? Element::Kind::kThought : Element::Kind::kText;
        const std::string_view value = json::view(*t);
        // gemini.10: a streamed text run is one block: a chunk's first part continues the
        // previous chunk's last part of its kind unless that part's signature closed it.
        if (continues && !a.elements.empty() && a.elements.back().kind == kind &&
            a.elements.back().signature.empty()) {
            a.elements.back().text += value;
            a.elements.back().signature = signature;
        } else if (value.empty() && kind == Element::Kind::kText) {
            if (!signature.empty())
                a.elements.push_back(
                    {Element::Kind::kEmptySigned, "", "", "", std::string(signature)});
        } else {
            a.elements.push_back({kind, std::string(value), "", "", std::string(signature)});
        }
    }
}

/// gemini.9: finishReason → the normalized stop reason.
std::string_view stop_reason(const Answer& a, bool calls) {
    if (a.blocked && a.finish.empty()) return "content_filter";
    const std::string_view f = a.finish;
    if (f == "STOP") return calls ? "tool_use" : "end_turn";
    if (f == "MAX_TOKENS") return "max_tokens";
    if (f == "SAFETY" || f == "RECITATION" || f == "BLOCKLIST" || f == "PROHIBITED_CONTENT" ||
        f == "SPII" || f == "IMAGE_SAFETY" || f == "IMAGE_PROHIBITED_CONTENT" ||
        f == "IMAGE_RECITATION")
        return "content_filter";
    return "other";  // MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, LANGUAGE, ...
}

/// A deterministic id for a call Gemini gave none (gemini.9): the answer's id, else a hash of
/// the body, and the call's place.
std::string call_id(const Answer& a, std::string_view body, std::size_t n) {
    std::string base = a.response_id;
    if (base.empty()) {
        std::uint64_t h = 1469598103934665603ULL;
        for (const char c : body) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        static constexpr char kHex[] = "0123456789abcdef";
        for (int i = 0; i < 16; ++i, h >>= 4U) base.push_back(kHex[h & 0xFU]);
    }
    std::string id = "gc_";
    for (const char c : base)
        if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-')
            id.push_back(c);
    return id + "_" + std::to_string(n);
}

void signature_block(json::Writer& w, std::string_view signature, std::string_view on) {
    w.StartObject();
    json::key(w, "type");
    json::string(w, "provider_block");
    json::key(w, "wire_family");
    json::string(w, kWireFamily);
    json::key(w, "block");
    w.StartObject();
    json::key(w, "type");
    json::string(w, kSignatureBlock);
    json::key(w, "thoughtSignature");
    json::string(w, signature);
    json::key(w, "on");
    json::string(w, on);
    w.EndObject();
    w.EndObject();
}

std::string normalized(const Answer& a, std::string_view body) {
    rapidjson::StringBuffer b;
    json::Writer w(b);
    w.StartObject();
    json::key(w, "schema_version");
    w.Int(1);
    json::key(w, "model");
    json::string(w, a.model);
    if (!a.response_id.empty()) {
        json::key(w, "response_id");
        json::string(w, a.response_id);
    }
    json::key(w, "blocks");
    w.StartArray();
    bool calls = false;
    std::size_t n = 0;
    for (const Element& e : a.elements) {
        switch (e.kind) {
            case Element::Kind::kEmptySigned:
                signature_block(w, e.signature, "empty_text");
                break;
            case Element::Kind::kThought:
                if (!e.signature.empty()) signature_block(w, e.signature, "thought");
                w.StartObject();
                json::key(w, "type");
                json::string(w, "thinking");
                json::key(w, "thinking");
                json::string(w, e.text);
                w.EndObject();
                break;
            case Element::Kind::kText:
                if (!e.signature.empty()) signature_block(w, e.signature, "part");
                w.StartObject();
                json::key(w, "type");
                json::string(w, "text");
                json::key(w, "text");
                json::string(w, e.text);
                w.EndObject();
                break;
            case Element::Kind::kCall: {
                calls = true;
                if (!e.signature.empty()) signature_block(w, e.signature, "part");
                w.StartObject();
                json::key(w, "type");
                json::string(w, "tool_use");
                json::key(w, "id");
                json::string(w, e.id.empty() ? call_id(a, body, n) : e.id);
                json::key(w, "name");
                json::string(w, e.text);
                json::key(w, "input");
                w.RawValue(e.args.data(), e.args.size(), rapidjson::kObjectType);
                w.EndObject();
                ++n;
                break;
            }
        }
    }
    w.EndArray();
    json::key(w, "stop_reason");
    json::string(w, stop_reason(a, calls));
    // gemini.9: promptTokenCount holds the cached tokens; thoughts are output.
    const std::int64_t prompt = a.prompt + a.tool_prompt;
    json::key(w, "usage");
    w.StartObject();
    json::key(w, "input_tokens");
    w.Int64(prompt > a.cached ? prompt - a.cached : 0);
    json::key(w, "output_tokens");
    w.Int64(a.candidates + a.thoughts);
    json::key(w, "cache_read_tokens");
    w.Int64(a.cached);
    json::key(w, "cache_write_tokens");
    w.Int64(0);
    w.EndObject();
    w.EndObject();
    return {b.GetString(), b.GetSize()};
}

bool is_sse(std::string_view headers_json, std::string_view body) {
    std::size_t i = 0;
    while (i < body.size() && (body[i] == ' ' || body[i] == '\r' || body[i] == '\n')) ++i;
    if (body.substr(i).starts_with("data:")) return true;
    return headers_json.find("text/event-stream") != std::string_view::npos;
}

/// gemini.10: the `data:` payloads of an SSE body, each event's lines joined by '\n'. False when
/// the body ends inside an event (a stream cut short).
bool sse_events(std::string_view body, std::vector<std::string>& events) {
    std::string data;
    bool has_data = false;
    std::size_t pos = 0;
    bool complete = true;
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
        if (last_line) complete = false;
        if (line.starts_with("data:")) {
            line.remove_prefix(5);
            if (line.starts_with(" ")) line.remove_prefix(1);
            if (has_data) data += '\n';
            data.append(line);
            has_data = true;
        }
    }
    if (has_data) {
        events.push_back(std::move(data));
        complete = false;  // no blank line closed the last event
    }
    return complete;
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    if (http_status < 200 || http_status > 299) error_answer(http_status, body);
    Answer a;
    if (is_sse(headers_json, body)) {
        std::vector<std::string> events;
        const bool complete = sse_events(body, events);
        for (const std::string& data : events) {
            rapidjson::Document d;
            std::string why;
            if (!json::parse(data, d, why))
                off_format(http_status, "carries a stream event that is not JSON (" + why + ")",
                           body);
            if (const Value* e = member(d, "error"); e != nullptr) {
                const Value* code = member(e, "code");
                const int32_t http = code != nullptr && code->IsInt() ? code->GetInt() : 500;
                error_answer(http >= 400 && http <= 599 ? http : 500, data);
            }
            if (!d.IsObject())
                off_format(http_status, "carries a stream event that is no object", body);
            add_chunk(d, a, true);
        }
        if (a.finish.empty() && !a.blocked)
            off_format(http_status,
                       complete ? "ends its stream without a finishReason"
                                : "ends its stream inside an event (cut short)",
                       body);
        return normalized(a, body);
    }
    rapidjson::Document d;
    std::string why;
    if (!json::parse(body, d, why)) off_format(http_status, "is not JSON (" + why + ")", body);
    if (!d.IsObject()) off_format(http_status, "is not a JSON object", body);
    add_chunk(d, a, false);
    const Value* cands = member(d, "candidates");
    if (!a.blocked && (cands == nullptr || !cands->IsArray() || cands->Empty()))
        off_format(http_status, "has no candidates", body);
    if (!a.blocked && a.finish.empty()) off_format(http_status, "has no finishReason", body);
    return normalized(a, body);
}

}  // namespace nucleo::gemini
