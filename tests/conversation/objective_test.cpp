// The objective map and its freeze (conversation.10-16).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nucleo/conversation.hpp"
#include "nucleo/schema.hpp"
#include "test_support.hpp"

namespace nucleo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::keys_of;
using testing::LogCapture;
using testing::text_of;

using testing::kNative;

/// The one error a refused change after the freeze must log: at error level, naming the
/// caller's file:line, what was refused, and a stack trace.
void expect_logged_refusal(const LogCapture& log, int line, const std::string& what) {
    const auto errors = log.errors();
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_THAT(errors[0].message, HasSubstr("objective_test.cpp:" + std::to_string(line)));
    EXPECT_THAT(errors[0].message, HasSubstr(what));
    EXPECT_THAT(errors[0].message, HasSubstr("TestBody"));  // the caller's function
    EXPECT_THAT(errors[0].message, HasSubstr("Stack trace:\n  #0 "));
}

// conversation.11: "put_main_objective replaces its value in place (a re-put keeps the slot's
// original position, so a refresh never reorders the rendered prefix)".
TEST(ObjectiveMap, RePutReplacesInPlaceKeepingPosition) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "first task");
    ctx.put_main_objective("style", "be brief");
    ctx.put_main_objective("task", "second task");
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("task", "style"));
    EXPECT_EQ(text_of(*ctx.objective_slot("task")), "second task");
}

// conversation.11: "A new key adds a slot after the others."
TEST(ObjectiveMap, NewKeyAppends) {
    ConversationContext ctx;
    ctx.put_main_objective("a", "1");
    ctx.put_main_objective("b", "2");
    ctx.put_main_objective("c", "3");
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("a", "b", "c"));
}

// conversation.10: "the values, in insertion order, ARE the system content - keys never reach the
// wire."
TEST(ObjectiveMap, ValuesInOrderAreTheSystemTextAndKeysNeverReachTheWire) {
    ConversationContext ctx;
    ctx.put_main_objective("zz-key", "Answer questions.");
    ctx.put_main_objective("aa-key", "Be brief.");
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(p.system_text(), "Answer questions.\n\nBe brief.");
    EXPECT_THAT(p.system_text(), ::testing::Not(HasSubstr("key")));
}

// conversation.12: "nuke_main_objective empties the map completely, framework slots included".
TEST(ObjectiveMap, NukeEmptiesFrameworkSlotsToo) {
    ConversationContext rendered;
    rendered.put_main_objective("task", "t");
    rendered.add_tool(testing::tool("search"));
    rendered.add_message(
        testing::asking("q", std::make_shared<testing::RecordingHandler>(true, "answer")));
    rendered.prepare_messages_for_llm(kNative, false);
    ConversationContext ctx = ConversationContext::from_parts(rendered.parts());
    ASSERT_NE(ctx.objective_slot(ConversationContext::kLegendSlot), nullptr);
    ASSERT_NE(ctx.objective_slot(ConversationContext::kToolWeightsSlot), nullptr);

    EXPECT_TRUE(ctx.nuke_main_objective());
    EXPECT_TRUE(ctx.main_objective().empty());
}

// conversation.12: "Because these slots derive from what the conversation renders, a nuke does not
// silence them: as long as the contract or the declarations remain, the next render re-places
// them."
TEST(ObjectiveMap, NukeDoesNotSilenceFrameworkSlotsTheNextRenderReplacesThem) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_tool(testing::tool("search"));
    ctx.add_message(
        testing::asking("q", std::make_shared<testing::RecordingHandler>(true, "answer")));
    ctx.nuke_main_objective();
    ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("legend", "toolWeights", "tool:search"));
}

// conversation.14: "after it, a put whose value renders identically to the slot's is a silent no-op
// (refreshes stay free forever)".
TEST(ObjectiveFreeze, IdenticalRePutAfterFreezeIsSilent) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "Answer questions.");
    ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_TRUE(ctx.frozen());
    LogCapture log;
    EXPECT_TRUE(ctx.put_main_objective("task", "Answer questions."));
    EXPECT_TRUE(log.errors().empty());
}

// conversation.14: "anything else - a divergent value, a new key, a nuke - is a loudly logged
// no-op, stack trace included, because it would silently invalidate the cached prefix."
TEST(ObjectiveFreeze, DivergentValueAfterFreezeIsLoggedWithLocationAndStackAndNotApplied) {
    ConversationContext ctx("c-1");
    ctx.put_main_objective("task", "Answer questions.");
    ctx.prepare_messages_for_llm(kNative, false);
    LogCapture log;
    const int line = __LINE__ + 1;
    EXPECT_FALSE(ctx.put_main_objective("task", "Do something else."));
    EXPECT_EQ(text_of(*ctx.objective_slot("task")), "Answer questions.");
    expect_logged_refusal(log, line, "divergent value under objective key 'task'");
    EXPECT_THAT(log.errors().at(0).message, HasSubstr("conversation 'c-1'"));
}

TEST(ObjectiveFreeze, NewKeyAfterFreezeIsLoggedAndNotApplied) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.prepare_messages_for_llm(kNative, false);
    LogCapture log;
    const int line = __LINE__ + 1;
    EXPECT_FALSE(ctx.put_main_objective("extra", "more"));
    EXPECT_EQ(ctx.objective_slot("extra"), nullptr);
    expect_logged_refusal(log, line, "new objective key 'extra'");
}

TEST(ObjectiveFreeze, NukeAfterFreezeIsLoggedAndNotApplied) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.prepare_messages_for_llm(kNative, false);
    LogCapture log;
    const int line = __LINE__ + 1;
    EXPECT_FALSE(ctx.nuke_main_objective());
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("task"));
    expect_logged_refusal(log, line, "nuke of the main objective");
}

// conversation.15: "The head freezes at the instance's first render" — not before it.
TEST(ObjectiveFreeze, NoFreezeBeforeTheFirstRender) {
    ConversationContext ctx;
    LogCapture log;
    ctx.put_main_objective("task", "t");
    ctx.put_main_objective("task", "u");
    ctx.nuke_main_objective();
    ctx.put_main_objective("task", "v");
    EXPECT_FALSE(ctx.frozen());
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("task"));
    EXPECT_TRUE(log.errors().empty());
}

// conversation.15: "The freeze is instance-lifetime and never persists: a restored conversation has
// not rendered, has no warm provider cache to lose, and composes freely until its own first
// render".
TEST(ObjectiveFreeze, RestoredConversationComposesFreelyUntilItsOwnFirstRender) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "old configuration");
    ctx.prepare_messages_for_llm(kNative, false);
    ConversationContext restored = ConversationContext::from_parts(ctx.parts());
    EXPECT_FALSE(restored.frozen());
    LogCapture log;
    EXPECT_TRUE(restored.put_main_objective("task", "current configuration"));
    EXPECT_TRUE(restored.put_main_objective("scope", "project 7"));
    EXPECT_TRUE(log.errors().empty());
    restored.prepare_messages_for_llm(kNative, false);
    EXPECT_TRUE(restored.frozen());
    EXPECT_FALSE(restored.put_main_objective("scope", "project 8"));
    EXPECT_EQ(log.errors().size(), 1U);
}

// conversation.15: "a restored conversation ... which is also how the framework slots of a restored
// conversation self-heal to the current constants."
TEST(ObjectiveFreeze, RestoredFrameworkSlotsSelfHealToTheCurrentText) {
    ConversationParts parts;
    parts.objective.push_back({"task", TextBlock{"t"}});
    parts.objective.push_back({"legend", TextBlock{"an old legend"}});
    parts.objective.push_back({"toolWeights", TextBlock{"old guidance"}});
    parts.objective.push_back({"tool:search", testing::tool("search")});
    parts.tools.push_back({testing::tool("search"), 0});
    parts.messages.push_back(
        testing::asking("q", std::make_shared<testing::RecordingHandler>(true, "")));
    ConversationContext ctx = ConversationContext::from_parts(std::move(parts));
    ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_THAT(keys_of(ctx.main_objective()),
                ElementsAre("task", "legend", "toolWeights", "tool:search"));
    EXPECT_EQ(text_of(*ctx.objective_slot("legend")), schema::notation_legend());
    EXPECT_EQ(text_of(*ctx.objective_slot("toolWeights")), std::string(tool_weight_guidance()));
}

}  // namespace
}  // namespace nucleo
