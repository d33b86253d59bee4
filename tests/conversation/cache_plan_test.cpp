// Cache breakpoints, decided in the core (caching.1-8).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nucleo/conversation.hpp"
#include "test_support.hpp"

namespace nucleo {
namespace {

using ::testing::ElementsAre;

const FixedContentFormatter kCaching(true, true);
const FixedContentFormatter kNoCaching(true, false);

Message cached(std::vector<ContentBlock> blocks, Direction direction = Direction::kOutgoing) {
    Message m;
    m.direction = direction;
    m.blocks = std::move(blocks);
    m.cache = true;
    return m;
}

/// A conversation with an objective and six cached text turns.
ConversationContext six_cached_turns() {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.put_main_objective("style", "s");
    for (int i = 0; i < 6; ++i) {
        ctx.add_message(cached({TextBlock{"turn " + std::to_string(i)}},
                               i % 2 == 0 ? Direction::kOutgoing : Direction::kIncoming));
    }
    return ctx;
}

// caching.2: "Anthropic allows 4 cache breakpoints per request. ... It first spends one breakpoint
// on the system prefix ... Then it walks the prepared turns in order and anchors a breakpoint on
// the first TextBlock or SkillBlock of each turn marked for caching, while breakpoints remain."
TEST(CachePlan, AtMostFourSystemFirstThenOldestMarkedTurns) {
    ConversationContext ctx = six_cached_turns();
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_EQ(p.cache_plan.breakpoints(), 4U);
    // "applied to the last system block, which covers the whole stable prefix"
    EXPECT_EQ(p.cache_plan.system_block, std::optional<std::size_t>(1));
    EXPECT_THAT(p.cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{1, 0}, CacheAnchor{2, 0}));
    EXPECT_TRUE(p.cache_plan.marks(2, 0));
    EXPECT_FALSE(p.cache_plan.marks(3, 0));
}

// caching.8: "setCacheMainObjective(false) turns it off for a conversation whose instructions are
// used only once."
TEST(CachePlan, CacheSystemFalseLeavesAllFourToTheTurns) {
    ConversationContext ctx = six_cached_turns();
    ctx.set_cache_main_objective(false);
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_EQ(p.cache_plan.system_block, std::nullopt);
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{0, 0}, CacheAnchor{1, 0},
                                                       CacheAnchor{2, 0}, CacheAnchor{3, 0}));
}

// caching.6: "the backend supports caching" — a backend without explicit cache control gets no
// marks at all.
TEST(CachePlan, FormatterWithoutCachingPlansNothing) {
    ConversationContext ctx = six_cached_turns();
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNoCaching, false);
    EXPECT_EQ(p.cache_plan.breakpoints(), 0U);
    EXPECT_EQ(p.cache_plan, CachePlan{});
}

// caching.3: "when there are system blocks".
TEST(CachePlan, NoSystemBreakpointWithoutSystemBlocks) {
    ConversationContext ctx;
    ctx.add_message(cached({TextBlock{"q"}}));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_EQ(p.cache_plan.system_block, std::nullopt);
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{0, 0}));
}

// caching.5: "Image, tool and thinking blocks never anchor a breakpoint." A cached turn without a
// text or skill block has no anchor and spends no breakpoint.
TEST(CachePlan, CachedTurnWithoutTextHasNoAnchorAndSpendsNothing) {
    ConversationContext ctx;
    ctx.set_cache_main_objective(false);
    ctx.add_message(cached({ImageBlock{"image/png", "AAAA", ""}}));
    ctx.add_message(cached({ThinkingBlock{"hmm", "sig"}, ToolUseBlock{"t1", "search", "{}"}},
                           Direction::kIncoming));
    ctx.add_message(cached({ToolResultBlock{"t1", {TextBlock{"inner text"}}, false}}));
    ctx.add_message(cached({ImageBlock{"image/png", "AAAA", ""}, TextBlock{"caption"}}));
    ctx.add_message(cached({SkillBlock{"pdf", "How to read PDFs"}}));
    ctx.add_message(cached({TextBlock{"a"}}));
    ctx.add_message(cached({TextBlock{"b"}}));
    ctx.add_message(cached({TextBlock{"c"}}));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{3, 1}, CacheAnchor{4, 0},
                                                       CacheAnchor{5, 0}, CacheAnchor{6, 0}));
}

// caching.102: a blank text block is never sent, so no breakpoint anchors on it: the turn's anchor
// is its first text that is sent, and the system breakpoint falls back to the last system block
// that is sent (a dialect would otherwise refuse the whole call).
TEST(CachePlan, BlankBlocksNeverAnchorAndTheAnchorFallsBackToTheNextSentText) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "Answer about orders.");
    ctx.put_main_objective("late", "   ");
    ctx.add_message(cached({TextBlock{""}, TextBlock{" \n"}, TextBlock{"the question"}}));
    ctx.add_message(cached({TextBlock{"  "}}, Direction::kIncoming));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    ASSERT_EQ(p.system_blocks.size(), 2U);
    EXPECT_EQ(p.cache_plan.system_block, std::optional<std::size_t>(0));
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{0, 2}));
    EXPECT_EQ(p.cache_plan.breakpoints(), 2U);
}

TEST(CachePlan, AnAllBlankSystemTakesNoBreakpoint) {
    ConversationContext ctx;
    ctx.put_main_objective("task", " ");
    ctx.add_message(cached({TextBlock{"q"}}));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_FALSE(p.cache_plan.system_block.has_value());
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{0, 0}));
}

// caching.4: "message.setCache(true) places a mark at that message" — unmarked turns never get one.
TEST(CachePlan, OnlyMarkedTurnsAnchor) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("unmarked"));
    ctx.add_message(cached({TextBlock{"marked"}}, Direction::kIncoming));
    ctx.artifacts().register_artifact("note", "{}");  // the registry turn is never marked
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    // (The artifact tools' guidance joins the head: the system breakpoint is on its last block.)
    EXPECT_EQ(p.cache_plan.system_block, std::optional<std::size_t>(p.system_blocks.size() - 1));
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{1, 0}));
    EXPECT_FALSE(p.turns.back().cache);
}

}  // namespace
}  // namespace nucleo
