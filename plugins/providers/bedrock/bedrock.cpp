// nucleo-bedrock: the Amazon Bedrock Converse provider dialect ("nucleo.provider/1"; abi.24:
// the core decides, plugins render).
//
// A pure function pair. encode renders the core's provider request (docs/provider-abi-documents.md)
// as POST /model/{modelId}/converse; decode turns Bedrock's answer into the normalized response.
// It adds, drops or moves no cache breakpoint, routes no content and invents no role
// (channel.1: clients render what they are handed and decide nothing about routing). The core owns
// the base URL, SigV4 signing (auth "sigv4"), retries and rate limits. The wire decisions are
// written where they are made: encode.cpp and decode.cpp.
#include <string>
#include <string_view>

#include "converse.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace {

/// One Bedrock provider instance. It keeps no state between calls: region, credentials and the
/// endpoint are the core's (SigV4 through libcurl), and every per-call choice arrives in the
/// provider request. The configuration is only checked to be a JSON object, so a malformed one
/// is refused at create instead of ignored. Thread rule: every slot is callable concurrently.
class BedrockProvider final : public nucleo::plugin::Provider {
  public:
    /// abi.109: the options a `bedrock` instance takes (the host adds its cache options).
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false,
      "properties": {
        "thinking_format": {"type": "string", "enum": ["anthropic"],
                            "description": "the thinking dialect of a model ARN that does not name it"}
      }
    })";

    explicit BedrockProvider(std::string_view config_json) {
        nucleo::providers::check_instance_config(config_json, "bedrock");
    }

    /// tools.11 names Converse as the text-based dialect: tool definitions
    /// render as text where they sit. Converse also HAS a tools parameter (toolConfig), so the
    /// dialect answers native_tools: true -- it can do both -- and the catalog entry's
    /// `native_tools` chooses per model; prepared.native_tools tells encode which one to render.
    /// Caching: explicit cachePoint blocks, at most 4 (Bedrock passes Anthropic's limit through).
    void capabilities(nucleo::plugin::Sink& out) override {
        out << R"({"schema_version":1,"dialect":"bedrock-converse","wire_family":"bedrock-converse","native_tools":true,)"
               R"("caching":true,"streaming":true,"max_cache_breakpoints":4,)"
               R"("inputs":["images","documents"],"auth":"sigv4",)"
               R"("stream_framing":"aws-eventstream","turn_fragments":true})";
    }

    void encode(std::string_view prepared_json, nucleo::plugin::Sink& out) override {
        nucleo::providers::encode_joined(prepared_json, out, encode_parts);
    }

    /// abi.106: the body bytes written here are the bytes the host sends.
    static void encode_parts(std::string_view prepared_json, nucleo::plugin::Sink& head,
                             nucleo::plugin::Sink& body) {
        const nucleo::bedrock::EncodedRequest parts = nucleo::bedrock::encode_request(prepared_json);
        head.write(parts.head);
        body.write(parts.body);
    }

    /// abi.108: the body cut around the turns' wire messages (Converse's encoding is local to
    /// runs of same-role turns: "turn_fragments" in the capabilities).
    static void encode_split(std::string_view prepared_json, nucleo::plugin::Sink& head,
                             nucleo::plugin::Sink& open, nucleo::plugin::Sink& turns,
                             nucleo::plugin::Sink& close) {
        const nucleo::bedrock::EncodedRequest parts = nucleo::bedrock::encode_request(prepared_json);
        nucleo::providers::write_split(parts.head, parts.body, parts.turns, head, open, turns, close);
    }

    void decode(int32_t http_status, std::string_view headers_json, std::string_view body,
                nucleo::plugin::Sink& out) override {
        out << nucleo::bedrock::decode_response(http_status, headers_json, body);
    }

    void decode_event(std::string_view event_name, std::string_view data,
                      nucleo::plugin::Sink& out) override {
        nucleo::bedrock::decode_stream_event(event_name, data, out);
    }
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("bedrock", "1.0.0",
                    "Amazon Bedrock Converse (POST /model/{modelId}/converse), SigV4 by the core",
                    nucleo::plugin::provider_factory<BedrockProvider>())
