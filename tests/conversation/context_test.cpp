// The conversation model: messages, ids, declarations, payload-derived facts (conversation.1-7,
// conversation.20-24).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "test_support.hpp"

namespace nucleo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Message with_blocks(std::vector<ContentBlock> blocks, Direction d = Direction::kOutgoing) {
    Message m;
    m.direction = d;
    m.blocks = std::move(blocks);
    return m;
}

TEST(Messages, EmptyIdIsMintedUniquely) {
    ConversationContext ctx;
    Message named = Message::outgoing_text("x");
    named.id = "m2";  // the id the minter would pick next must not collide
    const std::string first = ctx.add_message(Message::outgoing_text("a"));
    ctx.add_message(std::move(named));
    const std::string third = ctx.add_message(Message::incoming_text("b"));
    EXPECT_FALSE(first.empty());
    EXPECT_NE(third, "m2");
    EXPECT_NE(third, first);
    EXPECT_EQ(ctx.find_message(third)->direction, Direction::kIncoming);
}

// conversation.4: "a duplicate message id ... refused with the position named".
TEST(Messages, DuplicateIdIsRefusedNamingItAndItsPosition) {
    ConversationContext ctx;
    Message a = Message::outgoing_text("a");
    a.id = "m-7";
    ctx.add_message(a);
    ctx.add_message(Message::incoming_text("b"));
    try {
        ctx.add_message(a);
        FAIL() << "duplicate accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'m-7'"));
        EXPECT_THAT(e.what(), HasSubstr("position 2"));
        EXPECT_THAT(e.what(), HasSubstr("position 0"));
    }
    EXPECT_EQ(ctx.messages().size(), 2U);
}

// conversation.4: "a tool_result whose tool_use_id appears nowhere: refused with the position
// named, never silently relabelled or dropped".
TEST(Messages, OrphanToolResultIsRefusedNamingTheIdAndPosition) {
    ConversationContext ctx;
    ctx.add_message(Message::outgoing_text("q"));
    try {
        ctx.add_message(with_blocks({ToolResultBlock{"toolu_9", {TextBlock{"x"}}, false}}));
        FAIL() << "orphan accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'toolu_9'"));
        EXPECT_THAT(e.what(), HasSubstr("message 1"));
    }
    ctx.add_message(with_blocks({ToolUseBlock{"toolu_9", "search", "{}"}}, Direction::kIncoming));
    ctx.add_message(with_blocks({ToolResultBlock{"toolu_9", {TextBlock{"x"}}, false}}));
    EXPECT_EQ(ctx.messages().size(), 3U);
}

// budget.7: "the abstract client template bumps the SENT message's requested_output_tokens to
// the model's max_output_tokens".
TEST(Messages, RequestedOutputTokensOfAStoredMessageCanBeBumped) {
    ConversationContext ctx("c-3");
    const std::string id = ctx.add_message(Message::outgoing_text("q"));
    ctx.set_requested_output_tokens(id, 8192);
    EXPECT_EQ(ctx.messages()[0].requested_output_tokens, std::optional<std::int64_t>(8192));
    ctx.set_requested_output_tokens(id, std::nullopt);
    EXPECT_EQ(ctx.messages()[0].requested_output_tokens, std::nullopt);
    try {
        ctx.set_requested_output_tokens("nope", 1);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        EXPECT_THAT(e.what(), HasSubstr("'nope'"));
    }
}

// conversation.22: "carried_inputs() reports the inputs beyond text the outgoing messages carry
// anywhere in the history, an image block as Input::kImages and a file block as Input::kDocuments".
TEST(Declarations, CarriedInputsScanOutgoingHistoryIncludingToolResults) {
    ConversationContext ctx;
    ctx.add_message(Message::outgoing_text("q"));
    EXPECT_TRUE(ctx.carried_inputs().empty());
    // An image the MODEL sent is not an input the request carries.
    ctx.add_message(
        with_blocks({ImageBlock{"image/png", "AAAA", ""}, ToolUseBlock{"t1", "read", "{}"}},
                    Direction::kIncoming));
    EXPECT_TRUE(ctx.carried_inputs().empty());
    ctx.add_message(with_blocks(
        {ToolResultBlock{"t1", {FileBlock{"application/pdf", "a.pdf", "JVBER", ""}}, false}}));
    EXPECT_THAT(ctx.carried_inputs(), ElementsAre(Input::kDocuments));
    ctx.add_message(with_blocks({ImageBlock{"image/jpeg", "", "https://x/y.jpg"}}));
    EXPECT_THAT(ctx.carried_inputs(), ElementsAre(Input::kImages, Input::kDocuments));
}

// conversation.24: "ConversationContext.singleTurn(model, prompt, backstopTokens) builds the
// one-turn task-call form - the model given, one user message, thinking off (IMMEDIATE), the answer
// capped at the backstop".
TEST(Declarations, SingleTurnIsModelOneUserMessageImmediateAndTheBackstop) {
    ModelSpec spec;
    spec.id = "small-model";
    ConversationContext ctx = ConversationContext::single_turn(spec, "Summarize this.", 512);
    EXPECT_EQ(ctx.model().id, "small-model");
    EXPECT_EQ(ctx.depth(), Depth::kImmediate);
    ASSERT_EQ(ctx.messages().size(), 1U);
    const Message& m = ctx.messages()[0];
    EXPECT_TRUE(m.outgoing());
    EXPECT_EQ(testing::text_of(m.blocks.at(0)), "Summarize this.");
    EXPECT_EQ(m.requested_output_tokens, std::optional<std::int64_t>(512));
}

// conversation.21: "A restored conversation comes back UNBOUND ... getModel() before that throws."
TEST(Declarations, ModelBeforeBindingThrows) {
    ConversationContext ctx("c-9");
    EXPECT_FALSE(ctx.has_model());
    try {
        (void)ctx.model();
        FAIL();
    } catch (const UncorrectableLLMException& e) {
        EXPECT_THAT(e.what(), HasSubstr("c-9"));
    }
}

TEST(Declarations, SeatDeclarationsAreOptionalAndHoldARungOrATokenCount) {
    ConversationContext ctx;
    EXPECT_FALSE(ctx.grade() || ctx.depth() || ctx.output());
    ctx.set_grade(Grade::kLarge);
    ctx.set_output(OutputDeclaration{OutputSize::kLong});
    EXPECT_EQ(std::get<OutputSize>(*ctx.output()), OutputSize::kLong);
    ctx.set_output(OutputDeclaration{std::int64_t{1024}});
    EXPECT_EQ(std::get<std::int64_t>(*ctx.output()), 1024);
    EXPECT_EQ(ctx.grade(), Grade::kLarge);
    EXPECT_TRUE(ctx.compactable());
}

// conversation.23: "The first user message is first_user_utterance() - the first
// message a HUMAN sent. ... the utterance scan skips it [an app-authored message]".
TEST(Declarations, FirstUserUtteranceSkipsAppAuthoredAndToolResults) {
    ConversationContext ctx;
    EXPECT_EQ(ctx.first_user_utterance(), std::nullopt);
    Message preamble = Message::outgoing_text("You are a helpful bot.");
    preamble.app_authored = true;
    ctx.add_message(std::move(preamble));
    ctx.add_message(with_blocks({ToolUseBlock{"t1", "x", "{}"}}, Direction::kIncoming));
    ctx.add_message(with_blocks({ToolResultBlock{"t1", {TextBlock{"result"}}, false}}));
    ctx.add_message(Message::incoming_text("model text"));
    EXPECT_EQ(ctx.first_user_utterance(), std::nullopt);
    ctx.add_message(with_blocks({TextBlock{"Where is"}, TextBlock{"order 42?"}}));
    ctx.add_message(Message::outgoing_text("later"));
    EXPECT_EQ(ctx.first_user_utterance(), "Where is\norder 42?");
}

// The conversation document's contract (docs/spec/persistence.md): parts() and from_parts() carry everything the document holds.
TEST(Parts, FromPartsRestoresEverythingButTheFreeze) {
    ConversationContext ctx("c-1", "alice");
    ctx.set_workflow_id("wf");
    ctx.set_prior_spec_id("claude-x");
    ctx.set_compactable(false);
    ctx.set_cache_main_objective(false);
    ctx.set_grade(Grade::kSmall);
    ctx.set_depth(Depth::kDeep);
    ctx.set_output(OutputDeclaration{OutputSize::kShort});
    ctx.put_main_objective("task", "t");
    ctx.add_tool(testing::tool("search"));
    ctx.add_message(Message::outgoing_text("q"));
    ctx.artifacts().register_artifact("doc", "{}");
    ctx.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    ctx.add_tool(testing::tool("late"));

    ConversationContext back = ConversationContext::from_parts(ctx.parts());
    EXPECT_FALSE(back.frozen());
    EXPECT_EQ(back.conversation_id(), "c-1");
    EXPECT_EQ(back.user_id(), "alice");
    EXPECT_EQ(back.workflow_id(), "wf");
    EXPECT_EQ(back.prior_spec_id(), "claude-x");
    EXPECT_FALSE(back.compactable());
    EXPECT_FALSE(back.cache_main_objective());
    EXPECT_EQ(back.grade(), Grade::kSmall);
    EXPECT_EQ(back.depth(), Depth::kDeep);
    EXPECT_EQ(back.output(), ctx.output());
    EXPECT_EQ(back.main_objective(), ctx.main_objective());
    EXPECT_EQ(back.declared_tools(), ctx.declared_tools());
    EXPECT_EQ(back.artifacts(), ctx.artifacts());
    ASSERT_EQ(back.messages().size(), 1U);
    EXPECT_EQ(back.messages()[0].id, ctx.messages()[0].id);
    EXPECT_EQ(back.announced_in("search"), "head");
    EXPECT_THAT(back.pending_tools(), ElementsAre("late"));
}

TEST(Parts, FromPartsRefusesBadInput) {
    ConversationParts dup;
    Message a = Message::outgoing_text("a");
    a.id = "x";
    dup.messages = {a, a};
    EXPECT_THROW(ConversationContext::from_parts(dup), Error);

    ConversationParts beyond;
    beyond.tools.push_back({testing::tool("t"), 3});
    EXPECT_THROW(ConversationContext::from_parts(beyond), Error);
}

}  // namespace
}  // namespace nucleo
