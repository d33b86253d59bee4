// nucleo-openai: the OpenAI Chat Completions dialect ("nucleo.provider/1", abi.24).
//
// A pure function pair (the core decides, plugins render): encode renders the core's
// provider request as POST <base_url>/chat/completions, decode turns the answer into the normalized
// response. No network, no clock, no state between calls. The documents are specified in
// docs/provider-abi-documents.md; what the contract leaves open is decided here.
//
// Encoding (channel.3, channel.6, tools.10):
//  - The objective is one leading `system` message -- `developer` with options.system_role
//    "developer" -- holding the system blocks' texts joined by a blank line. Blank system blocks
//    are left out; no system blocks, no system message.
//  - Tools are native: each tool definition is {"type":"function","function":{name, description,
//    parameters}}; an empty description is omitted.
//  - Consecutive turns of one role form one group. An assistant group is one assistant message:
//    its text as `content` (a string for one text part, else text parts) and its tool_use blocks
//    as `tool_calls` whose `function.arguments` is the input as a JSON string. A user group is
//    its tool results first -- one `role: tool` message each, in order, since OpenAI requires them
//    right after the assistant message with the calls -- then one user message with the rest.
//  - A tool result's text parts are joined by a line break (json parts as their JSON). Chat
//    Completions has no error flag, so an is_error result reads "Error: <text>". A result with no
//    text reads "(empty result)" -- never blank. Tool messages take text only: a result's images
//    and files move to the user message that follows, after a text part naming the call.
//  - Images are image_url parts (base64 as a data URL); files are file parts with `file_data` as a
//    data URL and `filename` (the block's name, else "file.<subtype>"). A file by URL has no form
//    in Chat Completions and is refused naming the block; so is an image or file in an assistant
//    turn (assistant content is text only).
//  - json blocks render as their compact JSON, skill blocks as their content.
//  - thinking and redacted_thinking blocks are dropped: Chat Completions takes no reasoning input
//    (the model's reasoning stays on OpenAI's side).
//  - Never a blank text part: empty and whitespace-only text is dropped, and a turn left with
//    nothing is refused with NUCLEO_ERR_INVALID_ARGUMENT naming the turn, never sent blank.
//  - Caching (caching.118, caching.119): on a model whose record takes explicit breakpoints
//    (`model.caching: "explicit"`, GPT-5.6 and later) the core's plan is written as
//    `prompt_cache_breakpoint: {"mode": "explicit"}` on exactly the planned parts (the system
//    message's one text part, a text/json/skill part, a tool message's text part), with
//    `prompt_cache_options: {"mode": "explicit"}` so OpenAI adds no implicit breakpoint of its own,
//    and every message's content is an array of parts, so a mark moving on or off a message never
//    changes its form. A tool call cannot carry a mark ("cache_anchor_tool_use": false: the plan
//    never puts one there); an anchor that lands on no part is refused. On any other model
//    (`automatic`: OpenAI caches by itself; `none`; or no field from an older core) a plan changes
//    no byte, as before. `prompt_cache_key` is the request's `cache_key` (the conversation id) on
//    a model that caches.
//  - `max_completion_tokens` is max_tokens (options.max_tokens_field "max_tokens" for servers that
//    know only the older name). When thinking.active, `reasoning_effort` maps budget_tokens:
//    up to 4,096 low, up to 16,384 medium, more high; options.reasoning_effort overrides it.
//  - Streaming adds `stream: true` and `stream_options: {include_usage: true}`.
//  - options.path (default "/chat/completions") is appended to the instance's base URL, which by
//    the OpenAI SDKs' convention ends in /v1 (OPENAI_BASE_URL, Ollama's http://host:11434/v1), so
//    an OpenAI-compatible server (Ollama, vLLM, llama.cpp server) works; nothing beyond the fields
//    above is sent, so such servers see nothing they reject.
//
// Decoding: choices[0].message (or the streamed deltas) becomes a text block, a second text block
// for a refusal, and one tool_use block per call with the arguments parsed (unparseable
// arguments are kept as {"_raw": "..."}, see decode.cpp). finish_reason stop → end_turn, length →
// max_tokens, tool_calls → tool_use, content_filter → content_filter; usage prompt_tokens minus
// prompt_tokens_details.cached_tokens and .cache_write_tokens → input_tokens, cached_tokens →
// cache_read_tokens, cache_write_tokens → cache_write_tokens (caching.117), completion_tokens →
// output_tokens. Error bodies are mapped by status.
#include <string_view>

#include <rapidjson/stringbuffer.h>

#include "decode.hpp"
#include "encode.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::openai {
namespace {

/// One provider instance. The instance config is not needed: every option rides each provider
/// request (`options`), so one instance serves every configuration.
class ChatCompletions final : public plugin::Provider {
  public:
    /// abi.109: the options an `openai` instance takes (the host adds its cache options).
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false,
      "properties": {
        "path": {"type": "string", "minLength": 1,
                 "description": "appended to base_url, starts with '/', default /chat/completions"},
        "system_role": {"type": "string", "enum": ["system", "developer"]},
        "max_tokens_field": {"type": "string", "enum": ["max_completion_tokens", "max_tokens"]},
        "reasoning_effort": {"type": "string", "minLength": 1,
                             "description": "reasoning_effort sent as it is written"}
      }
    })";

    explicit ChatCompletions(std::string_view /*config_json*/) {}

    void capabilities(plugin::Sink& out) override {
        out << R"({"schema_version":1,"dialect":"openai","wire_family":"openai-chat","native_tools":true,"caching":true,)"
               R"("cache_anchor_tool_use":false,"streaming":true,"max_cache_breakpoints":4,"inputs":["images","documents"],)"
               R"("auth":"bearer","stream_framing":"sse","turn_fragments":true})";
    }

    void encode(std::string_view prepared_json, plugin::Sink& out) override {
        providers::encode_joined(prepared_json, out,
                                 [this](std::string_view req, plugin::Sink& head,
                                        plugin::Sink& body) { encode_parts(req, head, body); });
    }

    /// abi.106: the body bytes written here are the bytes the host sends.
    void encode_parts(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& body) {
        // The body is about as long as the request: reserving that once saves the buffer's
        // repeated regrowth on long conversations (bench/encode).
        // limits.134: both buffers are this thread's scratch, reused from call to call.
        const providers::Scratch<rapidjson::StringBuffer> head_buffer;
        const providers::Scratch<rapidjson::StringBuffer> body_buffer;
        body_buffer->Reserve(prepared_json.size() + 4096);
        encode_request(prepared_json, *head_buffer, *body_buffer);
        head.write(std::string_view(head_buffer->GetString(), head_buffer->GetSize()));
        body.write(std::string_view(body_buffer->GetString(), body_buffer->GetSize()));
    }

    /// abi.108: each run of same-role turns becomes its own messages (tool messages lead a user
    /// run), so the encoding is local to runs: "turn_fragments" in the capabilities.
    void encode_split(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& open,
                      plugin::Sink& turns, plugin::Sink& close) {
        const providers::Scratch<rapidjson::StringBuffer> head_buffer;
        const providers::Scratch<rapidjson::StringBuffer> body_buffer;
        body_buffer->Reserve(prepared_json.size() + 4096);
        const providers::TurnSpan span = encode_request(prepared_json, *head_buffer, *body_buffer);
        providers::write_split({head_buffer->GetString(), head_buffer->GetSize()},
                               {body_buffer->GetString(), body_buffer->GetSize()}, span, head, open,
                               turns, close);
    }

    void decode(int32_t http_status, std::string_view headers_json, std::string_view body,
                plugin::Sink& out) override {
        out << decode_response(http_status, headers_json, body);
    }

    void decode_event(std::string_view /*event_name*/, std::string_view data,
                      plugin::Sink& out) override {
        decode_stream_event(data, out);
    }
};

}  // namespace
}  // namespace nucleo::openai

NUCLEO_PLUGIN_ENTRY("openai", "1.0.0",
                    "OpenAI Chat Completions dialect (also OpenAI-compatible servers)",
                    nucleo::plugin::provider_factory<nucleo::openai::ChatCompletions>())
