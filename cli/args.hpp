// The arguments of one `nucleo` subcommand, read by CLI11 (main.cpp builds one CLI11 subcommand
// per CommandSpec). A subcommand declares its options in its CommandSpec and reads them through
// Args: `has("json")`, `get("model")`, `require("in")`, `positionals()`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nucleo::cli {

/// Exit status of every command (docs/cli-json.md, "Exit status"): 0 success, 1 a call or
/// runtime failure, 2 usage or bad input (config, plugin, document, unknown id).
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

/// "1 message", "2 messages", "0 messages"; `plural` defaults to `singular` + "s".
std::string count_of(std::int64_t n, std::string_view singular, std::string_view plural = {});

/// cli.101: the candidate `word` was most likely meant to be, for a "did you mean" hint: the
/// nearest by edit distance (insertions, deletions, substitutions and swaps of two neighbours
/// each count 1) when it is at most a third of the word's length (at least 1), else the only
/// candidate `word` begins; the first of equals in `candidates`' order. nullopt when none is
/// near, or `word` is one of them.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

/// "unknown WHAT 'WORD'", with " (did you mean 'X'?)" when did_you_mean finds one (cli.101).
std::string unknown_word(std::string_view what, std::string_view word,
                         const std::vector<std::string>& candidates);

/// The acting user when --user is not given: $USER, else "local" (chat and conversations agree).
std::string default_user();

/// One option of a subcommand. `names` is CLI11's form: "--model" or "-c,--continue"; the long
/// name without dashes is the key Args answers to. An empty `value` makes it a flag.
struct OptionSpec {
    std::string names;
    std::string value;  ///< what the value is, shown in the help ("ID", "FILE"); "" for a flag
    std::string help;
    /// Given several times, every value is kept (Args::all); otherwise the last one counts.
    bool repeatable = false;
};

/// The options every config-reading subcommand takes.
OptionSpec config_option();
/// `--json`: print the result as one compact JSON document (docs/cli-json.md).
OptionSpec json_option();

/// Parsed arguments of one subcommand.
class Args {
public:
    Args() = default;
    Args(std::map<std::string, std::string> options, std::vector<std::string> positionals,
         std::map<std::string, std::vector<std::string>> repeated = {})
        : options_(std::move(options)),
          positionals_(std::move(positionals)),
          repeated_(std::move(repeated)) {}

    [[nodiscard]] bool has(const std::string& name) const;
    [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
    /// The value of a required option; UsageError naming it when absent.
    [[nodiscard]] std::string require(const std::string& name) const;
    [[nodiscard]] const std::vector<std::string>& positionals() const { return positionals_; }
    /// Every value of a repeatable option, in the order given; empty when it was not given.
    [[nodiscard]] std::vector<std::string> all(const std::string& name) const;

  private:
    std::map<std::string, std::string> options_;
    std::vector<std::string> positionals_;
    std::map<std::string, std::vector<std::string>> repeated_;
};

/// A subcommand: its name, one-line summary, options, positional arguments and what runs it.
struct CommandSpec {
    std::string name;
    std::string summary;
    std::vector<OptionSpec> options;
    /// The positional arguments' name in the help, one word ("PROMPT", "ARGS"); "" when the
    /// command takes none.
    std::string positionals;
    /// What the positional arguments are, beside their name in the help.
    std::string positionals_help;
    /// Shown after the options in `--help` (what the command prints, its decisions); may be "".
    std::string details;
    int (*run)(const Args& args) = nullptr;
};

}  // namespace nucleo::cli
