// `nucleo plugins` (abi.20, bad input: a file that is not a shared object, a shared
// object without the symbol -> one clear line naming the file and the reason, exit status 2).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "nucleo/plugin.h"

namespace {

namespace fs = std::filesystem;

using nucleo::test_support::CliRun;
using nucleo::test_support::slurp;

/// Runs `env NUCLEO_CLI args`, capturing stdout and stderr separately.
CliRun run_cli(const std::string& args, const std::string& env = "") {
    return nucleo::test_support::run_command("env " + env + " NUCLEO_LOG_LEVEL=warn '" +
                                             std::string(NUCLEO_CLI) + "' plugins " + args);
}

const std::string kBad = std::string(ABI_FIXTURE_DIR) + "/bad";
const std::string kGood = std::string(ABI_FIXTURE_DIR) + "/good";

TEST(PluginsCommand, FileThatIsNotASharedObjectIsOneLineAndExit2) {
    const CliRun r = run_cli("--path '" + kBad + "/nucleo-not_elf.so'");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo plugins: cannot load plugin " + kBad +
                         "/nucleo-not_elf.so: not a shared object (no ELF header)\n");
    EXPECT_EQ(r.out, "");
}

TEST(PluginsCommand, SharedObjectWithoutTheSymbolIsOneLineAndExit2) {
    const CliRun r = run_cli("--path '" + kBad + "/nucleo-no_symbol.so'");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(
        r.err.find(kBad + "/nucleo-no_symbol.so: missing entry symbol nucleo_plugin_entry_v1"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(PluginsCommand, UnknownPluginNameIsExit2) {
    const CliRun r = run_cli("no_such_plugin_anywhere");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("'no_such_plugin_anywhere': no nucleo-no_such_plugin_anywhere.so in"),
              std::string::npos)
        << r.err;
}

TEST(PluginsCommand, ListsAGoodFolderAsJson) {
    const CliRun r = run_cli("--json", "NUCLEO_PLUGIN_PATH='" + kGood + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string minor = std::to_string(NUCLEO_PLUGIN_ABI_MINOR);
    EXPECT_NE(
        r.out.find(R"("name":"c11","version":"1.2.3","abi":"1.)" + minor +
                   R"(","abi_major":1,"abi_minor":)" + minor +
                   R"(,"factories":["nucleo.summarizer/1"],"file":")" + kGood + "/nucleo-c11.so\""),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(R"("name":"future")"), std::string::npos);
    // The build tree's own plugins are on the search path too.
    EXPECT_NE(r.out.find(R"("name":"extractive")"), std::string::npos);
}

TEST(PluginsCommand, AFolderWithBadPluginsListsTheGoodAndExits2) {
    const CliRun r = run_cli("", "NUCLEO_PLUGIN_PATH='" + kBad + ":" + kGood + "'");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("c11"), std::string::npos) << r.out;
    // One refusal line per bad file, each naming it.
    for (const char* f : {"nucleo-not_elf.so", "nucleo-no_symbol.so", "nucleo-null_entry.so",
                          "nucleo-wrong_major.so", "nucleo-too_small.so", "nucleo-init_fails.so"}) {
        EXPECT_NE(r.err.find(kBad + "/" + f + ": "), std::string::npos) << f << "\n" << r.err;
    }
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 6) << r.err;
}

}  // namespace
