// The JSON Schema subset a plugin's options are checked against before create (abi.109).
//
// One small validator: type (a name or a list of names: object, array, string, integer, number,
// boolean, null), properties, required, additionalProperties (false or a schema; absent allows
// any), enum, minimum, maximum, minLength, items. description, title, default, $schema and other
// keywords are read past. Schemas and values nest at most kMaxSchemaDepth levels: deeper is a
// refusal, never a deep recursion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace nucleo::plugins_detail {

/// abi.110: the deepest nesting of a schema or of the options checked against it.
inline constexpr int kMaxSchemaDepth = 32;

/// The first mismatch of the options against the schema.
struct OptionsIssue {
    /// Option path relative to the options object: "" (the object itself), "path",
    /// "pool.size", "flags[2]". For a missing required option, the path of the missing key.
    std::string path;
    /// What was wrong and what was expected, one line ("unknown option \"x\" (did you mean
    /// \"y\"?); expected one of: y, z").
    std::string message;
    /// True when `path` is absent from the options (a missing required option): its location
    /// is the enclosing object's.
    bool missing = false;
};

/// A schema the plugin published that the validator cannot read (not JSON, a keyword of the
/// wrong type, nested too deep): the plugin's fault, reported as ErrorKind::kPlugin.
struct SchemaError {
    std::string message;
};

/// Checks `options` against `schema`. Returns the first issue, or nullopt when they match.
/// Throws SchemaError when the schema itself is malformed where the check reads it.
std::optional<OptionsIssue> validate_options(const rapidjson::Value& schema,
                                             const rapidjson::Value& options);

/// The candidate closest to `word` by edit distance when near enough to be a likely typo
/// (at most 2 edits, or a third of the word's length for long words); nullopt otherwise.
std::optional<std::string> did_you_mean(std::string_view word, const rapidjson::Value& properties);

}  // namespace nucleo::plugins_detail
