// ${VAR} and ${VAR:-default} expansion of configuration strings.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::config_internal {

/// Looks a variable up; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process environment (getenv).
std::optional<std::string> process_env(std::string_view name);

/// limits.125: the deepest nesting of `${...}` references in one string (`${A:-${B:-x}}` is 2).
/// Deeper text is refused before anything is expanded, so neither the scan nor the expansion of
/// defaults grows with a hostile value.
inline constexpr int kMaxReferenceNesting = 16;

/// Thrown for a malformed reference; the caller adds file:line:column and the key path.
struct ExpandError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Expands `${NAME}` (the variable, or "" when unset, as a POSIX shell does) and
/// `${NAME:-default}` (the default when NAME is unset or empty; the default is expanded in turn,
/// so `${A:-${B:-x}}` works). `$$` is a literal `$`; a `$` followed by anything else stays as it
/// is. NAME is [A-Za-z_][A-Za-z0-9_]*. ExpandError for an unterminated `${`, an empty or bad name,
/// an operator other than `:-`, or references nested deeper than kMaxReferenceNesting.
/// `unset`, when given, receives the NAME of each `${NAME}` without default whose variable is
/// unset (in text order), so the loader can name them.
std::string expand_env(std::string_view text, const EnvLookup& lookup = process_env,
                       std::vector<std::string>* unset = nullptr);

}  // namespace nucleo::config_internal
