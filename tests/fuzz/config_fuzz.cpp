// The config loader under libFuzzer: any YAML text loads or is refused with an Error carrying
// file:line:column — never a crash, a hang or an expansion past the limits (limits.124 to
// limits.128). Includes resolve against a folder that does not exist, so the harness reads no
// file of the machine beyond what an absolute include names (those are refused unless regular).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)nucleo::Config::parse(text, "/nonexistent-nucleo-fuzz/nucleo.yaml");
    } catch (const nucleo::Error& e) {
        if (std::string_view(e.what()).empty()) std::abort();  // every refusal says something
    }
    return 0;
}
