// `nucleo`: the command-line face of the runtime. Results go to stdout, diagnostics to stderr.
// Exit status: 0 success, 1 a runtime failure, 2 bad input (usage, config, plugin, document).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
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

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
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
            std::cerr << "nucleo " << name << ": " << e.what() << "\n";
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
