// The agent loop at the edges of an answer, against the emulator: Converse text-mode tool calling
// end to end (tools.101), an empty or refused answer ending the turn without a stored turn
// (answers.102), and a client and a model of different providers refused at build (answers.108).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent_support.hpp"
#include "canned_reply.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::fresh;
using agent_test::LookupInput;
using agent_test::model_for;
using agent_test::requests_seen;

/// A Converse answer whose text is `text`, ending with end_turn.
std::string converse_text(const std::string& text) {
    std::string escaped;
    for (char ch : text) {
        if (ch == '"' || ch == '\\') escaped += '\\';
        escaped += ch;
    }
    return R"({"output":{"message":{"role":"assistant","content":[{"text":")" + escaped +
           R"("}]}},"stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":30}})";
}

TEST(TextModeTools, AConverseTextCallRunsOnceUnderOneIdAndTheNextRequestIsValid) {
    emulator_test::EmulatorProcess emulator;
    ProviderClient client = client_for(emulator, "bedrock");
    ModelSpec model = model_for("bedrock");
    model.native_tools = false;  // the catalog's text-mode entry: definitions travel as text
    AgentOptions options;
    options.objective = "You look orders up.";
    // The first call is answered with a text-mode tool call; every later one by the emulator,
    // which checks each request as Converse would.
    options.extra_headers = canned::reply(converse_text(
        R"({"tool_calls":[{"name":"lookup_order","input":{"order_id":"A42"}}]})"));
    options.extra_headers.emplace_back("x-emulator-reply-first", "1");
    options.extra_headers.emplace_back("x-emulator-request-id", "text-mode-turn");
    Agent agent(client, model, options);
    std::vector<std::string> looked_up;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    looked_up.push_back(in.order_id);
                                    return "order " + in.order_id + " shipped";
                                });
    std::vector<std::string> ids;
    TurnCallbacks cb;
    cb.on_tool_call_started = [&](const ToolCallEvent& e) { ids.push_back(e.id); };

    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order A42", cb);

    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.rounds, 2);
    EXPECT_EQ(looked_up, std::vector<std::string>{"A42"});
    ASSERT_EQ(ids.size(), 1U) << "one call, once";
    EXPECT_EQ(ids[0].rfind("call_lookup_order_0_t", 0), 0U) << ids[0];
    // The answer holds the model's text and exactly one call under that id; the result answers
    // it; the second request (with both) was accepted by the emulator.
    ASSERT_EQ(c.messages().size(), 4U);
    std::vector<std::string> uses;
    for (const auto& b : c.messages()[1].blocks)
        if (const auto* u = b.get_if<ToolUseBlock>()) uses.push_back(u->id);
    EXPECT_EQ(uses, ids);
    const auto* result = c.messages()[2].blocks.at(0).get_if<ToolResultBlock>();
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(result->tool_use_id, ids[0]);
    EXPECT_FALSE(result->is_error);
    EXPECT_EQ(r.round_reports[0].stop_reason, "tool_use");
    EXPECT_EQ(requests_seen(emulator), 2);

    // A second turn carries the call, its result and the answer: still a valid request, and a
    // new call in it would get a new id (the turn is part of it).
    const TurnReport next = agent.run_turn(c, "And order B7?");
    EXPECT_EQ(next.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(requests_seen(emulator), 3);
}

TEST(EmptyAnswers, ARefusalEndsTheTurnWithItsStopReasonAndNothingStored) {
    emulator_test::EmulatorProcess emulator;
    ProviderClient client = client_for(emulator, "anthropic");
    AgentOptions options;
    options.objective = "You look orders up.";
    options.extra_headers = canned::reply(
        R"({"id":"msg_r","type":"message","role":"assistant","model":"claude-sonnet-5-5",)"
        R"("content":[],"stop_reason":"refusal","stop_sequence":null,)"
        R"("usage":{"input_tokens":30,"output_tokens":0}})");
    options.extra_headers.emplace_back("x-emulator-reply-first", "1");
    options.extra_headers.emplace_back("x-emulator-request-id", "refusal-turn");
    Agent agent(client, model_for("anthropic"), options);
    std::vector<std::string> stops;
    TurnCallbacks cb;
    cb.on_round_end = [&](const RoundReport& rr) { stops.push_back(rr.stop_reason); };

    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order A42", cb);
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_TRUE(r.answer.empty());
    EXPECT_TRUE(r.answer_message_id.empty());
    EXPECT_EQ(stops, std::vector<std::string>{"refusal"});
    ASSERT_FALSE(r.round_reports.empty());
    EXPECT_FALSE(r.round_reports[0].answered);
    ASSERT_EQ(c.messages().size(), 1U) << "only the user's message";

    // The next turn: two user messages in a row, merged by the dialect, accepted by the emulator.
    const TurnReport next = agent.run_turn(c, "Please look again.");
    EXPECT_FALSE(next.answer.empty());
    EXPECT_EQ(c.messages().size(), 3U);
}

TEST(ProviderMismatch, AModelOfAnotherProviderIsRefusedWhenTheAgentIsBuilt) {
    emulator_test::EmulatorProcess emulator;
    ProviderClient openai = client_for(emulator, "openai");
    try {
        Agent agent(openai, model_for("anthropic"));
        FAIL() << "an Anthropic model through the OpenAI client must be refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        const std::string what = e.what();
        EXPECT_NE(what.find("'anthropic-test'"), std::string::npos) << what;
        EXPECT_NE(what.find("provider 'anthropic'"), std::string::npos) << what;
        EXPECT_NE(what.find("provider 'openai'"), std::string::npos) << what;
    }
    EXPECT_EQ(requests_seen(emulator), 0);
    // A call through the client refuses it too, before any request.
    ConversationContext c = fresh();
    c.add_message(Message::outgoing_text("Where is order A42"));
    EXPECT_THROW(openai.call(c, model_for("anthropic")), Error);
    EXPECT_EQ(requests_seen(emulator), 0);
    EXPECT_EQ(c.messages().size(), 1U);
    EXPECT_NO_THROW(openai.check_model(model_for("openai")));
}

}  // namespace
}  // namespace nucleo
