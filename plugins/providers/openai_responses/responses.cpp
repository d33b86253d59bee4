// nucleo-openai-responses: the OpenAI Responses dialect ("nucleo.provider/1", abi.24), written
// the way a vendor writes a plugin: against plugin-api/ and RapidJSON only (responses.14). The
// rules it keeps are docs/spec/openai-responses.md; the files: encode.cpp and strict.cpp
// (responses.1-responses.8), decode.cpp (responses.9-responses.11), stream_event.cpp
// (responses.12), json.hpp (responses.13); encode_split here (responses.15).
#include <string>
#include <string_view>

#include "nucleo/plugin.hpp"
#include "responses.hpp"

namespace nucleo::responses {
namespace {

/// One provider instance; every option rides each provider request (`options`).
class Responses final : public plugin::Provider {
  public:
    /// abi.109: the options an `openai-responses` instance takes.
    static constexpr const char* kOptionsSchema = R"schema({
      "type": "object", "additionalProperties": false,
      "properties": {
        "path": {"type": "string", "minLength": 1,
                 "description": "appended to base_url, starts with '/', default /responses"},
        "store": {"type": "boolean",
                  "description": "let OpenAI store the responses (default false: reasoning comes back encrypted)"},
        "reasoning_summary": {"type": "string", "enum": ["auto", "concise", "detailed", "none"],
                              "description": "the reasoning summary asked for (default auto)"}
      }
    })schema";

    explicit Responses(std::string_view /*config_json*/) {}

    void capabilities(plugin::Sink& out) override {
        // responses.6: caching at the plan's marks on explicit models; a call, assistant output
        // or a reasoning item takes none, so the core anchors no tool call and no assistant turn
        // (caching.119, caching.133). responses.5: reasoning items as provider blocks.
        // responses.15: each turn's input items depend on that turn alone ("turn_fragments").
        out << R"({"schema_version":1,"dialect":"openai-responses","wire_family":"openai-responses",)"
               R"("native_tools":true,"caching":true,"cache_anchor_tool_use":false,)"
               R"("cache_anchor_assistant":false,"streaming":true,)"
               R"("max_cache_breakpoints":4,"inputs":["images","documents"],"auth":"bearer",)"
               R"("stream_framing":"sse","provider_blocks":true,"turn_fragments":true})";
    }

    void encode(std::string_view prepared_json, plugin::Sink& out) override {
        std::string head;
        const std::string_view body = encode_request(prepared_json, head);
        // The head is an object ending in '}': the body goes in as its last member.
        head.pop_back();
        out << head << R"(,"body":)" << body << "}";
    }

    /// abi.106: the body bytes written here are the bytes the host sends.
    void encode_parts(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& body) {
        std::string h;
        const std::string_view b = encode_request(prepared_json, h);
        head << h;
        body << b;
    }

    /// abi.108, responses.15: a turn becomes its own input items (messages, function calls and
    /// outputs, reasoning items), written from that turn, the request's model and its caching
    /// alone, so the items of a run's own request are those of the run in the whole request.
    void encode_split(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& open,
                      plugin::Sink& turns, plugin::Sink& close) {
        std::string h;
        TurnSpan span;
        const std::string_view b = encode_request(prepared_json, h, &span);
        if (span.begin > span.end || span.end > b.size())
            throw plugin::Failure(NUCLEO_ERR_INTERNAL,
                                  "openai-responses: encode_split: the turns lie outside the body");
        head << h;
        open << b.substr(0, span.begin);
        turns << b.substr(span.begin, span.end - span.begin);
        close << b.substr(span.end);
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
}  // namespace nucleo::responses

NUCLEO_PLUGIN_ENTRY("openai-responses", "1.0.0", "OpenAI Responses API dialect",
                    nucleo::plugin::provider_factory<nucleo::responses::Responses>())
