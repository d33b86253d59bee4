// nucleo-gemini: the Google Gemini generateContent dialect ("nucleo.provider/1", abi.24), written
// the way a vendor writes a plugin: against plugin-api/ and RapidJSON only (gemini.14). The rules
// it keeps are docs/spec/gemini.md; the files: encode.cpp (gemini.1-gemini.8), decode.cpp
// (gemini.9-gemini.11), stream_event.cpp (gemini.12), json.hpp (gemini.13); encode_split
// here (gemini.15).
#include <string>
#include <string_view>

#include "gemini.hpp"
#include "nucleo/plugin.hpp"

namespace nucleo::gemini {
namespace {

/// One provider instance; every option rides each provider request (`options`).
class GenerateContent final : public plugin::Provider {
  public:
    /// abi.109: the options a `gemini` instance takes.
    static constexpr const char* kOptionsSchema = R"schema({
      "type": "object", "additionalProperties": false,
      "properties": {
        "api_version": {"type": "string", "enum": ["v1beta", "v1", "v1alpha"],
                        "description": "the path's API version, default v1beta"},
        "include_thoughts": {"type": "boolean",
                             "description": "ask for thought summaries when the model thinks (default true)"}
      }
    })schema";

    explicit GenerateContent(std::string_view /*config_json*/) {}

    void capabilities(plugin::Sink& out) override {
        // gemini.7: "caching": false -- Gemini caches implicitly; the core's marks send nothing.
        // gemini.6: "provider_blocks": true -- thought signatures come back as provider blocks.
        // gemini.15: "turn_fragments": true -- a run of same-role turns is one entry of its own.
        out << R"({"schema_version":1,"dialect":"gemini","wire_family":"gemini-generate","native_tools":true,)"
               R"("caching":false,"streaming":true,"inputs":["images","documents"],"auth":"x-goog-api-key",)"
               R"("stream_framing":"sse","provider_blocks":true,"turn_fragments":true})";
    }

    void encode(std::string_view prepared_json, plugin::Sink& out) override {
        std::string head;
        std::string body;
        encode_request(prepared_json, head, body);
        // The head is an object ending in '}': the body goes in as its last member.
        head.pop_back();
        out << head << R"(,"body":)" << body << "}";
    }

    /// abi.106: the body bytes written here are the bytes the host sends.
    void encode_parts(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& body) {
        std::string h;
        std::string b;
        encode_request(prepared_json, h, b);
        head << h;
        body << b;
    }

    /// abi.108, gemini.15: a run of same-role turns is one `contents` entry (gemini.2) whose
    /// parts, signatures and first-call stand-in are the run's own, so the entries of a run's
    /// own request are those of the run in the whole request. The one thing a run takes from
    /// an earlier one is a tool result's function name (gemini.4): a run whose result answers a
    /// call outside its request is refused, and the host encodes that request whole
    /// (caching.110), never sending a body other than the whole encode's.
    void encode_split(std::string_view prepared_json, plugin::Sink& head, plugin::Sink& open,
                      plugin::Sink& turns, plugin::Sink& close) {
        std::string h;
        std::string b;
        TurnSpan span;
        encode_request(prepared_json, h, b, &span);
        if (span.begin > span.end || span.end > b.size())
            throw plugin::Failure(NUCLEO_ERR_INTERNAL,
                                  "gemini: encode_split: the turns lie outside the body");
        const std::string_view body = b;
        head << h;
        open << body.substr(0, span.begin);
        turns << body.substr(span.begin, span.end - span.begin);
        close << body.substr(span.end);
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
}  // namespace nucleo::gemini

NUCLEO_PLUGIN_ENTRY("gemini", "1.0.0", "Google Gemini generateContent dialect",
                    nucleo::plugin::provider_factory<nucleo::gemini::GenerateContent>())
