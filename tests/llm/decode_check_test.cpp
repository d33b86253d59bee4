// The core checks what a plugin's decode returns (answers.106, answers.107): a test plugin hands
// the emulator's canned answer back verbatim as its normalized response, so every malformed
// document below reaches ProviderClient. Each is a protocol error naming the plugin and the
// field, and the conversation keeps what it had before the call. Invalid UTF-8 in an answer's
// text is replaced with U+FFFD, through the fixture and through the real Anthropic dialect.
#include <gtest/gtest.h>

#include <string>

#include "agent_support.hpp"
#include "canned_reply.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

ModelSpec model() {
    ModelSpec m = agent_test::model_for("anthropic");
    m.provider = "passthrough";
    return m;
}

class DecodeCheck : public ::testing::Test {
  protected:
    ProviderClient passthrough() const {
        ProviderConfig config;
        config.name = "passthrough";
        config.plugin = "passthrough";
        config.base_url = "http://127.0.0.1:" + std::to_string(emulator_.port());
        config.credentials.api_key = "sk-test";
        TransportOptions transport;
        transport.retry.max_attempts = 1;
        return {config, PluginLoader({PASSTHROUGH_PLUGIN_DIR}).load("passthrough").make_provider(),
                transport};
    }

    static ConversationContext conversation() { return agent_test::asked("c-check"); }

    /// The protocol error a call answered with `response` raises; the conversation is unchanged.
    std::string refusal(const std::string& response) {
        ConversationContext c = conversation();
        ProviderClient client = passthrough();
        CallOptions o;
        o.extra_headers = canned::reply(response);
        try {
            client.call(c, model(), o);
            ADD_FAILURE() << "accepted: " << response;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kProtocol) << e.what();
            EXPECT_NE(std::string(e.what()).find("plugin 'passthrough'"), std::string::npos)
                << e.what();
            EXPECT_EQ(c.messages().size(), 1U);
            return e.what();
        }
        return {};
    }

    emulator_test::EmulatorProcess emulator_;
};

constexpr const char* kBlocks = R"("blocks":[{"type":"text","text":"Order 42 shipped."}])";
constexpr const char* kUsage =
    R"("usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0})";

std::string response(const std::string& blocks, const std::string& stop, const std::string& usage) {
    std::string out = R"({"schema_version":1,"model":"m",)" + blocks;
    if (!stop.empty()) out += "," + stop;
    if (!usage.empty()) out += "," + usage;
    return out + "}";
}

TEST_F(DecodeCheck, AWellFormedResponseIsAccepted) {
    ConversationContext c = conversation();
    ProviderClient client = passthrough();
    CallOptions o;
    o.extra_headers = canned::reply(response(kBlocks, R"("stop_reason":"end_turn")", kUsage));
    const LLMResponse r = client.call(c, model(), o);
    EXPECT_EQ(r.usage.input_tokens, 10);
    EXPECT_EQ(c.messages().size(), 2U);
}

TEST_F(DecodeCheck, ACountSpelledAsAStringIsAProtocolError) {
    const std::string what = refusal(response(
        kBlocks, R"("stop_reason":"end_turn")",
        R"("usage":{"input_tokens":"134","output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0})"));
    EXPECT_NE(what.find("usage.input_tokens"), std::string::npos) << what;
}

TEST_F(DecodeCheck, ANegativeCountIsAProtocolError) {
    const std::string what = refusal(response(
        kBlocks, R"("stop_reason":"end_turn")",
        R"("usage":{"input_tokens":10,"output_tokens":-5,"cache_read_tokens":0,"cache_write_tokens":0})"));
    EXPECT_NE(what.find("usage.output_tokens"), std::string::npos) << what;
}

TEST_F(DecodeCheck, AMisspelledCountIsAProtocolError) {
    const std::string what = refusal(response(
        kBlocks, R"("stop_reason":"end_turn")",
        R"("usage":{"input_tokens":10,"output_token":5,"cache_read_tokens":0,"cache_write_tokens":0})"));
    EXPECT_NE(what.find("usage.output_tokens"), std::string::npos) << what;
}

TEST_F(DecodeCheck, AMissingUsageIsAProtocolError) {
    const std::string what = refusal(response(kBlocks, R"("stop_reason":"end_turn")", ""));
    EXPECT_NE(what.find("usage"), std::string::npos) << what;
}

TEST_F(DecodeCheck, AMissingStopReasonIsAProtocolError) {
    const std::string what = refusal(response(kBlocks, "", kUsage));
    EXPECT_NE(what.find("stop_reason"), std::string::npos) << what;
}

TEST_F(DecodeCheck, AnUnknownStopReasonIsAProtocolError) {
    const std::string what = refusal(response(kBlocks, R"("stop_reason":"finished")", kUsage));
    EXPECT_NE(what.find("\"finished\""), std::string::npos) << what;
}

TEST_F(DecodeCheck, ABlockOffItsShapeIsAProtocolError) {
    const std::string what =
        refusal(response(R"("blocks":[{"type":"text"}])", R"("stop_reason":"end_turn")", kUsage));
    EXPECT_NE(what.find("blocks[0]"), std::string::npos) << what;
}

TEST_F(DecodeCheck, InvalidUtf8IsReplacedNeverStoredRaw) {
    ConversationContext c = conversation();
    ProviderClient client = passthrough();
    CallOptions o;
    o.extra_headers =
        canned::reply(response(R"("blocks":[{"type":"text","text":"caf)" "\xff" R"( au lait"}])",
                               R"("stop_reason":"end_turn")", kUsage));
    const LLMResponse r = client.call(c, model(), o);
    ASSERT_EQ(c.messages().size(), 2U);
    const auto* text = c.messages().back().blocks.at(0).get_if<TextBlock>();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->text, "caf\xEF\xBF\xBD au lait");
    EXPECT_EQ(r.message.blocks.size(), 1U);
}

TEST_F(DecodeCheck, WellFormedSequencesStayAndOverlongOrSurrogateBytesAreReplacedOneByOne) {
    ConversationContext c = conversation();
    ProviderClient client = passthrough();
    CallOptions o;
    // A 4-byte emoji stays; an overlong '/' (C0 AF) and an encoded surrogate (ED A0 80) are not
    // UTF-8: each of their bytes becomes one U+FFFD.
    o.extra_headers = canned::reply(
        response(R"("blocks":[{"type":"text","text":"ok )" "\xF0\x9F\x98\x80 \xC0\xAF \xED\xA0\x80" R"("}])",
                 R"("stop_reason":"end_turn")", kUsage));
    client.call(c, model(), o);
    const auto* text = c.messages().back().blocks.at(0).get_if<TextBlock>();
    ASSERT_NE(text, nullptr);
    const std::string r = "\xEF\xBF\xBD";
    EXPECT_EQ(text->text, "ok \xF0\x9F\x98\x80 " + r + r + " " + r + r + r);
}

TEST_F(DecodeCheck, InvalidUtf8ThroughARealDialectIsReplaced) {
    ProviderClient client = agent_test::client_for(emulator_, "anthropic");
    ConversationContext c = conversation();
    CallOptions o;
    o.extra_headers = canned::reply(
        R"({"id":"msg_u","type":"message","role":"assistant","model":"m",)"
        R"("content":[{"type":"text","text":"na)" "\xc3" R"(ve"}],"stop_reason":"end_turn",)"
        R"("usage":{"input_tokens":10,"output_tokens":3}})");
    client.call(c, agent_test::model_for("anthropic"), o);
    const auto* text = c.messages().back().blocks.at(0).get_if<TextBlock>();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->text, "na\xEF\xBF\xBDve");
}

}  // namespace
}  // namespace nucleo
