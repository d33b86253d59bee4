// conversation.106, conversation.108: every command that reads a conversation document refuses
// one that is not UTF-8 as bad input (exit 2, one line naming the file, the path and the byte),
// prints nothing of its bytes and blames no plugin; text of every width goes through them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "common/utf8.hpp"
#include "utf8_cases.hpp"

namespace nucleo {
namespace {

using test_support::CliRun;
using test_support::run_command;

/// The commands that take `--in CONV.json`, with what else each needs. The shipped config's
/// `claude-sonnet-5-5` lives at the Anthropic provider; nothing is sent before the document is
/// read, so `send` needs no server for a bad document.
const std::vector<std::string> kCommands = {
    "transcript",
    "render --model claude-sonnet-5-5",
    "render --prepared --model claude-sonnet-5-5",
    "compact --model claude-sonnet-5-5",
    "send --model claude-sonnet-5-5",
};

std::filesystem::path scratch_dir() {
    const auto dir =
        std::filesystem::path(NUCLEO_BINARY_DIR) / "tests" / "document" /
        (std::string("utf8-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    return dir;
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

CliRun nucleo(const std::string& command, const std::string& file) {
    const std::string config =
        command == "transcript"
            ? std::string()
            : std::string(" --config \"") + NUCLEO_SOURCE_DIR + "/config/nucleo.yaml\"";
    return run_command(std::string("\"") + NUCLEO_CLI + "\" " + command + " --in \"" + file + "\"" +
                       config);
}

TEST(Utf8Cli, EveryCommandRefusesADocumentThatIsNotUtf8) {
    const auto dir = scratch_dir();
    for (const auto& c : utf8_cases::invalid_documents()) {
        const std::string file = write_file(dir / (c.name + ".json"), c.document);
        for (const std::string& command : kCommands) {
            SCOPED_TRACE(command + " on " + c.name);
            const CliRun run = nucleo(command, file);
            EXPECT_EQ(run.status, 2) << run.err;  // bad input
            EXPECT_TRUE(run.out.empty()) << run.out;
            EXPECT_NE(run.err.find(c.name + ".json: " + c.where), std::string::npos) << run.err;
            EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
            EXPECT_TRUE(internal::is_valid_utf8(run.err)) << "printed invalid bytes: " << run.err;
            EXPECT_EQ(run.err.find("at fault"), std::string::npos) << run.err;
        }
    }
}

TEST(Utf8Cli, TextOfEveryWidthGoesThroughEveryReadingCommand) {
    const std::string file =
        write_file(scratch_dir() / "wide.json", utf8_cases::valid_wide_document());
    for (const std::string& command : {std::string("transcript"), kCommands[1], kCommands[2]}) {
        SCOPED_TRACE(command);
        const CliRun run = nucleo(command, file);
        EXPECT_EQ(run.status, 0) << run.err;
        EXPECT_TRUE(internal::is_valid_utf8(run.out));
        EXPECT_NE(run.out.find(utf8_cases::kWideText), std::string::npos) << run.out;
    }
}

}  // namespace
}  // namespace nucleo
