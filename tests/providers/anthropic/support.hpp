// Shared by the nucleo-anthropic tests: the plugin loaded through the core's loader (so every
// call crosses the real C ABI), fixture files, and JSON helpers.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::anthropic_test {

/// The nucleo-anthropic provider instance, loaded once from the build's plugin folder.
const ProviderInstance& provider();

std::filesystem::path fixtures();
std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view text);

/// Parses `json`; a parse error fails the current test and yields a null document.
rapidjson::Document parse(std::string_view json);
/// Compact JSON of a value: the byte form the plugin writes, so goldens also pin member order.
std::string compact(const rapidjson::Value& value);
std::string pretty(const rapidjson::Value& value);

/// Every `cache_control` member anywhere below `value`.
int count_cache_control(const rapidjson::Value& value);

/// The message of the nucleo::Error `fn` throws, or "" (with a test failure) when it does not
/// throw; `kind` receives the error's kind.
template <class Fn>
std::string error_of(Fn&& fn, ErrorKind* kind = nullptr) {
    try {
        fn();
    } catch (const Error& e) {
        if (kind != nullptr) *kind = e.kind();
        return e.what();
    }
    return "";
}

/// Encodes a provider request and returns the HTTP request document's "body" compactly.
std::string encode_body(std::string_view provider_request);

/// True when ../shared/tools/validate_wire.py exists relative to the repository root.
bool wire_validator_present();

}  // namespace nucleo::anthropic_test
