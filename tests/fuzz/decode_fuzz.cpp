// One provider plugin's decode and decode_event under libFuzzer, through the core's loader (the
// real C ABI). The first byte picks the call: decode of a JSON answer, of a streamed answer, of an
// error status, or decode_event; the rest is the body. Any input is decoded or refused with an
// Error — never a crash, whatever its depth (limits.120). NUCLEO_FUZZ_PROVIDER names the plugin.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace {

const nucleo::ProviderInstance& provider() {
    static const nucleo::Plugin plugin =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(NUCLEO_FUZZ_PROVIDER);
    static const nucleo::ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    (void)provider();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string provider_name = NUCLEO_FUZZ_PROVIDER;
    const char* stream_type = provider_name == "bedrock" ? R"({"content-type":"application/vnd.amazon.eventstream"})"
                                                         : R"({"content-type":"text/event-stream"})";
    try {
        switch (data[0] % 4) {
            case 0: (void)provider().decode(200, R"({"content-type":"application/json"})", body); break;
            case 1: (void)provider().decode(200, stream_type, body); break;
            case 2: (void)provider().decode(400 + data[0] % 130, "{}", body); break;
            default:
                if (provider().has_decode_event()) {
                    (void)provider().decode_event(provider_name == "bedrock" ? "contentBlockDelta"
                                                                             : "content_block_delta",
                                                  body);
                }
        }
    } catch (const nucleo::Error&) {
    }
    return 0;
}
