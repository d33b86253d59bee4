// OpenAI Chat Completions decoder: one chat.completion object, or the `data:` chunks of a stream,
// assembled into the same Answer and written as the normalized response.
#include "decode.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "wire.hpp"

namespace nucleo::openai {
namespace {

using plugin::Failure;
using rapidjson::SizeType;

struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  ///< the JSON string the model wrote
};

/// What one answer said, whichever framing carried it.
struct Answer {
    std::string model;
    std::string text;
    std::string refusal;
    std::vector<ToolCall> calls;
    std::string finish_reason;  ///< empty: none seen
    bool has_usage = false;
    int64_t prompt_tokens = 0;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t cache_write_tokens = 0;
};

/// Reads and checks one HTTP answer; every failure names what is wrong and quotes the body.
class Decoder {
  public:
    Decoder(int32_t status, std::string_view body) : status_(status), body_(body) {}

    [[noreturn]] void protocol(const std::string& what) const {
        throw Failure(NUCLEO_ERR_PROTOCOL,
                      "OpenAI answer (HTTP " + std::to_string(status_) + ") " + what +
                          "; body starts: " + providers::quote_first_bytes(body_),
                      status_);
    }

    /// A non-2xx answer: {"error": {"message", "type", "param", "code"}} mapped by status, but
    /// for code context_length_exceeded: the conversation does not fit the model's window, which
    /// is a context overflow (answers.104) the core can act on by compacting, not a bad request.
    [[noreturn]] void fail_with_error() const {
        rapidjson::Document doc;
        const bool parsed = !json_guard::parse(doc, body_);
        std::string detail = parsed ? error_text(doc) : std::string();
        if (detail.empty()) {
            detail =
                "a body that is not an OpenAI error object: " + providers::quote_first_bytes(body_);
        }
        int32_t code = providers::status_for_http(status_);
        if (parsed && providers::text_or_empty(member(member(doc, "error"), "code")) ==
                          "context_length_exceeded") {
            code = NUCLEO_ERR_CONTEXT_OVERFLOW;
        }
        throw Failure(code, "OpenAI answered HTTP " + std::to_string(status_) + ": " + detail,
                      status_);
    }

    Answer read_completion() const {
        rapidjson::Document doc;
        // limits.120 to limits.122: depth-bounded, no duplicate key, no raw NUL.
        if (const auto refusal = json_guard::parse(doc, body_)) {
            protocol("is not JSON (" + providers::refusal_words(*refusal) + ")");
        }
        if (!doc.IsObject()) protocol("is not a JSON object");
        if (const Value* e = member(doc, "error"); e != nullptr && !e->IsNull()) {
            protocol("carries an error instead of a completion: " + error_text(doc));
        }
        Answer a;
        if (const Value* m = member(doc, "model"); m != nullptr && m->IsString()) {
            a.model = view_of(*m);
        }
        const Value* choices = member(doc, "choices");
        if (choices == nullptr || !choices->IsArray() || choices->Empty()) {
            protocol("lacks choices[0]");
        }
        const Value& choice = (*choices)[0];
        const Value* message = member(choice, "message");
        if (message == nullptr || !message->IsObject()) protocol("lacks choices[0].message");
        if (const Value* content = member(*message, "content"); content != nullptr) {
            append_content(*content, a.text, "choices[0].message.content");
        }
        if (const Value* refusal = member(*message, "refusal");
            refusal != nullptr && refusal->IsString()) {
            a.refusal = view_of(*refusal);
        }
        if (const Value* calls = member(*message, "tool_calls");
            calls != nullptr && !calls->IsNull()) {
            if (!calls->IsArray())
                protocol("has choices[0].message.tool_calls that is not an array");
            for (SizeType i = 0; i < calls->Size(); ++i) {
                a.calls.push_back(read_call((*calls)[i], i));
            }
        }
        const Value* finish = member(choice, "finish_reason");
        if (finish == nullptr || !finish->IsString()) protocol("lacks choices[0].finish_reason");
        a.finish_reason = view_of(*finish);
        const Value* usage = member(doc, "usage");
        if (usage == nullptr || usage->IsNull()) protocol("lacks usage");
        read_usage(*usage, a);
        return a;
    }

    /// A streamed answer: `data: {chat.completion.chunk}` lines, the last chunk (empty choices)
    /// carrying the usage (stream_options.include_usage), then `data: [DONE]`.
    Answer read_stream() const {
        Answer a;
        int event = 0;
        bool done = false;
        providers::for_each_sse_data(body_, [&](std::string_view line) {
            if (done) return;
            ++event;
            if (line == "[DONE]") {
                done = true;
                return;
            }
            rapidjson::Document chunk;
            const auto refusal = json_guard::parse(chunk, line);
            if (refusal && refusal->kind != json_guard::Refusal::Kind::kSyntax) {
                // limits.120 to limits.122: the limit is named.
                protocol("has stream event " + std::to_string(event) +
                         " that is not a JSON object (" + providers::refusal_words(*refusal) + ")");
            }
            if (refusal || !chunk.IsObject()) {
                protocol("has stream event " + std::to_string(event) +
                         " that is not a JSON object");
            }
            if (const Value* e = member(chunk, "error"); e != nullptr && !e->IsNull()) {
                throw Failure(stream_error_kind(*e),
                              "OpenAI stream failed at event " + std::to_string(event) + ": " +
                                  error_text(chunk),
                              status_);
            }
            read_chunk(chunk, a, event);
        });
        if (a.finish_reason.empty())
            protocol("was cut off: the stream ended before a finish_reason");
        if (!a.has_usage) {
            protocol("lacks usage: the stream ended without its usage chunk");
        }
        for (std::size_t i = 0; i < a.calls.size(); ++i) {
            if (a.calls[i].id.empty() || a.calls[i].name.empty()) {
                protocol("has streamed tool call " + std::to_string(i) + " without its id or name");
            }
        }
        return a;
    }

  private:
    static int32_t stream_error_kind(const Value& error) {
        const Value* type = member(error, "type");
        const std::string_view t = type != nullptr && type->IsString() ? view_of(*type) : "";
        if (t.find("rate_limit") != std::string_view::npos) return NUCLEO_ERR_RATE_LIMITED;
        if (t == "invalid_request_error") return NUCLEO_ERR_INVALID_ARGUMENT;
        return NUCLEO_ERR_OVERLOADED;
    }

    /// "message (type, code CODE, param PARAM)" from OpenAI's error object; also the shapes
    /// OpenAI-compatible servers use ({"error": "text"}, vLLM's top-level {"message", "type"}).
    static std::string error_text(const rapidjson::Document& doc) {
        const Value* error = member(doc, "error");
        if (error != nullptr && error->IsString()) return std::string(view_of(*error));
        const Value& e = error != nullptr && error->IsObject() ? *error : doc;
        const auto field = [&](const char* key) -> std::string {
            const Value* v = member(e, key);
            if (v == nullptr) return {};
            if (v->IsString()) return std::string(view_of(*v));
            if (v->IsInt64()) return std::to_string(v->GetInt64());
            return {};
        };
        std::string message = field("message");
        if (message.empty()) return {};
        std::string extra;
        for (const char* key : {"type", "code", "param"}) {
            const std::string v = field(key);
            if (v.empty()) continue;
            extra += extra.empty() ? "" : ", ";
            extra += std::string(key) + " " + v;
        }
        return extra.empty() ? message : message + " (" + extra + ")";
    }

    void append_content(const Value& content, std::string& out, const char* where) const {
        if (content.IsNull()) return;
        if (content.IsString()) {
            out.append(view_of(content));
            return;
        }
        if (!content.IsArray()) protocol(std::string("has ") + where + " that is not a string");
        // Some compatible servers answer with content parts.
        for (const Value& part : content.GetArray()) {
            const Value* text = member(part, "text");
            if (text != nullptr && text->IsString()) out.append(view_of(*text));
        }
    }

    ToolCall read_call(const Value& call, SizeType i) const {
        const std::string at = "choices[0].message.tool_calls[" + std::to_string(i) + "]";
        const Value* id = member(call, "id");
        const Value* fn = member(call, "function");
        const Value* name = fn != nullptr ? member(*fn, "name") : nullptr;
        if (id == nullptr || !id->IsString()) protocol("lacks " + at + ".id");
        if (name == nullptr || !name->IsString()) protocol("lacks " + at + ".function.name");
        ToolCall c{std::string(view_of(*id)), std::string(view_of(*name)), {}};
        if (const Value* args = member(*fn, "arguments"); args != nullptr && args->IsString()) {
            c.arguments = view_of(*args);
        }
        return c;
    }

    void read_chunk(const Value& chunk, Answer& a, int event) const {
        if (const Value* m = member(chunk, "model");
            m != nullptr && m->IsString() && a.model.empty()) {
            a.model = view_of(*m);
        }
        if (const Value* usage = member(chunk, "usage"); usage != nullptr && !usage->IsNull()) {
            read_usage(*usage, a);
        }
        const Value* choices = member(chunk, "choices");
        if (choices == nullptr || !choices->IsArray() || choices->Empty()) return;
        const Value& choice = (*choices)[0];
        if (const Value* finish = member(choice, "finish_reason");
            finish != nullptr && finish->IsString()) {
            a.finish_reason = view_of(*finish);
        }
        const Value* delta = member(choice, "delta");
        if (delta == nullptr || !delta->IsObject()) return;
        if (const Value* content = member(*delta, "content"); content != nullptr) {
            append_content(*content, a.text, "a delta's content");
        }
        if (const Value* refusal = member(*delta, "refusal");
            refusal != nullptr && refusal->IsString()) {
            a.refusal.append(view_of(*refusal));
        }
        const Value* calls = member(*delta, "tool_calls");
        if (calls == nullptr || !calls->IsArray()) return;
        for (const Value& piece : calls->GetArray()) {
            const Value* index = member(piece, "index");
            if (index == nullptr || !index->IsUint() || index->GetUint() > 1024) {
                protocol("has a tool_calls delta without a valid index at stream event " +
                         std::to_string(event));
            }
            const std::size_t i = index->GetUint();
            if (a.calls.size() <= i) a.calls.resize(i + 1);
            ToolCall& c = a.calls[i];
            if (const Value* id = member(piece, "id"); id != nullptr && id->IsString()) {
                c.id = view_of(*id);
            }
            const Value* fn = member(piece, "function");
            if (fn == nullptr) continue;
            if (const Value* name = member(*fn, "name");
                name != nullptr && name->IsString() && name->GetStringLength() > 0) {
                c.name = view_of(*name);
            }
            if (const Value* args = member(*fn, "arguments"); args != nullptr && args->IsString()) {
                c.arguments.append(view_of(*args));
            }
        }
    }

    void read_usage(const Value& usage, Answer& a) const {
        const Value* prompt = member(usage, "prompt_tokens");
        const Value* completion = member(usage, "completion_tokens");
        if (prompt == nullptr || !prompt->IsInt64()) protocol("lacks usage.prompt_tokens");
        if (completion == nullptr || !completion->IsInt64()) {
            protocol("lacks usage.completion_tokens");
        }
        if (prompt->GetInt64() < 0 || completion->GetInt64() < 0) {
            protocol("has a usage count below zero (prompt_tokens " +
                     std::to_string(prompt->GetInt64()) + ", completion_tokens " +
                     std::to_string(completion->GetInt64()) + ")");
        }
        a.prompt_tokens = prompt->GetInt64();
        a.completion_tokens = completion->GetInt64();
        a.cached_tokens = 0;
        a.cache_write_tokens = 0;
        if (const Value* details = member(usage, "prompt_tokens_details")) {
            if (const Value* cached = member(*details, "cached_tokens");
                cached != nullptr && cached->IsInt64()) {
                a.cached_tokens = cached->GetInt64();
            }
            // caching.117: GPT-5.6 and later report (and bill) the tokens written to the cache.
            if (const Value* written = member(*details, "cache_write_tokens");
                written != nullptr && written->IsInt64() && written->GetInt64() >= 0) {
                a.cache_write_tokens = written->GetInt64();
            }
        }
        a.has_usage = true;
    }

    int32_t status_;
    std::string_view body_;
};

/// finish_reason → the normalized stop reason (docs/provider-abi-documents.md). A "stop" that
/// carries tool calls is tool_use: some OpenAI-compatible servers (Ollama) report stop there.
/// A refusal wins over stop: the model declined.
const char* stop_reason(const Answer& a) {
    const std::string_view f = a.finish_reason;
    if (f == "length") return "max_tokens";
    if (f == "content_filter") return "content_filter";
    if (f == "tool_calls" || f == "function_call") return "tool_use";
    if (!a.refusal.empty()) return "refusal";
    if (f == "stop") return a.calls.empty() ? "end_turn" : "tool_use";
    return "other";
}

/// A call's input: the arguments string parsed. Empty arguments are {} (servers send "" for a
/// call without parameters). Arguments that are not a JSON object -- cut off by max_tokens, or a
/// model that wrote bad JSON -- are kept verbatim as {"_raw": "..."}: the call stays visible and
/// answerable (a tool's schema check refuses it and the model learns why), and with stop_reason
/// max_tokens the core knows the call is cut off and never hands it to a tool.
void write_call(providers::ResponseWriter& w, const ToolCall& c) {
    if (providers::is_blank(c.arguments)) {
        w.tool_use(c.id, c.name, nullptr);
        return;
    }
    rapidjson::Document args;
    const auto refusal = json_guard::parse(args, c.arguments);
    if (refusal && refusal->kind != json_guard::Refusal::Kind::kSyntax) {
        // limits.120 to limits.122: arguments nested past the limit, with a duplicate key or a
        // raw NUL are refused, not kept as "_raw" text the next request would send back; text
        // that is merely not JSON stays "_raw", as a model's malformed arguments always did.
        throw plugin::Failure(NUCLEO_ERR_PROTOCOL, "openai: the arguments of tool call \"" + c.id +
                                                       "\" are not usable JSON (" +
                                                       refusal->text() + ")");
    }
    if (refusal || !args.IsObject()) {
        args.SetObject();
        args.AddMember("_raw", rapidjson::StringRef(c.arguments.data(), c.arguments.size()),
                       args.GetAllocator());
    }
    w.tool_use(c.id, c.name, &args);
}

std::string write_answer(const Answer& a) {
    providers::ResponseWriter w(a.model);
    if (!a.text.empty()) w.text(a.text);
    if (!a.refusal.empty()) w.text(a.refusal);
    for (const ToolCall& c : a.calls) write_call(w, c);
    // prompt_tokens includes the cached part and the written part (caching.117); the normalized
    // split counts them apart, never below zero.
    const int64_t cached = std::min(a.cached_tokens, a.prompt_tokens);
    const int64_t written = std::min(a.cache_write_tokens, a.prompt_tokens - cached);
    return w.finish(stop_reason(a),
                    {a.prompt_tokens - cached - written, a.completion_tokens, cached, written});
}

bool is_event_stream(std::string_view headers_json, std::string_view body) {
    if (const std::string type = providers::header(headers_json, "content-type"); !type.empty()) {
        return type.find("text/event-stream") != std::string::npos;
    }
    const auto start = body.find_first_not_of(" \t\r\n");
    return start != std::string_view::npos && body.substr(start).starts_with("data:");
}

}  // namespace

std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body) {
    const Decoder decoder(http_status, body);
    if (http_status < 200 || http_status > 299) decoder.fail_with_error();
    const Answer answer =
        is_event_stream(headers_json, body) ? decoder.read_stream() : decoder.read_completion();
    return write_answer(answer);
}

}  // namespace nucleo::openai
