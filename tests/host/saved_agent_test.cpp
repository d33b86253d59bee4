// examples/saved-agent, the README's saved-and-resumed host program: run as two processes on one
// SQLite file against the real nucleo-emulator, with the config and the model found the way a
// host finds them (NUCLEO_CONFIG, NUCLEO_MODEL: config.1, config.2).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_run.hpp"
#include "emulator_client.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::test_support::CliRun;

/// The line of `out` that starts with `key`, without it ("" when none).
std::string field(const std::string& out, const std::string& key) {
    const auto at = out.find(key);
    if (at == std::string::npos) return {};
    const auto start = at + key.size();
    return out.substr(start, out.find('\n', start) - start);
}

TEST(SavedAgent, AConversationSavedByOneProcessIsResumedByTheNext) {
    nucleo::emulator_test::EmulatorProcess emulator;
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "host" / "saved-agent";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string env = "env NUCLEO_CONFIG='" + std::string(NUCLEO_SOURCE_DIR) +
                            "/config/nucleo.yaml' NUCLEO_MODEL=claude-sonnet-5-5 "
                            "NUCLEO_SQLITE_PATH='" +
                            (dir / "conversations.db").string() +
                            "' ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                            std::to_string(emulator.port()) + " '" + SAVED_AGENT + "' ";

    const CliRun first = nucleo::test_support::run_command(env + "'Where is order 42?'");
    ASSERT_EQ(first.status, 0) << first.err;
    const std::string id = field(first.out, "conversation: ");
    ASSERT_FALSE(id.empty()) << first.out;
    EXPECT_EQ(field(first.out, "answer: "), "This is the emulator's answer to: Where is order 42?");
    EXPECT_EQ(field(first.out, "messages: "), "2");  // the question and the answer, stored

    const CliRun second =
        nucleo::test_support::run_command(env + "--conversation " + id + " 'And order 43?'");
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_EQ(field(second.out, "conversation: "), id);
    EXPECT_EQ(field(second.out, "answer: "), "This is the emulator's answer to: And order 43?");
    EXPECT_EQ(field(second.out, "messages: "), "4");  // resumed: the first turn is still there

    // An id the store does not hold is refused, naming it; nothing is created.
    const CliRun unknown =
        nucleo::test_support::run_command(env + "--conversation conv-nope 'Hello?'");
    EXPECT_EQ(unknown.status, 2) << unknown.out << unknown.err;
    EXPECT_NE(unknown.err.find("conv-nope"), std::string::npos) << unknown.err;
    EXPECT_EQ(unknown.out.find("conversation: "), std::string::npos) << unknown.out;
}

}  // namespace
