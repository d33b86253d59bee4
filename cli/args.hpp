// A small argument reader for the `nucleo` subcommands: `--name value`, `--flag`, positionals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nucleo::cli {

/// Exit status of a subcommand: 0 success, 1 a runtime failure, 2 bad input or usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

/// Thrown for a usage error; main prints "nucleo <cmd>: <message>" and exits 2.
struct UsageError {
    std::string message;
};

/// `value` as a whole number above zero; UsageError "WHAT must be a positive whole number, got
/// 'VALUE'" otherwise (`what` names the option, e.g. "--comfort").
std::int64_t parse_positive(const std::string& what, const std::string& value);

/// Parsed arguments of one subcommand. `flags` names the options that take no value.
class Args {
public:
    Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags);

    [[nodiscard]] bool has(const std::string& name) const;
    [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
    /// The value of a required option; UsageError naming it when absent.
    [[nodiscard]] std::string require(const std::string& name) const;
    [[nodiscard]] const std::vector<std::string>& positionals() const { return positionals_; }
    /// UsageError naming the first option not in `known`.
    void allow_only(const std::vector<std::string>& known) const;

private:
    std::map<std::string, std::string> options_;
    std::vector<std::string> positionals_;
};

}  // namespace nucleo::cli
