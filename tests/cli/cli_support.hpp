// Running the `nucleo` binary from the CLI tests, and the list of its commands.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace nucleo::cli_test {

using test_support::CliRun;

/// `nucleo ARGS` (ARGS already shell-quoted), stdout and stderr captured.
inline CliRun nucleo(const std::string& args) {
    return test_support::run_command(std::string("'") + NUCLEO_CLI + "' " + args);
}

/// '…' around `s` for the shell (no single quote inside, as every path of these tests).
inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// Every subcommand of `nucleo`.
inline const std::vector<std::string>& all_commands() {
    static const std::vector<std::string> names = {
        "ask",    "chat",    "compact", "config", "conversations", "demo",       "logs",   "mcp",
        "models", "plugins", "render",  "send",   "tokens",        "transcript", "version"};
    return names;
}

/// A scratch folder for the running test, emptied first.
inline std::filesystem::path scratch() {
    const std::filesystem::path dir =
        std::filesystem::path(NUCLEO_BINARY_DIR) / "tests" / "cli" /
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline const std::string kShippedConfig = std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml";

}  // namespace nucleo::cli_test
