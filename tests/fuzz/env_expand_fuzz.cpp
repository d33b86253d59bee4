// ${VAR} and ${VAR:-default} expansion under libFuzzer: any text expands or is refused with an
// ExpandError (limits.125 bounds the nesting); the lookup knows A (set), E (set, empty) and
// nothing else, so defaults are taken and variables substituted along the way.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/env_expand.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const nucleo::config_internal::EnvLookup lookup =
        [](std::string_view name) -> std::optional<std::string> {
        if (name == "A") return std::string("value-of-a");
        if (name == "E") return std::string();
        return std::nullopt;
    };
    try {
        (void)nucleo::config_internal::expand_env(text, lookup);
    } catch (const nucleo::config_internal::ExpandError&) {
    }
    return 0;
}
