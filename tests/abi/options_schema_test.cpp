// Plugin options schemas (abi.109-abi.112): every in-tree plugin publishes the schema of its
// options through the ABI 1.4 slot, and the host refuses an operator's mistake in them before
// create, naming the config's file, line and the expected value: a misspelled option, a wrong
// type, a missing required option, a value outside an enum or a range, an unset ${VAR}, an
// unknown plugin name. A plugin built before 1.4 gets its options unchecked, with one warning.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::Config;
using nucleo::Error;
using nucleo::ErrorKind;
using nucleo::Plugin;
using nucleo::PluginLoader;

const fs::path kGood = fs::path(ABI_FIXTURE_DIR) / "good";

/// A config file in the test's own folder whose plugins are the build's.
class OptionsSchema : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(ABI_FIXTURE_DIR).parent_path() / "options_schema" /
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    /// Writes nucleo.yaml: a `plugins:` line (line 1), then `body` from line 2.
    std::string write(const std::string& body) const {
        const fs::path file = dir_ / "nucleo.yaml";
        std::ofstream(file) << "plugins: {paths: [\"" << NUCLEO_BUILD_PLUGIN_DIR << "\"]}\n" << body;
        return file.string();
    }

    /// The error check_plugins raises for the config at `file`; fails the test when none.
    static Error refusal(const std::string& file) {
        const Config config = Config::load(file);
        try {
            nucleo::check_plugins(config, PluginLoader(config.plugin_paths()));
        } catch (const Error& e) {
            return e;
        }
        ADD_FAILURE() << "check_plugins accepted " << file;
        return Error(ErrorKind::kInternal, "");
    }

    fs::path dir_;
};

TEST_F(OptionsSchema, AMisspelledOptionIsRefusedAtItsLineWithTheNearName) {
    const std::string file = write(
        "providers:\n"
        "  a:\n"
        "    plugin: anthropic\n"
        "    options:\n"
        "      anthropic_versoin: \"2023-06-01\"\n");
    const Config config = Config::load(file);
    // Through the library's own path: the host program's from_config refuses it before create.
    try {
        (void)nucleo::ProviderClient::from_config(config, PluginLoader(config.plugin_paths()), "a");
        FAIL() << "a misspelled option was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(file + ":6:7: providers.a.options.anthropic_versoin: unknown option "
                                 "\"anthropic_versoin\" (did you mean \"anthropic_version\"?); "
                                 "expected one of: anthropic_version, anthropic_beta, cache_policy,",
                          0),
                  0u)
            << m;
        EXPECT_NE(m.find("(plugin anthropic)"), std::string::npos) << m;
    }
}

TEST_F(OptionsSchema, AMisspelledStoreOptionNamesTheNearName) {
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: sqlite\n"
        "    options:\n"
        "      path: x.db\n"
        "      synchronus: FULL\n");
    const Error e = refusal(file);
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_EQ(std::string(e.what()),
              file + ":7:7: stores.persistent.options.synchronus: unknown option \"synchronus\" "
                     "(did you mean \"synchronous\"?); expected one of: path, busy_timeout_ms, "
                     "synchronous (plugin sqlite)");
}

TEST_F(OptionsSchema, AWrongTypeNamesTheExpectedType) {
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: sqlite\n"
        "    options: {path: x.db, busy_timeout_ms: soon}\n");
    const Error e = refusal(file);
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_EQ(std::string(e.what()),
              file + ":5:27: stores.persistent.options.busy_timeout_ms: expected an integer (wait "
                     "for a locked database, default 5000), got \"soon\" (plugin sqlite)");
}

TEST_F(OptionsSchema, AMissingRequiredOptionIsNamedAtItsMapping) {
    // The postgres store would connect in create: refused before, so no server is needed.
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: postgres\n"
        "    options:\n"
        "      pool_size: 2\n");
    const Error e = refusal(file);
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_EQ(std::string(e.what()),
              file + ":6:7: stores.persistent.options.url: required option \"url\" is missing: "
                     "expected a string (postgresql://user:password@host/db) (plugin postgres)");
}

TEST_F(OptionsSchema, AValueOutsideItsEnumListsTheValues) {
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: sqlite\n"
        "    options:\n"
        "      path: x.db\n"
        "      synchronous: FAST\n");
    const Error e = refusal(file);
    EXPECT_EQ(std::string(e.what()),
              file + ":7:7: stores.persistent.options.synchronous: expected one of \"FULL\", "
                     "\"NORMAL\", got \"FAST\" (plugin sqlite)");
}

TEST_F(OptionsSchema, AValueOutOfRangeNamesTheBounds) {
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: postgres\n"
        "    options:\n"
        "      url: postgresql://u@localhost/db\n"
        "      pool_size: 100\n");
    const Error e = refusal(file);
    EXPECT_EQ(std::string(e.what()),
              file + ":7:7: stores.persistent.options.pool_size: expected an integer >= 1 and <= "
                     "64 (connections kept open, default 4), got 100 (plugin postgres)");
}

TEST_F(OptionsSchema, AnUnsetVariableIsNamedThroughTheLibrary) {
    ASSERT_EQ(::unsetenv("NUCLEO_SQLITE_PATH_TYPO"), 0);
    const std::string file = write(
        "stores:\n"
        "  persistent:\n"
        "    plugin: sqlite\n"
        "    options:\n"
        "      path: \"${NUCLEO_SQLITE_PATH_TYPO}\"\n");
    const Config config = Config::load(file);
    // The loaded config names it, with its place...
    ASSERT_EQ(config.unset_variables().size(), 1u);
    EXPECT_EQ(config.unset_variables()[0].name, "NUCLEO_SQLITE_PATH_TYPO");
    EXPECT_EQ(config.unset_variables()[0].where, file + ":6:13");
    EXPECT_EQ(config.unset_variables()[0].key_path, "stores.persistent.options.path");
    // ...and the refusal of the option it left empty says why it is empty.
    const Error e = refusal(file);
    EXPECT_EQ(std::string(e.what()),
              file + ":6:7: stores.persistent.options.path: expected a string of at least 1 "
                     "character (the database file), got \"\"; ${NUCLEO_SQLITE_PATH_TYPO} is unset "
                     "(plugin sqlite)");
}

TEST_F(OptionsSchema, AnUnknownPluginIsNamedAtItsLineThroughTheLibrary) {
    const std::string file = write(
        "providers:\n"
        "  a:\n"
        "    plugin: anthropik\n");
    const Config config = Config::load(file);
    try {
        (void)nucleo::ProviderClient::from_config(config, PluginLoader(config.plugin_paths()), "a");
        FAIL() << "an unknown plugin was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(file + ":4:13: providers.a.plugin: ", 0), 0u) << m;
        EXPECT_NE(m.find("no nucleo-anthropik.so in "), std::string::npos) << m;
    }
    const Error e = refusal(file);
    EXPECT_EQ(std::string(e.what()).rfind(file + ":4:13: providers.a.plugin: ", 0), 0u) << e.what();
}

TEST_F(OptionsSchema, TheHostsOwnProviderOptionsAreAcceptedAndChecked) {
    const std::string ok = write(
        "providers:\n"
        "  a:\n"
        "    plugin: openai\n"
        "    options: {cache_policy: sliding, system_role: developer, path: /v1/chat}\n");
    const Config config = Config::load(ok);
    EXPECT_NO_THROW(nucleo::check_plugins(config, PluginLoader(config.plugin_paths())));
    const std::string bad = write(
        "providers:\n"
        "  a:\n"
        "    plugin: openai\n"
        "    options: {cache_policy: everywhere}\n");
    const Error e = refusal(bad);
    EXPECT_EQ(std::string(e.what()),
              bad + ":5:15: providers.a.options.cache_policy: expected one of \"seed\", "
                    "\"sliding\", \"automatic\", got \"everywhere\" (plugin openai)");
}

TEST(OptionsSchemaSlot, OptionsFromCodeAreCheckedWithTheirPath) {
    const Plugin sqlite = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("sqlite");
    try {
        (void)sqlite.make_store(R"({"path":"x.db","synchronus":"FULL"})");
        FAIL() << "a misspelled option was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_EQ(std::string(e.what()).rfind("plugin 'sqlite' options: synchronus: unknown option "
                                              "\"synchronus\" (did you mean \"synchronous\"?)",
                                              0),
                  0u)
            << e.what();
    }
    // Not an object at all.
    EXPECT_THROW((void)sqlite.make_store("[1]"), Error);
}

TEST(OptionsSchemaSlot, EveryInTreePluginPublishesAReadableSchema) {
    const PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    const std::vector<std::pair<std::string, const char*>> plugins = {
        {"anthropic", NUCLEO_FACTORY_PROVIDER}, {"openai", NUCLEO_FACTORY_PROVIDER},
        {"bedrock", NUCLEO_FACTORY_PROVIDER},   {"sqlite", NUCLEO_FACTORY_STORE},
        {"postgres", NUCLEO_FACTORY_STORE},     {"redis", NUCLEO_FACTORY_STORE},
        {"memory", NUCLEO_FACTORY_STORE},       {"extractive", NUCLEO_FACTORY_SUMMARIZER},
        {"llm", NUCLEO_FACTORY_SUMMARIZER}};
    for (const auto& [name, id] : plugins) {
        const Plugin p = loader.load(name);
        EXPECT_EQ(p.info().abi_minor, static_cast<uint32_t>(NUCLEO_PLUGIN_ABI_MINOR)) << name;
        const auto schema = p.options_schema(id);
        ASSERT_TRUE(schema.has_value()) << name;
        rapidjson::Document d;
        d.Parse(schema->c_str());
        ASSERT_TRUE(d.IsObject()) << name;
        EXPECT_FALSE(d["additionalProperties"].GetBool()) << name << ": unknown options pass";
        // A factory it does not serve has no schema.
        EXPECT_FALSE(p.options_schema("nucleo.teleport/1").has_value()) << name;
    }
}

/// Captures warnings while alive.
class Warnings {
  public:
    Warnings() {
        nucleo::log::set_sink([this](nucleo::log::Level level, std::string_view, std::string_view m) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (level == nucleo::log::Level::kWarn) lines_.emplace_back(m);
        });
    }
    ~Warnings() { nucleo::log::set_sink({}); }
    std::vector<std::string> lines() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lines_;
    }

  private:
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

TEST(OptionsSchemaSlot, AFrozen13PluginGetsItsOptionsUncheckedWithOneWarning) {
    Warnings warnings;
    const Plugin p = PluginLoader().load((kGood / "nucleo-frozen_1_3.so").string());
    EXPECT_EQ(p.info().abi_minor, 3u);
    EXPECT_FALSE(p.options_schema(NUCLEO_FACTORY_SUMMARIZER).has_value());
    // Any options pass to create as they are, and its summarizer works.
    EXPECT_EQ(p.make_summarizer(R"({"anything":[1,2]})").summarize("1"),
              R"({"schema_version":1,"summary":1,"by":"frozen_1_3"})");
    (void)p.make_summarizer(R"({"else":true})");
    int named = 0;
    for (const auto& line : warnings.lines()) {
        named += line.find("plugin 'frozen_1_3'") != std::string::npos &&
                 line.find("publishes no options schema (ABI 1.3): its options are passed "
                           "unchecked") != std::string::npos;
    }
    EXPECT_EQ(named, 1);
}

}  // namespace

namespace {

/// {"a":{"a":...{}}}, `depth` objects around the innermost {}.
std::string nested(int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += "{\"a\":";
    s += "{}";
    for (int i = 0; i < depth; ++i) s += "}";
    return s;
}

TEST(OptionsSchemaSlot, OptionsNestedPastTheLimitAreRefusedNotRecursedInto) {
    // abi.110: a schema and options both 40 levels deep: checked down to 32, refused below.
    const Plugin p = PluginLoader().load((kGood / "nucleo-deep_schema.so").string());
    EXPECT_NO_THROW((void)p.make_summarizer(nested(10)));
    try {
        (void)p.make_summarizer(nested(40));
        FAIL() << "options 40 levels deep were accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        std::string path = "a";
        for (int i = 1; i < 33; ++i) path += ".a";
        EXPECT_EQ(std::string(e.what()), "plugin 'deep_schema' options: " + path +
                                             ": nested deeper than 32 levels (the options "
                                             "nesting limit)");
    }
}

TEST(OptionsSchemaSlot, ASchemaTheHostCannotReadRefusesThePluginNamingIt) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-bad_schema.so").string());
    try {
        (void)p.make_summarizer("{}");
        FAIL() << "an unreadable schema was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        EXPECT_EQ(std::string(e.what()),
                  "plugin 'bad_schema' (" + (kGood / "nucleo-bad_schema.so").string() +
                      "): its options schema for nucleo.summarizer/1 cannot be read: "
                      "\"properties\" is not an object");
    }
}

}  // namespace
