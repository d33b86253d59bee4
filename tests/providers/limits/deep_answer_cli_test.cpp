// `nucleo send` against a hostile loopback provider whose answer carries a tool input nested
// 10^5 levels deep (limits.120), for the anthropic and openai dialects: the call fails with a
// protocol error naming the depth limit (exit 1, the provider's fault), prints no document, and
// the process does not crash. The answer is served by a fixed-reply server: the emulator's canned
// answers travel in a request header, which its HTTP server caps far below this size.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"
#include "fixed_reply_server.hpp"

namespace nucleo {
namespace {

constexpr std::size_t kDeep = 100000;

std::string deep_input() {
    std::string out;
    out.reserve(kDeep * 6);
    for (std::size_t i = 0; i < kDeep; ++i) out += "{\"a\":";
    out += "1";
    out.append(kDeep, '}');
    return out;
}

std::string escaped(const std::string& json) {
    std::string out;
    for (char c : json) {
        if (c == '"') out += '\\';
        out += c;
    }
    return out;
}

test_support::CliRun send(const std::string& env, const std::string& model) {
    const std::string doc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/minimal.json";
    return test_support::run_command(
        "env " + env + " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " " + NUCLEO_CLI +
        " send --in " + doc + " --model " + model + " --config " + NUCLEO_SOURCE_DIR +
        "/config/nucleo.yaml");
}

TEST(DeepAnswer, AnthropicSendRefusesATenToTheFiveDeepToolInput) {
    test_support::FixedReplyServer server(
        R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[)"
        R"({"type":"tool_use","id":"toolu_1","name":"f","input":)" + deep_input() +
        R"(}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}})");
    const test_support::CliRun r =
        send("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=" + server.url(), "claude-sonnet-5-5");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("nesting deeper than 512 levels (the JSON depth limit)"), std::string::npos)
        << r.err.substr(0, 2000);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(server.requests(), 1);  // a protocol error is not retried
}

TEST(DeepAnswer, OpenAiSendRefusesATenToTheFiveDeepToolArguments) {
    test_support::FixedReplyServer server(
        R"({"id":"c","object":"chat.completion","model":"gpt-4.1","choices":[{"index":0,)"
        R"("message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1",)"
        R"("type":"function","function":{"name":"f","arguments":")" + escaped(deep_input()) +
        R"("}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}})");
    const test_support::CliRun r =
        send("OPENAI_API_KEY=sk-test OPENAI_BASE_URL=" + server.url(), "gpt-4.1");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("nesting deeper than 512 levels (the JSON depth limit)"), std::string::npos)
        << r.err.substr(0, 2000);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(server.requests(), 1);
}

}  // namespace
}  // namespace nucleo
