// nucleo-emulator and the model catalog (wire.176-wire.188, docs/emulator.md "Model catalog"): the
// real binary reading the shipped config/models.yaml refuses what each model's record refuses
// with the provider's status and exact text (the cases of tests/contract/model_cases.hpp, which
// the rule book's own test checks too), answers a retired model with the provider's not-found,
// caches from the record's minimum, reports thinking and reasoning tokens, and ends a call forced
// by a named OpenAI tool_choice with "stop".
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "model_cases.hpp"

namespace nucleo::emulator_test {
namespace {

using nucleo::contract::WireFamily;

const std::string kShippedCatalog = std::string(NUCLEO_SOURCE_DIR) + "/config/models.yaml";

const std::vector<std::string> kAnthropicAuth = {"x-api-key: test-key",
                                                 "anthropic-version: 2023-06-01"};
const std::vector<std::string> kOpenAiAuth = {"authorization: Bearer test-key"};
const std::vector<std::string> kBedrockAuth = {"authorization: Bearer bedrock-api-key"};

long long tokens(std::size_t bytes) {
    return static_cast<long long>((bytes + 3) / 4);
}

/// Posts `body` for `model` on `family`'s route (the model in the body, or in Bedrock's path).
HttpResult post(const EmulatorProcess& emu, WireFamily family, const std::string& model,
                const std::string& body) {
    if (family == WireFamily::kBedrockConverse)
        return emu.post("/model/" + model + "/converse", body, kBedrockAuth);
    rapidjson::Document d = parse(body);
    d.AddMember("model", rapidjson::Value(model.c_str(), d.GetAllocator()), d.GetAllocator());
    if (family == WireFamily::kAnthropicMessages)
        return emu.post("/v1/messages", str(d), kAnthropicAuth);
    return emu.post("/v1/chat/completions", str(d), kOpenAiAuth);
}

/// The refusal as (error type, message, code): Anthropic's and OpenAI's envelopes, Bedrock's
/// `x-amzn-ErrorType` header and `message`.
struct Refusal {
    std::string type, message, code;
};

Refusal refusal(WireFamily family, const HttpResult& r) {
    const auto d = parse(r.body);
    if (family == WireFamily::kBedrockConverse) {
        const auto h = r.headers.find("x-amzn-errortype");
        return {h == r.headers.end() ? "" : h->second, d["message"].GetString(), ""};
    }
    const auto& e = d["error"];
    if (family == WireFamily::kAnthropicMessages) {
        EXPECT_STREQ(d["type"].GetString(), "error");
        return {e["type"].GetString(), e["message"].GetString(), ""};
    }
    return {e["type"].GetString(), e["message"].GetString(),
            e["code"].IsString() ? e["code"].GetString() : ""};
}

class ShippedCatalog : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        emu_ = std::make_unique<EmulatorProcess>(
            std::vector<std::string>{"--catalog", kShippedCatalog});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    static std::unique_ptr<EmulatorProcess> emu_;
};

std::unique_ptr<EmulatorProcess> ShippedCatalog::emu_;

// ---- the per-model rules (wire.176-wire.184) ------------------------------------------------

class ShippedCatalogCase : public ShippedCatalog,
                           public ::testing::WithParamInterface<model_cases::Case> {};

TEST_P(ShippedCatalogCase, KeptBodyIsAnsweredAndBrokenBodyGetsTheProvidersAnswer) {
    const model_cases::Case& c = GetParam();
    const HttpResult kept = post(*emu_, c.family, c.model, c.keeps);
    EXPECT_EQ(kept.status, 200) << c.rule << " " << c.model << ": " << kept.body;
    const HttpResult broken = post(*emu_, c.family, c.model, c.breaks);
    ASSERT_EQ(broken.status, c.status) << c.rule << " " << c.model << ": " << broken.body;
    const Refusal got = refusal(c.family, broken);
    EXPECT_EQ(got.type, c.type);
    EXPECT_EQ(got.message, c.text);
    EXPECT_EQ(got.code, c.code);
    if (c.family == WireFamily::kOpenAIChat) {
        EXPECT_STREQ(parse(broken.body)["error"]["param"].GetString(), "reasoning_effort");
    }
    // The same body for a model whose record takes it: the refusal was the record's.
    if (c.takes_it != nullptr) {
        const HttpResult other = post(*emu_, c.family, c.takes_it, c.breaks);
        EXPECT_EQ(other.status, 200) << c.takes_it << ": " << other.body;
    }
    // A model the catalog does not name keeps the rules every model has.
    const HttpResult unknown = post(*emu_, c.family, "emu-model-not-in-the-catalog", c.breaks);
    EXPECT_EQ(unknown.status, 200) << unknown.body;
}

INSTANTIATE_TEST_SUITE_P(Model, ShippedCatalogCase, ::testing::ValuesIn(model_cases::kCases),
                         [](const ::testing::TestParamInfo<model_cases::Case>& info) {
                             return std::string(info.param.name);
                         });

// ---- retired models (wire.185) --------------------------------------------------------------

const char* const kQuestion = R"({"max_tokens":64,"messages":[{"role":"user","content":"Hi"}]})";

TEST_F(ShippedCatalog, ARetiredAnthropicModelIsNotFound) {
    const HttpResult r =
        post(*emu_, WireFamily::kAnthropicMessages, "claude-sonnet-4-5-20250929", kQuestion);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.body, R"({"type":"error","error":{"type":"not_found_error","message":)"
                      R"("model: claude-sonnet-4-5-20250929"},"request_id":"req_emu"})");
    EXPECT_EQ(r.headers.count("request-id"), 1U);
    // Counting tokens for it too.
    const HttpResult count = emu_->post(
        "/v1/messages/count_tokens",
        R"({"model":"claude-sonnet-4-5-20250929","messages":[{"role":"user","content":"Hi"}]})",
        kAnthropicAuth);
    EXPECT_EQ(count.status, 404);
    // A deprecated model still answers until its shutdown (the core warns, catalog.2).
    EXPECT_EQ(
        post(*emu_, WireFamily::kAnthropicMessages, "claude-opus-4-5-20251101", kQuestion).status,
        200);
}

const char* const kRetiredCatalog =
    R"(# every family's retired model, and records the reader must pass over
version: 7
models:
  - id: old-claude
    provider: anthropic
    wire_model: claude-old-1
    status: retired
    retired_on: 2026-01-01
    a_key_of_tomorrow: {nested: [1, 2, 3]}
  - id: old-gpt
    provider: openai
    wire_model: gpt-old-1
    status: retired
  - id: old-bedrock
    provider: bedrock
    wire_model: anthropic.claude-old-v1:0
    status: retired
  - id: table-minimum
    provider: bedrock
    wire_model: anthropic.claude-table-v1:0
    thinking: not a map
    refuses: sampling
  - id: record-minimum
    provider: bedrock
    wire_model: anthropic.claude-small-v1:0
    caching: {min_tokens: 100}
  - id: old-spelling
    provider: bedrock
    wire_model: anthropic.claude-old-spelling-v1:0
    min_cacheable_tokens: 100
  - just a string
  - {id: no-wire-model, provider: openai, status: retired}
)";

TEST(EmulatorCatalogFile, RetiredModelsAreNotFoundInEachFamily) {
    CatalogFile file(kRetiredCatalog);
    EmulatorProcess emu({"--catalog", file.path()});
    const HttpResult a = post(emu, WireFamily::kAnthropicMessages, "claude-old-1", kQuestion);
    EXPECT_EQ(a.status, 404);
    EXPECT_EQ(a.body, R"({"type":"error","error":{"type":"not_found_error","message":)"
                      R"("model: claude-old-1"},"request_id":"req_emu"})");

    const HttpResult o = post(emu, WireFamily::kOpenAIChat, "gpt-old-1",
                              R"({"messages":[{"role":"user","content":"Hi"}]})");
    EXPECT_EQ(o.status, 404);
    EXPECT_EQ(o.body, R"({"error":{"message":"The model `gpt-old-1` does not exist or you do not )"
                      R"(have access to it.","type":"invalid_request_error","param":null,)"
                      R"("code":"model_not_found"}})");

    const HttpResult b = post(emu, WireFamily::kBedrockConverse, "anthropic.claude-old-v1:0",
                              R"({"messages":[{"role":"user","content":[{"text":"Hi"}]}]})");
    EXPECT_EQ(b.status, 404);
    EXPECT_EQ(b.headers.at("x-amzn-errortype"), "ResourceNotFoundException");
    EXPECT_EQ(b.body, R"({"message":"This model version has reached the end of its life. )"
                      R"(Please refer to the AWS documentation for more details."})");
    // A record is found by its wire_model on any route (among several, the family's provider's).
    EXPECT_EQ(post(emu, WireFamily::kOpenAIChat, "claude-old-1",
                   R"({"messages":[{"role":"user","content":"Hi"}]})")
                  .status,
              404);
    // A record without wire_model names no model.
    EXPECT_EQ(post(emu, WireFamily::kOpenAIChat, "no-wire-model",
                   R"({"messages":[{"role":"user","content":"Hi"}]})")
                  .status,
              200);
    // A `refuses` that is not a list refuses nothing.
    EXPECT_EQ(post(emu, WireFamily::kBedrockConverse, "anthropic.claude-table-v1:0",
                   R"({"messages":[{"role":"user","content":[{"text":"Hi"}]}],)"
                   R"("inferenceConfig":{"temperature":0.1}})")
                  .status,
              200);
}

/// A Converse body whose cachePoint ends a prefix of about `bytes` / 4 tokens.
std::string converse_cached(std::size_t bytes) {
    return R"({"system":[{"text":")" + std::string(bytes, 'x') +
           R"("},{"cachePoint":{"type":"default"}}],"messages":[{"role":"user","content":[{"text":"Hi"}]}]})";
}

TEST(EmulatorCatalogFile, TheRecordsMinimumCacheablePromptAppliesElseTheDocumentedOne) {
    CatalogFile file(kRetiredCatalog);
    EmulatorProcess emu({"--catalog", file.path()});
    // About 300 tokens: over the records' 100, under the documented 1,024.
    const std::string body = converse_cached(1200);
    for (const char* model :
         {"anthropic.claude-small-v1:0", "anthropic.claude-old-spelling-v1:0"}) {
        const rapidjson::Document answer =
            parse(post(emu, WireFamily::kBedrockConverse, model, body).body);
        const auto u = answer["usage"].GetObject();  // a view into `answer`, kept alive here
        EXPECT_GT(u["cacheWriteInputTokens"].GetInt64(), 100) << model;
        EXPECT_LT(u["cacheWriteInputTokens"].GetInt64(), 1024) << model;
    }
    const auto table =
        parse(post(emu, WireFamily::kBedrockConverse, "anthropic.claude-table-v1:0", body).body);
    EXPECT_EQ(table["usage"]["cacheWriteInputTokens"].GetInt64(), 0);
}

/// An Anthropic body whose system block (cached) is about `bytes` / 4 tokens.
std::string anthropic_cached(const std::string& model, std::size_t bytes) {
    return R"({"model":")" + model + R"(","max_tokens":64,"system":[{"type":"text","text":")" +
           std::string(bytes, 'x') +
           R"(","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Hi"}]})";
}

TEST_F(ShippedCatalog, TheMinimumCacheablePromptIsTheRecordsUnlessTheFlagSetsOne) {
    // About 600 tokens: over Claude Sonnet 5.5's 512 (its record), under the 1,024 a model the
    // catalog does not name gets, and under Claude Haiku 5.5's 2,048 of the documented table.
    const std::size_t bytes = 2400;
    const auto unknown = parse(
        emu_->post("/v1/messages", anthropic_cached("claude-emu", bytes), kAnthropicAuth).body);
    const long long whole = unknown["usage"]["input_tokens"].GetInt64();
    EXPECT_EQ(unknown["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
    ASSERT_GT(whole, 512);
    for (const char* model : {"claude-sonnet-5-5", "claude-haiku-5-5"}) {
        const auto u =
            parse(emu_->post("/v1/messages", anthropic_cached(model, bytes), kAnthropicAuth).body);
        const long long written = u["usage"]["cache_creation_input_tokens"].GetInt64();
        EXPECT_GT(written, 512) << model;
        EXPECT_LT(written, 1024) << model;
        EXPECT_EQ(written + u["usage"]["input_tokens"].GetInt64(), whole) << model;
    }
    // --min-cacheable sets one minimum for every model, the record's included.
    EmulatorProcess flagged({"--catalog", kShippedCatalog, "--min-cacheable", "1024"});
    const auto sonnet = parse(
        flagged.post("/v1/messages", anthropic_cached("claude-sonnet-5-5", bytes), kAnthropicAuth)
            .body);
    EXPECT_EQ(sonnet["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(sonnet["usage"]["input_tokens"].GetInt64(), whole);
}

// ---- where the catalog comes from (wire.186) ---------------------------------------------------

TEST(EmulatorCatalogFile, NoneTurnsThePerModelRulesOff) {
    EmulatorProcess emu({"--catalog", "none"});
    EXPECT_EQ(
        post(emu, WireFamily::kAnthropicMessages, "claude-sonnet-4-5-20250929", kQuestion).status,
        200);
    EXPECT_EQ(post(emu, WireFamily::kAnthropicMessages, "claude-opus-5-5",
                   R"({"max_tokens":64,"thinking":{"type":"disabled"},"temperature":0.5,)"
                   R"("messages":[{"role":"user","content":"Hi"}]})")
                  .status,
              200);
}

TEST(EmulatorCatalogFile, WithoutTheOptionTheSourceTreesCatalogIsRead) {
    EmulatorProcess emu;
    EXPECT_EQ(
        post(emu, WireFamily::kAnthropicMessages, "claude-sonnet-4-5-20250929", kQuestion).status,
        404);
}

TEST(EmulatorCatalogFile, ACatalogThatCannotBeReadIsABadArgument) {
    EXPECT_EQ(run_emulator_to_exit({"--port", "0", "--catalog", "/nonexistent/nucleo/models.yaml"}),
              2);
    CatalogFile broken("models: [ {id: x, wire_model: y\n");
    EXPECT_EQ(run_emulator_to_exit({"--port", "0", "--catalog", broken.path()}), 2);
    EXPECT_EQ(run_emulator_to_exit({"--port", "0", "--catalog", ""}), 2);
}

// ---- usage: thinking and reasoning tokens (wire.187) -----------------------------------------

TEST_F(ShippedCatalog, AnAnthropicThinkingBlocksTokensArePartOfTheOutputTokens) {
    const std::string body =
        R"({"model":"claude-haiku-4-5-20251001","max_tokens":4096,"thinking":{"type":"enabled",)"
        R"("budget_tokens":2048},"messages":[{"role":"user","content":"Why is the sky blue?"}]})";
    const auto d = parse(emu_->post("/v1/messages", body, kAnthropicAuth).body);
    ASSERT_STREQ(d["content"][0]["type"].GetString(), "thinking");
    const std::string thinking = d["content"][0]["thinking"].GetString();
    const std::string text = d["content"][1]["text"].GetString();
    const auto& usage = d["usage"];
    EXPECT_EQ(usage["output_tokens_details"]["thinking_tokens"].GetInt64(),
              tokens(thinking.size()));
    EXPECT_EQ(usage["output_tokens"].GetInt64(), tokens(thinking.size() + text.size()));
    EXPECT_LT(usage["output_tokens_details"]["thinking_tokens"].GetInt64(),
              usage["output_tokens"].GetInt64());

    // Streamed: the final usage carries the same breakdown.
    std::string streamed = body;
    streamed.insert(streamed.size() - 1, R"(,"stream":true)");
    long long streamed_thinking = -1;
    for (const auto& [name, data] :
         parse_sse(emu_->post("/v1/messages", streamed, kAnthropicAuth).body)) {
        if (name == "message_delta")
            streamed_thinking =
                parse(data)["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64();
    }
    EXPECT_EQ(streamed_thinking, tokens(thinking.size()));

    // Without a thinking block there is no breakdown.
    const auto plain = parse(
        emu_->post(
                "/v1/messages",
                R"({"model":"claude-haiku-4-5-20251001","max_tokens":4096,"messages":[{"role":"user","content":"Hi"}]})",
                kAnthropicAuth)
            .body);
    EXPECT_TRUE(plain["usage"]["output_tokens_details"].IsNull());
}

// wire.190: adaptive thinking spends tokens by effort out of max_tokens; its text is shown only
// when summarized.
TEST_F(ShippedCatalog, AdaptiveThinkingSpendsItsEffortsTokensOutOfMaxTokens) {
    const auto ask = [this](long long max_tokens, const std::string& thinking) {
        const std::string body =
            R"({"model":"claude-opus-5-5","max_tokens":)" + std::to_string(max_tokens) +
            R"(,"thinking":)" + thinking +
            R"(,"output_config":{"effort":"low"},"messages":[{"role":"user","content":"Why is the sky blue?"}]})";
        const auto reply = emu_->post("/v1/messages", body, kAnthropicAuth);
        EXPECT_EQ(reply.status, 200) << reply.body;
        return parse(reply.body);
    };
    const auto roomy = ask(4096, R"({"type":"adaptive"})");
    ASSERT_STREQ(roomy["content"][0]["type"].GetString(), "thinking");
    EXPECT_STREQ(roomy["content"][0]["thinking"].GetString(), "");  // display omitted
    EXPECT_STRNE(roomy["content"][0]["signature"].GetString(), "");
    ASSERT_STREQ(roomy["content"][1]["type"].GetString(), "text");
    EXPECT_STREQ(roomy["stop_reason"].GetString(), "end_turn");
    const std::string text = roomy["content"][1]["text"].GetString();
    EXPECT_EQ(roomy["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64(), 1000);
    EXPECT_EQ(roomy["usage"]["output_tokens"].GetInt64(), 1000 + tokens(text.size()));

    // Summarized: the block shows a summary, whose tokens add to the thinking spent.
    const auto shown = ask(4096, R"({"type":"adaptive","display":"summarized"})");
    const std::string summary = shown["content"][0]["thinking"].GetString();
    EXPECT_FALSE(summary.empty());
    EXPECT_EQ(shown["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64(),
              1000 + tokens(summary.size()));

    // Too little room: the thinking takes it all and the answer stops at max_tokens.
    const auto cut = ask(800, R"({"type":"adaptive"})");
    EXPECT_STREQ(cut["stop_reason"].GetString(), "max_tokens");
    EXPECT_EQ(cut["usage"]["output_tokens"].GetInt64(), 800);
    EXPECT_EQ(cut["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64(), 800);
}

TEST_F(ShippedCatalog, AnOpenAiReasoningEffortIsReportedAsReasoningTokensOfTheCompletion) {
    const auto ask = [](const std::string& extra) {
        return parse(
            emu_->post("/v1/chat/completions",
                       R"({"model":"gpt-6-sol","messages":[{"role":"user","content":"Why?"}])" +
                           extra + "}",
                       kOpenAiAuth)
                .body);
    };
    const auto plain = ask("");
    const std::string content = plain["choices"][0]["message"]["content"].GetString();
    EXPECT_EQ(plain["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt64(), 0);
    EXPECT_EQ(plain["usage"]["completion_tokens"].GetInt64(), tokens(content.size()));
    const auto none = ask(R"(,"reasoning_effort":"none")");
    EXPECT_EQ(none["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt64(), 0);
    long long previous = 0;
    for (const char* effort : {"low", "medium", "high", "xhigh", "max"}) {
        const auto d = ask(std::string(R"(,"reasoning_effort":")") + effort + "\"");
        const long long reasoning =
            d["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt64();
        EXPECT_GT(reasoning, previous) << effort;  // more effort, more reasoning
        previous = reasoning;
        EXPECT_EQ(d["choices"][0]["message"]["content"].GetString(), content) << effort;
        EXPECT_EQ(d["usage"]["completion_tokens"].GetInt64(), tokens(content.size()) + reasoning)
            << effort;
        EXPECT_EQ(
            d["usage"]["total_tokens"].GetInt64(),
            d["usage"]["prompt_tokens"].GetInt64() + d["usage"]["completion_tokens"].GetInt64());
    }
    // The reasoning is spent out of max_completion_tokens: 70 with high effort (64) leaves 6.
    const auto tight = ask(R"(,"reasoning_effort":"high","max_completion_tokens":70)");
    EXPECT_EQ(tight["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(tight["usage"]["completion_tokens"].GetInt64(), 70);
    EXPECT_EQ(tight["usage"]["completion_tokens_details"]["reasoning_tokens"].GetInt64(), 64);
    EXPECT_LE(std::string(tight["choices"][0]["message"]["content"].GetString()).size(), 24U);
}

// ---- OpenAI's named tool_choice (wire.188) -------------------------------------------------

TEST_F(ShippedCatalog, ANamedOpenAiToolChoiceEndsWithStopAndRequiredWithToolCalls) {
    const auto body = [](const std::string& choice, bool stream) {
        return R"({"model":"gpt-emu","messages":[{"role":"user","content":"Weather in Oslo?"}],)"
               R"("tools":[{"type":"function","function":{"name":"first","parameters":{"type":"object"}}},)"
               R"({"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}],)"
               R"("tool_choice":)" +
               choice + (stream ? R"(,"stream":true)" : "") + "}";
    };
    const std::string named = R"({"type":"function","function":{"name":"weather"}})";
    const auto forced =
        parse(emu_->post("/v1/chat/completions", body(named, false), kOpenAiAuth).body);
    EXPECT_EQ(forced["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(forced["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "weather");
    for (const char* choice : {R"("required")", R"("auto")"}) {
        const auto d =
            parse(emu_->post("/v1/chat/completions", body(choice, false), kOpenAiAuth).body);
        EXPECT_EQ(d["choices"][0]["finish_reason"], "tool_calls") << choice;
        EXPECT_EQ(d["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "first")
            << choice;
    }
    // Streamed, the last choice chunk says the same.
    std::string finish;
    for (const auto& [name, data] :
         parse_sse(emu_->post("/v1/chat/completions", body(named, true), kOpenAiAuth).body)) {
        if (data == "[DONE]") continue;
        const auto c = parse(data);
        if (!c["choices"].Empty() && c["choices"][0]["finish_reason"].IsString())
            finish = c["choices"][0]["finish_reason"].GetString();
    }
    EXPECT_EQ(finish, "stop");
}

// ---- the new answers against the published response schemas ------------------------------------

/// Runs tests/emulator/sdk/validate_response.py over `bodies` of `kind`; "" when valid, else its
/// output. Needs ../shared/specs beside the checkout (the caller skips without it).
std::string validate_responses(const std::string& kind, const std::vector<std::string>& bodies) {
    namespace fs = std::filesystem;
    const fs::path specs = fs::path(NUCLEO_SOURCE_DIR) / ".." / "shared" / "specs";
    std::string cmd = "python3 '" + std::string(NUCLEO_SOURCE_DIR) +
                      "/tests/emulator/sdk/validate_response.py' '" + specs.string() + "' " + kind;
    std::vector<std::unique_ptr<CatalogFile>> files;  // CatalogFile: a temporary file
    for (const std::string& body : bodies) {
        files.push_back(std::make_unique<CatalogFile>(body));
        cmd += " '" + files.back()->path() + "'";
    }
    cmd += " 2>&1";
    std::string output;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    while (p != nullptr && std::fgets(buf.data(), buf.size(), p) != nullptr) output += buf.data();
    const int rc = p != nullptr ? pclose(p) : -1;
    return rc == 0 ? "" : output;
}

TEST_F(ShippedCatalog, TheNewAnswersKeepThePublishedResponseSchemas) {
    if (!std::filesystem::exists(std::string(NUCLEO_SOURCE_DIR) + "/../shared/specs"))
        GTEST_SKIP() << "../shared/specs is not beside the checkout";
    // A message with a thinking block and its thinking tokens.
    const std::string thinking =
        emu_->post(
                "/v1/messages",
                R"({"model":"claude-haiku-4-5-20251001","max_tokens":4096,"thinking":{"type":)"
                R"("enabled","budget_tokens":2048},"messages":[{"role":"user","content":"Why?"}]})",
                kAnthropicAuth)
            .body;
    EXPECT_EQ(validate_responses("anthropic", {thinking}), "");
    // A completion with reasoning tokens, and a call forced by name.
    const std::string reasoning =
        emu_->post("/v1/chat/completions",
                   R"({"model":"gpt-6-sol","reasoning_effort":"high","messages":[{"role":"user",)"
                   R"("content":"Why?"}]})",
                   kOpenAiAuth)
            .body;
    const std::string forced =
        emu_->post("/v1/chat/completions",
                   R"({"model":"gpt-emu","messages":[{"role":"user","content":"Weather?"}],)"
                   R"("tools":[{"type":"function","function":{"name":"weather","parameters":)"
                   R"({"type":"object"}}}],"tool_choice":{"type":"function","function":)"
                   R"({"name":"weather"}}})",
                   kOpenAiAuth)
            .body;
    EXPECT_EQ(validate_responses("openai", {reasoning, forced}), "");
    // Every refusal of the cases and a retired model's, in each family's error shape.
    std::vector<std::string> anthropic_errors, openai_errors, bedrock_errors;
    for (const model_cases::Case& c : model_cases::kCases) {
        const HttpResult r = post(*emu_, c.family, c.model, c.breaks);
        if (c.family == WireFamily::kAnthropicMessages) anthropic_errors.push_back(r.body);
        if (c.family == WireFamily::kOpenAIChat) openai_errors.push_back(r.body);
        if (c.family == WireFamily::kBedrockConverse) {
            bedrock_errors.push_back(R"({"shape":")" + r.headers.at("x-amzn-errortype") +
                                     R"(","body":)" + r.body + "}");
        }
    }
    anthropic_errors.push_back(
        post(*emu_, WireFamily::kAnthropicMessages, "claude-sonnet-4-5-20250929", kQuestion).body);
    EXPECT_EQ(validate_responses("anthropic-error", anthropic_errors), "");
    EXPECT_EQ(validate_responses("openai-error", openai_errors), "");
    CatalogFile retired(kRetiredCatalog);
    EmulatorProcess emu({"--catalog", retired.path()});
    const HttpResult gone = post(emu, WireFamily::kBedrockConverse, "anthropic.claude-old-v1:0",
                                 R"({"messages":[{"role":"user","content":[{"text":"Hi"}]}]})");
    bedrock_errors.push_back(R"({"shape":")" + gone.headers.at("x-amzn-errortype") +
                             R"(","body":)" + gone.body + "}");
    EXPECT_EQ(validate_responses("bedrock-error", bedrock_errors), "");
}

}  // namespace
}  // namespace nucleo::emulator_test
