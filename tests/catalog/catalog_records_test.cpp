// The catalog's records (catalog.1-catalog.10): the fields read from YAML with their refusals,
// the status gate, the depth mapping, tiered prices, and the token calibration (tokens.103).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/thinking.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

const char* kProviders = "providers:\n  anthropic: {plugin: anthropic}\n  openai: {plugin: openai}\n";

/// The head of a valid record; a test appends its own lines (indented four spaces).
std::string record(const std::string& id, const std::string& provider = "anthropic") {
    return "  - id: " + id + "\n    provider: " + provider + "\n    wire_model: wire-" + id +
           "\n    grade: SMALL\n    max_context_tokens: 1000000\n    max_output_tokens: 128000\n"
           "    output_budget: {SHORT: 1024, MEDIUM: 4096, LONG: 16384, EXTENDED: 64000}\n";
}
const char* kPrices = "    prices: {input: 1.0, output: 5.0}\n";

Config parse(const std::string& models) {
    return Config::parse(std::string(kProviders) + "models:\n" + models, "catalog.yaml");
}

std::string refusal(const std::string& models) {
    try {
        parse(models);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "loaded; a refusal was expected:\n" << models;
    return "";
}

const std::string kAdaptive =
    "    thinking:\n"
    "      forms: [adaptive, between_tools]\n"
    "      efforts: [low, medium, high, xhigh, max]\n"
    "      default_effort: high\n"
    "      display: [summarized, omitted]\n"
    "      bound_to_prefix: true\n"
    "      depth: {IMMEDIATE: between_tools, STANDARD: medium, DEEP: high}\n"
    "      budget: {STANDARD: 16384, DEEP: 32768}\n";

TEST(CatalogRecord, AFullRecordReadsEveryField) {
    const Config config = parse(record("s55") + "    status: active\n" +
                                "    source: {read: 2026-12-05, urls: [https://example.com/m], third_party: \"cache read\"}\n" +
                                kAdaptive + "    refuses: [sampling, prefill, forced_tool_use]\n" +
                                "    caching: {min_tokens: 512, ttls: [5m, 1h], breakpoints: explicit}\n" +
                                "    tokenizer: {counter: anthropic_approx, calibration: 1.3}\n" +
                                "    prices: {input: 2, output: 10, cache_write: 2.5, cache_write_1h: 4, cache_read: 0.1,\n"
                                "             tiers: [{above: 200000, input: 4, output: 15, cache_write: 5, cache_read: 0.2}]}\n");
    const ModelSpec& m = config.catalog().find("s55");
    EXPECT_EQ(m.status, ModelStatus::kActive);
    EXPECT_EQ(m.source.read, "2026-12-05");
    ASSERT_EQ(m.source.urls.size(), 1U);
    EXPECT_EQ(m.source.third_party, "cache read");
    EXPECT_TRUE(m.thinking.accepts(ThinkingForm::kAdaptive));
    EXPECT_TRUE(m.thinking.accepts(ThinkingForm::kBetweenTools));
    EXPECT_FALSE(m.thinking.accepts(ThinkingForm::kEnabled));
    EXPECT_EQ(m.thinking.default_effort, "high");
    EXPECT_TRUE(m.thinking.bound_to_prefix);
    EXPECT_TRUE(m.refuses_sampling && m.refuses_prefill && m.refuses_forced_tool_use);
    EXPECT_TRUE(m.supports_caching);
    EXPECT_EQ(m.min_cacheable_tokens, 512);
    EXPECT_TRUE(m.cache_ttl_1h);
    EXPECT_EQ(m.cache_breakpoints, "explicit");
    EXPECT_EQ(m.token_counter, "anthropic_approx");
    EXPECT_DOUBLE_EQ(m.token_calibration, 1.3);
    ASSERT_EQ(m.price_tiers.size(), 1U);
    EXPECT_EQ(m.price_tiers[0].above_prompt_tokens, 200000);
}

// catalog.5: each depth maps to the form and effort the record names.
TEST(CatalogRecord, DepthsMapToFormsAndEfforts) {
    const Config config = parse(record("s55") + kAdaptive + kPrices);
    const ModelSpec& m = config.catalog().find("s55");
    const ThinkingRequest immediate = thinking_request(m, Depth::kImmediate);
    EXPECT_EQ(immediate.form, "between_tools");
    EXPECT_EQ(immediate.effort, "");
    EXPECT_FALSE(thinking_active(m, Depth::kImmediate));
    EXPECT_EQ(reasoning_reserved(m, Depth::kImmediate), 0);
    const ThinkingRequest deep = thinking_request(m, Depth::kDeep);
    EXPECT_EQ(deep.form, "adaptive");
    EXPECT_EQ(deep.effort, "high");
    EXPECT_TRUE(thinking_active(m, Depth::kDeep));
    EXPECT_EQ(reasoning_reserved(m, Depth::kDeep), 32768);
}

// budget.5 with catalog.5: a model that always thinks books its thinking at IMMEDIATE too, so a
// SHORT answer is not eaten by the thinking it spends.
TEST(CatalogRecord, AnAlwaysThinkingModelBooksThinkingAtEveryDepth) {
    const Config config = parse(record("o55") +
                                "    thinking:\n      forms: [adaptive]\n      always: true\n"
                                "      efforts: [low, medium, high]\n"
                                "      depth: {IMMEDIATE: low, STANDARD: medium, DEEP: high}\n"
                                "      budget: {IMMEDIATE: 8192, STANDARD: 16384, DEEP: 32768}\n" +
                                kPrices);
    const ModelSpec& m = config.catalog().find("o55");
    EXPECT_TRUE(thinking_active(m, Depth::kImmediate));
    EXPECT_EQ(reasoning_reserved(m, Depth::kImmediate), 8192);
    EXPECT_EQ(thinking_request(m, Depth::kImmediate).form, "adaptive");
    EXPECT_EQ(thinking_request(m, Depth::kImmediate).effort, "low");
}

// An OpenAI-style record: efforts without forms send the effort alone; `none` does not think.
TEST(CatalogRecord, EffortsWithoutFormsSendTheEffortAlone) {
    const Config config = parse(record("g6", "openai") +
                                "    thinking:\n      efforts: [none, low, medium, high]\n"
                                "      depth: {IMMEDIATE: none, STANDARD: medium, DEEP: high}\n"
                                "      budget: {STANDARD: 8192, DEEP: 16384}\n" +
                                kPrices);
    const ModelSpec& m = config.catalog().find("g6");
    EXPECT_EQ(thinking_request(m, Depth::kImmediate).form, "");
    EXPECT_EQ(thinking_request(m, Depth::kImmediate).effort, "none");
    EXPECT_FALSE(thinking_active(m, Depth::kImmediate));
    EXPECT_EQ(thinking_request(m, Depth::kStandard).effort, "medium");
    EXPECT_TRUE(thinking_active(m, Depth::kStandard));
}

// The legacy `thinking_budget:` still reads as the enabled form at the depths it books.
TEST(CatalogRecord, ALegacyThinkingBudgetIsTheEnabledForm) {
    const Config config = parse(record("h45") + "    thinking_budget: {IMMEDIATE: 0, STANDARD: 4096, DEEP: 16384}\n" + kPrices);
    const ModelSpec& m = config.catalog().find("h45");
    EXPECT_EQ(thinking_request(m, Depth::kImmediate).form, "");
    EXPECT_EQ(thinking_request(m, Depth::kStandard).form, "enabled");
    EXPECT_EQ(reasoning_reserved(m, Depth::kStandard), 4096);
}

// Bad input: each refusal names file:line:column and the key path.
TEST(CatalogRecord, BadRecordsAreRefusedWithWhereAndWhat) {
    // An unknown capability value (line 13: the forms line).
    std::string r = refusal(record("x") + "    thinking:\n      forms: [adaptive, telepathic]\n"
                                          "      depth: {IMMEDIATE: none, STANDARD: none, DEEP: none}\n" + kPrices);
    EXPECT_NE(r.find("catalog.yaml:13:"), std::string::npos) << r;
    EXPECT_NE(r.find("models[0].thinking.forms[1]"), std::string::npos) << r;
    EXPECT_NE(r.find("telepathic"), std::string::npos) << r;
    // An effort the record does not list.
    r = refusal(record("x") + "    thinking:\n      forms: [adaptive]\n      efforts: [low, high]\n"
                              "      depth: {IMMEDIATE: none, STANDARD: medium, DEEP: high}\n"
                              "      budget: {STANDARD: 1000, DEEP: 2000}\n" + kPrices);
    EXPECT_NE(r.find("models[0].thinking.depth.STANDARD"), std::string::npos) << r;
    EXPECT_NE(r.find("\"medium\""), std::string::npos) << r;
    // A depth that needs a form the record lacks.
    r = refusal(record("x") + "    thinking:\n      forms: [adaptive]\n      efforts: [low]\n"
                              "      depth: {IMMEDIATE: disabled, STANDARD: low, DEEP: low}\n"
                              "      budget: {STANDARD: 1000, DEEP: 2000}\n" + kPrices);
    EXPECT_NE(r.find("models[0].thinking.depth.IMMEDIATE"), std::string::npos) << r;
    EXPECT_NE(r.find("\"disabled\" form"), std::string::npos) << r;
    // An always-thinking model without the tokens its IMMEDIATE depth books.
    r = refusal(record("x") + "    thinking:\n      forms: [adaptive]\n      always: true\n      efforts: [low]\n"
                              "      depth: {IMMEDIATE: low, STANDARD: low, DEEP: low}\n"
                              "      budget: {STANDARD: 1000, DEEP: 2000}\n" + kPrices);
    EXPECT_NE(r.find("models[0].thinking.depth.IMMEDIATE"), std::string::npos) << r;
    EXPECT_NE(r.find("always thinks"), std::string::npos) << r;
    // A tier without its threshold.
    r = refusal(record("x") + "    prices: {input: 1, output: 5, tiers: [{input: 2, output: 10}]}\n");
    EXPECT_NE(r.find("models[0].prices.tiers[0].above"), std::string::npos) << r;
    EXPECT_NE(r.find("catalog.yaml:12:"), std::string::npos) << r;
    // A status without its date, and a retired model without its replacement.
    r = refusal(record("x") + "    status: deprecated\n" + kPrices);
    EXPECT_NE(r.find("models[0].shutdown"), std::string::npos) << r;
    EXPECT_NE(r.find("catalog.yaml:12:"), std::string::npos) << r;
    r = refusal(record("x") + "    status: retired\n    retired_on: 2026-11-30\n" + kPrices);
    EXPECT_NE(r.find("models[0].replacement"), std::string::npos) << r;
    r = refusal(record("x") + "    status: deprecated\n    shutdown: next january\n" + kPrices);
    EXPECT_NE(r.find("models[0].shutdown: expected a date YYYY-MM-DD"), std::string::npos) << r;
    // A replacement that names no model of the catalog.
    r = refusal(record("x") + "    status: retired\n    retired_on: 2026-11-30\n    replacement: nowhere\n" + kPrices);
    EXPECT_NE(r.find("models[0].replacement: \"nowhere\" is no model of the catalog"), std::string::npos) << r;
    // An unknown key inside a record's mapping.
    r = refusal(record("x") + "    caching: {min_tokens: 512, breakpoint: explicit}\n" + kPrices);
    EXPECT_NE(r.find("models[0].caching.breakpoint: unknown key"), std::string::npos) << r;
}

// catalog.10: an operator's own model (an Ollama or vLLM server behind the openai plugin) needs
// three fields; every other one takes its documented default.
TEST(CatalogRecord, AnOperatorsModelNeedsOnlyIdProviderAndWireModel) {
    const Config config =
        parse("  - {id: llama3, provider: openai, wire_model: \"llama3.1:8b\"}\n");
    const ModelSpec& m = config.catalog().find("llama3");
    EXPECT_EQ(m.provider, "openai");
    EXPECT_EQ(m.wire_model, "llama3.1:8b");
    EXPECT_EQ(m.grade, Grade::kMedium);
    EXPECT_EQ(m.status, ModelStatus::kActive);
    EXPECT_TRUE(m.source.urls.empty());
    EXPECT_EQ(m.max_context_tokens, 8192);
    EXPECT_EQ(m.max_output_tokens, 2048);
    EXPECT_FALSE(m.comfort_context_tokens.has_value());
    EXPECT_EQ(m.output_budget_for(OutputSize::kShort), 1024);
    EXPECT_EQ(m.output_budget_for(OutputSize::kMedium), 2048);
    EXPECT_EQ(m.output_budget_for(OutputSize::kLong), 2048);
    EXPECT_EQ(m.output_budget_for(OutputSize::kExtended), 2048);
    for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
        EXPECT_FALSE(m.thinks_at(d)) << to_string(d);
        EXPECT_EQ(m.thinking_at(d).kind, DepthThinking::Kind::kNone) << to_string(d);
    }
    EXPECT_FALSE(m.supports_caching);
    EXPECT_EQ(m.cache_breakpoints, "none");
    EXPECT_TRUE(m.native_tools);
    EXPECT_TRUE(m.accepted_inputs.empty());
    EXPECT_EQ(m.token_counter, "o200k_base");
    EXPECT_EQ(m.prices.input, 0);
    EXPECT_EQ(m.prices.output, 0);
    EXPECT_EQ(m.cost(1000, 1000, 0, 0), 0);
    EXPECT_EQ(m.requests_per_minute, 0);

    // A window given: the output ceiling defaults within it, the rungs within the ceiling.
    const Config small =
        parse("  - {id: a, provider: openai, wire_model: a, max_context_tokens: 1000}\n");
    EXPECT_EQ(small.catalog().find("a").max_output_tokens, 1000);
    EXPECT_EQ(small.catalog().find("a").output_budget_for(OutputSize::kShort), 1000);
    const Config large = parse(
        "  - {id: b, provider: openai, wire_model: b, max_context_tokens: 131072, "
        "max_output_tokens: 32768}\n");
    const ModelSpec& b = large.catalog().find("b");
    EXPECT_EQ(b.output_budget_for(OutputSize::kShort), 1024);
    EXPECT_EQ(b.output_budget_for(OutputSize::kMedium), 4096);
    EXPECT_EQ(b.output_budget_for(OutputSize::kLong), 16384);
    EXPECT_EQ(b.output_budget_for(OutputSize::kExtended), 32768);

    // What is given is still checked whole: the three required fields, each named.
    const std::string r = refusal("  - {grade: SMALL}\n");
    EXPECT_EQ(r,
              "catalog.yaml:5:5: models[0].id: required value missing\n"
              "catalog.yaml:5:5: models[0].provider: required value missing\n"
              "catalog.yaml:5:5: models[0].wire_model: required value missing");
}

// catalog.9: what a model takes inside `messages`, each item on its own; absent, neither; an item
// outside the two is refused naming where. The shipped default model takes both.
TEST(CatalogRecord, MidConversationListsSystemMessagesAndToolChanges) {
    const Config config =
        parse(record("both") + "    mid_conversation: [system_messages, tool_changes]\n" +
              kPrices + record("system") + "    mid_conversation: [system_messages]\n" +
              kPrices + record("none") + kPrices);
    const ModelSpec& both = config.catalog().find("both");
    EXPECT_TRUE(both.system_messages && both.tool_changes);
    const ModelSpec& system = config.catalog().find("system");
    EXPECT_TRUE(system.system_messages);
    EXPECT_FALSE(system.tool_changes);
    const ModelSpec& none = config.catalog().find("none");
    EXPECT_FALSE(none.system_messages || none.tool_changes);
    const std::string r =
        refusal(record("x") + "    mid_conversation: [system_messages, tool_removals]\n" + kPrices);
    EXPECT_NE(r.find("models[0].mid_conversation[1]"), std::string::npos) << r;
    EXPECT_NE(r.find("tool_removals"), std::string::npos) << r;

    const Config shipped = Config::parse(
        std::string("include: models.yaml\nproviders:\n  anthropic: {plugin: anthropic}\n"
                    "  openai: {plugin: openai}\n  bedrock: {plugin: bedrock}\n"
                    "  gemini: {plugin: gemini}\n  openai-responses: {plugin: openai-responses}\n"),
        std::string(NUCLEO_SOURCE_DIR) + "/config/catalog_records_test.yaml");
    const ModelSpec& first = shipped.catalog().all().front();
    EXPECT_EQ(first.id, "claude-sonnet-5-5");
    EXPECT_TRUE(first.tool_changes && first.system_messages);
    EXPECT_FALSE(shipped.catalog().find("claude-sonnet-5").system_messages)
        << "the page does not list Sonnet 5";
}

// catalog.2: a retired model is refused, a deprecated one works until its shutdown date.
TEST(CatalogStatus, RetiredAndShutDownModelsAreRefusedNamingTheReplacement) {
    const Config config = parse(record("new") + kPrices + record("old") + "    status: retired\n"
                                "    retired_on: 2026-11-30\n    replacement: new\n" + kPrices +
                                record("dep") + "    status: deprecated\n    shutdown: 2027-01-14\n"
                                "    replacement: new\n" + kPrices);
    try {
        check_model_status(config.catalog().find("old"), "2026-12-05");
        ADD_FAILURE() << "a retired model was let through";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        const std::string m = e.what();
        EXPECT_NE(m.find("retired by its provider on 2026-11-30"), std::string::npos) << m;
        EXPECT_NE(m.find("use \"new\" instead"), std::string::npos) << m;
    }
    EXPECT_NO_THROW(check_model_status(config.catalog().find("dep"), "2027-01-13"));
    EXPECT_THROW(check_model_status(config.catalog().find("dep"), "2027-01-14"), Error);
    EXPECT_NO_THROW(check_model_status(config.catalog().find("new"), "2030-01-01"));
}

double bill(const ModelSpec& m, std::int64_t in, std::int64_t out, std::int64_t write, std::int64_t read,
            std::int64_t write_1h = 0) {
    return m.cost(in, out, write, read, write_1h);
}

// catalog.7: a prompt over the threshold pays the tier's rates on the whole call; checked against
// bills computed by hand.
TEST(CatalogPrices, TieredAndCacheWriteBillsMatchHandComputedOnes) {
    const Config config = parse(
        record("haiku55") +
        "    caching: {breakpoints: explicit, ttls: [5m, 1h]}\n"
        "    prices: {input: 0.10, output: 0.50, cache_write: 0.125, cache_write_1h: 0.20, cache_read: 0.01,\n"
        "             tiers: [{above: 100000, input: 0.50, output: 2.50, cache_write: 0.625, cache_write_1h: 1.00, cache_read: 0.05}]}\n" +
        record("gpt56", "openai") +
        "    caching: {breakpoints: explicit, ttls: [30m]}\n"
        "    prices: {input: 4.00, output: 20.00, cache_write: 5.00, cache_read: 0.40}\n");
    const ModelSpec& haiku = config.catalog().find("haiku55");
    // 90,000 uncached + 10,000 read = 100,000: not above the threshold.
    // 90,000 * 0.10 + 1,000 * 0.50 + 10,000 * 0.01 = 9,000 + 500 + 100 = 9,600 per million.
    EXPECT_NEAR(bill(haiku, 90000, 1000, 0, 10000), 0.0096, 1e-12);
    // 100,001 tokens of prompt: every rate of the tier.
    // 80,001 * 0.50 + 20,000 * 0.625 + 2,000 * 2.50 = 40,000.5 + 12,500 + 5,000 = 57,500.5.
    EXPECT_NEAR(bill(haiku, 80001, 2000, 20000, 0), 0.0575005, 1e-12);
    // 1-hour writes at the tier's 1-hour price: 50,000 * 0.50 + 60,000 * 1.00 = 85,000.
    EXPECT_NEAR(bill(haiku, 50000, 0, 60000, 0, 60000), 0.085, 1e-12);
    // OpenAI writes from GPT-5.6 are billed (1.25x input): a cold 100,000-token call that
    // writes 90,000 and sends 10,000 uncached, 500 out:
    // 10,000 * 4 + 90,000 * 5 + 500 * 20 = 40,000 + 450,000 + 10,000 = 500,000 -> $0.50.
    EXPECT_NEAR(bill(config.catalog().find("gpt56"), 10000, 500, 90000, 0), 0.50, 1e-12);
}

// catalog.3, catalog.7: the shipped Gemini records as their sources publish them: 3.1 Pro's
// long-prompt tier (above 200,000 prompt tokens, cache reads included) and the 3.x Flash and
// Flash-Lite levels, checked against bills computed by hand.
TEST(CatalogPrices, ShippedGeminiRecordsCarryTheirPublishedRatesAndLevels) {
    const Config shipped = Config::parse(
        std::string("include: models.yaml\nproviders:\n  anthropic: {plugin: anthropic}\n"
                    "  openai: {plugin: openai}\n  bedrock: {plugin: bedrock}\n"
                    "  gemini: {plugin: gemini}\n  openai-responses: {plugin: openai-responses}\n"),
        std::string(NUCLEO_SOURCE_DIR) + "/config/catalog_records_test.yaml");
    const ModelSpec& pro = shipped.catalog().find("gemini-3-1-pro");
    ASSERT_EQ(pro.price_tiers.size(), 1U);
    EXPECT_EQ(pro.price_tiers[0].above_prompt_tokens, 200000);
    // 150,000 uncached + 50,000 read = 200,000: not above the threshold.
    // 150,000 * 2.00 + 50,000 * 0.20 + 1,000 * 12.00 = 300,000 + 10,000 + 12,000 = 322,000.
    EXPECT_NEAR(bill(pro, 150000, 1000, 0, 50000), 0.322, 1e-12);
    // One token more: the whole call at the tier's rates.
    // 150,001 * 4.00 + 50,000 * 0.40 + 1,000 * 18.00 = 600,004 + 20,000 + 18,000 = 638,004.
    EXPECT_NEAR(bill(pro, 150001, 1000, 0, 50000), 0.638004, 1e-12);

    for (const char* id : {"gemini-3-1-pro", "gemini-3-8-flash", "gemini-3-5-flash-lite",
                           "gemini-3-1-flash-lite"}) {
        SCOPED_TRACE(id);
        const ModelSpec& m = shipped.catalog().find(id);
        EXPECT_EQ(m.provider, "gemini");
        EXPECT_EQ(m.status, ModelStatus::kActive);
        EXPECT_FALSE(m.source.urls.empty());
        EXPECT_FALSE(m.source.third_party.empty());
        EXPECT_EQ(m.max_context_tokens, 1048576);
        EXPECT_EQ(m.max_output_tokens, 65536);
        EXPECT_EQ(m.cache_breakpoints, "automatic");
        EXPECT_TRUE(m.accepts(Input::kImages) && m.accepts(Input::kDocuments));
        EXPECT_EQ(thinking_request(m, Depth::kStandard).effort, "medium");
        EXPECT_EQ(thinking_request(m, Depth::kDeep).effort, "high");
    }

    const ModelSpec& flash = shipped.catalog().find("gemini-3-8-flash");
    EXPECT_EQ(flash.wire_model, "gemini-3.8-flash");
    EXPECT_TRUE(flash.thinking.always);
    EXPECT_FALSE(flash.thinking.accepts_effort("minimal"));
    EXPECT_EQ(flash.thinking.default_effort, "medium");
    EXPECT_EQ(thinking_request(flash, Depth::kImmediate).effort, "low");
    EXPECT_EQ(flash.min_cacheable_tokens, 4096);
    // The launch price in force until 2026-12-31 (the record's comment names the 2027 rates).
    // 10,000 * 0.75 + 90,000 * 0.075 + 2,000 * 3.75 = 7,500 + 6,750 + 7,500 = 21,750.
    EXPECT_NEAR(bill(flash, 10000, 2000, 0, 90000), 0.02175, 1e-12);

    const ModelSpec& lite = shipped.catalog().find("gemini-3-5-flash-lite");
    EXPECT_EQ(lite.wire_model, "gemini-3.5-flash-lite");
    EXPECT_EQ(lite.thinking.default_effort, "minimal");
    EXPECT_EQ(thinking_request(lite, Depth::kImmediate).effort, "minimal");
    EXPECT_TRUE(lite.refuses_prefill);
    EXPECT_EQ(thinking_request(shipped.catalog().find("gemini-3-1-flash-lite"), Depth::kImmediate)
                  .effort,
              "minimal");
}

// tokens.103: the calibration multiplies every text count and rounds up.
TEST(CatalogTokens, CalibrationScalesTheCounterOfTheModel) {
    const Config config = parse(record("plain") + "    tokenizer: {counter: cl100k_base}\n" + kPrices +
                                record("newer") + "    tokenizer: {counter: cl100k_base, calibration: 1.3}\n" + kPrices);
    const std::string text = "The quick brown fox jumps over the lazy dog, again and again, until it tires.";
    const std::int64_t plain = TokenCounter::for_model(config.catalog().find("plain")).count_text(text);
    const std::int64_t newer = TokenCounter::for_model(config.catalog().find("newer")).count_text(text);
    ASSERT_GT(plain, 10);
    EXPECT_EQ(newer, static_cast<std::int64_t>(std::ceil(static_cast<double>(plain) * 1.3)));
}

}  // namespace
}  // namespace nucleo
