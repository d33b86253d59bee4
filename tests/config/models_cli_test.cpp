// `nucleo models [--json] [--config FILE]` and `nucleo config` (bad input: one clear line, exit 2).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>

#include <cstdlib>
#include <iterator>
#include <set>
#include <sstream>

#include "config_fixture.hpp"

namespace nucleo {
namespace {

using test::read_file;
using test::scratch_dir;
using test::write_file;

struct CliRun {
    int status;
    std::string out;
    std::string err;
};

/// Runs the nucleo command with `args` (already shell-quoted), capturing stdout and stderr.
CliRun run_cli(const std::string& args) {
    // Beside the test's scratch folder, not in it: scratch_dir() starts empty and the test's
    // fixtures live there.
    static int runs = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto dir =
        std::filesystem::path(NUCLEO_BINARY_DIR) / "test-tmp" / "config" / "cli-runs" /
        (std::string(info->test_suite_name()) + "." + info->name() + "." + std::to_string(runs++));
    std::filesystem::create_directories(dir);
    const auto out = dir / "stdout.txt";
    const auto err = dir / "stderr.txt";
    const std::string cmd = std::string("'") + NUCLEO_CLI + "' " + args + " >'" + out.string() +
                            "' 2>'" + err.string() + "'";
    const int raw = std::system(cmd.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(out), read_file(err)};
}

const std::string kShipped = std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml";

TEST(ModelsCommand, JsonListsTheShippedCatalog) {
    const CliRun r = run_cli("models --json --config '" + kShipped + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_EQ(doc["schema_version"].GetInt(), 1);
    const auto& models = doc["models"];
    ASSERT_TRUE(models.IsArray());
    std::set<std::string> providers, ids;
    for (const auto& m : models.GetArray()) {
        ids.insert(m["id"].GetString());
        providers.insert(m["provider"].GetString());
        EXPECT_TRUE(m["wire_model"].IsString());
        EXPECT_GT(m["max_context_tokens"].GetInt64(), 0);
        EXPECT_GT(m["prices"]["input"].GetDouble(), 0);
        EXPECT_EQ(m["output_budget"].MemberCount(), 4u);
    }
    EXPECT_GE(models.Size(), 5u);
    EXPECT_EQ(providers, (std::set<std::string>{"anthropic", "openai", "bedrock", "gemini",
                                                "openai-responses"}));
    EXPECT_EQ(ids.count("claude-haiku-4-5"), 1u);
    const auto& first = models[0];
    EXPECT_STREQ(first["id"].GetString(), "claude-sonnet-5-5");
    EXPECT_DOUBLE_EQ(first["prices"]["cache_read"].GetDouble(), 0.10);
    EXPECT_EQ(first["thinking_budget"]["IMMEDIATE"].GetInt64(), 0);
    EXPECT_STREQ(first["status"].GetString(), "active");
    EXPECT_STREQ(first["thinking"]["depth"]["IMMEDIATE"]["form"].GetString(), "between_tools");
    EXPECT_STREQ(first["thinking"]["depth"]["STANDARD"]["effort"].GetString(), "medium");
    for (const auto& m : models.GetArray()) {
        const std::string id = m["id"].GetString();
        if (id == "claude-sonnet-4-5") {  // catalog.2: a retired record names its replacement
            EXPECT_STREQ(m["status"].GetString(), "retired");
            EXPECT_STREQ(m["replacement"].GetString(), "claude-sonnet-5-5");
        }
        if (id == "claude-haiku-5-5") {  // catalog.7: five times the rates above 100K
            ASSERT_EQ(m["prices"]["tiers"].Size(), 1u);
            EXPECT_EQ(m["prices"]["tiers"][0]["above"].GetInt64(), 100000);
            EXPECT_DOUBLE_EQ(m["prices"]["tiers"][0]["input"].GetDouble(), 0.50);
        }
    }
}

TEST(ModelsCommand, TableHasAHeaderAndOneLinePerModel) {
    const CliRun r = run_cli("models --config '" + kShipped + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("ID", 0), 0u) << r.out;
    std::istringstream lines(r.out);
    std::string header, first;
    std::getline(lines, header);
    std::getline(lines, first);
    std::istringstream fields(first);
    std::vector<std::string> row{std::istream_iterator<std::string>(fields),
                                 std::istream_iterator<std::string>()};
    EXPECT_EQ(row, (std::vector<std::string>{"claude-sonnet-5-5", "anthropic", "claude-sonnet-5-5",
                                             "LARGE", "active", "between_tools/medium/high", "1000000",
                                             "128000", "2.00", "10.00", "2.50", "0.10", "-"}))
        << r.out;
    EXPECT_NE(r.out.find("low/medium/high (always)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("> 100000"), std::string::npos) << r.out;  // Haiku 5.5's tier
    EXPECT_NE(r.out.find("deprecated until 2027-01-14"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("retired 2026-11-30 -> claude-sonnet-5-5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0.075"), std::string::npos);  // gpt-4o-mini's cached input
    const CliRun j = run_cli("models --json --config '" + kShipped + "'");
    rapidjson::Document doc;
    doc.Parse(j.out.c_str());
    std::size_t line_count = 0;
    for (char c : r.out) line_count += c == '\n';
    EXPECT_EQ(line_count, doc["models"].Size() + 1);
}

TEST(ModelsCommand, BadConfigExitsTwoWithOneLine) {
    const auto dir = scratch_dir();
    const auto bad = write_file(dir / "bad.yaml", "providers:\n  a: {plugin: x, colour: red}\n");
    const CliRun r = run_cli("models --json --config '" + bad.string() + "'");
    EXPECT_EQ(r.status, 2);
    // cli.103: with --json the failure is a document on stdout too.
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_STREQ(doc["error"]["kind"].GetString(), "config");
    EXPECT_EQ(doc["error"]["exit_status"].GetInt(), 2);
    EXPECT_EQ(r.err,
              "nucleo models: " + bad.string() +
                  ":2:18: providers.a.colour: unknown key (known keys: plugin, base_url, api_key, "
                  "credentials, options, transport, isolation)\n");
}

TEST(ModelsCommand, MalformedYamlAndMissingFileExitTwoWithOneLine) {
    const auto dir = scratch_dir();
    const auto bad = write_file(dir / "broken.yaml", "models: [\n");
    CliRun r = run_cli("models --config '" + bad.string() + "'");
    EXPECT_EQ(r.status, 2);
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(bad.string() + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("malformed YAML"), std::string::npos) << r.err;

    r = run_cli("models --config '" + (dir / "none.yaml").string() + "'");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo models: config file " + (dir / "none.yaml").string() +
                         " not found or unreadable\n");
}

TEST(ModelsCommand, ConfigFromEnvironmentAndUsageErrors) {
    const auto dir = scratch_dir();
    const auto cfg = write_file(
        dir / "one.yaml",
        "providers: {p: {plugin: openai}}\n"
        "models:\n"
        "  - {id: only-one, provider: p, wire_model: w, grade: SMALL, max_context_tokens: 10,\n"
        "     max_output_tokens: 5, output_budget: {SHORT: 1, MEDIUM: 2, LONG: 3, EXTENDED: 5},\n"
        "     prices: {input: 1, output: 2}}\n");
    const test::ScopedEnv env("NUCLEO_CONFIG", cfg.string());
    CliRun r = run_cli("models --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"only-one\""), std::string::npos) << r.out;
    r = run_cli("models --colour red");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo models: unknown option --colour\n");
}

TEST(ConfigCommand, PrintsTheConfigWithSecretsMasked) {
    const test::ScopedEnv key("ANTHROPIC_API_KEY", "sk-ant-CLI-SECRET-42");
    const test::ScopedEnv aws("AWS_SECRET_ACCESS_KEY", "aws-CLI-SECRET-43");
    const CliRun r = run_cli("config --config '" + kShipped + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("config: " + kShipped + "\n", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find("CLI-SECRET"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("api_key: \"***\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("secret_access_key: \"***\""), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("CLI-SECRET"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nucleo
