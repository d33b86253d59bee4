// Black-box tests of nucleo-emulator (docs/emulator.md): the real binary on a free
// loopback port, requests over HTTP, the providers' error texts, cache usage splits, deterministic
// tool calls, faults and streams. The request bodies are checked against the providers' published
// schemas with ../shared/tools/validate_wire.py when ../shared exists.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <zlib.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emulator_client.hpp"
#include "wire_cases.hpp"

namespace nucleo::emulator_test {
namespace {

// ---- request fixtures ---------------------------------------------------------------------

const std::vector<std::string> kAnthropicAuth = {"x-api-key: test-key",
                                                 "anthropic-version: 2023-06-01"};
const std::vector<std::string> kOpenAiAuth = {"authorization: Bearer test-key"};
const std::vector<std::string> kBedrockAuth = {
    "authorization: AWS4-HMAC-SHA256 "
    "Credential=AKIDEXAMPLE/20240101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0123456789abcdef",
    "x-amz-date: 20240101T000000Z"};
const std::string kConverse = "/model/anthropic.claude-emu-v1:0/converse";
const std::string kConverseStream = "/model/anthropic.claude-emu-v1:0/converse-stream";

std::string q(const std::string& s) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return buf.GetString();
}

/// Deterministic prose of about `bytes` bytes: a long, stable system prompt.
std::string long_text(std::size_t bytes, const std::string& topic) {
    std::string out;
    for (int i = 0; out.size() < bytes; ++i) {
        out += "Rule " + std::to_string(i) + " about " + topic +
               ": answer precisely and cite the order. ";
    }
    return out;
}

/// The weather tool: every schema shape the argument filler must handle.
const std::string kWeatherSchema = R"({"type":"object","properties":{
    "city":{"type":"string","description":"City name"},
    "days":{"type":"integer","minimum":1,"maximum":7},
    "units":{"type":"string","enum":["celsius","fahrenheit"]},
    "detailed":{"type":"boolean"},
    "window":{"type":"object","properties":{"start":{"type":"integer"},"label":{"type":"string"}},
              "required":["start","label"]},
    "tags":{"type":"array","items":{"type":"string"}},
    "note":{"type":"string"}},
  "required":["city","days","units","detailed","window","tags"]})";
const std::string kWeatherArgs =
    R"({"city":"Paris","days":1,"units":"celsius","detailed":true,"window":{"start":1,"label":"Paris"},"tags":["Paris"]})";
const std::string kQuestion = "What is the weather in Paris?";

std::string anthropic_body(const std::string& messages, const std::string& extra = "") {
    return R"({"model":"claude-emu","max_tokens":1024)" + extra + R"(,"messages":)" + messages +
           "}";
}

std::string anthropic_tools() {
    return R"(,"tools":[{"name":"get_weather","description":"Current weather.","input_schema":)" +
           kWeatherSchema +
           R"(},{"name":"other","description":"Never first.","input_schema":{"type":"object"}}])";
}

std::string user_text(const std::string& text, bool cache = false) {
    return R"({"role":"user","content":[{"type":"text","text":)" + q(text) +
           (cache ? R"(,"cache_control":{"type":"ephemeral"})" : "") + "}]}";
}

std::string assistant_text(const std::string& text) {
    return R"({"role":"assistant","content":[{"type":"text","text":)" + q(text) + "}]}";
}

std::string anthropic_question() {
    return anthropic_body("[" + user_text(kQuestion) + "]", anthropic_tools());
}

std::string anthropic_after_tool(const std::string& result, bool is_error) {
    return anthropic_body(
        "[" + user_text(kQuestion) +
            R"(,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},)"
            R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":)" +
            (is_error ? "true" : "false") + R"(,"content":[{"type":"text","text":)" + q(result) +
            "}]}]}]",
        anthropic_tools());
}

std::string anthropic_five_marks() {
    return anthropic_body(
        "[" + user_text("first", true) + "," +
            R"({"role":"assistant","content":[{"type":"text","text":"ok","cache_control":{"type":"ephemeral"}}]},)" +
            user_text("second", true) + "]",
        R"(,"system":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}},)"
        R"({"type":"text","text":"two","cache_control":{"type":"ephemeral"}}])");
}

std::string anthropic_orphan_result() {
    return anthropic_body(
        "[" + user_text("hello") + "," + assistant_text("hi") +
        R"(,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_gone","content":"x"}]}])");
}

std::string anthropic_unanswered_use() {
    return anthropic_body(
        "[" + user_text("hello") +
        R"(,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}]},)" +
        user_text("never mind") + "]");
}

/// A conversation with a long cached system prompt; `turns` user turns, the last one marked.
std::string anthropic_growing(int turns) {
    std::string messages = "[";
    for (int i = 1; i <= turns; ++i) {
        if (i > 1) messages += "," + assistant_text("Answer " + std::to_string(i - 1)) + ",";
        messages += user_text("Question number " + std::to_string(i), i == turns);
    }
    messages += "]";
    return anthropic_body(messages, R"(,"system":[{"type":"text","text":)" +
                                        q(long_text(6000, "orders")) +
                                        R"(,"cache_control":{"type":"ephemeral"}}])");
}

std::string openai_body(const std::string& messages, const std::string& extra = "") {
    return R"({"model":"gpt-emu","max_completion_tokens":1024)" + extra + R"(,"messages":)" +
           messages + "}";
}

std::string openai_tools() {
    return R"(,"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather.","parameters":)" +
           kWeatherSchema + "}}]";
}

std::string openai_user(const std::string& text) {
    return R"({"role":"user","content":)" + q(text) + "}";
}

std::string openai_question() {
    return openai_body("[" + openai_user(kQuestion) + "]", openai_tools());
}

std::string openai_unanswered() {
    return openai_body(
        "[" + openai_user("hello") +
            R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},)" +
            openai_user("never mind") + "]",
        openai_tools());
}

std::string openai_orphan() {
    return openai_body("[" + openai_user("hello") +
                       R"(,{"role":"tool","tool_call_id":"call_gone","content":"x"}])");
}

std::string openai_after_tool(const std::string& result) {
    return openai_body(
        "[" + openai_user(kQuestion) +
            R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},)"
            R"({"role":"tool","tool_call_id":"call_1","content":)" +
            q(result) + "}]",
        openai_tools());
}

std::string openai_long(int turns) {
    std::string messages = R"([{"role":"system","content":)" + q(long_text(8000, "refunds")) + "}";
    for (int i = 1; i <= turns; ++i) {
        if (i > 1)
            messages +=
                R"(,{"role":"assistant","content":"Answer )" + std::to_string(i - 1) + "\"}";
        messages += "," + openai_user("Question number " + std::to_string(i));
    }
    return openai_body(messages + "]");
}

std::string bedrock_body(const std::string& messages, const std::string& extra = "") {
    return R"({"inferenceConfig":{"maxTokens":1024})" + extra + R"(,"messages":)" + messages + "}";
}

std::string bedrock_user(const std::string& text, bool cache_point = false) {
    return R"({"role":"user","content":[{"text":)" + q(text) + "}" +
           (cache_point ? R"(,{"cachePoint":{"type":"default"}})" : "") + "]}";
}

std::string bedrock_assistant(const std::string& text) {
    return R"({"role":"assistant","content":[{"text":)" + q(text) + "}]}";
}

std::string bedrock_tools() {
    return R"(,"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","description":"Current weather.","inputSchema":{"json":)" +
           kWeatherSchema + "}}}]}";
}

std::string bedrock_question() {
    return bedrock_body("[" + bedrock_user(kQuestion) + "]", bedrock_tools());
}

std::string bedrock_orphan_result() {
    return bedrock_body(
        "[" + bedrock_user("hello") + "," + bedrock_assistant("hi") +
            R"(,{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_gone","content":[{"text":"x"}]}}]}])",
        bedrock_tools());
}

std::string bedrock_unanswered() {
    return bedrock_body(
        "[" + bedrock_user("hello") +
            R"(,{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{}}}]},)" +
            bedrock_user("never mind") + "]",
        bedrock_tools());
}

std::string bedrock_growing(int turns) {
    std::string messages = "[";
    for (int i = 1; i <= turns; ++i) {
        if (i > 1) messages += "," + bedrock_assistant("Answer " + std::to_string(i - 1)) + ",";
        messages += bedrock_user("Question number " + std::to_string(i), i == turns);
    }
    return bedrock_body(messages + "]", R"(,"system":[{"text":)" + q(long_text(6000, "returns")) +
                                            R"(},{"cachePoint":{"type":"default"}}])");
}

std::string bedrock_five_points() {
    return bedrock_body(
        "[" + bedrock_user("a", true) + "," +
            R"({"role":"assistant","content":[{"text":"b"},{"cachePoint":{"type":"default"}}]},)" +
            bedrock_user("c", true) + "]",
        R"(,"system":[{"text":"one"},{"cachePoint":{"type":"default"}},{"text":"two"},{"cachePoint":{"type":"default"}}])");
}

// ---- helpers ------------------------------------------------------------------------------

class Emulator : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { emu_ = std::make_unique<EmulatorProcess>(); }
    static void TearDownTestSuite() {
        // Stops cleanly on SIGTERM: exit status 0.
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    HttpResult anthropic(const std::string& body, std::vector<std::string> extra = {}) {
        extra.insert(extra.end(), kAnthropicAuth.begin(), kAnthropicAuth.end());
        return emu_->post("/v1/messages", body, extra);
    }
    HttpResult openai(const std::string& body, std::vector<std::string> extra = {}) {
        extra.insert(extra.end(), kOpenAiAuth.begin(), kOpenAiAuth.end());
        return emu_->post("/v1/chat/completions", body, extra);
    }
    HttpResult bedrock(const std::string& body, std::vector<std::string> extra = {},
                       const std::string& path = kConverse) {
        extra.insert(extra.end(), kBedrockAuth.begin(), kBedrockAuth.end());
        return emu_->post(path, body, extra);
    }
    long long count_tokens(const std::string& body) {
        auto r = emu_->post("/v1/messages/count_tokens", body, kAnthropicAuth);
        EXPECT_EQ(r.status, 200) << r.body;
        return parse(r.body)["input_tokens"].GetInt64();
    }
    std::string anthropic_error(const HttpResult& r) {
        auto d = parse(r.body);
        EXPECT_STREQ(d["type"].GetString(), "error");
        return d["error"]["message"].GetString();
    }

    static std::unique_ptr<EmulatorProcess> emu_;
};

std::unique_ptr<EmulatorProcess> Emulator::emu_;

// ---- process ------------------------------------------------------------------------------

TEST(EmulatorProcessTest, PrintsTheListeningLineAndAnswersHealth) {
    EmulatorProcess emu;
    EXPECT_EQ(emu.stdout_first_line(),
              "listening on http://127.0.0.1:" + std::to_string(emu.port()));
    const auto r = emu.get("/health");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"status":"ok"})");
    EXPECT_EQ(emu.stop(), 0);
}

// wire.212: a port another emulator listens on is refused (exit 1, one line naming the port),
// never shared: two emulators on one port would split the requests between two caches.
TEST(EmulatorProcessTest, ABusyPortExitsWith1NamingThePort) {
    EmulatorProcess first;
    const std::string port = std::to_string(first.port());
    const EmulatorExit second = run_emulator_bounded({"--port", port});
    EXPECT_FALSE(second.still_running) << "the second emulator listened: " << second.out;
    EXPECT_EQ(second.status, 1);
    EXPECT_EQ(second.out, "");
    EXPECT_EQ(second.err, "nucleo-emulator: cannot listen on 127.0.0.1:" + port +
                              ": the port is in use (another nucleo-emulator?); choose another "
                              "--port, or --port 0 for a free one\n");
    // The first one still answers.
    EXPECT_EQ(first.get("/health").status, 200);
    EXPECT_EQ(first.stop(), 0);
}

TEST(EmulatorProcessTest, RefusesANonLoopbackHostWithExit2) {
    EXPECT_EQ(run_emulator_to_exit({"--host", "0.0.0.0", "--port", "0"}), 2);
    EXPECT_EQ(run_emulator_to_exit({"--port", "nope"}), 2);
    EXPECT_EQ(run_emulator_to_exit({"--bogus", "1"}), 2);
}

// ---- Anthropic request rules --------------------------------------------------------------

TEST_F(Emulator, AnthropicRefusesFiveCacheControlBlocks) {
    // "A maximum of 4 blocks with cache_control may be provided. Found N."
    const auto r = anthropic(anthropic_five_marks());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(parse(r.body)["error"]["type"], "invalid_request_error");
    EXPECT_EQ(anthropic_error(r),
              "A maximum of 4 blocks with cache_control may be provided. Found 5.");
}

TEST_F(Emulator, AnthropicRefusesAToolResultWithoutItsToolUse) {
    const auto r = anthropic(anthropic_orphan_result());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(
        anthropic_error(r),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_gone. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.");
}

TEST_F(Emulator, AnthropicRefusesAToolUseWithoutItsResult) {
    const auto r = anthropic(anthropic_unanswered_use());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(
        anthropic_error(r),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.");
}

TEST_F(Emulator, AnthropicRoleAndContentRules) {
    EXPECT_EQ(anthropic_error(anthropic(
                  anthropic_body("[" + assistant_text("hi") + "," + user_text("q") + "]"))),
              R"(messages: first message must use the "user" role)");
    EXPECT_EQ(
        anthropic_error(
            anthropic(anthropic_body("[" + user_text("a") + "," + user_text("b") + "]"))),
        R"(messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row)");
    EXPECT_EQ(anthropic_error(anthropic(anthropic_body("[" + user_text("") + "]"))),
              "messages: text content blocks must be non-empty");
    EXPECT_EQ(
        anthropic_error(anthropic(R"({"model":"claude-emu","messages":[)" + user_text("q") + "]}")),
        "max_tokens: Field required");
    // A tool_result is always first in its user turn (channel.6).
    EXPECT_EQ(
        anthropic_error(anthropic(anthropic_body(
            "[" + user_text("q") +
            R"(,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}]},)"
            R"({"role":"user","content":[{"type":"text","text":"see"},{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}])"))),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages "
        "following `tool_use` blocks must begin with a matching number of `tool_result` blocks.");
}

TEST_F(Emulator, AnthropicAuthenticationHeaders) {
    auto r = emu_->post("/v1/messages", anthropic_question(), {"anthropic-version: 2023-06-01"});
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(parse(r.body)["error"]["type"], "authentication_error");
    r = emu_->post("/v1/messages", anthropic_question(), {"x-api-key: k"});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(anthropic_error(r), "anthropic-version: header is required");
}

// ---- OpenAI request rules -----------------------------------------------------------------

TEST_F(Emulator, OpenAiRefusesToolCallsWithoutToolMessages) {
    const auto r = openai(openai_unanswered());
    EXPECT_EQ(r.status, 400);
    auto d = parse(r.body);
    EXPECT_EQ(std::string(d["error"]["message"].GetString()),
              "An assistant message with 'tool_calls' must be followed by tool messages responding "
              "to each "
              "'tool_call_id'. The following tool_call_ids did not have response messages: call_1");
    EXPECT_EQ(d["error"]["type"], "invalid_request_error");
    EXPECT_EQ(d["error"]["param"], "messages.[2].role");
    EXPECT_TRUE(d["error"]["code"].IsNull());
}

TEST_F(Emulator, OpenAiRefusesAToolMessageWithoutToolCalls) {
    const auto r = openai(openai_orphan());
    EXPECT_EQ(r.status, 400);
    auto d = parse(r.body);
    EXPECT_EQ(std::string(d["error"]["message"].GetString()),
              "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
              "message with 'tool_calls'.");
    EXPECT_EQ(d["error"]["param"], "messages.[1].role");
}

TEST_F(Emulator, OpenAiRequiresBearerAuth) {
    const auto r = emu_->post("/v1/chat/completions", openai_question(), {});
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(parse(r.body)["error"]["type"], "invalid_request_error");
}

// ---- Converse request rules ---------------------------------------------------------------

std::string bedrock_message(const HttpResult& r) {
    EXPECT_EQ(r.headers.count("x-amzn-errortype"), 1u);
    return parse(r.body)["message"].GetString();
}

TEST_F(Emulator, ConverseRefusesConsecutiveUserTurns) {
    const auto r = bedrock(bedrock_body("[" + bedrock_user("a") + "," + bedrock_user("b") + "]"));
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.headers.at("x-amzn-errortype"), "ValidationException");
    EXPECT_EQ(bedrock_message(r),
              "A conversation must alternate between user and assistant roles. Make sure the "
              "conversation "
              "alternates between user and assistant roles and try again.");
}

TEST_F(Emulator, ConverseRefusesBlankText) {
    const auto r =
        bedrock(bedrock_body("[" + bedrock_user("q") + "," + bedrock_assistant("  ") + "]"));
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(bedrock_message(r),
              "The text field in the ContentBlock object at messages.1.content.0 is blank. Add "
              "text to the "
              "text field, and try again.");
}

TEST_F(Emulator, ConversePairsToolUseAndToolResult) {
    auto r = bedrock(bedrock_orphan_result());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(bedrock_message(r),
              "The number of toolResult blocks at messages.2.content exceeds the number of toolUse "
              "blocks of previous turn.");
    r = bedrock(bedrock_unanswered());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(bedrock_message(r),
              "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_1");
}

TEST_F(Emulator, ConverseRefusesFiveCachePoints) {
    const auto r = bedrock(bedrock_five_points());
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(bedrock_message(r),
              "The model returned the following errors: A maximum of 4 blocks with cache_control "
              "may be provided. Found 5.");
}

// ---- the rule book (wire.101-wire.142): the same bodies as the rule book's own test -------

/// A rule book case's body with the fields the API requires (model, max_tokens) added when absent.
std::string complete_body(nucleo::contract::WireFamily family, const char* body) {
    rapidjson::Document d = parse(body);
    auto& a = d.GetAllocator();
    if (family != nucleo::contract::WireFamily::kBedrockConverse && !d.HasMember("model"))
        d.AddMember("model", "claude-emu", a);
    if (family == nucleo::contract::WireFamily::kAnthropicMessages && !d.HasMember("max_tokens"))
        d.AddMember("max_tokens", 4000, a);
    return str(d);
}

class EmulatorRuleBook : public Emulator, public ::testing::WithParamInterface<wire_cases::Case> {
  protected:
    /// Posts `body` on the family's route, completed; returns the status and the provider's error
    /// message ("" for a 2xx).
    std::pair<long, std::string> post(const char* body) {
        const auto family = GetParam().family;
        const std::string json = complete_body(family, body);
        HttpResult r;
        switch (family) {
            case nucleo::contract::WireFamily::kAnthropicMessages:
                r = anthropic(json);
                break;
            case nucleo::contract::WireFamily::kOpenAIChat:
                r = openai(json);
                break;
            default:
                r = bedrock(json);
                break;
        }
        if (r.status < 300) return {r.status, ""};
        const auto e = parse(r.body);
        if (e.HasMember("message")) return {r.status, e["message"].GetString()};
        return {r.status, e["error"]["message"].GetString()};
    }
};

TEST_P(EmulatorRuleBook, KeptBodyIsAnsweredAndBrokenBodyIsRefusedWithTheProvidersText) {
    const wire_cases::Case& c = GetParam();
    const auto kept = post(c.keeps);
    EXPECT_EQ(kept.first, 200) << c.rule << ": " << kept.second;
    const auto refused = post(c.breaks);
    if (std::string(c.rule) == "wire.123") {
        // The core's own rule: OpenAI itself takes a later system message.
        EXPECT_EQ(refused.first, 200) << refused.second;
        return;
    }
    EXPECT_EQ(refused.first, 400) << c.rule;
    EXPECT_EQ(refused.second, c.text) << c.rule;
}

INSTANTIATE_TEST_SUITE_P(Wire, EmulatorRuleBook, ::testing::ValuesIn(wire_cases::kCases),
                         [](const ::testing::TestParamInfo<wire_cases::Case>& info) {
                             std::string name = info.param.rule;
                             for (char& ch : name)
                                 if (ch == '.') ch = '_';
                             return name;
                         });

// The kept bodies are well-formed by the published schemas too: the rules they keep and the broken
// bodies break are ones a schema cannot express.
TEST(EmulatorRuleBookBodies, KeptBodiesAreValidAgainstThePublishedSchemas) {
    std::map<nucleo::contract::WireFamily, std::vector<std::string>> bodies;
    for (const auto& c : wire_cases::kCases)
        bodies[c.family].push_back(complete_body(c.family, c.keeps));
    EXPECT_EQ(validate_wire("anthropic", bodies[nucleo::contract::WireFamily::kAnthropicMessages]),
              "");
    EXPECT_EQ(validate_wire("openai", bodies[nucleo::contract::WireFamily::kOpenAIChat]), "");
    EXPECT_EQ(validate_wire("bedrock", bodies[nucleo::contract::WireFamily::kBedrockConverse]), "");
}

TEST_F(Emulator, ConverseChecksTheSigV4HeaderShape) {
    auto r = emu_->post(kConverse, bedrock_question(), {});
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.headers.at("x-amzn-errortype"), "MissingAuthenticationTokenException");
    r = emu_->post(kConverse, bedrock_question(), {kBedrockAuth[0]});  // no x-amz-date
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.headers.at("x-amzn-errortype"), "IncompleteSignatureException");
    EXPECT_NE(bedrock_message(r).find("'X-Amz-Date'"), std::string::npos);
}

// ---- prefix caching -----------------------------------------------------------------------

TEST_F(Emulator, AnthropicWritesOnCallOneAndReadsOnCallTwoOfAGrowingConversation) {
    const std::string call1 = anthropic_growing(1);
    const std::string call2 = anthropic_growing(2);
    const long long tokens1 = count_tokens(call1);
    const long long tokens2 = count_tokens(call2);
    ASSERT_GE(tokens1, 1024) << "the fixture must reach the minimum cacheable length";

    auto u1 = parse(anthropic(call1).body);
    // The whole request up to its last breakpoint (its last block) is written.
    EXPECT_EQ(u1["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(u1["usage"]["cache_creation_input_tokens"].GetInt64(), tokens1);
    EXPECT_EQ(u1["usage"]["input_tokens"].GetInt64(), 0);

    // Call 2 marks only its new last turn; the call-1 prefix is found by the lookback.
    auto u2 = parse(anthropic(call2).body);
    EXPECT_EQ(u2["usage"]["cache_read_input_tokens"].GetInt64(), tokens1);
    EXPECT_EQ(u2["usage"]["cache_creation_input_tokens"].GetInt64(), tokens2 - tokens1);
    EXPECT_EQ(u2["usage"]["input_tokens"].GetInt64(), 0);

    auto stats = parse(emu_->get("/stats").body);
    EXPECT_EQ(stats["cache"]["writes"].GetInt64(), 2);
    EXPECT_EQ(stats["cache"]["reads"].GetInt64(), 1);
}

TEST_F(Emulator, AnthropicUncachedTailIsInputTokens) {
    // A marked block followed by an unmarked one: the tail is neither written nor read.
    const std::string cached_part = anthropic_growing(1);
    const std::string body = anthropic_body(
        "[" +
            std::string(
                R"({"role":"user","content":[{"type":"text","text":"Question number 1","cache_control":{"type":"ephemeral"}},)"
                R"({"type":"text","text":"An unmarked tail that is not cached."}]}])"),
        R"(,"system":[{"type":"text","text":)" + q(long_text(6000, "orders")) +
            R"(,"cache_control":{"type":"ephemeral"}}])");
    anthropic(cached_part);
    auto u_doc = parse(anthropic(body).body);
    auto u = u_doc["usage"].GetObject();
    EXPECT_EQ(u["cache_read_input_tokens"].GetInt64(), count_tokens(cached_part));
    EXPECT_EQ(u["cache_creation_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(u["input_tokens"].GetInt64(), count_tokens(body) - count_tokens(cached_part));
}

TEST_F(Emulator, BelowTheMinimumCacheableLengthNothingIsCached) {
    const std::string body = anthropic_body(
        "[" + user_text("short question", true) + "]",
        R"(,"system":[{"type":"text","text":"Short.","cache_control":{"type":"ephemeral"}}])");
    const long long tokens = count_tokens(body);
    ASSERT_LT(tokens, 1024);
    for (int call = 0; call < 2; ++call) {
        auto u = parse(anthropic(body).body);
        EXPECT_EQ(u["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
        EXPECT_EQ(u["usage"]["cache_read_input_tokens"].GetInt64(), 0);
        EXPECT_EQ(u["usage"]["input_tokens"].GetInt64(), tokens);
    }
}

TEST(EmulatorCacheTtl, AnEntryOutlivesNoMoreThanItsTtl) {
    // --cache-ttl 0: every entry is expired by the time the next request looks it up.
    EmulatorProcess emu({"--cache-ttl", "0"});
    std::vector<std::string> headers = kAnthropicAuth;
    const std::string body = anthropic_growing(1);
    auto first = parse(emu.post("/v1/messages", body, headers).body);
    EXPECT_GT(first["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
    auto second = parse(emu.post("/v1/messages", body, headers).body);
    EXPECT_EQ(second["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(second["usage"]["cache_creation_input_tokens"].GetInt64(),
              first["usage"]["cache_creation_input_tokens"].GetInt64());
}

TEST(EmulatorMinCacheable, TheMinimumIsAnOption) {
    EmulatorProcess emu({"--min-cacheable", "1"});
    const std::string body = anthropic_body("[" + user_text("short question", true) + "]");
    parse(emu.post("/v1/messages", body, kAnthropicAuth).body);
    auto second = parse(emu.post("/v1/messages", body, kAnthropicAuth).body);
    EXPECT_GT(second["usage"]["cache_read_input_tokens"].GetInt64(), 0);
}

TEST_F(Emulator, ConverseCachePointsWriteThenRead) {
    auto u1_doc = parse(bedrock(bedrock_growing(1)).body);
    auto u1 = u1_doc["usage"].GetObject();
    EXPECT_EQ(u1["cacheReadInputTokens"].GetInt64(), 0);
    EXPECT_GT(u1["cacheWriteInputTokens"].GetInt64(), 1024);
    auto u2_doc = parse(bedrock(bedrock_growing(2)).body);
    auto u2 = u2_doc["usage"].GetObject();
    EXPECT_EQ(u2["cacheReadInputTokens"].GetInt64(), u1["cacheWriteInputTokens"].GetInt64());
    EXPECT_GT(u2["cacheWriteInputTokens"].GetInt64(), 0);
    EXPECT_EQ(u2["totalTokens"].GetInt64(),
              u2["inputTokens"].GetInt64() + u2["outputTokens"].GetInt64() +
                  u2["cacheReadInputTokens"].GetInt64() + u2["cacheWriteInputTokens"].GetInt64());
}

TEST_F(Emulator, OpenAiCachesPromptsAutomaticallyIn128TokenSteps) {
    auto u1_doc = parse(openai(openai_long(1)).body);
    auto u1 = u1_doc["usage"].GetObject();
    const long long prompt1 = u1["prompt_tokens"].GetInt64();
    ASSERT_GE(prompt1, 1024);
    EXPECT_EQ(u1["prompt_tokens_details"]["cached_tokens"].GetInt64(), 0);
    auto u2_doc = parse(openai(openai_long(2)).body);
    auto u2 = u2_doc["usage"].GetObject();
    const long long cached = u2["prompt_tokens_details"]["cached_tokens"].GetInt64();
    EXPECT_GE(cached, 1024);
    EXPECT_EQ(cached % 128, 0);
    EXPECT_LE(cached, prompt1);
    EXPECT_GT(cached + 128, prompt1);  // the longest step inside call 1's prompt
    // Short prompts are never cached.
    openai(openai_question());
    auto u3_doc = parse(openai(openai_question()).body);
    auto u3 = u3_doc["usage"].GetObject();
    EXPECT_EQ(u3["prompt_tokens_details"]["cached_tokens"].GetInt64(), 0);
}

// ---- deterministic replies ----------------------------------------------------------------

TEST_F(Emulator, AnthropicCallsTheFirstToolWithSchemaValidArguments) {
    auto d = parse(anthropic(anthropic_question()).body);
    EXPECT_EQ(d["stop_reason"], "tool_use");
    ASSERT_EQ(d["content"].Size(), 1u);
    const auto& call = d["content"][0];
    EXPECT_EQ(call["type"], "tool_use");
    EXPECT_EQ(call["name"], "get_weather");
    EXPECT_EQ(str(call["input"]), kWeatherArgs);
    EXPECT_EQ(std::string(call["id"].GetString()).rfind("toolu_emu_", 0), 0u);
    // The same request gets the same id.
    auto again = parse(anthropic(anthropic_question()).body);
    EXPECT_EQ(str(again["content"][0]["id"]), str(call["id"]));
}

TEST_F(Emulator, OpenAiAndConverseCallTheToolToo) {
    auto o = parse(openai(openai_question()).body);
    EXPECT_EQ(o["choices"][0]["finish_reason"], "tool_calls");
    const auto& call = o["choices"][0]["message"]["tool_calls"][0];
    EXPECT_EQ(call["function"]["name"], "get_weather");
    EXPECT_EQ(std::string(call["function"]["arguments"].GetString()), kWeatherArgs);
    EXPECT_TRUE(o["choices"][0]["message"]["content"].IsNull());

    auto b = parse(bedrock(bedrock_question()).body);
    EXPECT_EQ(b["stopReason"], "tool_use");
    const auto& use = b["output"]["message"]["content"][0]["toolUse"];
    EXPECT_EQ(use["name"], "get_weather");
    EXPECT_EQ(str(use["input"]), kWeatherArgs);
}

TEST_F(Emulator, AnswersInTextAfterAToolResultQuotingItsFirstLine) {
    auto d = parse(anthropic(anthropic_after_tool("Sunny, 21C\nsecond line", false)).body);
    EXPECT_EQ(d["stop_reason"], "end_turn");
    EXPECT_EQ(std::string(d["content"][0]["text"].GetString()),
              "The tool get_weather returned: Sunny, 21C");
    auto e = parse(anthropic(anthropic_after_tool("city not found", true)).body);
    EXPECT_NE(
        std::string(e["content"][0]["text"].GetString()).find("reported an error: city not found"),
        std::string::npos);
    auto o = parse(openai(openai_after_tool("Rain\nmore")).body);
    EXPECT_EQ(o["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(std::string(o["choices"][0]["message"]["content"].GetString()),
              "The tool get_weather returned: Rain");
}

TEST_F(Emulator, ToolCycleCallsTheDeclaredToolsInTurn) {
    // tool-cycle: the call in assistant turn k goes to tool k mod n; with tool-rounds=2 the second
    // answer (after one assistant turn) calls the second tool instead of answering in text.
    const std::vector<std::string> script = {"x-emulator-fault: tool-rounds=2,tool-cycle"};
    auto first = parse(anthropic(anthropic_question(), script).body);
    EXPECT_EQ(first["content"][0]["name"], "get_weather");
    auto second = parse(anthropic(anthropic_after_tool("Sunny", false), script).body);
    EXPECT_EQ(second["stop_reason"], "tool_use");
    EXPECT_EQ(second["content"][0]["name"], "other");
    EXPECT_EQ(str(second["content"][0]["input"]), "{}");
    // Without tool-cycle the scripted call stays on the first tool.
    auto plain = parse(
        anthropic(anthropic_after_tool("Sunny", false), {"x-emulator-fault: tool-rounds=2"}).body);
    EXPECT_EQ(plain["content"][0]["name"], "get_weather");
}

TEST_F(Emulator, AnswersInTextWithoutTools) {
    auto d = parse(anthropic(anthropic_body("[" + user_text("Hello there") + "]")).body);
    EXPECT_EQ(d["stop_reason"], "end_turn");
    EXPECT_EQ(std::string(d["content"][0]["text"].GetString()),
              "This is the emulator's answer to: Hello there");
    // Converse with tools rendered in the text (no toolConfig) answers in text.
    auto b = parse(
        bedrock(bedrock_body("[" + bedrock_user("Tools: get_weather(city). " + kQuestion) + "]"))
            .body);
    EXPECT_EQ(b["stopReason"], "end_turn");
    EXPECT_TRUE(b["output"]["message"]["content"][0].HasMember("text"));
}

TEST_F(Emulator, RespectsMaxTokens) {
    auto d = parse(anthropic(R"({"model":"claude-emu","max_tokens":3,"messages":[)" +
                             user_text("Hello there") + "]}")
                       .body);
    EXPECT_EQ(d["stop_reason"], "max_tokens");
    EXPECT_EQ(std::string(d["content"][0]["text"].GetString()), "This is the ");
    EXPECT_EQ(d["usage"]["output_tokens"].GetInt64(), 3);
}

// ---- faults -------------------------------------------------------------------------------

TEST_F(Emulator, Fault429CarriesRetryAfterInEachProvidersShape) {
    auto a = anthropic(anthropic_question(), {"x-emulator-fault: 429"});
    EXPECT_EQ(a.status, 429);
    EXPECT_EQ(a.headers.at("retry-after"), "1");
    EXPECT_EQ(parse(a.body)["error"]["type"], "rate_limit_error");
    auto o = openai(openai_question(), {"x-emulator-fault: 429"});
    EXPECT_EQ(o.status, 429);
    EXPECT_EQ(o.headers.at("retry-after"), "1");
    EXPECT_EQ(parse(o.body)["error"]["code"], "rate_limit_exceeded");
    auto b = bedrock(bedrock_question(), {"x-emulator-fault: 429"});
    EXPECT_EQ(b.status, 429);
    EXPECT_EQ(b.headers.at("x-amzn-errortype"), "ThrottlingException");
}

TEST_F(Emulator, RetryAfterWordsTheWaitA429AsksFor) {
    // limits.141: retry-after=S, for a client's cap on Retry-After tested without waiting.
    auto a = anthropic(anthropic_question(), {"x-emulator-fault: 429,retry-after=120"});
    EXPECT_EQ(a.status, 429);
    EXPECT_EQ(a.headers.at("retry-after"), "120");
    auto o = openai(openai_question(), {"x-emulator-fault: fail-first=1:429, retry-after=0",
                                        "x-emulator-request-id: ra-1"});
    EXPECT_EQ(o.status, 429);
    EXPECT_EQ(o.headers.at("retry-after"), "0");
    // Alone it injects nothing.
    EXPECT_EQ(anthropic(anthropic_question(), {"x-emulator-fault: retry-after=5"}).status, 200);
    EXPECT_EQ(anthropic(anthropic_question(), {"x-emulator-fault: retry-after=soon"}).status, 400);
}

TEST_F(Emulator, Fault500And529) {
    auto s = anthropic(anthropic_question(), {"x-emulator-fault: 500"});
    EXPECT_EQ(s.status, 500);
    EXPECT_EQ(parse(s.body)["error"]["type"], "api_error");
    auto o = emu_->post("/v1/messages?fault=529", anthropic_question(), kAnthropicAuth);
    EXPECT_EQ(o.status, 529);
    EXPECT_EQ(parse(o.body)["error"]["type"], "overloaded_error");
    EXPECT_EQ(anthropic_error(o), "Overloaded");
}

TEST_F(Emulator, ACannedReplyIsReturnedForACheckedRequest) {
    // x-emulator-reply: the body, base64; the request is still checked like any call.
    // "eyJjYW5uZWQiOnRydWV9" is base64 of {"canned":true}.
    const std::vector<std::string> canned = {"x-emulator-reply: eyJjYW5uZWQiOnRydWV9"};
    auto r = anthropic(anthropic_question(), canned);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"canned":true})");
    auto b = bedrock(bedrock_question(), canned);
    EXPECT_EQ(b.body, R"({"canned":true})");
    // A request the provider would refuse is refused, canned reply or not.
    auto refused = anthropic(R"({"model":"m","messages":[]})", canned);
    EXPECT_EQ(refused.status, 400);
    // A header that is not base64 is refused in the provider's error shape.
    auto bad = anthropic(anthropic_question(), {"x-emulator-reply: not base64!"});
    EXPECT_EQ(bad.status, 400);
    EXPECT_NE(anthropic_error(bad).find("x-emulator-reply"), std::string::npos);
    // x-emulator-reply-first=1: only the first call with the same request id is canned.
    const std::vector<std::string> once = {"x-emulator-reply: eyJjYW5uZWQiOnRydWV9",
                                           "x-emulator-reply-first: 1",
                                           "x-emulator-request-id: canned-once"};
    EXPECT_EQ(anthropic(anthropic_question(), once).body, R"({"canned":true})");
    auto second = anthropic(anthropic_question(), once);
    EXPECT_EQ(second.status, 200);
    EXPECT_NE(second.body, R"({"canned":true})");
    EXPECT_EQ(parse(second.body)["type"], "message");
}

TEST_F(Emulator, FaultDelayStillAnswers) {
    auto r = anthropic(anthropic_question(), {"x-emulator-fault: delay=20"});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(parse(emu_->get("/stats").body)["faults"].GetInt64(), 1);
}

TEST_F(Emulator, FaultMalformedBodyIsNotJson) {
    auto r = openai(openai_question(), {"x-emulator-fault: malformed"});
    EXPECT_EQ(r.status, 200);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    EXPECT_TRUE(d.HasParseError());
}

TEST_F(Emulator, FaultTruncateCutsTheToolCall) {
    auto a = parse(anthropic(anthropic_question(), {"x-emulator-fault: truncate"}).body);
    EXPECT_EQ(a["stop_reason"], "max_tokens");
    EXPECT_EQ(a["content"][0]["type"], "tool_use");
    EXPECT_EQ(a["usage"]["output_tokens"].GetInt64(), 1024);

    auto o = parse(openai(openai_question(), {"x-emulator-fault: truncate"}).body);
    EXPECT_EQ(o["choices"][0]["finish_reason"], "length");
    const std::string partial =
        o["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].GetString();
    EXPECT_EQ(kWeatherArgs.rfind(partial, 0), 0u) << "a prefix of the full arguments";
    EXPECT_LT(partial.size(), kWeatherArgs.size());

    auto b = parse(bedrock(bedrock_question(), {"x-emulator-fault: truncate"}).body);
    EXPECT_EQ(b["stopReason"], "max_tokens");
}

TEST_F(Emulator, FaultFailFirstFailsNCallsPerRequestIdThenSucceeds) {
    const std::vector<std::string> h = {"x-emulator-fault: fail-first=2",
                                        "x-emulator-request-id: r-1"};
    EXPECT_EQ(anthropic(anthropic_question(), h).status, 529);
    EXPECT_EQ(anthropic(anthropic_question(), h).status, 529);
    EXPECT_EQ(anthropic(anthropic_question(), h).status, 200);
    // Another request id counts on its own; OpenAI's transient failure is a 500.
    EXPECT_EQ(
        openai(openai_question(), {"x-emulator-fault: fail-first=1", "x-emulator-request-id: r-2"})
            .status,
        500);
    EXPECT_EQ(
        openai(openai_question(), {"x-emulator-fault: fail-first=1", "x-emulator-request-id: r-2"})
            .status,
        200);
    // A status can be chosen.
    auto r = bedrock(bedrock_question(),
                     {"x-emulator-fault: fail-first=1:429", "x-emulator-request-id: r-3"});
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.headers.at("retry-after"), "1");
}

TEST_F(Emulator, UnknownFaultIsABadRequest) {
    auto r = anthropic(anthropic_question(), {"x-emulator-fault: explode"});
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(anthropic_error(r).find("unknown fault 'explode'"), std::string::npos);
}

// ---- streaming ----------------------------------------------------------------------------

/// Assembles Anthropic SSE into the non-streamed content array and stop reason.
std::string assemble_anthropic(const std::string& body, std::string& stop_reason) {
    const auto events = parse_sse(body);
    EXPECT_FALSE(events.empty());
    EXPECT_EQ(events.front().first, "message_start");
    EXPECT_EQ(events.back().first, "message_stop");
    std::vector<std::string> blocks;
    rapidjson::Document current;
    std::string text, partial_json, thinking, signature;
    for (const auto& [name, data] : events) {
        auto e = parse(data);
        EXPECT_EQ(name, e["type"].GetString());
        if (name == "content_block_start") {
            current.CopyFrom(e["content_block"], current.GetAllocator());
            text = partial_json = thinking = signature = "";
        } else if (name == "content_block_delta") {
            const std::string type = e["delta"]["type"].GetString();
            if (type == "text_delta") text += e["delta"]["text"].GetString();
            if (type == "input_json_delta") partial_json += e["delta"]["partial_json"].GetString();
            if (type == "thinking_delta") thinking += e["delta"]["thinking"].GetString();
            if (type == "signature_delta") signature += e["delta"]["signature"].GetString();
        } else if (name == "content_block_stop") {
            const std::string type = current["type"].GetString();
            // The start block's other members (citations, caller) stay as they were announced.
            if (type == "text") {
                blocks.push_back(R"({"type":"text","text":)" + q(text) + R"(,"citations":)" +
                                 str(current["citations"]) + "}");
            }
            if (type == "thinking") {
                blocks.push_back(R"({"type":"thinking","thinking":)" + q(thinking) +
                                 R"(,"signature":)" + q(signature) + "}");
            }
            if (type == "tool_use") {
                blocks.push_back(R"({"type":"tool_use","id":)" + str(current["id"]) +
                                 R"(,"name":)" + str(current["name"]) + R"(,"input":)" +
                                 str(parse(partial_json)) + R"(,"caller":)" +
                                 str(current["caller"]) + "}");
            }
        } else if (name == "message_delta") {
            stop_reason = e["delta"]["stop_reason"].GetString();
        }
    }
    std::string out = "[";
    for (std::size_t i = 0; i < blocks.size(); ++i) out += (i ? "," : "") + blocks[i];
    return out + "]";
}

TEST_F(Emulator, AnthropicStreamAssemblesToTheNonStreamedReply) {
    const std::string thinking = R"(,"thinking":{"type":"enabled","budget_tokens":512})";
    for (const std::string& body :
         {anthropic_question(), anthropic_after_tool("Sunny\nx", false),
          anthropic_body("[" + user_text("Think first, then answer.") + "]", thinking)}) {
        auto plain = parse(anthropic(body).body);
        std::string streamed_body = body;
        streamed_body.insert(streamed_body.size() - 1, R"(,"stream":true)");
        const auto r = anthropic(streamed_body);
        EXPECT_EQ(r.headers.at("content-type").rfind("text/event-stream", 0), 0u);
        std::string stop;
        EXPECT_EQ(assemble_anthropic(r.body, stop), str(plain["content"]));
        EXPECT_EQ(stop, plain["stop_reason"].GetString());
    }
}

TEST_F(Emulator, OpenAiStreamAssemblesToTheNonStreamedReply) {
    for (const std::string& body : {openai_question(), openai_after_tool("Rain")}) {
        auto plain = parse(openai(body).body);
        std::string streamed_body = body;
        streamed_body.insert(streamed_body.size() - 1,
                             R"(,"stream":true,"stream_options":{"include_usage":true})");
        const auto events = parse_sse(openai(streamed_body).body);
        ASSERT_GE(events.size(), 3u);
        EXPECT_EQ(events.back().second, "[DONE]");
        std::string content, arguments, finish, name;
        bool usage_seen = false;
        for (std::size_t i = 0; i + 1 < events.size(); ++i) {
            auto c = parse(events[i].second);
            EXPECT_EQ(c["object"], "chat.completion.chunk");
            if (c["choices"].Empty()) {
                usage_seen = true;
                EXPECT_EQ(c["usage"]["prompt_tokens"], plain["usage"]["prompt_tokens"]);
                continue;
            }
            const auto& delta = c["choices"][0]["delta"];
            if (delta.HasMember("content") && delta["content"].IsString())
                content += delta["content"].GetString();
            if (delta.HasMember("tool_calls")) {
                const auto& fn = delta["tool_calls"][0]["function"];
                if (fn.HasMember("name")) name = fn["name"].GetString();
                arguments += fn["arguments"].GetString();
            }
            if (c["choices"][0]["finish_reason"].IsString())
                finish = c["choices"][0]["finish_reason"].GetString();
        }
        EXPECT_TRUE(usage_seen);
        const auto& message = plain["choices"][0]["message"];
        EXPECT_EQ(finish, plain["choices"][0]["finish_reason"].GetString());
        if (message.HasMember("tool_calls")) {
            EXPECT_EQ(name, message["tool_calls"][0]["function"]["name"].GetString());
            EXPECT_EQ(arguments, message["tool_calls"][0]["function"]["arguments"].GetString());
        } else {
            EXPECT_EQ(content, message["content"].GetString());
        }
    }
}

TEST_F(Emulator, ConverseStreamIsAwsEventStreamAssemblingToTheNonStreamedReply) {
    for (const std::string& body :
         {bedrock_question(), bedrock_body("[" + bedrock_user("Hello there") + "]")}) {
        auto plain = parse(bedrock(body).body);
        const auto r = bedrock(body, {}, kConverseStream);
        EXPECT_EQ(r.headers.at("content-type"), "application/vnd.amazon.eventstream");
        const auto events = parse_event_stream(r.body);
        ASSERT_GE(events.size(), 4u);
        EXPECT_EQ(events.front().first, "messageStart");
        EXPECT_EQ(events.back().first, "metadata");
        std::string text, input, stop, tool_name;
        for (const auto& [type, payload] : events) {
            auto e = parse(payload);
            if (type == "contentBlockStart") tool_name = e["start"]["toolUse"]["name"].GetString();
            if (type == "contentBlockDelta" && e["delta"].HasMember("text"))
                text += e["delta"]["text"].GetString();
            if (type == "contentBlockDelta" && e["delta"].HasMember("toolUse"))
                input += e["delta"]["toolUse"]["input"].GetString();
            if (type == "messageStop") stop = e["stopReason"].GetString();
        }
        EXPECT_EQ(stop, plain["stopReason"].GetString());
        const auto& block = plain["output"]["message"]["content"][0];
        if (block.HasMember("toolUse")) {
            EXPECT_EQ(tool_name, block["toolUse"]["name"].GetString());
            EXPECT_EQ(str(parse(input)), str(block["toolUse"]["input"]));
        } else {
            EXPECT_EQ(text, block["text"].GetString());
        }
    }
}

TEST_F(Emulator, StatsCountRequestsPerRoute) {
    anthropic(anthropic_question());
    openai(openai_question());
    bedrock(bedrock_question());
    bedrock(bedrock_question(), {}, kConverseStream);
    auto s = parse(emu_->get("/stats").body);
    EXPECT_EQ(s["requests"]["anthropic"].GetInt64(), 1);
    EXPECT_EQ(s["requests"]["openai"].GetInt64(), 1);
    EXPECT_EQ(s["requests"]["bedrock"].GetInt64(), 1);
    EXPECT_EQ(s["requests"]["bedrock_stream"].GetInt64(), 1);
    EXPECT_EQ(s["streams"].GetInt64(), 1);
    EXPECT_EQ(emu_->get("/nothing").status, 404);
}

// ---- the fixtures are valid wire requests -------------------------------------------------

// ---- what the official SDKs send and expect ----------------------------------------------

TEST_F(Emulator, AnthropicAcceptsTheBearerKeyAndTheDatedVersionsTheSdkSends) {
    // channel.102: the SDKs from 1.0 on send the key as a Bearer token and a newer version.
    auto r = emu_->post("/v1/messages", anthropic_question(),
                        {"authorization: Bearer sk-ant-test", "anthropic-version: 2026-10-21"});
    EXPECT_EQ(r.status, 200) << r.body;
    r = emu_->post("/v1/messages", anthropic_question(),
                   {"authorization: Basic abc", "anthropic-version: 2023-06-01"});
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(parse(r.body)["error"]["type"], "authentication_error");
    r = emu_->post("/v1/messages", anthropic_question(),
                   {"x-api-key: k", "anthropic-version: latest"});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(anthropic_error(r),
              "anthropic-version: invalid version 'latest'; expected a date such as 2023-06-01");
}

TEST_F(Emulator, ConverseAcceptsABedrockApiKeyAsBearer) {
    // channel.103: Bedrock API keys are sent unsigned as `Authorization: Bearer KEY`.
    auto r = emu_->post(kConverse, bedrock_question(), {"authorization: Bearer ABSKbedrock-key"});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(parse(r.body)["stopReason"], "tool_use");
    r = emu_->post(kConverseStream, bedrock_question(), {"authorization: Bearer ABSKbedrock-key"});
    EXPECT_EQ(r.status, 200);
    r = emu_->post(kConverse, bedrock_question(), {"authorization: Basic abc"});
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.headers.at("x-amzn-errortype"), "IncompleteSignatureException");
}

TEST_F(Emulator, EveryProviderAnswerCarriesItsRequestIdHeader) {
    // channel.104: success and error answers alike, a new id for each call.
    const auto a1 = anthropic(anthropic_question());
    const auto a2 = anthropic(anthropic_question(), {"x-emulator-fault: 429"});
    ASSERT_EQ(a1.headers.count("request-id"), 1u);
    ASSERT_EQ(a2.headers.count("request-id"), 1u);
    EXPECT_EQ(a1.headers.at("request-id").rfind("req_emu_", 0), 0u);
    EXPECT_NE(a1.headers.at("request-id"), a2.headers.at("request-id"));
    const auto o1 = openai(openai_question());
    const auto o2 = openai(openai_orphan());
    ASSERT_EQ(o2.status, 400);
    ASSERT_EQ(o1.headers.count("x-request-id"), 1u);
    ASSERT_EQ(o2.headers.count("x-request-id"), 1u);
    EXPECT_NE(o1.headers.at("x-request-id"), o2.headers.at("x-request-id"));
    const auto b1 = bedrock(bedrock_question());
    const auto b2 = bedrock(bedrock_question(), {"x-emulator-fault: 500"}, kConverseStream);
    ASSERT_EQ(b1.headers.count("x-amzn-requestid"), 1u);
    ASSERT_EQ(b2.headers.count("x-amzn-requestid"), 1u);
    EXPECT_EQ(b1.headers.at("x-amzn-requestid").size(), 36u);  // a UUID
    EXPECT_NE(b1.headers.at("x-amzn-requestid"), b2.headers.at("x-amzn-requestid"));
}

/// The body of a gzip-encoded answer, inflated (empty when it is not gzip).
std::string gunzip(const std::string& in) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return {};
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    std::string out;
    char buf[16384];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

TEST_F(Emulator, AnswersUncompressedOrGzipNeverBrotli) {
    // channel.106: a client that offers brotli gets the answer uncompressed, or gzip when it
    // offers gzip too, so a benchmark over HTTP measures the client and not a brotli encoder.
    const auto br_only = anthropic(anthropic_question(), {"accept-encoding: br"});
    ASSERT_EQ(br_only.status, 200);
    EXPECT_EQ(br_only.headers.count("content-encoding"), 0u);
    EXPECT_TRUE(parse(br_only.body).IsObject());
    const auto any = openai(openai_question(), {"accept-encoding: gzip, deflate, br"});
    ASSERT_EQ(any.status, 200);
    ASSERT_EQ(any.headers.count("content-encoding"), 1u);
    EXPECT_EQ(any.headers.at("content-encoding"), "gzip");
    EXPECT_TRUE(parse(gunzip(any.body)).IsObject());
    const auto none = bedrock(bedrock_question());
    ASSERT_EQ(none.status, 200);
    EXPECT_EQ(none.headers.count("content-encoding"), 0u);
}

TEST_F(Emulator, AnthropicSplitsCacheCreationByTtl) {
    // caching.101: a 1-hour breakpoint on the system prompt, a 5-minute one on the last turn.
    const std::string system = R"(,"system":[{"type":"text","text":)" +
                               q(long_text(6000, "orders")) +
                               R"(,"cache_control":{"type":"ephemeral","ttl":"1h"}}])";
    auto only_1h =
        parse(anthropic(anthropic_body("[" + user_text("Question 1") + "]", system)).body);
    const auto& u1 = only_1h["usage"];
    EXPECT_GE(u1["cache_creation_input_tokens"].GetInt64(), 1024);
    EXPECT_EQ(u1["cache_creation"]["ephemeral_1h_input_tokens"].GetInt64(),
              u1["cache_creation_input_tokens"].GetInt64());
    EXPECT_EQ(u1["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(), 0);

    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    auto both =
        parse(anthropic(anthropic_body("[" + user_text("Question 1", true) + "]", system)).body);
    const auto& u2 = both["usage"];
    EXPECT_EQ(u2["cache_creation"]["ephemeral_1h_input_tokens"].GetInt64(),
              u1["cache_creation_input_tokens"].GetInt64());
    EXPECT_EQ(u2["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(),
              u2["cache_creation_input_tokens"].GetInt64() -
                  u1["cache_creation_input_tokens"].GetInt64());
    EXPECT_GT(u2["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(), 0);

    // Read back on the next call: nothing is created, at either TTL.
    auto again =
        parse(anthropic(anthropic_body("[" + user_text("Question 1", true) + "]", system)).body);
    EXPECT_EQ(again["usage"]["cache_read_input_tokens"].GetInt64(),
              u2["cache_creation_input_tokens"].GetInt64());
    EXPECT_EQ(again["usage"]["cache_creation"]["ephemeral_1h_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(again["usage"]["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(), 0);
}

TEST_F(Emulator, AnthropicMessageDeltaCarriesTheCumulativeUsage) {
    const std::string body = anthropic_growing(1);
    auto plain = parse(anthropic(body).body);
    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    std::string streamed = body;
    streamed.insert(streamed.size() - 1, R"(,"stream":true)");
    const auto events = parse_sse(anthropic(streamed).body);
    int deltas = 0;
    for (const auto& [name, data] : events) {
        if (name != "message_delta") continue;
        ++deltas;
        auto e = parse(data);
        for (const char* field : {"input_tokens", "cache_creation_input_tokens",
                                  "cache_read_input_tokens", "output_tokens"}) {
            EXPECT_EQ(e["usage"][field].GetInt64(), plain["usage"][field].GetInt64()) << field;
        }
    }
    EXPECT_EQ(deltas, 1);
    EXPECT_GT(plain["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
}

TEST_F(Emulator, StopSequencesEndTheTextWithEachProvidersStopReason) {
    // channel.101: the answer is "This is the emulator's answer to: ..."; it stops before "answer".
    const std::string kept = "This is the emulator's ";
    const std::string a_body = anthropic_body("[" + user_text("Stop early") + "]",
                                              R"(,"stop_sequences":["zzz","answer","emulator"])");
    auto a = parse(anthropic(a_body).body);
    EXPECT_EQ(a["stop_reason"], "stop_sequence");
    EXPECT_EQ(a["stop_sequence"], "emulator");  // the earliest in the text wins
    EXPECT_EQ(a["content"][0]["text"], "This is the ");
    std::string a_stream = a_body;
    a_stream.insert(a_stream.size() - 1, R"(,"stream":true)");
    std::string stop;
    EXPECT_EQ(assemble_anthropic(anthropic(a_stream).body, stop),
              R"([{"type":"text","text":"This is the ","citations":null}])");
    EXPECT_EQ(stop, "stop_sequence");
    // Not found: the answer is whole and ends as usual.
    auto whole = parse(anthropic(anthropic_body("[" + user_text("Stop early") + "]",
                                                R"(,"stop_sequences":["zzz"])"))
                           .body);
    EXPECT_EQ(whole["stop_reason"], "end_turn");
    EXPECT_TRUE(whole["stop_sequence"].IsNull());
    // The output limit before the stop sequence: max_tokens, no stop_sequence.
    auto cut = parse(anthropic(R"({"model":"claude-emu","max_tokens":2,"stop_sequences":["Stop"],)"
                               R"("messages":[{"role":"user","content":"Stop early"}]})")
                         .body);
    EXPECT_EQ(cut["stop_reason"], "max_tokens");
    EXPECT_TRUE(cut["stop_sequence"].IsNull());

    auto o = parse(
        openai(openai_body("[" + openai_user("Stop early") + "]", R"(,"stop":"answer")")).body);
    EXPECT_EQ(o["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(o["choices"][0]["message"]["content"], kept);
    auto o_list = parse(
        openai(openai_body("[" + openai_user("Stop early") + "]", R"(,"stop":["zzz","answer"])"))
            .body);
    EXPECT_EQ(o_list["choices"][0]["message"]["content"], kept);

    const std::string b_body =
        R"({"inferenceConfig":{"maxTokens":1024,"stopSequences":["answer"]},"messages":[)" +
        bedrock_user("Stop early") + "]}";
    auto b = parse(bedrock(b_body).body);
    EXPECT_EQ(b["stopReason"], "stop_sequence");
    EXPECT_EQ(b["output"]["message"]["content"][0]["text"], kept);
    std::string b_stop;
    for (const auto& [type, payload] :
         parse_event_stream(bedrock(b_body, {}, kConverseStream).body)) {
        if (type == "messageStop") b_stop = parse(payload)["stopReason"].GetString();
    }
    EXPECT_EQ(b_stop, "stop_sequence");
}

TEST(EmulatorFixtures, AreValidAgainstThePublishedSchemas) {
    // Only the fixtures meant to be well-formed on the wire; the rule-breaking ones (pairing,
    // alternation, blank text, five markers) break rules a schema cannot express.
    EXPECT_EQ(
        validate_wire("anthropic", {anthropic_question(), anthropic_after_tool("Sunny", false),
                                    anthropic_growing(2), anthropic_orphan_result(),
                                    anthropic_unanswered_use(), anthropic_five_marks()}),
        "");
    EXPECT_EQ(validate_wire("openai", {openai_question(), openai_after_tool("Rain"), openai_long(2),
                                       openai_unanswered(), openai_orphan()}),
              "");
    EXPECT_EQ(
        validate_wire("bedrock", {bedrock_question(), bedrock_growing(2), bedrock_orphan_result(),
                                  bedrock_unanswered(), bedrock_five_points()}),
        "");
}

// ---- the providers' cache rules, hand-computed (caching.103, caching.104) ------------------

/// A user message of `blocks` text blocks "Block 0" ... with cache_control on block `marked`,
/// after a system prompt of exactly `system_bytes` bytes of text (no marker on it).
std::string anthropic_blocks(const std::string& model, std::size_t system_bytes, int blocks,
                             int marked, const std::string& ttl = "") {
    std::string content = "[";
    for (int i = 0; i < blocks; ++i) {
        if (i > 0) content += ",";
        content += R"({"type":"text","text":"Block )" + std::to_string(i) + "\"";
        if (i == marked) {
            content += R"(,"cache_control":{"type":"ephemeral")" +
                       (ttl.empty() ? std::string() : R"(,"ttl":")" + ttl + "\"") + "}";
        }
        content += "}";
    }
    return R"({"model":")" + model + R"(","max_tokens":64,"system":[{"type":"text","text":")" +
           std::string(system_bytes, 'x') + R"("}],"messages":[{"role":"user","content":)" +
           content + "]}]}";
}

/// The tokens of the canonical prefix of anthropic_blocks() through block `last`, computed by
/// hand from the rule of docs/emulator.md: ceil(bytes / 4) of the system block, the role header
/// and the blocks, each as compact JSON without its cache_control.
long long prefix_tokens(std::size_t system_bytes, int last) {
    std::size_t bytes = std::string(R"({"type":"text","text":")").size() + system_bytes +
                        std::string(R"("})").size();
    bytes += std::string(R"({"role":"user"})").size();
    for (int i = 0; i <= last; ++i) {
        bytes +=
            std::string(R"({"type":"text","text":"Block "})").size() + std::to_string(i).size();
    }
    return static_cast<long long>((bytes + 3) / 4);
}

TEST_F(Emulator, TheHandComputedPrefixIsWhatCountTokensSays) {
    EXPECT_EQ(count_tokens(anthropic_blocks("claude-sonnet-4-5", 6000, 3, 2)),
              prefix_tokens(6000, 2));
}

TEST_F(Emulator, AnthropicLooksBackTwentyBlocksFromABreakpointAndNoFurther) {
    // Call 1 writes the prefix through block 0 (system is mark 0, block k is mark k + 1).
    const std::string model = "claude-sonnet-4-5";
    auto first = parse(anthropic(anthropic_blocks(model, 6000, 1, 0)).body);
    ASSERT_EQ(first["usage"]["cache_creation_input_tokens"].GetInt64(), prefix_tokens(6000, 0));

    // A breakpoint on block 20 is 20 blocks after block 0: the lookback finds it.
    auto within = parse(anthropic(anthropic_blocks(model, 6000, 21, 20)).body);
    EXPECT_EQ(within["usage"]["cache_read_input_tokens"].GetInt64(), prefix_tokens(6000, 0));
    EXPECT_EQ(within["usage"]["cache_creation_input_tokens"].GetInt64(),
              prefix_tokens(6000, 20) - prefix_tokens(6000, 0));
    EXPECT_EQ(within["usage"]["input_tokens"].GetInt64(), 0);

    // On a clean cache, a breakpoint on block 21 is 21 blocks away: nothing is read.
    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    anthropic(anthropic_blocks(model, 6000, 1, 0));
    auto beyond = parse(anthropic(anthropic_blocks(model, 6000, 22, 21)).body);
    EXPECT_EQ(beyond["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(beyond["usage"]["cache_creation_input_tokens"].GetInt64(), prefix_tokens(6000, 21));
}

TEST_F(Emulator, TheMinimumCacheablePrefixIsTheModelsDocumentedOne) {
    // 12,000 bytes of system: 3,000 + a few tokens, above 1,024 and 2,048, below 4,096.
    const long long tokens = prefix_tokens(12000, 0);
    ASSERT_GT(tokens, 2048);
    ASSERT_LT(tokens, 4096);
    const std::vector<std::pair<std::string, bool>> models = {
        {"claude-sonnet-4-20250514", true},    // 1,024
        {"claude-3-5-haiku-20241022", true},   // 2,048
        {"claude-haiku-4-5-20251001", false},  // 4,096
        {"claude-opus-4-5", false}};           // 4,096
    for (const auto& [model, cached] : models) {
        auto u = parse(anthropic(anthropic_blocks(model, 12000, 1, 0)).body);
        EXPECT_EQ(u["usage"]["cache_creation_input_tokens"].GetInt64(), cached ? tokens : 0)
            << model;
        EXPECT_EQ(u["usage"]["input_tokens"].GetInt64(), cached ? 0 : tokens) << model;
    }
    // 6,000 bytes (1,500 tokens): enough for Sonnet, short of Claude 3.5 Haiku's 2,048.
    auto sonnet = parse(anthropic(anthropic_blocks("claude-sonnet-4-5", 6000, 1, 0)).body);
    EXPECT_EQ(sonnet["usage"]["cache_creation_input_tokens"].GetInt64(), prefix_tokens(6000, 0));
    auto haiku = parse(anthropic(anthropic_blocks("claude-3-5-haiku", 6000, 1, 0)).body);
    EXPECT_EQ(haiku["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(haiku["usage"]["input_tokens"].GetInt64(), prefix_tokens(6000, 0));
}

TEST_F(Emulator, ConverseAppliesTheModelsMinimumPerCachePoint) {
    // bedrock_growing's cached prefix is about 1,500 tokens: written for a 1,024 model, not for
    // Claude Haiku 4.5 on Bedrock (4,096).
    auto small = parse(bedrock(bedrock_growing(1)).body);
    EXPECT_GT(small["usage"]["cacheWriteInputTokens"].GetInt64(), 1024);
    auto haiku = parse(bedrock(bedrock_growing(1), {},
                               "/model/global.anthropic.claude-haiku-4-5-20251001-v1:0/converse")
                           .body);
    EXPECT_EQ(haiku["usage"]["cacheWriteInputTokens"].GetInt64(), 0);
    EXPECT_EQ(haiku["usage"]["cacheReadInputTokens"].GetInt64(), 0);
    EXPECT_EQ(haiku["usage"]["inputTokens"].GetInt64(),
              small["usage"]["cacheWriteInputTokens"].GetInt64() +
                  small["usage"]["inputTokens"].GetInt64());
}

TEST_F(Emulator, AFiveMinuteEntryLivesFiveMinutesFromItsLastRead) {
    const std::string body = anthropic_blocks("claude-sonnet-4-5", 6000, 1, 0);
    const long long tokens = prefix_tokens(6000, 0);
    anthropic(body);  // written at t = 0, expires at 300
    EXPECT_EQ(advance_clock(*emu_, 299), 299);
    auto read = parse(anthropic(body).body);  // read at 299: expires at 599
    EXPECT_EQ(read["usage"]["cache_read_input_tokens"].GetInt64(), tokens);
    EXPECT_EQ(advance_clock(*emu_, 299), 598);
    EXPECT_EQ(parse(anthropic(body).body)["usage"]["cache_read_input_tokens"].GetInt64(), tokens);
    EXPECT_EQ(advance_clock(*emu_, 300), 898);  // exactly the TTL after the last read
    auto expired = parse(anthropic(body).body);
    EXPECT_EQ(expired["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(expired["usage"]["cache_creation_input_tokens"].GetInt64(), tokens);
    EXPECT_EQ(expired["usage"]["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(), tokens);
}

TEST_F(Emulator, AOneHourHeadOutlivesAFiveMinuteTail) {
    // The system prompt carries a 1-hour breakpoint, the last block a 5-minute one.
    const std::string system_1h = R"(,"system":[{"type":"text","text":)" +
                                  q(long_text(6000, "orders")) +
                                  R"(,"cache_control":{"type":"ephemeral","ttl":"1h"}}])";
    const std::string with_tail =
        anthropic_body("[" + user_text("Question 1", true) + "]", system_1h);
    auto first = parse(anthropic(with_tail).body);
    const long long written = first["usage"]["cache_creation_input_tokens"].GetInt64();
    ASSERT_EQ(written, count_tokens(with_tail));
    advance_clock(*emu_, 301);  // the tail expired, the head did not
    auto later = parse(anthropic(with_tail).body);
    const long long head_prefix = later["usage"]["cache_read_input_tokens"].GetInt64();
    EXPECT_GT(head_prefix, 1500);  // the 6,000-byte system prompt
    EXPECT_LT(head_prefix, written);
    EXPECT_EQ(later["usage"]["cache_creation_input_tokens"].GetInt64(), written - head_prefix);
    EXPECT_EQ(later["usage"]["cache_creation"]["ephemeral_5m_input_tokens"].GetInt64(),
              written - head_prefix);
    EXPECT_EQ(later["usage"]["cache_creation"]["ephemeral_1h_input_tokens"].GetInt64(), 0);
    advance_clock(*emu_, 3600);  // an hour after its last read, the head is gone too
    auto gone = parse(anthropic(with_tail).body);
    EXPECT_EQ(gone["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(gone["usage"]["cache_creation"]["ephemeral_1h_input_tokens"].GetInt64(), head_prefix);
}

TEST_F(Emulator, AnthropicTopLevelCacheControlMarksTheLastBlock) {
    // caching.104: the request-level marker caches through the last block of the last message.
    const std::string body =
        anthropic_body("[" + user_text("Question 1") + "]",
                       R"(,"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":)" +
                           q(long_text(6000, "orders")) + "}]");
    auto first = parse(anthropic(body).body);
    EXPECT_EQ(first["usage"]["cache_creation_input_tokens"].GetInt64(), count_tokens(body));
    auto second = parse(anthropic(body).body);
    EXPECT_EQ(second["usage"]["cache_read_input_tokens"].GetInt64(), count_tokens(body));
}

TEST_F(Emulator, TheClockRefusesWhatIsNotANonNegativeNumberOfSeconds) {
    for (const std::string body :
         {"{}", R"({"advance_seconds":-1})", R"({"advance_seconds":"5"})", "not json"}) {
        auto r = emu_->post("/clock", body, {});
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_NE(r.body.find("POST /clock"), std::string::npos) << r.body;
    }
    EXPECT_EQ(advance_clock(*emu_, 0), 0);
}

}  // namespace
}  // namespace nucleo::emulator_test
