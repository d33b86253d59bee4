// Loading nucleo.yaml: expansion, includes, plugin paths, the catalog, the lookup order, the
// shipped config, and secrets kept out of dumps, errors and logs.
#include <gtest/gtest.h>

#include <mutex>

#include "config_fixture.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"

namespace nucleo {
namespace {

using test::ScopedEnv;
using test::scratch_dir;
using test::write_file;

const std::filesystem::path kShipped =
    std::filesystem::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml";

TEST(Config, ExpandsVariablesWithDefaults) {
    const ScopedEnv url("NUCLEO_TEST_BASE_URL", "http://127.0.0.1:8089/v1");
    const ScopedEnv unset("NUCLEO_TEST_UNSET", std::nullopt);
    const ScopedEnv region("NUCLEO_TEST_REGION", "eu-central-1");
    const Config c = Config::parse(
        "providers:\n"
        "  local: {plugin: openai, base_url: \"${NUCLEO_TEST_BASE_URL}\"}\n"
        "  fallback: {plugin: openai, base_url: "
        "\"${NUCLEO_TEST_UNSET:-https://api.openai.com/v1}\"}\n"
        "  aws:\n"
        "    plugin: bedrock\n"
        "    base_url: https://bedrock-runtime.${NUCLEO_TEST_REGION:-us-east-1}.amazonaws.com\n"
        "    credentials: {region: \"${NUCLEO_TEST_REGION}\", session_token: "
        "\"${NUCLEO_TEST_UNSET}\"}\n"
        "    options: {retries: 3, label: \"${NUCLEO_TEST_REGION}-x\", fast: true, ratio: 0.5, "
        "none: ~}\n",
        "inline.yaml");
    EXPECT_EQ(c.provider("local").base_url, "http://127.0.0.1:8089/v1");
    EXPECT_EQ(c.provider("fallback").base_url, "https://api.openai.com/v1");
    EXPECT_EQ(c.provider("aws").base_url, "https://bedrock-runtime.eu-central-1.amazonaws.com");
    EXPECT_EQ(c.provider("aws").credentials.region, "eu-central-1");
    EXPECT_EQ(c.provider("aws").credentials.session_token, "");
    // Options reach plugins as JSON: plain scalars typed as YAML types them, strings expanded.
    EXPECT_EQ(c.provider("aws").options_json,
              R"({"retries":3,"label":"eu-central-1-x","fast":true,"ratio":0.5,"none":null})");
    EXPECT_EQ(c.provider("local").options_json, "{}");
}

TEST(Config, QuotedScalarsInOptionsStayStrings) {
    const Config c = Config::parse(
        "providers: {p: {plugin: x, options: {version: \"2023\", n: 7}}}\n", "q.yaml");
    EXPECT_EQ(c.provider("p").options_json, R"({"version":"2023","n":7})");
}

TEST(Config, ShippedBaseUrlsFollowTheEcosystemVariables) {
    const ScopedEnv a("ANTHROPIC_BASE_URL", "http://127.0.0.1:9001");
    const ScopedEnv o("OPENAI_BASE_URL", std::nullopt);
    const ScopedEnv b("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", std::nullopt);
    const ScopedEnv r("AWS_REGION", "ap-northeast-1");
    const ScopedEnv k("OPENAI_API_KEY", "sk-openai-test");
    const ScopedEnv ak("AWS_ACCESS_KEY_ID", "AKIATEST");
    const Config c = Config::load(kShipped);
    EXPECT_EQ(c.provider("anthropic").base_url, "http://127.0.0.1:9001");
    EXPECT_EQ(c.provider("openai").base_url, "https://api.openai.com/v1");
    EXPECT_EQ(c.provider("openai").credentials.api_key, "sk-openai-test");
    EXPECT_EQ(c.provider("bedrock").base_url,
              "https://bedrock-runtime.ap-northeast-1.amazonaws.com");
    EXPECT_EQ(c.provider("bedrock").credentials.region, "ap-northeast-1");
    EXPECT_EQ(c.provider("bedrock").credentials.access_key_id, "AKIATEST");
    const ScopedEnv b2("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9003");
    EXPECT_EQ(Config::load(kShipped).provider("bedrock").base_url, "http://127.0.0.1:9003");
}

TEST(Config, ShippedGeminiInstanceTakesGoogleVariables) {
    // gemini.8: GOOGLE_GEMINI_BASE_URL, and the key from GEMINI_API_KEY, else GOOGLE_API_KEY.
    const ScopedEnv url("GOOGLE_GEMINI_BASE_URL", std::nullopt);
    const ScopedEnv gemini_key("GEMINI_API_KEY", std::nullopt);
    const ScopedEnv google_key("GOOGLE_API_KEY", "google-key");
    const Config c = Config::load(kShipped);
    EXPECT_EQ(c.provider("gemini").plugin, "gemini");
    EXPECT_EQ(c.provider("gemini").base_url, "https://generativelanguage.googleapis.com");
    EXPECT_EQ(c.provider("gemini").credentials.api_key, "google-key");
    const ScopedEnv url2("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9004");
    const ScopedEnv gemini_key2("GEMINI_API_KEY", "gemini-key");
    const Config d = Config::load(kShipped);
    EXPECT_EQ(d.provider("gemini").base_url, "http://127.0.0.1:9004");
    EXPECT_EQ(d.provider("gemini").credentials.api_key, "gemini-key");
}

TEST(Config, AnUnknownLogLevelIsRefusedByTheLibrarysLoad) {
    // obs.108: a host program that loads nucleo.yaml refuses the typo as the command does,
    // naming the variable and the expected names.
    const auto file = write_file(scratch_dir() / "loglevel.yaml", "providers: {}\n");
    {
        const ScopedEnv level("NUCLEO_LOG_LEVEL", "verbose");
        try {
            (void)Config::load(file);
            FAIL() << "NUCLEO_LOG_LEVEL=verbose was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kConfig);
            EXPECT_EQ(std::string(e.what()),
                      "NUCLEO_LOG_LEVEL: unknown level 'verbose' (expected trace, debug, info, "
                      "warn, error, critical or off)");
        }
        EXPECT_EQ(log::parse_level("verbose"), std::nullopt);
    }
    const ScopedEnv level("NUCLEO_LOG_LEVEL", "warning");
    EXPECT_NO_THROW((void)Config::load(file));
    EXPECT_EQ(log::parse_level("warning"), log::Level::kWarn);
}

TEST(Config, ShippedConfigLoadsWithRealEntriesOfEachProvider) {
    const Config c = Config::load(kShipped);
    int anthropic = 0, openai = 0, bedrock = 0, gemini = 0;
    for (const ModelSpec& m : c.catalog().all()) {
        const ProviderConfig& p = c.provider(m.provider);
        anthropic += p.plugin == "anthropic";
        openai += p.plugin == "openai";
        bedrock += p.plugin == "bedrock";
        gemini += p.plugin == "gemini";
        SCOPED_TRACE(m.id);
        EXPECT_FALSE(m.wire_model.empty());
        EXPECT_GT(m.max_output_tokens, 0);
        EXPECT_LE(m.max_output_tokens, m.max_context_tokens);
        EXPECT_GT(m.prices.input, 0);
        EXPECT_GT(m.prices.output, m.prices.input);
        if (m.supports_caching) {
            EXPECT_LT(m.prices.cache_read, m.prices.input);
        }
        for (OutputSize rung :
             {OutputSize::kShort, OutputSize::kMedium, OutputSize::kLong, OutputSize::kExtended})
            EXPECT_EQ(m.output_budget.count(rung), 1u);
        // budget.5: IMMEDIATE books thinking only on a model that thinks there anyway.
        if (m.thinks_at(Depth::kImmediate)) {
            EXPECT_GT(m.thinking_budget_for(Depth::kImmediate), 0);
        } else {
            EXPECT_EQ(m.thinking_budget_for(Depth::kImmediate), 0);
        }
    }
    EXPECT_GE(anthropic, 2);
    EXPECT_GE(openai, 2);
    EXPECT_GE(gemini, 1);
    EXPECT_GE(bedrock, 1);
    ASSERT_TRUE(c.session_store().has_value());
    ASSERT_TRUE(c.persistent_store().has_value());
    ASSERT_TRUE(c.summarizer().has_value());
    EXPECT_EQ(c.summarizer()->plugin, "extractive");

    // Published figures of two entries, so an edit of models.yaml is a conscious one.
    const ModelSpec& sonnet = c.catalog().find("claude-sonnet-5-5");
    EXPECT_EQ(sonnet.status, ModelStatus::kActive);
    EXPECT_EQ(sonnet.max_context_tokens, 1000000);
    EXPECT_EQ(sonnet.max_output_tokens, 128000);
    EXPECT_DOUBLE_EQ(sonnet.prices.input, 2.0);
    EXPECT_DOUBLE_EQ(sonnet.prices.output, 10.0);
    EXPECT_DOUBLE_EQ(sonnet.prices.cache_write, 2.50);
    EXPECT_DOUBLE_EQ(sonnet.prices.cache_read, 0.10);
    EXPECT_TRUE(sonnet.accepts(Input::kImages));
    // caching.109: Anthropic's API keeps a cache entry for 1 hour on request; Nova does not.
    EXPECT_TRUE(sonnet.cache_ttl_1h);
    EXPECT_FALSE(c.catalog().find("nova-pro").cache_ttl_1h);
    EXPECT_EQ(sonnet.min_cacheable_tokens, 512);
    const ModelSpec& gpt = c.catalog().find("gpt-6-1-terra");
    EXPECT_EQ(gpt.max_context_tokens, 1050000);
    EXPECT_EQ(gpt.max_output_tokens, 128000);
    EXPECT_EQ(gpt.token_counter, "o200k_base");
    // catalog.7: above 272,000 prompt tokens the other rates apply.
    EXPECT_DOUBLE_EQ(gpt.prices_for(272000).input, 1.00);
    EXPECT_DOUBLE_EQ(gpt.prices_for(272001).input, 2.00);
}

TEST(Config, CatalogFindRefusesUnknownIdsListingTheKnownOnes) {
    const Config c = Config::load(kShipped);
    try {
        (void)c.catalog().find("gpt-9");
        FAIL() << "found gpt-9";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("no model \"gpt-9\" in the catalog (known: claude-sonnet-5-5, ", 0), 0u)
            << msg;
        EXPECT_NE(msg.find("nova-pro"), std::string::npos) << msg;
    }
    EXPECT_EQ(c.catalog().try_find("gpt-9"), nullptr);
    try {
        (void)c.provider("azure");
        FAIL() << "found azure";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        EXPECT_NE(std::string(e.what()).find(
                      "(providers: anthropic, openai, openai-responses, bedrock, gemini)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Config, CatalogRefusesDuplicateIdsBuiltInCode) {
    ModelSpec a;
    a.id = "x";
    EXPECT_THROW(ModelCatalog({a, a}), Error);
}

TEST(Config, IncludesAreRelativeToTheIncludingFile) {
    const auto dir = scratch_dir();
    write_file(dir / "etc" / "nucleo.yaml",
               "include: catalog/models.yaml\nproviders: {anthropic: {plugin: anthropic}}\n");
    write_file(
        dir / "etc" / "catalog" / "models.yaml",
        "include: [../more.yaml]\n"
        "models:\n"
        "  - {id: m1, provider: openai, wire_model: w, grade: MEDIUM, max_context_tokens: 100,\n"
        "     max_output_tokens: 10, output_budget: {SHORT: 1, MEDIUM: 2, LONG: 5, EXTENDED: 10},\n"
        "     prices: {input: 1, output: 2}, comfort_context_tokens: 80}\n");
    write_file(dir / "etc" / "more.yaml", "providers: {openai: {plugin: openai}}\n");
    const Config c = Config::load(dir / "etc" / "nucleo.yaml");
    EXPECT_EQ(c.catalog().ids(), std::vector<std::string>{"m1"});
    EXPECT_EQ(c.providers().size(), 2u);
    const ModelSpec& m = c.catalog().find("m1");
    EXPECT_EQ(m.comfort_context_tokens, 80);
    EXPECT_EQ(m.output_budget_for(OutputSize::kLong), 5);
    EXPECT_FALSE(m.supports_caching);
    EXPECT_TRUE(m.native_tools);
    EXPECT_EQ(m.token_counter, "o200k_base");
}

TEST(Config, PluginPathsResolveAgainstTheConfigFolderAndDropEmptyEntries) {
    const auto dir = scratch_dir();
    const ScopedEnv unset("NUCLEO_TEST_EXTRA", std::nullopt);
    write_file(dir / "cfg" / "nucleo.yaml",
               "plugins:\n  paths: [plugins, ../lib/nucleo, /opt/nucleo/plugins, "
               "\"${NUCLEO_TEST_EXTRA:-}\"]\n");
    const Config c = Config::load(dir / "cfg" / "nucleo.yaml");
    const auto base = std::filesystem::absolute(dir);
    ASSERT_EQ(c.plugin_paths().size(), 3u);
    EXPECT_EQ(c.plugin_paths()[0], (base / "cfg" / "plugins").lexically_normal());
    EXPECT_EQ(c.plugin_paths()[1], (base / "lib" / "nucleo").lexically_normal());
    EXPECT_EQ(c.plugin_paths()[2], std::filesystem::path("/opt/nucleo/plugins"));
}

TEST(Config, EmptyFileIsAnEmptyConfig) {
    const Config c = Config::parse("", "empty.yaml");
    EXPECT_TRUE(c.catalog().empty());
    EXPECT_TRUE(c.providers().empty());
    EXPECT_FALSE(c.summarizer().has_value());
}

TEST(Config, DefaultPathLookupOrder) {
    // config.1: the variable, the user's file, the install's; never the working folder.
    namespace fs = std::filesystem;
    const auto dir = fs::absolute(scratch_dir());
    const auto cwd = fs::current_path();
    fs::current_path(dir);
    {
        const ScopedEnv env("NUCLEO_CONFIG", std::nullopt);
        const ScopedEnv xdg("XDG_CONFIG_HOME", (dir / "xdg").string());
        EXPECT_EQ(Config::default_path(), Config::installed_path());
        write_file(dir / "config" / "nucleo.yaml", "");  // the working folder's: not looked at
        EXPECT_EQ(Config::default_path(), Config::installed_path());
        const fs::path user = dir / "xdg" / "nucleo" / "nucleo.yaml";
        write_file(user, "");
        EXPECT_EQ(Config::user_path(), user);
        EXPECT_EQ(Config::default_path(), user);
        {
            // A relative XDG_CONFIG_HOME is invalid (XDG Base Directory): HOME/.config instead.
            const ScopedEnv relative("XDG_CONFIG_HOME", "xdg");
            const ScopedEnv home("HOME", (dir / "home").string());
            EXPECT_EQ(Config::user_path(), dir / "home" / ".config" / "nucleo" / "nucleo.yaml");
            EXPECT_EQ(Config::default_path(), Config::installed_path());
            write_file(dir / "home" / ".config" / "nucleo" / "nucleo.yaml", "");
            EXPECT_EQ(Config::default_path(), Config::user_path());
        }
        {
            const ScopedEnv set("NUCLEO_CONFIG", "/somewhere/else.yaml");
            EXPECT_EQ(Config::default_path(), fs::path("/somewhere/else.yaml"));
        }
        const ScopedEnv empty("NUCLEO_CONFIG", "");
        EXPECT_EQ(Config::default_path(), user);
    }
    fs::current_path(cwd);
}

TEST(Config, TheBuildTreesLibraryReadsTheRepositorysConfig) {
    // config.1: this test links the build tree's libnucleo, which has no installed config.
    EXPECT_EQ(Config::installed_path(), kShipped);
}

// ---- config.2: the default model ----------------------------------------------------------

const char* const kTwoModels = R"(providers:
  keyed: {plugin: anthropic, api_key: sk-test}
  keyless: {plugin: openai}
models:
  - {id: first-keyless, provider: keyless, wire_model: w1, grade: SMALL, max_context_tokens: 1000,
     max_output_tokens: 100, output_budget: {SHORT: 1, MEDIUM: 2, LONG: 5, EXTENDED: 10},
     prices: {input: 1, output: 2}}
  - {id: second-keyed, provider: keyed, wire_model: w2, grade: SMALL, max_context_tokens: 1000,
     max_output_tokens: 100, output_budget: {SHORT: 1, MEDIUM: 2, LONG: 5, EXTENDED: 10},
     prices: {input: 1, output: 2}}
)";

TEST(Config, TheDefaultModelIsTheVariableThenTheFilesChoiceThenTheFirstWithAKey) {
    const ScopedEnv unset("NUCLEO_MODEL", std::nullopt);
    EXPECT_EQ(Config::parse(kTwoModels, "two.yaml").default_model().id, "second-keyed");
    const Config chosen =
        Config::parse(std::string(kTwoModels) + "defaults: {model: first-keyless}\n", "two.yaml");
    ASSERT_TRUE(chosen.default_model_id().has_value());
    EXPECT_EQ(chosen.default_model().id, "first-keyless");
    EXPECT_NE(chosen.redacted().find("model: first-keyless"), std::string::npos);
    {
        const ScopedEnv set("NUCLEO_MODEL", "second-keyed");
        EXPECT_EQ(chosen.default_model().id, "second-keyed");
    }
    const ScopedEnv empty("NUCLEO_MODEL", "");
    EXPECT_EQ(chosen.default_model().id, "first-keyless");
}

TEST(Config, ADefaultModelThatIsNoCatalogEntryIsRefusedWithItsPlace) {
    const ScopedEnv unset("NUCLEO_MODEL", std::nullopt);
    try {
        (void)Config::parse(std::string(kTwoModels) + "defaults: {model: frist-keyless}\n",
                            "two.yaml");
        ADD_FAILURE() << "a defaults.model naming no model was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_NE(std::string(e.what()).find("two.yaml:11:19: defaults.model: \"frist-keyless\" "
                                             "is no model of the catalog (known: first-keyless, "
                                             "second-keyed)"),
                  std::string::npos)
            << e.what();
    }
    const Config c = Config::parse(kTwoModels, "two.yaml");
    const ScopedEnv set("NUCLEO_MODEL", "nope");
    try {
        (void)c.default_model();
        ADD_FAILURE() << "a NUCLEO_MODEL naming no model was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_NE(std::string(e.what()).find("NUCLEO_MODEL: \"nope\" is no model of the catalog "
                                             "of two.yaml (known: first-keyless, second-keyed)"),
                  std::string::npos)
            << e.what();
    }
}

// ---- secrets: "A secret never reaches a log or an error message (shown as `***`)" ----

constexpr const char* kSecretKey = "sk-ant-SECRET-0123456789";
constexpr const char* kAwsSecret = "wJalrXUtnFEMI-SECRET-EXAMPLEKEY";
constexpr const char* kDbPassword = "hunter2-db-password";

/// 13 lines, every kind of secret the config may hold.
const char* kSecretConfig =
    "providers:\n"
    "  anthropic: {plugin: anthropic, api_key: \"${NUCLEO_TEST_SECRET}\",\n"
    "              options: {auth_token: tok-SECRET-1, header_value: plain}}\n"
    "  bedrock:\n"
    "    plugin: bedrock\n"
    "    base_url: https://user:pw-SECRET-2@bedrock.example.com/\n"
    "    credentials: {access_key_id: AKIA-SECRET-3, secret_access_key: "
    "\"${NUCLEO_TEST_AWS_SECRET}\",\n"
    "                  session_token: sess-SECRET-4, region: us-west-2}\n"
    "stores:\n"
    "  persistent:\n"
    "    plugin: postgres\n"
    "    options: {url: "
    "\"postgres://nucleo:${NUCLEO_TEST_DB_PASSWORD}@db:5432/nucleo?sslmode=require\",\n"
    "              dsn_style: \"host=db user=nucleo password=pg-SECRET-5 dbname=n\", password: "
    "pg-SECRET-6}\n";

const std::vector<const char*> kSecrets = {kSecretKey, kAwsSecret, kDbPassword, "SECRET-"};

TEST(ConfigSecrets, RedactedDumpShowsStarsInsteadOfSecrets) {
    const ScopedEnv s("NUCLEO_TEST_SECRET", kSecretKey);
    const ScopedEnv a("NUCLEO_TEST_AWS_SECRET", kAwsSecret);
    const ScopedEnv p("NUCLEO_TEST_DB_PASSWORD", kDbPassword);
    const Config c = Config::parse(kSecretConfig, "secrets.yaml");
    // The values are there for the code that needs them...
    EXPECT_EQ(c.provider("anthropic").credentials.api_key, kSecretKey);
    EXPECT_EQ(c.provider("bedrock").credentials.secret_access_key, kAwsSecret);
    EXPECT_NE(c.persistent_store()->options_json.find(kDbPassword), std::string::npos);
    // ...and nowhere in what may be shown.
    const std::string dump = c.redacted();
    for (const char* secret : kSecrets)
        EXPECT_EQ(dump.find(secret), std::string::npos) << secret << " in\n" << dump;
    EXPECT_NE(dump.find("***"), std::string::npos);
    EXPECT_NE(dump.find("us-west-2"), std::string::npos) << dump;  // the region is no secret
    EXPECT_NE(dump.find("header_value: \"plain\""), std::string::npos) << dump;
    EXPECT_NE(dump.find("postgres://nucleo:***@db:5432/nucleo?sslmode=require"), std::string::npos)
        << dump;
    EXPECT_NE(dump.find("https://user:***@bedrock.example.com/"), std::string::npos) << dump;
}

TEST(ConfigSecrets, NoSecretInErrorMessages) {
    // A secret written literally with a broken reference: the refusal must not quote it.
    try {
        (void)Config::parse(
            "providers:\n  a: {plugin: anthropic, api_key: \"sk-live-LITERAL-9${BROKEN\"}\n",
            "s.yaml");
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "s.yaml:2:35: providers.a.api_key: malformed ${...} reference (value not shown: "
                  "secret)");
    }
    // A secret in options under a secret-named key, with a broken reference.
    try {
        (void)Config::parse(
            "stores: {session: {plugin: redis, options: {credentials: {pw: "
            "\"r-LITERAL-8${X\"}}}}\n",
            "s.yaml");
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find("LITERAL-8"), std::string::npos) << e.what();
    }
    // Errors elsewhere in a config that holds secrets do not carry them either.
    const ScopedEnv s("NUCLEO_TEST_SECRET", kSecretKey);
    try {
        (void)Config::parse(std::string(kSecretConfig) + "models: 5\n", "secrets.yaml");
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "secrets.yaml:14:9: models: expected a sequence, got \"5\"");
    }
}

TEST(ConfigSecrets, NoSecretInLogs) {
    const ScopedEnv s("NUCLEO_TEST_SECRET", kSecretKey);
    const ScopedEnv a("NUCLEO_TEST_AWS_SECRET", kAwsSecret);
    const ScopedEnv p("NUCLEO_TEST_DB_PASSWORD", kDbPassword);
    std::mutex mu;
    std::string records;
    const log::Level old_level = log::level();
    log::set_level(log::Level::kTrace);
    log::set_sink([&](log::Level, std::string_view, std::string_view message) {
        std::lock_guard<std::mutex> lock(mu);
        records.append(message).append("\n");
    });
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml", kSecretConfig);
    (void)Config::load(file);
    log::set_sink({});
    log::set_level(old_level);
    EXPECT_NE(records.find(file.string()), std::string::npos)
        << "the load should be logged at debug";
    for (const char* secret : kSecrets)
        EXPECT_EQ(records.find(secret), std::string::npos) << secret;
}

TEST(ConfigSecrets, RedactUrlAndSecretKeyNames) {
    EXPECT_EQ(redact_url("postgres://u:p%40ss@h:5432/db"), "postgres://u:***@h:5432/db");
    EXPECT_EQ(redact_url("redis://:pw@localhost:6379/0"), "redis://:***@localhost:6379/0");
    EXPECT_EQ(redact_url("https://api.example.com/v1?api_key=abc&x=1"),
              "https://api.example.com/v1?api_key=***&x=1");
    EXPECT_EQ(redact_url("host=db password='a b' user=u"), "host=db password=*** user=u");
    // limits.105: a userinfo of one word may be a bare token: it is masked whole.
    EXPECT_EQ(redact_url("https://user@host/path"), "https://***@host/path");
    EXPECT_EQ(redact_url("https://api.anthropic.com"), "https://api.anthropic.com");
    for (const char* key : {"api_key", "apiKey", "password", "secret_access_key", "session_token",
                            "auth_token", "private_key", "key", "credentials", "Authorization"})
        EXPECT_TRUE(is_secret_key(key)) << key;
    for (const char* key :
         {"max_tokens", "key_prefix", "base_url", "region", "path", "cache_key_ttl"})
        EXPECT_FALSE(is_secret_key(key)) << key;
}

}  // namespace
}  // namespace nucleo
