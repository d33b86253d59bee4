// The output budget chain (budget.1-8).
#include <gtest/gtest.h>

#include "nucleo/budget.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

ModelSpec sonnet() {
    ModelSpec m;
    m.id = "claude-sonnet-5-5";
    m.max_output_tokens = 64000;
    m.output_budget = {{OutputSize::kShort, 1024}, {OutputSize::kMedium, 4096}, {OutputSize::kLong, 16000}};
    m.thinking_budget = {{Depth::kImmediate, 0}, {Depth::kStandard, 8000}, {Depth::kDeep, 60000}};
    return m;
}

ConversationContext with_question(std::optional<std::int64_t> requested = std::nullopt) {
    ConversationContext c("c-1", "alice");
    Message m = Message::outgoing_text("Where is order 42?");
    m.requested_output_tokens = requested;
    c.add_message(m);
    return c;
}

TEST(OutputBudget, Layer1TheLastOutgoingMessagesRequestWins) {
    // "1. The last outgoing message's requested_output_tokens (the per-call override ...)"
    ConversationContext c = with_question(777);
    c.set_output(OutputSize::kLong);
    EXPECT_EQ(resolve_output_budget(c, sonnet(), {.output = OutputSize::kShort}), 777);
}

TEST(OutputBudget, Layer2TheConversationsRungThroughTheCatalog) {
    // "2. The conversation's OutputDeclaration (the thinker's rung or count), translated through
    // the resolved entry (ModelSpec.getOutputBudget(rung))"
    ConversationContext c = with_question();
    c.set_output(OutputSize::kMedium);
    EXPECT_EQ(resolve_output_budget(c, sonnet(), {.output = OutputSize::kShort}), 4096);
    c.set_output(std::int64_t{2500});
    EXPECT_EQ(resolve_output_budget(c, sonnet()), 2500);
}

TEST(OutputBudget, Layer3TheBindingsDeclaration) {
    // "3. The wired binding's declaration"
    ConversationContext c = with_question();
    EXPECT_EQ(resolve_output_budget(c, sonnet(), {.output = OutputSize::kShort}), 1024);
}

TEST(OutputBudget, NothingDeclaredIsAnUncorrectableErrorNamingTheSeat) {
    // "Nothing declaring anywhere throws UncorrectableRuntimeLLMException: the seat never said how
    // much it answers, and that is a bug to surface, never a number to invent."
    ConversationContext c = with_question();
    try {
        (void)resolve_output_budget(c, sonnet());
        FAIL() << "no declaration must not resolve";
    } catch (const UncorrectableLLMException& e) {
        EXPECT_NE(std::string(e.what()).find("'c-1'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("declares no output budget"), std::string::npos) << e.what();
    }
}

TEST(OutputBudget, CappedAtTheModelsCeiling) {
    // "The result is capped at the model's max_output_tokens here rather than in each client"
    ConversationContext c = with_question(1'000'000);
    EXPECT_EQ(resolve_output_budget(c, sonnet()), 64000);
}

TEST(OutputReserve, AddsReasoningHeadroomAndClampsAtTheCeiling) {
    // "outputReserve(spec) is the whole reserve: the resolved output plus the reasoning headroom
    // the call books ..., clamped at the ceiling exactly as the Anthropic wire clamps max_tokens."
    ConversationContext c = with_question();
    c.set_output(OutputSize::kMedium);
    c.set_depth(Depth::kStandard);
    EXPECT_EQ(output_reserve(c, sonnet()), 4096 + 8000);
    c.set_depth(Depth::kImmediate);
    EXPECT_EQ(output_reserve(c, sonnet()), 4096);
    c.set_depth(Depth::kDeep);
    EXPECT_EQ(output_reserve(c, sonnet()), 64000);  // 4096 + 60000 clamped
}

TEST(ResolveDepth, ConversationThenBindingThenRefusal) {
    // "The same chain resolves depth (resolveDepth(): the conversation's, else the binding's, else
    // the refusal)."
    ConversationContext c = with_question();
    EXPECT_EQ(resolve_depth(c, {.depth = Depth::kDeep}), Depth::kDeep);
    c.set_depth(Depth::kStandard);
    EXPECT_EQ(resolve_depth(c, {.depth = Depth::kDeep}), Depth::kStandard);
    ConversationContext bare = with_question();
    EXPECT_THROW((void)resolve_depth(bare), UncorrectableLLMException);
}

TEST(Truncation, RaisesTheSentMessagesBudgetToTheCeilingAndSignalsARetry) {
    // "On truncation ... the abstract client template bumps the SENT message's
    // requested_output_tokens to the model's max_output_tokens and throws
    // OutputTruncationRetryException carrying the previous and the new budget."
    ConversationContext c = with_question();
    c.set_output(OutputSize::kShort);
    std::int64_t previous = 0;
    std::int64_t raised = 0;
    try {
        escalate_truncation(c, sonnet(), 1024);
    } catch (const OutputTruncationRetryException& e) {
        previous = e.previous_budget();
        raised = e.new_budget();
    }
    EXPECT_EQ(previous, 1024);
    EXPECT_EQ(raised, 64000);
    EXPECT_EQ(c.messages().back().requested_output_tokens, 64000);
    EXPECT_EQ(resolve_output_budget(c, sonnet()), 64000);
}

TEST(Truncation, AtTheCeilingIsUncorrectable) {
    // "a call issued at the ceiling has nowhere to grow ... it surfaces as
    // UncorrectableRuntimeLLMException instead."
    ConversationContext c = with_question(64000);
    EXPECT_THROW(escalate_truncation(c, sonnet(), 64000), UncorrectableRuntimeLLMException);
    EXPECT_EQ(c.messages().back().requested_output_tokens, 64000);
}

TEST(Truncation, RetryExceptionIsNotUncorrectable) {
    ConversationContext c = with_question();
    bool retry_signalled = false;
    try {
        escalate_truncation(c, sonnet(), 100);
    } catch (const UncorrectableLLMException&) {
        FAIL() << "a truncation below the ceiling must be retryable";
    } catch (const OutputTruncationRetryException& e) {
        retry_signalled = e.kind() == ErrorKind::kOutputTruncated;
    }
    EXPECT_TRUE(retry_signalled);
}

}  // namespace
}  // namespace nucleo
