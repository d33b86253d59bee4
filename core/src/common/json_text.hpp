// Small RapidJSON helpers every JSON reader of the core shares (the conversation document, the
// schema facility, the provider client), so refusals word types the same way everywhere.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "nucleo/wire/json_guard.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {

/// The type of a value as a refusal names it: "null", "a boolean", "an object", "an array",
/// "a string", "an integer" or "a number".
const char* json_type_word(const rapidjson::Value& value) noexcept;

/// The compact text of a value (what RapidJSON's Writer writes).
std::string json_compact(const rapidjson::Value& value);

/// Parses `json` into `doc` through the guarded reader (limits.120 to limits.122: at most
/// `max_depth` levels, no duplicate key, no raw NUL; full-precision numbers). A refusal throws
/// Error(kind, "<where>: byte offset N: <reason>") ("<where>: " left out when `where` is empty)
/// and leaves `doc` null.
void parse_json_guarded(rapidjson::Document& doc, std::string_view json, std::string_view where,
                        unsigned max_depth = json_guard::kDocumentMaxDepth,
                        ErrorKind kind = ErrorKind::kInvalidArgument);

}  // namespace nucleo::internal
