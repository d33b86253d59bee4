// Every refusal of the config loader, message checked whole (every error kind, with its
// message checked: an unknown key, a wrong type or a missing required value is refused with
// file:line:column and the key path).
#include <gtest/gtest.h>

#include "config_fixture.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using test::scratch_dir;
using test::write_file;

struct Refusal {
    ErrorKind kind;
    std::string message;
};

/// Loads `file` and returns the refusal; fails the test if it loads.
Refusal refusal_of(const std::filesystem::path& file) {
    try {
        Config::load(file);
    } catch (const Error& e) {
        return {e.kind(), e.what()};
    }
    ADD_FAILURE() << file << " loaded, a refusal was expected";
    return {ErrorKind::kInternal, ""};
}

/// One valid catalog entry (8 lines), indented as an item of `models:`.
std::string entry(const std::string& id, const std::string& provider = "anthropic") {
    return "  - id: " + id + "\n" +                                                            //
           "    provider: " + provider + "\n" +                                                //
           "    wire_model: wire-" + id + "\n" +                                               //
           "    grade: SMALL\n" +                                                              //
           "    max_context_tokens: 200000\n" +                                                //
           "    max_output_tokens: 64000\n" +                                                  //
           "    output_budget: {SHORT: 1024, MEDIUM: 4096, LONG: 16384, EXTENDED: 64000}\n" +  //
           "    prices: {input: 1.0, output: 5.0}\n";
}

/// Two lines; with "models:" on line 3 an entry() occupies lines 4-11 and an extra key line 12.
const char* kProviders = "providers:\n  anthropic: {plugin: anthropic}\n";

std::string with_models(const std::string& models) {
    return std::string(kProviders) + "models:\n" + models;
}

TEST(ConfigErrors, UnknownKeyNamesFileLineColumnAndKeyPath) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml",
                                 "providers:\n"
                                 "  anthropic:\n"
                                 "    plugin: anthropic\n"
                                 "    apikey: sk-ant-abc\n");
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message,
              file.string() +
                  ":4:5: providers.anthropic.apikey: unknown key (known keys: plugin, base_url, "
                  "api_key, credentials, options, transport, isolation)");
}

TEST(ConfigErrors, UnknownTopLevelKey) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml", std::string(kProviders) + "modles: []\n");
    EXPECT_EQ(refusal_of(file).message, file.string() +
                                            ":3:1: modles: unknown key (known keys: include, "
                                            "plugins, providers, stores, summarizer, "
                                            "models, defaults, mcp_servers)");
}

TEST(ConfigErrors, UnknownKeyInACatalogEntry) {
    const auto dir = scratch_dir();
    const auto file =
        write_file(dir / "nucleo.yaml", with_models(entry("a") + "    colour: blue\n"));
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(
        r.message.rfind(
            file.string() + ":12:5: models[0].colour: unknown key (known keys: id, provider,", 0),
        0u)
        << r.message;
}

TEST(ConfigErrors, WrongTypeInAnIncludedFileNamesThatFile) {
    // docs/operations.md's example: `config/models.yaml:12:5: models[1].max_output_tokens: expected an
    // integer, got "lots"` (the column here is the value's).
    const auto dir = scratch_dir();
    const auto root =
        write_file(dir / "nucleo.yaml", std::string("include: models.yaml\n") + kProviders);
    write_file(dir / "models.yaml", "models:\n" + entry("small") +
                                        "  - id: large\n"
                                        "    provider: anthropic\n"
                                        "    wire_model: w2\n"
                                        "    grade: LARGE\n"
                                        "    max_context_tokens: 200000\n"
                                        "    max_output_tokens: lots\n");
    const Refusal r = refusal_of(root);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message,
              (dir / "models.yaml").string() +
                  ":15:24: models[1].max_output_tokens: expected an integer, got \"lots\"");
}

TEST(ConfigErrors, WrongTypesOfEachKind) {
    const auto dir = scratch_dir();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"providers: [anthropic]\n", ":1:12: providers: expected a mapping, got a sequence"},
        {with_models(entry("a") + "    supports_caching: maybe\n"),
         ":12:23: models[0].supports_caching: expected true or false, got \"maybe\""},
        {with_models(entry("a") + "    accepts: IMAGES\n"),
         ":12:14: models[0].accepts: expected a sequence, got \"IMAGES\""},
        {with_models(entry("a") + "    min_cacheable_tokens: 1.5\n"),
         ":12:27: models[0].min_cacheable_tokens: expected an integer, got \"1.5\""},
        // caching.109: the cache TTLs a model offers are 5m and 1h, as a sequence.
        {with_models(entry("a") + "    cache_ttls: [5m, 2h]\n"),
         ":12:22: models[0].cache_ttls[1]: expected one of 5m, 1h, got \"2h\""},
        {with_models(entry("a") + "    cache_ttls: 1h\n"),
         ":12:17: models[0].cache_ttls: expected a sequence, got \"1h\""},
        {"providers:\n  anthropic: {plugin: [a, b]}\n",
         ":2:23: providers.anthropic.plugin: expected a string, got a sequence"},
        {"plugins: {paths: lib}\n", ":1:18: plugins.paths: expected a sequence, got \"lib\""},
    };
    for (const auto& [text, expected] : cases) {
        const auto file = write_file(dir / "nucleo.yaml", text);
        const Refusal r = refusal_of(file);
        EXPECT_EQ(r.kind, ErrorKind::kConfig);
        EXPECT_EQ(r.message, file.string() + expected) << text;
    }
}

TEST(ConfigErrors, PricesMustBeNumbers) {
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.replace(models.find("input: 1.0"), 10, "input: cheap");
    const auto file = write_file(dir / "nucleo.yaml", with_models(models));
    EXPECT_EQ(refusal_of(file).message,
              file.string() + ":11:21: models[0].prices.input: expected a number, got \"cheap\"");
}

TEST(ConfigErrors, MissingRequiredValueNamesTheKeyPath) {
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.erase(models.find("    wire_model:"), std::string("    wire_model: wire-a\n").size());
    const auto file = write_file(dir / "nucleo.yaml", with_models(models));
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    // Line 4 column 5 is where the entry's mapping starts (its `id:`).
    EXPECT_EQ(r.message, file.string() + ":4:5: models[0].wire_model: required value missing");
}

TEST(ConfigErrors, KeyWithoutValueIsMissing) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml",
                                 "providers:\n"
                                 "  openai:\n"
                                 "    plugin:\n"
                                 "    base_url: https://api.openai.com/v1\n");
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message, file.string() + ":3:5: providers.openai.plugin: required value missing");
}

TEST(ConfigErrors, EveryRungIsRequired) {
    // budget.1: the entry translates the seat's rung (ModelSpec.getOutputBudget(rung)); there is
    // no default, so an entry that cannot translate a rung is refused when it is read.
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.replace(models.find(", EXTENDED: 64000"), std::string(", EXTENDED: 64000").size(), "");
    const auto file = write_file(dir / "nucleo.yaml", with_models(models));
    EXPECT_EQ(refusal_of(file).message,
              file.string() + ":10:20: models[0].output_budget.EXTENDED: required value missing");
}

TEST(ConfigErrors, CachePricesAreRequiredWhenCachingIsSupported) {
    const auto dir = scratch_dir();
    const auto file =
        write_file(dir / "nucleo.yaml", with_models(entry("a") + "    supports_caching: true\n"));
    // config.4: both cache prices are named.
    EXPECT_EQ(refusal_of(file).message,
              file.string() + ":11:13: models[0].prices.cache_write: required value missing\n" +
                  file.string() + ":11:13: models[0].prices.cache_read: required value missing");
}

// config.4: one load names every problem of the file, each on its line with its place; a check
// that needs a refused value (the rungs against a refused window) is not made against a default.
TEST(ConfigErrors, EveryProblemOfAFileIsNamedAtOnce) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml",
                                 "providers:\n"
                                 "  local:\n"
                                 "    plugin: openai\n"
                                 "    base_url: http://localhost:11434/v1\n"
                                 "    colour: red\n"
                                 "models:\n"
                                 "  - id: a\n"
                                 "    provider: local\n"
                                 "    wire_model: a\n"
                                 "    max_context_tokens: lots\n"
                                 "    output_budget: {SHORT: 10}\n"
                                 "  - id: b\n"
                                 "    provider: elsewhere\n"
                                 "    wire_model: b\n"
                                 "    prices: {input: 1}\n"
                                 "  - provider: local\n"
                                 "    wire_model: c\n"
                                 "defaults: {model: nope}\n");
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    const std::string f = file.string();
    EXPECT_EQ(
        r.message,
        f +
            ":5:5: providers.local.colour: unknown key (known keys: plugin, base_url, api_key, "
            "credentials, options, transport, isolation)\n" +
            f + ":10:25: models[0].max_context_tokens: expected an integer, got \"lots\"\n" + f +
            ":15:13: models[1].prices.output: required value missing\n" + f +
            ":16:5: models[2].id: required value missing\n" + f +
            ":13:15: models[1].provider: unknown provider instance \"elsewhere\" "
            "(providers: local)\n" +
            f + ":18:19: defaults.model: \"nope\" is no model of the catalog (known: a, b)");
}

// config.4: every rung missing from an output_budget is named, and so is each wrong key of one
// mapping; an included file's problems carry that file's name, after the includer's own.
TEST(ConfigErrors, ProblemsAcrossRungsKeysAndIncludesAreAllNamed) {
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.replace(models.find("{SHORT: 1024, MEDIUM: 4096, "), 28, "{MEDIUM: 4096, ");
    models.replace(models.find(", EXTENDED: 64000"), 17, "");
    const auto root = write_file(
        dir / "nucleo.yaml", "include: sub.yaml\n" + with_models(models) + "    colour: blue\n");
    write_file(dir / "sub.yaml", "modles: []\nstores: {sesion: {plugin: memory}}\n");
    const std::string r = refusal_of(root).message;
    const std::string f = root.string();
    const std::string sub = (dir / "sub.yaml").string();
    EXPECT_EQ(r,
              f +
                  ":13:5: models[0].colour: unknown key (known keys: id, provider, wire_model, "
                  "grade, status, shutdown, retired_on, replacement, source, max_context_tokens, "
                  "max_output_tokens, comfort_context_tokens, output_budget, thinking, "
                  "thinking_budget, refuses, mid_conversation, caching, supports_caching, "
                  "native_tools, min_cacheable_tokens, cache_ttls, prices, accepts, threads, "
                  "tokenizer, token_counter, rate_limits)\n" +
                  f + ":11:20: models[0].output_budget.SHORT: required value missing\n" + f +
                  ":11:20: models[0].output_budget.EXTENDED: required value missing\n" + sub +
                  ":1:1: modles: unknown key (known keys: include, plugins, providers, "
                  "stores, summarizer, models, defaults, mcp_servers)\n" +
                  sub + ":2:10: stores.sesion: unknown key (known keys: session, persistent)");
}

TEST(ConfigErrors, MalformedYamlCarriesTheParsersMarkAndWords) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml",
                                 "providers:\n"
                                 "  anthropic: {plugin: anthropic\n"
                                 "models: []\n");
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message, file.string() +
                             ":3:7: malformed YAML: while parsing a flow mapping: did not find expected ',' or '}'");
}

TEST(ConfigErrors, MalformedYamlInAnIncludedFile) {
    const auto dir = scratch_dir();
    const auto root = write_file(dir / "nucleo.yaml", "include: sub/models.yaml\n");
    write_file(dir / "sub" / "models.yaml", "models:\n  - id: a\n   provider: x\n");
    const Refusal r = refusal_of(root);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message.rfind((dir / "sub" / "models.yaml").string() + ":3:", 0), 0u) << r.message;
    EXPECT_NE(r.message.find(": malformed YAML: "), std::string::npos) << r.message;
}

TEST(ConfigErrors, MissingIncludeNamesTheFile) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml", "include: [missing.yaml]\n");
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message, file.string() + ":1:11: include[0]: included file " +
                             (dir / "missing.yaml").string() + " not found or unreadable");
}

TEST(ConfigErrors, MissingConfigFileIsNotFound) {
    const auto dir = scratch_dir();
    const Refusal r = refusal_of(dir / "absent.yaml");
    EXPECT_EQ(r.kind, ErrorKind::kNotFound);
    EXPECT_EQ(r.message,
              "config file " + (dir / "absent.yaml").string() + " not found or unreadable");
}

TEST(ConfigErrors, BadEnumValuesListTheAllowedNames) {
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.replace(models.find("grade: SMALL"), 12, "grade: HUGE");
    auto file = write_file(dir / "nucleo.yaml", with_models(models));
    EXPECT_EQ(refusal_of(file).message,
              file.string() +
                  ":7:12: models[0].grade: expected one of SMALL, MEDIUM, LARGE, got \"HUGE\"");

    file =
        write_file(dir / "nucleo.yaml", with_models(entry("a") + "    accepts: [IMAGES, VIDEO]\n"));
    EXPECT_EQ(refusal_of(file).message,
              file.string() +
                  ":12:23: models[0].accepts[1]: expected one of IMAGES, DOCUMENTS, got \"VIDEO\"");

    file = write_file(dir / "nucleo.yaml", with_models(entry("a") + "    token_counter: gpt2\n"));
    EXPECT_EQ(refusal_of(file).message, file.string() +
                                            ":12:20: models[0].token_counter: expected one of "
                                            "o200k_base, cl100k_base, anthropic_approx, "
                                            "got \"gpt2\"");

    file = write_file(dir / "nucleo.yaml",
                      with_models(entry("a") + "    thinking_budget: {IMMEDIATE: 0, HARD: 9}\n"));
    EXPECT_EQ(refusal_of(file).message, file.string() +
                                            ":12:37: models[0].thinking_budget.HARD: unknown key "
                                            "(known keys: IMMEDIATE, STANDARD, DEEP)");
}

TEST(ConfigErrors, BudgetsAreCheckedAgainstTheCeiling) {
    // budget.3: "The result is capped at the model's max_output_tokens": a rung above the
    // ceiling is a catalog typo, refused where it is written.
    const auto dir = scratch_dir();
    std::string models = entry("a");
    models.replace(models.find("EXTENDED: 64000"), 15, "EXTENDED: 64001");
    auto file = write_file(dir / "nucleo.yaml", with_models(models));
    EXPECT_EQ(
        refusal_of(file).message,
        file.string() +
            ":10:71: models[0].output_budget.EXTENDED: 64001 exceeds max_output_tokens 64000");

    file = write_file(dir / "nucleo.yaml",
                      with_models(entry("a") + "    thinking_budget: {IMMEDIATE: 1024}\n"));
    EXPECT_EQ(refusal_of(file).message, file.string() +
                                            ":12:34: models[0].thinking_budget.IMMEDIATE: "
                                            "IMMEDIATE is thinking off: expected 0, got 1024");

    file = write_file(dir / "nucleo.yaml",
                      with_models(entry("a") + "    comfort_context_tokens: 0\n"));
    EXPECT_EQ(refusal_of(file).message,
              file.string() +
                  ":12:29: models[0].comfort_context_tokens: expected a positive integer, got 0");
}

TEST(ConfigErrors, DuplicatesAreRefusedWithBothPlaces) {
    const auto dir = scratch_dir();
    const auto root = write_file(
        dir / "nucleo.yaml", std::string("include: models.yaml\n") + with_models(entry("same")));
    write_file(dir / "models.yaml", "models:\n" + entry("same"));
    EXPECT_EQ(refusal_of(root).message,
              (dir / "models.yaml").string() +
                  ":2:9: models[1].id: duplicate model id \"same\" (also at " + root.string() +
                  ":5:9)");

    const auto file =
        write_file(dir / "nucleo.yaml", "providers:\n  a: {plugin: x}\n  a: {plugin: y}\n");
    EXPECT_EQ(refusal_of(file).message, file.string() + ":3:3: providers.a: duplicate key");
}

TEST(ConfigErrors, ModelsMustNameAKnownProviderInstance) {
    const auto dir = scratch_dir();
    const auto file = write_file(dir / "nucleo.yaml", with_models(entry("a", "antropic")));
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_EQ(r.message, file.string() +
                             ":5:15: models[0].provider: unknown provider instance \"antropic\" "
                             "(providers: anthropic)");
}

TEST(ConfigErrors, IncludeCycleIsRefused) {
    const auto dir = scratch_dir();
    const auto root = write_file(dir / "nucleo.yaml", "include: a.yaml\n");
    write_file(dir / "a.yaml", "include: nucleo.yaml\n");
    EXPECT_EQ(refusal_of(root).message, (dir / "a.yaml").string() +
                                            ":1:10: include: include cycle: " + root.string() +
                                            " is already being read");
}

TEST(ConfigErrors, RolesSetTwiceAcrossFilesAreRefused) {
    const auto dir = scratch_dir();
    const auto root =
        write_file(dir / "nucleo.yaml", "include: more.yaml\nsummarizer: {plugin: extractive}\n");
    write_file(dir / "more.yaml", "summarizer: {plugin: llm}\n");
    EXPECT_EQ(refusal_of(root).message, (dir / "more.yaml").string() +
                                            ":1:13: summarizer: set twice (also at " +
                                            root.string() + ":2:13)");
}

TEST(ConfigErrors, MalformedVariableReferenceIsRefusedAtItsPlace) {
    const auto dir = scratch_dir();
    const auto file =
        write_file(dir / "nucleo.yaml",
                   "providers:\n  o: {plugin: openai, base_url: \"${OPENAI_BASE_URL\"}\n");
    EXPECT_EQ(refusal_of(file).message,
              file.string() + ":2:33: providers.o.base_url: unterminated \"${\" at character 1");
}

}  // namespace
}  // namespace nucleo

namespace nucleo {
namespace {

TEST(ConfigRateLimits, AreReadPerModel) {
    const auto dir = scratch_dir();
    const auto file = write_file(
        dir / "nucleo.yaml",
        with_models(entry("a") + "    rate_limits: {requests_per_minute: 50, tokens_per_minute: 40000}\n"));
    const Config c = Config::load(file);
    EXPECT_EQ(c.catalog().find("a").requests_per_minute, 50);
    EXPECT_EQ(c.catalog().find("a").tokens_per_minute, 40000);
}

TEST(ConfigRateLimits, AWrongTypeNamesThePath) {
    const auto dir = scratch_dir();
    const auto file =
        write_file(dir / "nucleo.yaml", with_models(entry("a") + "    rate_limits: {tokens_per_minute: lots}\n"));
    const Refusal r = refusal_of(file);
    EXPECT_EQ(r.kind, ErrorKind::kConfig);
    EXPECT_NE(r.message.find(":12:"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("models[0].rate_limits.tokens_per_minute"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nucleo
