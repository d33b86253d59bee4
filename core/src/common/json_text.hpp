// Small RapidJSON helpers every JSON reader of the core shares (the conversation document, the
// schema facility, the provider client), so refusals word types the same way everywhere.
#pragma once

#include <string>

#include <rapidjson/document.h>

namespace nucleo::internal {

/// The type of a value as a refusal names it: "null", "a boolean", "an object", "an array",
/// "a string", "an integer" or "a number".
const char* json_type_word(const rapidjson::Value& value) noexcept;

/// The compact text of a value (what RapidJSON's Writer writes).
std::string json_compact(const rapidjson::Value& value);

}  // namespace nucleo::internal
