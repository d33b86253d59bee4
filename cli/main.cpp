// `nucleo`: the command-line face of the runtime. Results go to stdout, diagnostics to stderr.
// Exit status: 0 success, 1 a runtime failure, 2 bad input (usage, config, plugin, document).
#include <exception>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "commands/log_format.hpp"
#include "nucleo/errors.hpp"

namespace {

void print_usage(std::ostream& out) {
    out << "usage: nucleo <command> [options]\n\ncommands:\n";
    for (const auto& c : nucleo::cli::commands()) out << "  " << c.name << "\t" << c.summary << "\n";
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
    out << " (billed before the failure: " << calls.size() << (calls.size() == 1 ? " call" : " calls")
        << ", input " << usage.input_tokens << ", output " << usage.output_tokens << ", cache write "
        << usage.cache_write_tokens << ", cache read " << usage.cache_read_tokens << ", cost $" << std::fixed
        << std::setprecision(6) << e.billed_cost() << ")";
    return out.str();
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        nucleo::cli::take_log_format(args);  // obs.106
    } catch (const nucleo::cli::UsageError& e) {
        std::cerr << "nucleo: " << e.message << "\n";
        return nucleo::cli::kExitBadInput;
    }
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(args.empty() ? std::cerr : std::cout);
        return args.empty() ? nucleo::cli::kExitBadInput : nucleo::cli::kExitOk;
    }
    const std::string name = args[0];
    args.erase(args.begin());
    for (const auto& c : nucleo::cli::commands()) {
        if (name != c.name) continue;
        try {
            return c.run(args);
        } catch (const nucleo::cli::UsageError& e) {
            std::cerr << "nucleo " << name << ": " << e.message << "\n";
            return nucleo::cli::kExitBadInput;
        } catch (const nucleo::Error& e) {
            std::cerr << "nucleo " << name << ": " << e.what() << billed_note(e) << "\n";
            return exit_status_for(e.kind());
        } catch (const std::exception& e) {
            std::cerr << "nucleo " << name << ": " << e.what() << "\n";
            return nucleo::cli::kExitFailure;
        }
    }
    std::cerr << "nucleo: unknown command '" << name << "'\n";
    print_usage(std::cerr);
    return nucleo::cli::kExitBadInput;
}
