// The subcommands of `nucleo`. Each takes the arguments after its name and returns an exit
// status (args.hpp). Each lives in commands/<name>.cpp.
#pragma once

#include <string>
#include <vector>

namespace nucleo::cli {

using Argv = std::vector<std::string>;

struct Command {
    const char* name;
    int (*run)(const Argv& args);
    const char* summary;
};

/// The table main.cpp dispatches on, defined in commands/table.cpp.
const std::vector<Command>& commands();

int run_chat(const Argv& args);
int run_compact(const Argv& args);
int run_config(const Argv& args);
int run_demo(const Argv& args);
int run_conversations(const Argv& args);
int run_models(const Argv& args);
int run_plugins(const Argv& args);
int run_render(const Argv& args);
int run_tokens(const Argv& args);
int run_transcript(const Argv& args);
int run_version(const Argv& args);
int run_send(const Argv& args);

}  // namespace nucleo::cli
