// `nucleo`: the command-line face of the runtime. Results go to stdout, diagnostics to stderr.
// The command line is read by CLI11: every subcommand (commands.hpp) takes -h/--help, and
// `nucleo help CMD` prints the same text. Exit status (docs/cli-json.md): 0 success, 1 a call or
// runtime failure, 2 usage or bad input (config, plugin, document, unknown id).
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <CLI/CLI.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "commands/log_format.hpp"
#include "common/utf8.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/version.hpp"

namespace {

using nucleo::cli::CommandSpec;

constexpr const char* kDescription =
    "nucleo: keeps the conversations of LLM agents (rendering per provider, caching, "
    "compaction, persistence).";
constexpr const char* kFooter =
    "Run `nucleo help COMMAND` or `nucleo COMMAND --help` for a command's options.\n"
    "Exit status: 0 success, 1 a call or runtime failure, 2 usage or bad input.";

std::string version_line() {
    return std::string("nucleo ") + nucleo::version() + " (plugin ABI " +
           std::to_string(NUCLEO_PLUGIN_ABI_MAJOR) + "." + std::to_string(NUCLEO_PLUGIN_ABI_MINOR) +
           ")";
}

/// "--continue" from "-c,--continue"; the key Args answers to is the long name without dashes.
std::string key_of(const std::string& names) {
    std::string last = names.substr(names.rfind(',') + 1);
    while (!last.empty() && last.front() == '-') last.erase(0, 1);
    return last;
}

/// One subcommand as CLI11 holds it, with the options Args is built from after the parse.
struct Bound {
    const CommandSpec* spec = nullptr;
    CLI::App* app = nullptr;
    std::vector<std::pair<std::string, CLI::Option*>> options;
    std::vector<std::string> positionals;
};

/// conversation.108: an error line never carries bytes that are not UTF-8, whatever a message
/// quoted (each such byte is shown as U+FFFD).
std::string printable(std::string_view message) {
    return nucleo::internal::printable_utf8(message);
}

/// Errors that mean "the input was wrong" exit 2; everything else 1.
int exit_status_for(nucleo::ErrorKind kind) {
    switch (kind) {
        case nucleo::ErrorKind::kInvalidArgument:
        case nucleo::ErrorKind::kNotFound:
        case nucleo::ErrorKind::kConfig:
        case nucleo::ErrorKind::kPlugin: return nucleo::cli::kExitBadInput;
        default: return nucleo::cli::kExitFailure;
    }
}

/// answers.109: what the provider billed before the error, on the error's own line ("" when
/// nothing was billed), so a failed escalation's spend is not lost to the user.
std::string billed_note(const nucleo::Error& e) {
    const auto& calls = e.billed_calls();
    if (calls.empty()) return "";
    const nucleo::Usage usage = e.billed_usage();
    std::ostringstream out;
    out << " (billed before the failure: " << nucleo::cli::count_of(static_cast<std::int64_t>(calls.size()), "call")
        << ", input " << usage.input_tokens << ", output " << usage.output_tokens << ", cache write "
        << usage.cache_write_tokens << ", cache read " << usage.cache_read_tokens << ", cost $" << std::fixed
        << std::setprecision(6) << e.billed_cost() << ")";
    return out.str();
}

/// The CLI11 parse error as one line in this program's words. `leftovers` are the words the
/// parse did not take, in command-line order (CLI11's own message lists them last first);
/// `commands` and `options` what the first of them may have been meant as (cli.101).
std::string usage_message(const CLI::ParseError& e, const std::vector<std::string>& leftovers,
                          const std::vector<std::string>& commands,
                          const std::vector<std::string>& options) {
    const std::string what = e.what();
    if (e.get_name() == "ArgumentMismatch") {
        // "--model: 1 required TEXT missing"
        const auto colon = what.find(':');
        if (colon != std::string::npos && what.rfind("--", 0) == 0)
            return "option " + what.substr(0, colon) + " needs a value";
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !leftovers.empty()) {
        const std::string& first = leftovers.front();
        if (first.size() > 1 && first.front() == '-') {
            std::string message = "unknown option " + first;
            if (auto near = nucleo::cli::did_you_mean(first.substr(0, first.find('=')), options))
                message += " (did you mean '" + *near + "'?)";
            return message;
        }
        return nucleo::cli::unknown_word("command", first, commands);
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        const auto colon = what.find(": ");
        const std::string first =
            colon == std::string::npos ? what : what.substr(colon + 2, what.find(' ', colon + 2) - colon - 2);
        if (first.rfind("-", 0) == 0) return "unknown option " + first;
        return "unknown command '" + first + "'";
    }
    return what;
}

/// What is left after the parse: an option the command does not declare, or an argument it
/// takes none of.
void refuse_leftovers(const Bound& b) {
    std::vector<std::string> rest = b.app->remaining();
    // `--` ends the options (what follows is positional); CLI11 keeps the mark itself among the
    // words it did not take.
    rest.erase(std::remove(rest.begin(), rest.end(), "--"), rest.end());
    if (rest.empty()) return;
    const std::string& first = rest.front();
    if (first.size() > 1 && first.front() == '-') throw nucleo::cli::UsageError{"unknown option " + first};
    throw nucleo::cli::UsageError{"unexpected argument '" + first + "'"};
}

nucleo::cli::Args args_of(const Bound& b) {
    std::map<std::string, std::string> options;
    std::map<std::string, std::vector<std::string>> repeated;
    for (const auto& [key, option] : b.options) {
        if (option->count() == 0) continue;
        options[key] = option->get_expected_min() == 0 || option->results().empty()
                           ? std::string()
                           : option->results().back();
        if (option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll)
            repeated[key] = option->results();
    }
    return nucleo::cli::Args(std::move(options), b.positionals, std::move(repeated));
}

/// Whether the command was given `--json`.
bool wants_json(const Bound& b) {
    for (const auto& [key, option] : b.options) {
        if (key == "json") return option->count() > 0;
    }
    return false;
}

/// cli.103: a failed command given --json prints its error as one document on stdout too, so a
/// script that parses stdout is never handed a plain-text line or nothing.
void print_json_error(std::string_view kind, std::string_view message, int status) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    const std::string text = printable(message);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("error");
    w.StartObject();
    w.Key("kind");
    w.String(kind.data(), static_cast<rapidjson::SizeType>(kind.size()));
    w.Key("message");
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    w.Key("exit_status");
    w.Int(status);
    w.EndObject();
    w.EndObject();
    std::cout << buf.GetString() << "\n" << std::flush;
}

int run(const Bound& b) {
    const std::string& name = b.spec->name;
    const auto fail = [&](std::string_view kind, const std::string& message, int status) {
        std::cerr << "nucleo " << name << ": " << printable(message) << "\n";
        if (wants_json(b)) print_json_error(kind, message, status);
        return status;
    };
    try {
        refuse_leftovers(b);
        return b.spec->run(args_of(b));
    } catch (const nucleo::cli::UsageError& e) {
        return fail("usage", e.message, nucleo::cli::kExitBadInput);
    } catch (const nucleo::Error& e) {
        return fail(nucleo::to_string(e.kind()), e.what() + billed_note(e),
                    exit_status_for(e.kind()));
    } catch (const std::exception& e) {
        return fail("internal", e.what(), nucleo::cli::kExitFailure);
    }
}

}  // namespace

int main(int argc, char** argv) {
    // obs.106: `--log-format text|json` anywhere on the line (before or after the command) sets
    // the log's format for the whole run; it is taken out before the command line is parsed.
    std::vector<std::string> words(argv, argv + argc);
    try {
        nucleo::cli::take_log_format(words);
    } catch (const nucleo::cli::UsageError& e) {
        std::cerr << "nucleo: " << e.message << "\n";
        return nucleo::cli::kExitBadInput;
    }
    std::vector<char*> kept;
    for (std::string& w : words) kept.push_back(w.data());
    kept.push_back(nullptr);
    argc = static_cast<int>(words.size());
    argv = kept.data();

    CLI::App app{kDescription, "nucleo"};
    app.footer(kFooter);
    app.get_formatter()->column_width(30);
    app.set_help_flag("-h,--help", "print this help and exit");
    // One command per run: a later word that names a command is an argument of the first.
    app.require_subcommand(0, 1);
    app.set_version_flag("--version", version_line(), "print the version of nucleo and exit");
    // Shown in the help; the value was taken out above (take_log_format).
    std::string log_format_shown;
    app.add_option("--log-format", log_format_shown,
                   "text or json: the log's format, for any command (default: NUCLEO_LOG_FORMAT, else text)")
        ->type_name("FORMAT");

    std::vector<Bound> bound;
    bound.reserve(nucleo::cli::commands().size());
    for (const CommandSpec* spec : nucleo::cli::commands()) {
        Bound& b = bound.emplace_back();
        b.spec = spec;
        b.app = app.add_subcommand(spec->name, spec->summary);
        b.app->allow_extras();
        if (!spec->details.empty()) b.app->footer(spec->details);
        for (const auto& o : spec->options) {
            CLI::Option* option = nullptr;
            if (o.value.empty()) {
                option = b.app->add_flag(o.names, o.help);
            } else {
                option = b.app->add_option(o.names, o.help)
                             ->type_name(o.value)
                             ->multi_option_policy(o.repeatable ? CLI::MultiOptionPolicy::TakeAll
                                                                : CLI::MultiOptionPolicy::TakeLast);
            }
            b.options.emplace_back(key_of(o.names), option);
        }
        if (!spec->positionals.empty()) {
            b.app->add_option(spec->positionals, b.positionals, spec->positionals_help)
                ->type_name("");
        }
    }
    // cli.101: what a word that names no command may have been meant as.
    std::vector<std::string> command_names;
    for (const CommandSpec* spec : nucleo::cli::commands()) command_names.push_back(spec->name);
    command_names.push_back("help");
    // Everything after `help` is its own: `nucleo help chat` names chat, it does not run it.
    CLI::App* help = app.add_subcommand("help", "print the help of a command (nucleo help COMMAND)");
    help->prefix_command();

    if (argc < 2) {
        std::cerr << app.help();
        return nucleo::cli::kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string where = "nucleo";
        for (const Bound& b : bound)
            if (b.app->parsed()) where += " " + b.spec->name;
        std::cerr << where << ": "
                  << usage_message(e, app.remaining(), command_names, {"--help", "--version", "--log-format"})
                  << "\n";
        if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && where == "nucleo")
            std::cerr << "Run `nucleo --help` for the commands.\n";
        return nucleo::cli::kExitBadInput;
    }
    if (help->parsed()) {
        const std::vector<std::string> rest = help->remaining();
        const std::string help_topic = rest.empty() ? std::string() : rest.front();
        if (help_topic.empty()) {
            // app.help() would describe the selected subcommand, `help` itself.
            std::cout << app.get_formatter()->make_help(&app, "nucleo", CLI::AppFormatMode::Normal);
            return nucleo::cli::kExitOk;
        }
        for (const Bound& b : bound) {
            if (b.spec->name == help_topic) {
                std::cout << b.app->help("nucleo");
                return nucleo::cli::kExitOk;
            }
        }
        std::cerr << "nucleo help: " << nucleo::cli::unknown_word("command", help_topic, command_names)
                  << "\n";
        return nucleo::cli::kExitBadInput;
    }
    // An unknown level would silently turn logging off: refused before any command runs.
    if (const std::string problem = nucleo::log::level_variable_problem(); !problem.empty()) {
        std::cerr << "nucleo: " << problem << "\n";
        return nucleo::cli::kExitBadInput;
    }
    for (const Bound& b : bound) {
        if (b.app->parsed()) return run(b);
    }
    std::cerr << app.help();
    return nucleo::cli::kExitBadInput;
}
