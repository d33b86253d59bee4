// `nucleo render --in CONV.json --model ID --prepared` and `nucleo transcript` (channel.14, and
// bad input): the CLI over the fixtures of tests/document/fixtures.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

struct CliRun {
    int status = -1;
    std::string out;
    std::string err;
};

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs the built `nucleo` with `args` (against the shipped config when `with_config`),
/// capturing both streams.
CliRun nucleo(const std::string& args, bool with_config = true) {
    const auto dir = std::filesystem::path(NUCLEO_BINARY_DIR) / "tests" / "document" /
                     (std::string("cli-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    const auto out = dir / "out.txt";
    const auto err = dir / "err.txt";
    const std::string config =
        with_config ? std::string(" --config \"") + NUCLEO_SOURCE_DIR + "/config/nucleo.yaml\""
                    : std::string();
    const std::string command = std::string("\"") + NUCLEO_CLI + "\" " + args + config + " >\"" +
                                out.string() + "\" 2>\"" + err.string() + "\"";
    CliRun run;
    const int raw = std::system(command.c_str());
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    run.out = slurp(out);
    run.err = slurp(err);
    return run;
}

std::string fixture(const std::string& name) {
    return std::string("\"") + NUCLEO_SOURCE_DIR + "/tests/document/fixtures/" + name + "\"";
}

TEST(RenderCli, PreparedPrintsParseableJsonWithOnlyUserAndAssistantTurns) {
    const CliRun run = nucleo("render --prepared --model claude-sonnet-5-5 --in " +
                           fixture("every_block.json"));
    ASSERT_EQ(run.status, 0) << run.err;
    rapidjson::Document doc;
    doc.Parse(run.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << run.out;
    ASSERT_TRUE(doc.IsObject());

    // channel.4: "Turns are TurnRole::kUser or TurnRole::kAssistant, nothing else."
    const auto& turns = doc["turns"];
    ASSERT_TRUE(turns.IsArray());
    ASSERT_GE(turns.Size(), 5U);
    std::set<std::string> roles;
    for (const auto& t : turns.GetArray()) roles.insert(t["role"].GetString());
    EXPECT_EQ(roles, (std::set<std::string>{"user", "assistant"}));

    // The objective is the only system content; the fixture's first slot comes first.
    const auto& system = doc["system_blocks"];
    ASSERT_TRUE(system.IsArray());
    ASSERT_GE(system.Size(), 1U);
    EXPECT_STREQ(system[0]["text"].GetString(), "Help with the order.");
    EXPECT_EQ(run.out.find("\"role\": \"system\""), std::string::npos);

    // The catalog entry supports caching and native tools: definitions are swept to the tools
    // parameter, the system prefix and the cached turns carry breakpoints, at most 4.
    EXPECT_TRUE(doc["native_tools"].GetBool());
    EXPECT_TRUE(doc["cache_system"].GetBool());
    std::set<std::string> tools;
    for (const auto& t : doc["tool_definitions"].GetArray()) tools.insert(t["name"].GetString());
    EXPECT_EQ(tools, (std::set<std::string>{"search_orders", "refund"}));
    const auto& plan = doc["cache_plan"];
    EXPECT_TRUE(plan["system_block"].IsUint());
    EXPECT_LE(plan["breakpoints"].GetUint(), 4U);
    ASSERT_GE(plan["turn_anchors"].Size(), 1U);
    const auto& first = plan["turn_anchors"][0];
    EXPECT_STREQ(turns[first["turn"].GetUint()]["message_id"].GetString(), "m1");
}

TEST(RenderCli, ABadDocumentExitsTwoWithOnePositionedLine) {
    const CliRun run = nucleo("render --prepared --model claude-sonnet-5-5 --in " +
                           fixture("bad_block_type.json"));
    EXPECT_EQ(run.status, 2);
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_NE(run.err.find("bad_block_type.json: messages[3].blocks[1].type: unknown block type "
                           "\"video\""),
              std::string::npos)
        << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST(RenderCli, WithoutPreparedItPrintsTheWireRequest) {
    // The wire form is tested in depth in tests/llm/cli_send_test.cpp; here: it is the plugin's
    // request for the catalog entry, not the prepared form.
    const CliRun run = nucleo("render --model claude-sonnet-5-5 --in " + fixture("minimal.json"));
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("\"url\""), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("/v1/messages"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("\"cache_plan\""), std::string::npos) << run.out;
}

TEST(RenderCli, AnUnknownModelExitsTwo) {
    const CliRun run = nucleo("render --prepared --model no-such-model --in " + fixture("minimal.json"));
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find("no-such-model"), std::string::npos) << run.err;
}

TEST(TranscriptCli, PrintsTheConversationForAReader) {
    const CliRun run = nucleo("transcript --in " + fixture("minimal.json"), false);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out,
              "user:\nWhere is order 42?\n\n"
              "assistant:\n[tool call search_orders (toolu_1)] {\"query\":\"42\"}\n\n"
              "user:\n[tool result of search_orders (toolu_1)]\nOrder 42 shipped on Monday.\n");
}

}  // namespace
