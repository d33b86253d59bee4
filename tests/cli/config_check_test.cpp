// The operator's mistakes a config can hold, each caught by the config check with the file, the
// line and what was expected: an unknown plugin, a misspelled plugin option, a missing plugin
// folder, an unset ${VAR}, an unknown log level; and `nucleo config --check`, `nucleo plugins
// --config`.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"

namespace nucleo::cli_test {
namespace {

namespace fs = std::filesystem;

class ConfigCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(NUCLEO_BINARY_DIR) / "tests" / "cli" /
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    /// Writes `text` as nucleo.yaml in the test's folder; returns its path.
    std::string write(const std::string& text) const {
        std::ofstream(dir_ / "nucleo.yaml") << text;
        return (dir_ / "nucleo.yaml").string();
    }
    CliRun run(const std::string& args, const std::string& env = "") const {
        return test_support::run_command("env -u NUCLEO_LOG_LEVEL " + env + " '" + NUCLEO_CLI + "' " + args);
    }

    fs::path dir_;
};

TEST_F(ConfigCheck, AMisspelledPluginIsRefusedAtItsLine) {
    const std::string config = write("providers:\n  a:\n    plugin: anthropik\n");
    const CliRun r = run("config --check --config " + quoted(config));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(config + ":3:13: providers.a.plugin: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'anthropik'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no nucleo-anthropik.so in "), std::string::npos) << r.err;
}

TEST_F(ConfigCheck, AWellFormedConfigChecksOk) {
    const std::string config =
        write("plugins:\n  paths: [\"" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + "\"]\n" +
              "providers:\n  a: {plugin: anthropic, api_key: k}\n" +
              "models:\n  - {id: m, provider: a, wire_model: w, grade: SMALL, max_context_tokens: 1000,\n"
              "     max_output_tokens: 100, output_budget: {SHORT: 10, MEDIUM: 20, LONG: 40, EXTENDED: 100},\n"
              "     prices: {input: 1, output: 2}}\n"
              "stores:\n  persistent: {plugin: sqlite, options: {path: x.db}}\n");
    const CliRun r = run("config --check --config " + quoted(config));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, config + ": ok, 1 model, 2 plugin choices resolved\n");
    EXPECT_EQ(r.err, "");
}

// config.4: --check names every problem of the file, each with its place, and exits 2;
// catalog.10: a three-field record of an OpenAI-compatible server is no problem.
TEST_F(ConfigCheck, EveryProblemIsNamedInOneRun) {
    const std::string config = write(
        "providers:\n"
        "  local: {plugin: openai, base_url: \"http://localhost:11434/v1\"}\n"
        "models:\n"
        "  - {id: llama3, provider: local, wire_model: \"llama3.1:8b\"}\n"
        "  - {id: b, provider: local, wire_model: b, grade: HUGE,\n"
        "     max_output_tokens: -1, prices: {input: 1}}\n"
        "  - {provider: local}\n");
    const CliRun r = run("config --check --config " + quoted(config));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              "nucleo config: " + config +
                  ":5:52: models[1].grade: expected one of SMALL, MEDIUM, LARGE, got \"HUGE\"\n" +
                  config +
                  ":6:25: models[1].max_output_tokens: expected a positive integer, got -1\n" +
                  config + ":6:37: models[1].prices.output: required value missing\n" + config +
                  ":7:5: models[2].id: required value missing\n" + config +
                  ":7:5: models[2].wire_model: required value missing\n");
}

TEST_F(ConfigCheck, AMissingPluginFolderIsAWarningNamingIt) {
    const std::string config = write("plugins:\n  paths: [\"" + (dir_ / "no-such-folder").string() + "\"]\n");
    const CliRun r = run("config --check --config " + quoted(config));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "nucleo: warning: " + config + ": plugins.paths: no folder " +
                         (dir_ / "no-such-folder").string() + "\n");
}

TEST_F(ConfigCheck, AnUnsetVariableIsNamedWithItsLine) {
    const std::string config =
        write("plugins:\n  paths: [\"" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + "\"]\n" +
              "stores:\n  persistent:\n    plugin: sqlite\n    options:\n"
              "      path: \"${NUCLEO_SQLITE_PATH_TYPO}\"\n");
    // The check names it as a warning, and the sqlite schema refuses the empty path it left
    // (abi.109), at the option's line, with the expected value and the variable.
    const std::string refusal = config + ":7:7: stores.persistent.options.path: expected a string "
                                         "of at least 1 character (the database file), got \"\"; "
                                         "${NUCLEO_SQLITE_PATH_TYPO} is unset (plugin sqlite)";
    CliRun r = run("config --check --config " + quoted(config), "-u NUCLEO_SQLITE_PATH_TYPO");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("nucleo config: warning: " + config +
                         ":7: ${NUCLEO_SQLITE_PATH_TYPO} is unset, so it expands to \"\""),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(refusal), std::string::npos) << r.err;
    // Every command that opens the store refuses it the same way, before the store's create.
    r = run("conversations list --user u --config " + quoted(config), "-u NUCLEO_SQLITE_PATH_TYPO");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(refusal), std::string::npos) << r.err;
}

TEST_F(ConfigCheck, AMisspelledPluginOptionIsRefusedAtItsLine) {
    // abi.109: the plugin's schema refuses it before create, with the near name.
    const std::string config =
        write("plugins:\n  paths: [\"" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + "\"]\n" +
              "providers:\n  anthropic:\n    plugin: anthropic\n    options:\n"
              "      anthropic_versoin: \"2023-06-01\"\n");
    const CliRun r = run("config --check --config " + quoted(config));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(config + ":7:7: providers.anthropic.options.anthropic_versoin: unknown "
                                  "option \"anthropic_versoin\" (did you mean \"anthropic_version\"?)"),
              std::string::npos)
        << r.err;
}

TEST_F(ConfigCheck, AnUnknownLogLevelIsAnError) {
    const CliRun r = run("version", "NUCLEO_LOG_LEVEL=verbose");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err,
              "nucleo: NUCLEO_LOG_LEVEL: unknown level 'verbose' (expected trace, debug, info, warn, "
              "error, critical or off)\n");
    EXPECT_EQ(run("version", "NUCLEO_LOG_LEVEL=debug").status, 0);
}

TEST_F(ConfigCheck, PluginsTakesTheConfigsFolders) {
    // A copy of the sqlite plugin in a folder only the config names: found there, first.
    fs::create_directories(dir_ / "own-plugins");
    fs::copy_file(fs::path(NUCLEO_BUILD_PLUGIN_DIR) / "nucleo-sqlite.so", dir_ / "own-plugins" / "nucleo-sqlite.so");
    const std::string config = write("plugins:\n  paths: [own-plugins]\n");
    const CliRun r = run("plugins --json sqlite --config " + quoted(config), "-u NUCLEO_PLUGIN_PATH");
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    ASSERT_EQ(d["plugins"].Size(), 1u);
    EXPECT_EQ(fs::path(d["plugins"][0]["file"].GetString()).parent_path(), dir_ / "own-plugins") << r.out;
    // Without --config the same name is the build's own.
    const CliRun plain = run("plugins --json sqlite", "-u NUCLEO_PLUGIN_PATH -u NUCLEO_CONFIG");
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(plain.out.find((dir_ / "own-plugins").string()), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace nucleo::cli_test
