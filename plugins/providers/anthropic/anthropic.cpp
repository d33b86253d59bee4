// nucleo-anthropic: the Anthropic Messages API provider dialect ("nucleo.provider/1"; abi.24:
// the core decides, plugins render).
//
// The plugin is a pure function pair: encode renders the core's provider request
// (docs/provider-abi-documents.md) as POST /v1/messages, decode turns the answer into the
// normalized response. It adds, drops or moves no cache breakpoint, routes no content and
// invents no role (channel.1: clients render what they are handed and decide nothing about
// routing). The core sends, retries, rate-limits and attaches the key.
#include <string>
#include <string_view>

#include "anthropic.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace {

/// One Anthropic provider instance. It keeps no state between calls: the instance
/// configuration (base URL, key) is the core's business, and every per-call choice (TTL, beta
/// flags, API version) arrives in the provider request's "options"/"cache_ttl". The
/// configuration is only checked to be a JSON object, so a typo is refused at create rather
/// than ignored. Thread rule: every slot is callable concurrently (nothing is shared).
class AnthropicProvider final : public nucleo::plugin::Provider {
  public:
    /// abi.109: the options an `anthropic` instance takes (the host adds its cache options).
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false,
      "properties": {
        "anthropic_version": {"type": "string", "minLength": 1,
                              "description": "the anthropic-version header, default 2023-06-01"},
        "anthropic_beta": {"type": ["string", "array"], "items": {"type": "string"},
                           "description": "anthropic-beta flags"}
      }
    })";

    explicit AnthropicProvider(std::string_view config_json) {
        nucleo::providers::check_instance_config(config_json, "anthropic");
    }

    /// tools.10: Anthropic is a native tool-calling dialect; caching.7: explicit breakpoints, at
    /// most 4; caching.106: a request-level cache_control; answers.110: answer blocks it does not
    /// model come back as provider blocks and are sent back; tools.103: late tools as tool
    /// additions; wire.211: message threads.
    void capabilities(nucleo::plugin::Sink& out) override {
        out << R"({"schema_version":1,"dialect":"anthropic","wire_family":"anthropic-messages","native_tools":true,"caching":true,)"
               R"("automatic_caching":true,)"
               R"("streaming":true,"max_cache_breakpoints":4,"inputs":["images","documents"],)"
               R"("auth":"x-api-key","stream_framing":"sse","turn_fragments":true,"provider_blocks":true,"tool_changes":true,"threads":true})";
    }

    void encode(std::string_view prepared_json, nucleo::plugin::Sink& out) override {
        nucleo::providers::encode_joined(prepared_json, out, nucleo::anthropic::encode_request);
    }

    /// abi.106: the body bytes written here are the bytes the host sends.
    void encode_parts(std::string_view prepared_json, nucleo::plugin::Sink& head,
                      nucleo::plugin::Sink& body) {
        nucleo::anthropic::encode_request(prepared_json, head, body);
    }

    /// abi.108: the Messages API encoding is local to runs of same-role turns (each run is one
    /// message), so the capabilities answer "turn_fragments": true.
    void encode_split(std::string_view prepared_json, nucleo::plugin::Sink& head,
                      nucleo::plugin::Sink& open, nucleo::plugin::Sink& turns,
                      nucleo::plugin::Sink& close) {
        nucleo::anthropic::encode_split(prepared_json, head, open, turns, close);
    }

    void decode(int32_t http_status, std::string_view headers_json, std::string_view body,
                nucleo::plugin::Sink& out) override {
        out << nucleo::anthropic::decode_response(http_status, headers_json, body);
    }

    void decode_event(std::string_view event_name, std::string_view data,
                      nucleo::plugin::Sink& out) override {
        nucleo::anthropic::decode_stream_event(event_name, data, out);
    }
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("anthropic", "1.0.0", "Anthropic Messages API (POST /v1/messages)",
                    nucleo::plugin::provider_factory<AnthropicProvider>())
