// Streaming in the core (answers.2): assembled into the same IncomingMessage a non-streamed
// call yields, for the three dialects against the emulator, with the deltas delivered while the
// body arrives (ABI 1.2 decode_event) and concatenating to the answer.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "agent_support.hpp"
#include "llm/stream_framing.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::model_for;

ConversationContext question(bool with_tool) {
    ConversationContext c("c-stream", "alice");
    c.put_main_objective("task", "You answer questions about orders.");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    if (with_tool) c.add_tool(tool_definition<agent_test::LookupInput>("lookup_order", "Looks an order up."));
    c.add_message(Message::outgoing_text("Please tell me a long story about where order 42 went today?"));
    return c;
}

struct Seen {
    std::string text;
    std::string tool_input;
    std::string tool_id;
    std::string tool_name;
    int text_deltas = 0;
    int usage_events = 0;
};

StreamCallbacks recorder(Seen& seen) {
    StreamCallbacks cb;
    cb.on_text_delta = [&seen](std::size_t, std::string_view t) {
        seen.text += t;
        ++seen.text_deltas;
    };
    cb.on_tool_call_start = [&seen](std::size_t, std::string_view id, std::string_view name) {
        seen.tool_id = id;
        seen.tool_name = name;
    };
    cb.on_tool_input_delta = [&seen](std::size_t, std::string_view j) { seen.tool_input += j; };
    cb.on_usage = [&seen](const Usage&) { ++seen.usage_events; };
    return cb;
}

class Streaming : public ::testing::TestWithParam<const char*> {
  protected:
    nucleo::emulator_test::EmulatorProcess emulator_;
};

TEST_P(Streaming, AssembledEqualsNonStreamed) {
    const std::string dialect = GetParam();
    const ModelSpec model = model_for(dialect);
    for (const bool with_tool : {false, true}) {
        SCOPED_TRACE(with_tool ? "tool call" : "text answer");
        ProviderClient pc = client_for(emulator_, dialect);
        ASSERT_TRUE(pc.capabilities().streaming);
        ConversationContext plain = question(with_tool);
        ConversationContext streamed = question(with_tool);
        const LLMResponse a = pc.call(plain, model);

        Seen seen;
        const StreamCallbacks cb = recorder(seen);
        CallOptions options;
        options.stream = &cb;
        // Asked for: a body flag (Anthropic, OpenAI) or the /converse-stream route (Bedrock).
        const HttpRequest asked = pc.build_request(streamed, model, options);
        EXPECT_NE((asked.url + asked.body.str()).find("stream"), std::string::npos);
        const LLMResponse b = pc.call(streamed, model, options);

        // The same message, block for block (ids included: the emulator derives them from the
        // conversation, which is the same).
        EXPECT_EQ(a.message.blocks, b.message.blocks);
        EXPECT_EQ(a.stop_reason, b.stop_reason);
        EXPECT_EQ(a.usage.output_tokens, b.usage.output_tokens);
        // And the deltas are that message, in pieces.
        std::string text;
        for (const auto& block : b.message.blocks) {
            if (const auto* t = block.get_if<TextBlock>()) text += t->text;
            if (const auto* u = block.get_if<ToolUseBlock>()) {
                EXPECT_EQ(seen.tool_id, u->id);
                EXPECT_EQ(seen.tool_name, "lookup_order");
                // Input arrives as JSON text in pieces; compare what it says, not its spacing.
                EXPECT_EQ(schema::from_json<agent_test::LookupInput>(seen.tool_input).order_id,
                          schema::from_json<agent_test::LookupInput>(u->input_json).order_id);
            }
        }
        EXPECT_EQ(seen.text, text);
        if (!with_tool) {
            EXPECT_GT(seen.text_deltas, 1) << "the answer arrived in one piece: not streamed";
        }
        EXPECT_GT(seen.usage_events, 0);
    }
}

TEST_P(Streaming, AThrowingCallbackFailsTheCallAndKeepsNothing) {
    // The deltas are delivered from inside the transfer; a host callback that throws must not
    // cross libcurl's C frames: the call fails with the host's own exception, nothing appended.
    ProviderClient pc = client_for(emulator_, GetParam());
    ConversationContext c = question(false);
    StreamCallbacks cb;
    int calls = 0;
    cb.on_text_delta = [&calls](std::size_t, std::string_view) {
        ++calls;
        throw std::runtime_error("the display failed");
    };
    CallOptions options;
    options.stream = &cb;
    EXPECT_THROW(pc.call(c, model_for(GetParam()), options), std::runtime_error);
    EXPECT_EQ(calls, 1);  // no delta after the failure
    EXPECT_EQ(c.messages().size(), 1U);
}

INSTANTIATE_TEST_SUITE_P(ThreeDialects, Streaming, ::testing::Values("anthropic", "openai", "bedrock"));

TEST(StreamFraming, SseEventsSurviveAnyCut) {
    const std::string body =
        "event: a\r\ndata: {\"x\":1}\r\n\r\n: keep-alive\n\nevent: b\ndata: line1\ndata: line2\n\n"
        "data: [DONE]\n\n";
    // Every cut of the body into two chunks gives the same three events.
    for (std::size_t cut = 0; cut <= body.size(); ++cut) {
        internal::StreamFramer framer(internal::StreamFraming::kSse);
        std::vector<std::pair<std::string, std::string>> events;
        const auto on = [&](std::string_view n, std::string_view d) { events.emplace_back(n, d); };
        framer.feed(std::string_view(body).substr(0, cut), on);
        framer.feed(std::string_view(body).substr(cut), on);
        ASSERT_EQ(events.size(), 3U) << "cut at " << cut;
        EXPECT_EQ(events[0], (std::pair<std::string, std::string>{"a", "{\"x\":1}"}));
        EXPECT_EQ(events[1], (std::pair<std::string, std::string>{"b", "line1\nline2"}));
        EXPECT_EQ(events[2], (std::pair<std::string, std::string>{"", "[DONE]"}));
    }
}

std::string aws_message(const std::string& event_type, const std::string& payload) {
    std::string headers;
    const std::string name = ":event-type";
    headers += static_cast<char>(name.size());
    headers += name;
    headers += static_cast<char>(7);
    headers += static_cast<char>(event_type.size() >> 8U);
    headers += static_cast<char>(event_type.size() & 0xFFU);
    headers += event_type;
    const std::uint32_t total = static_cast<std::uint32_t>(12 + headers.size() + payload.size() + 4);
    std::string out;
    for (const std::uint32_t v : {total, static_cast<std::uint32_t>(headers.size()), 0U}) {
        for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFFU);
    }
    return out + headers + payload + std::string(4, '\0');
}

TEST(StreamFraming, AwsEventStreamMessagesSurviveAnyCut) {
    const std::string body = aws_message("contentBlockDelta", R"({"delta":{"text":"hi"}})") +
                             aws_message("metadata", R"({"usage":{}})");
    for (std::size_t cut = 0; cut <= body.size(); ++cut) {
        internal::StreamFramer framer(internal::StreamFraming::kAwsEventStream);
        std::vector<std::pair<std::string, std::string>> events;
        const auto on = [&](std::string_view n, std::string_view d) { events.emplace_back(n, d); };
        framer.feed(std::string_view(body).substr(0, cut), on);
        framer.feed(std::string_view(body).substr(cut), on);
        ASSERT_EQ(events.size(), 2U) << "cut at " << cut;
        EXPECT_EQ(events[0].first, "contentBlockDelta");
        EXPECT_EQ(events[0].second, R"({"delta":{"text":"hi"}})");
        EXPECT_EQ(events[1].first, "metadata");
    }
}

TEST(StreamFraming, ACorruptAwsFrameStopsTheDeltasWithoutReadingPastIt) {
    internal::StreamFramer framer(internal::StreamFraming::kAwsEventStream);
    int events = 0;
    // A total length smaller than the smallest message: nothing after it can be trusted.
    framer.feed(std::string("\0\0\0\x05\0\0\0\0\0\0\0\0", 12) + aws_message("metadata", "{}"),
                [&](std::string_view, std::string_view) { ++events; });
    EXPECT_EQ(events, 0);
}

}  // namespace
}  // namespace nucleo
