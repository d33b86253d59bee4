// Answers at the edges, through ProviderClient, each real dialect plugin and the real
// nucleo-emulator, which returns a canned answer (header x-emulator-reply) after checking the
// request like any call: empty and refused answers (answers.101-103), context-window stops
// (answers.104), the truncation backstop (budget.101), every billed call on the record
// (answers.105), and the next call of the conversation still valid on the emulator afterwards.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent_support.hpp"
#include "canned_reply.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::model_for;
using agent_test::requests_seen;

/// One canned answer in each dialect's own wire shape: `text` (empty: no content at all), the
/// provider's own stop reason, and the usage.
std::string canned(const std::string& dialect, const std::string& text, const std::string& stop,
                   int input_tokens, int output_tokens) {
    const std::string n_in = std::to_string(input_tokens);
    const std::string n_out = std::to_string(output_tokens);
    if (dialect == "anthropic") {
        const std::string content =
            text.empty() ? "[]" : R"([{"type":"text","text":")" + text + R"("}])";
        return R"({"id":"msg_canned","type":"message","role":"assistant","model":"claude-sonnet-5-5",)"
               R"("content":)" + content + R"(,"stop_reason":")" + stop +
               R"(","stop_sequence":null,"usage":{"input_tokens":)" + n_in +
               R"(,"output_tokens":)" + n_out + "}}";
    }
    if (dialect == "openai") {
        const std::string content = text.empty() ? "null" : "\"" + text + "\"";
        return R"({"id":"chatcmpl-canned","object":"chat.completion","model":"gpt-4o","choices":[)"
               R"({"index":0,"message":{"role":"assistant","content":)" + content +
               R"(},"finish_reason":")" + stop + R"("}],"usage":{"prompt_tokens":)" + n_in +
               R"(,"completion_tokens":)" + n_out + "}}";
    }
    const std::string content = text.empty() ? "[]" : R"([{"text":")" + text + R"("}])";
    return R"({"output":{"message":{"role":"assistant","content":)" + content +
           R"(}},"stopReason":")" + stop + R"(","usage":{"inputTokens":)" + n_in +
           R"(,"outputTokens":)" + n_out + "}}";
}

class Answers : public ::testing::TestWithParam<std::string> {
  protected:
    std::string dialect() const { return GetParam(); }

    static ConversationContext conversation() { return agent_test::asked("c-answers"); }

    static CallOptions canned_reply(const std::string& body) {
        CallOptions o;
        o.extra_headers = canned::reply(body);
        return o;
    }

    /// The conversation goes on: a user message and a normal call, which the emulator checks
    /// like the provider would (an empty assistant turn would be refused there).
    void next_call_is_valid(ConversationContext& c) {
        c.add_message(Message::outgoing_text("Please try again."));
        const LLMResponse next = client_.call(c, model_for(dialect()));
        EXPECT_EQ(next.stop_reason, "end_turn");
        EXPECT_TRUE(next.appended);
        EXPECT_TRUE(c.messages().back().incoming());
    }

    emulator_test::EmulatorProcess emulator_;
    ProviderClient client_ = client_for(emulator_, GetParam());
};

TEST_P(Answers, AnEmptyAnswerIsAnAnswerAndIsNotStored) {
    ConversationContext c = conversation();
    const std::string stop = dialect() == "openai" ? "stop" : "end_turn";
    const LLMResponse r =
        client_.call(c, model_for(dialect()), canned_reply(canned(dialect(), "", stop, 40, 1)));
    EXPECT_EQ(r.stop_reason, "end_turn");
    EXPECT_FALSE(r.appended);
    EXPECT_TRUE(r.message.blocks.empty());
    EXPECT_EQ(r.usage.output_tokens, 1);
    ASSERT_EQ(c.messages().size(), 1U) << "an empty answer must not become a stored turn";
    next_call_is_valid(c);
}

TEST_P(Answers, ARefusedOrFilteredAnswerReportsItsStopReason) {
    ConversationContext c = conversation();
    const std::string stop = dialect() == "anthropic" ? "refusal"
                             : dialect() == "openai"  ? "content_filter"
                                                      : "content_filtered";
    const LLMResponse r =
        client_.call(c, model_for(dialect()), canned_reply(canned(dialect(), "", stop, 40, 0)));
    EXPECT_EQ(r.stop_reason, dialect() == "anthropic" ? "refusal" : "content_filter");
    EXPECT_FALSE(r.appended);
    ASSERT_EQ(c.messages().size(), 1U);
    next_call_is_valid(c);
}

TEST_P(Answers, ARefusalWithTextIsStored) {
    ConversationContext c = conversation();
    const std::string stop = dialect() == "anthropic" ? "refusal"
                             : dialect() == "openai"  ? "content_filter"
                                                      : "guardrail_intervened";
    const LLMResponse r = client_.call(
        c, model_for(dialect()),
        canned_reply(canned(dialect(), "I cannot help with that.", stop, 40, 7)));
    EXPECT_TRUE(r.appended);
    ASSERT_EQ(c.messages().size(), 2U);
    EXPECT_EQ(c.messages().back().id, r.message.id);
    next_call_is_valid(c);
}

/// The dialects whose answers have a context-window stop reason (Chat Completions refuses such a
/// request with an HTTP 400 instead).
class WindowStops : public Answers {};

TEST_P(WindowStops, AContextWindowStopIsAContextOverflowNeverAnEscalation) {
    ConversationContext c = conversation();
    try {
        client_.call(c, model_for(dialect()),
                     canned_reply(canned(dialect(), "The long answer was", "model_context_window_exceeded",
                                         199000, 1000)));
        FAIL() << "a context-window stop must raise ContextOverflowException";
    } catch (const ContextOverflowException& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kContextOverflow);
        EXPECT_NE(std::string(e.what()).find("context window"), std::string::npos) << e.what();
        // answers.109: the stopped call was billed, so it is on the error's record.
        ASSERT_EQ(e.billed_calls().size(), 1U);
        EXPECT_EQ(e.billed_calls()[0].status, CallStatus::kContextWindowExceeded);
        EXPECT_EQ(e.billed_calls()[0].usage.output_tokens, 1000);
        EXPECT_GT(e.billed_cost(), 0);
    }
    EXPECT_EQ(requests_seen(emulator_), 1) << "no escalated retry";
    ASSERT_EQ(c.messages().size(), 1U);
    EXPECT_FALSE(c.messages().back().requested_output_tokens.has_value())
        << "the budget is not escalated";
    next_call_is_valid(c);
}

TEST_P(Answers, OutputAtTheRequestedCeilingIsTruncationAndEveryCallIsBilled) {
    // The reserve is 512 (kShort); the model's ceiling 1024. The canned answer says end_turn with
    // 512 output tokens: truncation by the backstop, so the budget rises to 1024 and the call is
    // made once more, where the same 512 tokens are below the ceiling and the answer is kept.
    ConversationContext c = conversation();
    const std::string stop = dialect() == "openai" ? "stop" : "end_turn";
    const LLMResponse r = client_.call(
        c, model_for(dialect(), 1024), canned_reply(canned(dialect(), "A full answer", stop, 100, 512)));
    EXPECT_TRUE(r.escalated);
    EXPECT_EQ(requests_seen(emulator_), 2);
    ASSERT_EQ(r.calls.size(), 2U);
    EXPECT_EQ(r.calls[0].status, CallStatus::kTruncated);
    EXPECT_EQ(r.calls[0].max_tokens, 512);
    EXPECT_EQ(r.calls[1].status, CallStatus::kAnswered);
    EXPECT_EQ(r.calls[1].max_tokens, 1024);
    EXPECT_EQ(r.usage.output_tokens, r.calls[0].usage.output_tokens + r.calls[1].usage.output_tokens);
    EXPECT_EQ(r.usage.input_tokens, r.calls[0].usage.input_tokens + r.calls[1].usage.input_tokens);
    EXPECT_DOUBLE_EQ(r.cost, r.calls[0].cost + r.calls[1].cost);
    EXPECT_GT(r.calls[0].cost, 0);
    ASSERT_EQ(c.messages().size(), 2U);
    next_call_is_valid(c);
}

TEST_P(Answers, OutputAtTheModelsOwnCeilingIsNeverRetried) {
    ConversationContext c = conversation();
    const std::string stop = dialect() == "openai" ? "stop" : "end_turn";
    EXPECT_THROW(client_.call(c, model_for(dialect(), 512),
                              canned_reply(canned(dialect(), "A full answer", stop, 100, 512))),
                 UncorrectableRuntimeLLMException);
    EXPECT_EQ(requests_seen(emulator_), 1);
    ASSERT_EQ(c.messages().size(), 1U);
}

/// The canned `body` for the first call only; every later call of the same request id fails
/// with the emulator's 500 (the canned answer is served before faults are applied).
CallOptions canned_then_server_error(const std::string& body, const std::string& request_id) {
    CallOptions o;
    o.extra_headers = canned::reply(body);
    o.extra_headers.emplace_back("x-emulator-reply-first", "1");
    o.extra_headers.emplace_back("x-emulator-request-id", request_id);
    o.extra_headers.emplace_back("x-emulator-fault", "500");
    return o;
}

TEST_P(Answers, ARetryThatFailsStillReportsTheTruncatedBilledCall) {
    // The first call is truncated (the provider bills it), its escalated retry is refused with a
    // server error: the error carries the first call's usage and cost (answers.109).
    ConversationContext c = conversation();
    const ModelSpec model = model_for(dialect(), 1024);
    const std::string stop = dialect() == "openai" ? "length" : "max_tokens";
    try {
        client_.call(c, model,
                     canned_then_server_error(canned(dialect(), "A cut", stop, 100, 512),
                                              "retry-fails-" + dialect()));
        FAIL() << "the retry's server error must reach the caller";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kOverloaded) << e.what();
        ASSERT_EQ(e.billed_calls().size(), 1U) << e.what();
        const CallAttempt& first = e.billed_calls()[0];
        EXPECT_EQ(first.status, CallStatus::kTruncated);
        EXPECT_EQ(first.max_tokens, 512);
        EXPECT_EQ(first.usage.input_tokens, 100);
        EXPECT_EQ(first.usage.output_tokens, 512);
        EXPECT_DOUBLE_EQ(first.cost, model.cost(100, 512, 0, 0));
        EXPECT_GT(first.cost, 0);
        EXPECT_EQ(e.billed_usage().output_tokens, 512);
        EXPECT_DOUBLE_EQ(e.billed_cost(), first.cost);
    }
    EXPECT_EQ(requests_seen(emulator_), 2);
    ASSERT_EQ(c.messages().size(), 1U) << "neither answer joins the conversation";
}

TEST_P(Answers, ASecondTruncationAtTheCeilingReportsBothBilledCalls) {
    ConversationContext c = conversation();
    const ModelSpec model = model_for(dialect(), 1024);
    const std::string stop = dialect() == "openai" ? "length" : "max_tokens";
    try {
        client_.call(c, model, canned_reply(canned(dialect(), "A cut", stop, 100, 300)));
        FAIL() << "a truncation at the ceiling must raise UncorrectableLLMException";
    } catch (const UncorrectableLLMException& e) {
        ASSERT_EQ(e.billed_calls().size(), 2U) << e.what();
        EXPECT_EQ(e.billed_calls()[0].status, CallStatus::kTruncated);
        EXPECT_EQ(e.billed_calls()[0].max_tokens, 512);
        EXPECT_EQ(e.billed_calls()[1].status, CallStatus::kTruncated);
        EXPECT_EQ(e.billed_calls()[1].max_tokens, 1024);
        EXPECT_EQ(e.billed_usage().output_tokens, 600);
        EXPECT_EQ(e.billed_usage().input_tokens, 200);
        EXPECT_DOUBLE_EQ(e.billed_cost(), 2 * model.cost(100, 300, 0, 0));
    }
    EXPECT_EQ(requests_seen(emulator_), 2);
}

TEST_P(Answers, AnErrorBeforeAnyBilledCallCarriesNoCalls) {
    ConversationContext c = conversation();
    CallOptions o;
    o.extra_headers = {{"x-emulator-fault", "500"}};
    try {
        client_.call(c, model_for(dialect()), o);
        FAIL() << "the server error must reach the caller";
    } catch (const Error& e) {
        EXPECT_TRUE(e.billed_calls().empty());
        EXPECT_DOUBLE_EQ(e.billed_cost(), 0);
    }
}

TEST_P(Answers, AnAgentTurnThatFailsAfterABilledCallCountsItInTheTotals) {
    const ModelSpec model = model_for(dialect(), 1024);
    AgentOptions options;
    const std::string stop = dialect() == "openai" ? "length" : "max_tokens";
    options.extra_headers = canned_then_server_error(canned(dialect(), "A cut", stop, 100, 512),
                                                     "agent-retry-fails-" + dialect())
                                .extra_headers;
    Agent agent(client_, model, options);
    ConversationContext c = agent_test::fresh("c-agent-billed");
    EXPECT_THROW(agent.run_turn(c, "Where is order 42?"), Error);
    const UsageTotals totals = agent.totals();
    EXPECT_EQ(totals.usage.input_tokens, 100);
    EXPECT_EQ(totals.usage.output_tokens, 512);
    EXPECT_DOUBLE_EQ(totals.cost, model.cost(100, 512, 0, 0));
}

TEST_P(Answers, ANormalAnswerListsOneBilledCall) {
    ConversationContext c = conversation();
    const LLMResponse r = client_.call(c, model_for(dialect()));
    ASSERT_EQ(r.calls.size(), 1U);
    EXPECT_EQ(r.calls[0].status, CallStatus::kAnswered);
    EXPECT_EQ(r.calls[0].usage.output_tokens, r.usage.output_tokens);
    EXPECT_DOUBLE_EQ(r.calls[0].cost, r.cost);
    EXPECT_EQ(r.calls[0].stop_reason, "end_turn");
}

INSTANTIATE_TEST_SUITE_P(Dialects, Answers, ::testing::Values("anthropic", "openai", "bedrock"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Dialects, WindowStops, ::testing::Values("anthropic", "bedrock"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nucleo
