// `nucleo render` (the wire request) and `nucleo send` (one call) over a conversation document,
// against the real nucleo-emulator with the shipped config.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

using nucleo::test_support::CliRun;
using nucleo::test_support::slurp;

/// Runs the CLI with `env` prepended (VAR=value ...), capturing stdout and stderr.
CliRun nucleo(const std::string& env, const std::string& args) {
    return test_support::run_command("env " + env + " NUCLEO_PLUGIN_PATH=" +
                                     NUCLEO_BUILD_PLUGIN_DIR + " " + NUCLEO_CLI + " " + args +
                                     " --config " + NUCLEO_SOURCE_DIR + "/config/nucleo.yaml");
}

const std::string kDoc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/minimal.json";

TEST(CliRender, PrintsTheWireRequestWithSecretsAsStars) {
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-ant-very-secret ANTHROPIC_BASE_URL=http://127.0.0.1:9",
                         "render --in " + kDoc + " --model claude-sonnet-4-5");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("sk-ant-very-secret"), std::string::npos);
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_STREQ(d["method"].GetString(), "POST");
    EXPECT_STREQ(d["url"].GetString(), "http://127.0.0.1:9/v1/messages");
    EXPECT_STREQ(d["headers"]["x-api-key"].GetString(), "***");
    EXPECT_STREQ(d["body"]["model"].GetString(), "claude-sonnet-4-5-20250929");
    EXPECT_EQ(d["body"]["max_tokens"].GetInt(), 1024);  // the document's output declaration
}

TEST(CliSend, AppendsTheAnswerAndReportsUsageAndCost) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                             std::to_string(emulator.port()),
                         "send --in " + kDoc + " --model claude-sonnet-4-5");
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    const auto& messages = d["messages"];
    ASSERT_EQ(messages.Size(), 4U);  // the fixture's three and the answer
    EXPECT_STREQ(messages[3]["direction"].GetString(), "incoming");
    EXPECT_NE(r.err.find("cost $"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stop end_turn"), std::string::npos) << r.err;
}

TEST(CliSend, AMissingKeyIsOneLineAndExitTwoBeforeAnyRequest) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY= ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(emulator.port()),
                         "send --in " + kDoc + " --model claude-sonnet-4-5");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no api_key"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"total\":0"), std::string::npos) << stats.body;
}

}  // namespace
}  // namespace nucleo
