// The subcommands of `nucleo`. Each lives in commands/<name>.cpp and describes itself with a
// CommandSpec (args.hpp): options, positionals, help text and the function that runs it.
#pragma once

#include <vector>

#include "args.hpp"

namespace nucleo::cli {

/// The table main.cpp builds its CLI11 subcommands from, defined in commands/table.cpp.
const std::vector<const CommandSpec*>& commands();

const CommandSpec& ask_command();
const CommandSpec& chat_command();
const CommandSpec& compact_command();
const CommandSpec& config_command();
const CommandSpec& conversations_command();
const CommandSpec& demo_command();
const CommandSpec& logs_command();
const CommandSpec& mcp_command();
const CommandSpec& models_command();
const CommandSpec& plugin_command();
const CommandSpec& plugins_command();
const CommandSpec& render_command();
const CommandSpec& send_command();
const CommandSpec& tokens_command();
const CommandSpec& transcript_command();
const CommandSpec& version_command();

}  // namespace nucleo::cli
