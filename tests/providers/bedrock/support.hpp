// Shared helpers of the Bedrock dialect tests: the plugin loaded through the core's loader, the
// fixture folders, JSON helpers and the wire validator.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::bedrock_test {

/// nucleo-bedrock.so from the build's plugin folder, loaded once through PluginLoader.
const ProviderInstance& provider();

std::filesystem::path fixture_dir(std::string_view sub);
std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view text);

/// Parses JSON or fails the calling test (returns a null document then).
rapidjson::Document parse(std::string_view json);
std::string pretty(const rapidjson::Value& v);
std::string compact(const rapidjson::Value& v);

/// The fixture names (file stems before `suffix`) in a fixture folder, sorted.
std::vector<std::string> fixture_names(std::string_view sub, std::string_view suffix);

/// encode() through the ABI, parsed.
rapidjson::Document encode(std::string_view provider_request);

/// How many {"cachePoint":...} blocks a Converse body holds (system and messages).
std::size_t count_cache_points(const rapidjson::Value& body);

/// Every string under a "text" key of a Converse body (system, messages, tool results).
std::vector<std::string> texts(const rapidjson::Value& body);

/// Runs ../shared/tools/validate_wire.py bedrock on the bodies. Returns "" when valid; when the
/// validator is absent (no ../shared), says so on stdout and returns "" -- that one check is then
/// not made, and nothing pretends it was.
std::string validate_bodies(const std::vector<std::string>& bodies);
/// Whether ../shared/tools/validate_wire.py is beside the project (never on a user's clone).
bool published_schema_validator_present();

/// The error a call threw: its kind and message (kind kInternal and "no error" when none).
struct Caught {
    ErrorKind kind = ErrorKind::kInternal;
    std::string message = "no error";
    bool thrown = false;
};
template <typename Fn>
Caught catch_error(Fn&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return {e.kind(), e.what(), true};
    }
    return {};
}

}  // namespace nucleo::bedrock_test
