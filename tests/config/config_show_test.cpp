// What the config shows and what it never shows: an include of a file that is not a config is
// refused naming the file and what it reads as, never echoing a line of it (limits.138), and
// `nucleo config` prints each provider's transport limits in force (limits.139).
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"
#include "config_fixture.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using test::refusal_of;
using test::scratch_dir;
using test::write_file;

/// A root config that includes `included`, written beside it.
std::filesystem::path including(const std::filesystem::path& dir, const std::string& included) {
    return write_file(dir / "nucleo.yaml", "include: " + included + "\n");
}

TEST(ConfigShow, AnIncludedFileThatIsNotYamlConfigIsRefusedWithoutItsContent) {
    const auto dir = scratch_dir();
    // The shape of /etc/passwd: every line one plain scalar to YAML, the first a canary.
    const auto passwd = write_file(dir / "passwd",
                                   "root-CANARY:x:0:0:root:/root:/bin/bash\n"
                                   "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
    const std::string message = refusal_of(including(dir, "passwd"));
    EXPECT_EQ(message.rfind(passwd.string() + ":1:1: not a config file: it reads as one YAML "
                                              "scalar (plain text)",
                            0),
              0U)
        << message;
    EXPECT_NE(message.find("(the file's content is not shown)"), std::string::npos) << message;
    EXPECT_EQ(message.find("CANARY"), std::string::npos) << message;
    EXPECT_EQ(message.find("daemon"), std::string::npos) << message;
}

TEST(ConfigShow, ASequenceIsNamedAsSuch) {
    const auto dir = scratch_dir();
    write_file(dir / "list.yaml", "- CANARY-one\n- two\n");
    const std::string message = refusal_of(including(dir, "list.yaml"));
    EXPECT_NE(message.find("list.yaml:1:1: not a config file: it reads as a YAML sequence"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("CANARY"), std::string::npos) << message;
}

TEST(ConfigShow, AKeyThatCouldBeATypoIsNamedAnythingElseIsNot) {
    const auto dir = scratch_dir();
    // A mapping whose key is a line of prose: its size is said, not its text.
    write_file(dir / "notes.yaml", "db password of CANARY: hunter2\n");
    std::string message = refusal_of(including(dir, "notes.yaml"));
    EXPECT_NE(message.find("notes.yaml:1:1: a key that is no config key (21 bytes, not shown; "
                           "known keys: include, plugins,"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("CANARY"), std::string::npos) << message;
    EXPECT_EQ(message.find("hunter2"), std::string::npos) << message;
    // A misspelt key is still named, with the keys it could have meant.
    write_file(dir / "typo.yaml", "provders: {}\n");
    message = refusal_of(including(dir, "typo.yaml"));
    EXPECT_NE(message.find("typo.yaml:1:1: provders: unknown key (known keys: include,"),
              std::string::npos)
        << message;
}

TEST(ConfigShow, TheCommandSaysTheIncludeIsNoConfigAndExitsTwo) {
    const auto dir = scratch_dir();
    write_file(dir / "passwd", "root-CANARY:x:0:0:root:/root:/bin/bash\n");
    const auto run = test_support::run_command(std::string(NUCLEO_CLI) + " config --config " +
                                               including(dir, "passwd").string());
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_NE(run.err.find("passwd:1:1: not a config file"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("CANARY"), std::string::npos) << run.err;
}

TEST(ConfigShow, TheDumpShowsEachProvidersTransportLimitsInForce) {
    const Config c = Config::parse(
        "providers:\n"
        "  a: {plugin: anthropic}\n"
        "  b:\n"
        "    plugin: openai\n"
        "    transport: {connect_timeout_ms: 2500, deadline_ms: 90000}\n",
        "t.yaml");
    const std::string dump = c.redacted();
    // Defaults are shown as what is in force, as `defaults:` shows the declarations.
    EXPECT_NE(dump.find("  a:\n    plugin: anthropic\n"), std::string::npos) << dump;
    EXPECT_NE(dump.find("    transport:\n      connect_timeout_ms: 10000\n      idle_timeout_ms: "
                        "120000\n      deadline_ms: 600000\n      max_response_bytes: 33554432\n"),
              std::string::npos)
        << dump;
    EXPECT_NE(dump.find("    transport:\n      connect_timeout_ms: 2500\n      idle_timeout_ms: "
                        "120000\n      deadline_ms: 90000\n      max_response_bytes: 33554432\n"),
              std::string::npos)
        << dump;
}

TEST(ConfigShow, TheCommandPrintsTransportInYamlAndJson) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml",
                                 std::string("plugins: {paths: [\"") + NUCLEO_BUILD_PLUGIN_DIR +
                                     "\"]}\n"
                                     "providers:\n"
                                     "  a:\n"
                                     "    plugin: anthropic\n"
                                     "    transport: {idle_timeout_ms: 30000}\n");
    const std::string command = std::string(NUCLEO_CLI) + " config --config " + file.string();
    const auto yaml = test_support::run_command(command);
    ASSERT_EQ(yaml.status, 0) << yaml.err;
    EXPECT_NE(yaml.out.find("transport:\n      connect_timeout_ms: 10000\n      idle_timeout_ms: "
                            "30000\n"),
              std::string::npos)
        << yaml.out;
    const auto json = test_support::run_command(command + " --json");
    ASSERT_EQ(json.status, 0) << json.err;
    EXPECT_NE(json.out.find(R"("transport":{"connect_timeout_ms":10000,"idle_timeout_ms":30000,)"
                            R"("deadline_ms":600000,"max_response_bytes":33554432})"),
              std::string::npos)
        << json.out;
}

}  // namespace
}  // namespace nucleo
