// ${VAR} and ${VAR:-default} expansion of configuration strings.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nucleo::config_internal {

/// Looks a variable up; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process environment (getenv).
std::optional<std::string> process_env(std::string_view name);

/// Thrown for a malformed reference; the caller adds file:line:column and the key path.
struct ExpandError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Expands `${NAME}` (the variable, or "" when unset, as a POSIX shell does) and
/// `${NAME:-default}` (the default when NAME is unset or empty; the default is expanded in turn,
/// so `${A:-${B:-x}}` works). `$$` is a literal `$`; a `$` followed by anything else stays as it
/// is. NAME is [A-Za-z_][A-Za-z0-9_]*. ExpandError for an unterminated `${`, an empty or bad name,
/// or an operator other than `:-`.
std::string expand_env(std::string_view text, const EnvLookup& lookup = process_env);

}  // namespace nucleo::config_internal
