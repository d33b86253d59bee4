// Cache breakpoints, decided in the core (caching.1-8).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "caching/cache_plan.hpp"
#include "conversation/context_internal.hpp"
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
    ctx.artifacts().register_artifact("note", "{}");  // rides no turn: the last one is answered
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    // (The artifact tools' guidance joins the head: the system breakpoint is on its last block.)
    EXPECT_EQ(p.cache_plan.system_block, std::optional<std::size_t>(p.system_blocks.size() - 1));
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{1, 0}));
    EXPECT_EQ(p.turns[0].blocks.size(), 1U) << "an answered turn is never decorated (wire.191)";
}

// ---- the policies (caching.105-107) --------------------------------------------------------

CacheOptions policy(CachePolicy p) {
    CacheOptions o;
    o.policy = p;
    return o;
}

/// An agent's tool loop: the question, then three rounds of tool_use / tool_result, the last
/// result followed by the model's text answer and a follow-up question.
ConversationContext tool_loop() {
    ConversationContext ctx;
    ctx.put_main_objective("task", "answer from the documents");
    ctx.add_message(Message::outgoing_text("Find the refund rule"));
    for (int i = 1; i <= 3; ++i) {
        const std::string id = "t" + std::to_string(i);
        Message call;
        call.direction = Direction::kIncoming;
        call.blocks = {ThinkingBlock{"look", "sig"}, ToolUseBlock{id, "search", "{}"}};
        ctx.add_message(std::move(call));
        Message result;
        result.direction = Direction::kOutgoing;
        result.blocks = {ToolResultBlock{id, {TextBlock{"result " + std::to_string(i)}}, false}};
        ctx.add_message(std::move(result));
    }
    return ctx;
}

/// Every policy on every fixture: at most 4, never on an image, file or thinking block, never
/// on the artifact registry turn.
void expect_rules_kept(const PreparedConversation& p) {
    EXPECT_LE(p.cache_plan.breakpoints(), CachePlan::kMaxBreakpoints);
    for (const CacheAnchor& a : p.cache_plan.turn_anchors) {
        ASSERT_LT(a.turn, p.turns.size());
        ASSERT_LT(a.block, p.turns[a.turn].blocks.size());
        const ContentBlock& b = p.turns[a.turn].blocks[a.block];
        EXPECT_FALSE(b.is<ImageBlock>() || b.is<FileBlock>() || b.is<ThinkingBlock>() ||
                     b.is<RedactedThinkingBlock>())
            << "turn " << a.turn << " block " << a.block;
        EXPECT_FALSE(p.turns[a.turn].message_id.empty()) << "the registry turn is anchored";
    }
}

TEST(CachePolicy, NamesRoundTripAndUnknownNamesAreRefused) {
    for (const CachePolicy p :
         {CachePolicy::kMarkedTurns, CachePolicy::kSliding, CachePolicy::kAutomatic}) {
        EXPECT_EQ(parse_cache_policy(to_string(p)), p);
    }
    EXPECT_STREQ(to_string(CachePolicy::kMarkedTurns), "seed");
    EXPECT_EQ(parse_cache_policy("Sliding"), std::nullopt);
    EXPECT_EQ(parse_cache_policy(""), std::nullopt);
}

// caching.105: the default policy is the marked-turns loop, whatever the options around it say.
TEST(CachePolicy, TheDefaultPlanIsTheMarkedTurnsLoopExactly) {
    for (ConversationContext (*fixture)() : {&six_cached_turns, &tool_loop}) {
        ConversationContext ctx = fixture();
        ConversationContext copy = fixture();
        const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
        EXPECT_EQ(p.cache_plan,
                  caching::plan_cache_breakpoints(p.system_blocks, p.turns, true, p.cache_system));
        const PreparedConversation q =
            copy.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kMarkedTurns));
        EXPECT_EQ(q.cache_plan, p.cache_plan);
        expect_rules_kept(p);
    }
}

// caching.105: the tail is covered: the last turn, then the earlier user turns, newest first.
TEST(CachePolicy, SlidingFollowsTheTail) {
    ConversationContext ctx = six_cached_turns();
    const PreparedConversation p =
        ctx.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kSliding));
    EXPECT_EQ(p.cache_plan.system_block, std::optional<std::size_t>(1));
    EXPECT_THAT(p.cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{2, 0}, CacheAnchor{4, 0}, CacheAnchor{5, 0}));
    expect_rules_kept(p);
}

// caching.105: tool results anchor, thinking and tool_use turns of the model are passed over
// for the older breakpoints, and the messages' cache marks do not matter.
TEST(CachePolicy, SlidingAnchorsToolResultsOfAnUnmarkedToolLoop) {
    ConversationContext ctx = tool_loop();
    const PreparedConversation p =
        ctx.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kSliding));
    // Turns: 0 question, 1/3/5 thinking + tool_use, 2/4/6 tool results.
    EXPECT_THAT(p.cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{2, 0}, CacheAnchor{4, 0}, CacheAnchor{6, 0}));
    expect_rules_kept(p);

    // The next call adds a round: every breakpoint moves with the tail, and the newest of the
    // previous call (turn 6) is one of this call's, so its prefix is read back exactly.
    Message call;
    call.direction = Direction::kIncoming;
    call.blocks = {ToolUseBlock{"t4", "read", "{}"}};
    ctx.add_message(std::move(call));
    Message result;
    result.direction = Direction::kOutgoing;
    result.blocks = {ToolResultBlock{"t4", {TextBlock{"a long page"}}, false}};
    ctx.add_message(std::move(result));
    const PreparedConversation next =
        ctx.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kSliding));
    EXPECT_THAT(next.cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{4, 0}, CacheAnchor{6, 0}, CacheAnchor{8, 0}));
}

// caching.105: without a system breakpoint all four go to the tail; an image-only last turn
// and a trailing assistant thinking block are never anchors.
TEST(CachePolicy, SlidingSkipsImagesAndThinkingAndUsesAllFourWithoutSystem) {
    ConversationContext ctx = six_cached_turns();
    ctx.set_cache_main_objective(false);
    ctx.add_message(cached({ImageBlock{"image/png", "AAAA", ""}}));
    const PreparedConversation p =
        ctx.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kSliding));
    EXPECT_EQ(p.cache_plan.system_block, std::nullopt);
    EXPECT_THAT(p.cache_plan.turn_anchors, ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 0},
                                                       CacheAnchor{4, 0}, CacheAnchor{5, 0}));
    expect_rules_kept(p);
}

// caching.105 with wire.191: the answer contract stays on the turn it rode, so the next call
// repeats it there and the newest breakpoint may sit on it; a turn that renders no message (a
// PreparedConversation built by hand) is never anchored.
TEST(CachePolicy, SlidingAnchorsTheContractThatStaysButNoTurnWithoutAMessage) {
    PreparedConversation p;
    p.system_blocks = {TextBlock{"objective"}};
    p.turns = {
        PreparedTurn{TurnRole::kUser, {TextBlock{"q1"}}, false, "m1"},
        PreparedTurn{TurnRole::kAssistant, {TextBlock{"a1"}}, false, "m2"},
        PreparedTurn{
            TurnRole::kUser, {TextBlock{"q2"}, TextBlock{"answer as JSON"}}, false, "m3", true},
        PreparedTurn{TurnRole::kUser, {TextBlock{"no message"}}, false, ""}};
    const CachePlan plan = caching::plan_cache(p, true, policy(CachePolicy::kSliding));
    // The newest on q2's contract, the older on the earlier user turn.
    EXPECT_THAT(plan.turn_anchors, ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 1}));
    EXPECT_EQ(plan.system_block, std::optional<std::size_t>(0));
}

// caching.119: a dialect that cannot mark a tool call (OpenAI) gets no anchor on one: the turn's
// newest anchorable block before it carries the breakpoint instead.
TEST(CachePolicy, SlidingAnchorsNoToolCallWhereTheDialectCannotMarkOne) {
    PreparedConversation p;
    p.system_blocks = {TextBlock{"objective"}};
    p.turns = {PreparedTurn{TurnRole::kUser, {TextBlock{"q1"}}, false, "m1"},
               PreparedTurn{TurnRole::kAssistant,
                            {TextBlock{"calling"}, ToolUseBlock{"c1", "search", R"({})"}},
                            false,
                            "m2"}};
    CacheOptions o = policy(CachePolicy::kSliding);
    EXPECT_THAT(caching::plan_cache(p, true, o).turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{1, 1}));
    o.anchor_tool_use = false;
    EXPECT_THAT(caching::plan_cache(p, true, o).turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{1, 0}));
}

// caching.105: no breakpoint on a prefix under the model's minimum.
TEST(CachePolicy, SlidingPlacesNothingUnderTheMinimum) {
    PreparedConversation p;
    p.system_blocks = {TextBlock{std::string(40, 's')}};
    for (int i = 0; i < 6; ++i) {
        p.turns.push_back(PreparedTurn{i % 2 == 0 ? TurnRole::kUser : TurnRole::kAssistant,
                                       {TextBlock{std::string(20, 't')}},
                                       false,
                                       "m" + std::to_string(i)});
    }
    CacheOptions o = policy(CachePolicy::kSliding);
    o.count_block = [](const ContentBlock& b) {
        return static_cast<std::int64_t>(b.get_if<TextBlock>()->text.size());
    };
    // Prefix sizes: system 40, then 60, 80, 100, 120, 140, 160 through turns 0..5.
    o.min_cacheable_tokens = 100;
    CachePlan plan = caching::plan_cache(p, true, o);
    EXPECT_EQ(plan.system_block, std::nullopt);
    EXPECT_THAT(plan.turn_anchors,
                ElementsAre(CacheAnchor{2, 0}, CacheAnchor{4, 0}, CacheAnchor{5, 0}));
    o.min_cacheable_tokens = 150;
    plan = caching::plan_cache(p, true, o);
    EXPECT_THAT(plan.turn_anchors, ElementsAre(CacheAnchor{5, 0}));
    o.min_cacheable_tokens = 1000;
    EXPECT_EQ(caching::plan_cache(p, true, o), CachePlan{});
    o.policy = CachePolicy::kAutomatic;
    o.automatic_offered = true;
    EXPECT_EQ(caching::plan_cache(p, true, o), CachePlan{});
}

// caching.106: where offered, one request-level marker after the system breakpoint; where not
// (Converse), the plan is kSliding's.
TEST(CachePolicy, AutomaticIsOneRequestLevelMarkerWhereOffered) {
    ConversationContext ctx = tool_loop();
    CacheOptions o = policy(CachePolicy::kAutomatic);
    o.automatic_offered = true;
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false, o);
    EXPECT_TRUE(p.cache_plan.automatic);
    EXPECT_TRUE(p.cache_plan.turn_anchors.empty());
    EXPECT_TRUE(p.cache_plan.system_block.has_value());
    EXPECT_EQ(p.cache_plan.breakpoints(), 2U);
    o.automatic_offered = false;
    ConversationContext again = tool_loop();
    const PreparedConversation q = again.prepare_messages_for_llm(kCaching, false, o);
    EXPECT_FALSE(q.cache_plan.automatic);
    ConversationContext sliding = tool_loop();
    EXPECT_EQ(q.cache_plan,
              sliding.prepare_messages_for_llm(kCaching, false, policy(CachePolicy::kSliding))
                  .cache_plan);
    // A backend without caching plans nothing under any policy.
    for (const CachePolicy pol : {CachePolicy::kSliding, CachePolicy::kAutomatic}) {
        ConversationContext none = tool_loop();
        EXPECT_EQ(none.prepare_messages_for_llm(kNoCaching, false, policy(pol)).cache_plan,
                  CachePlan{});
    }
}

// caching.105: the conversation's own choice replaces the caller's.
TEST(CachePolicy, TheConversationsChoiceWins) {
    ConversationContext ctx = six_cached_turns();
    ctx.set_cache_policy(CachePolicy::kSliding);
    const PreparedConversation p = ctx.prepare_messages_for_llm(kCaching, false);
    EXPECT_THAT(p.cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{2, 0}, CacheAnchor{4, 0}, CacheAnchor{5, 0}));
    ctx.set_cache_policy(std::nullopt);
    EXPECT_THAT(ctx.prepare_messages_for_llm(kCaching, false).cache_plan.turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{1, 0}, CacheAnchor{2, 0}));
}

// caching.107: the 1-hour head rides the system breakpoint only.
TEST(CachePolicy, TheOneHourHeadIsTheSystemBreakpoints) {
    for (const CachePolicy pol : {CachePolicy::kMarkedTurns, CachePolicy::kSliding}) {
        ConversationContext ctx = six_cached_turns();
        CacheOptions o = policy(pol);
        o.head_ttl_1h = true;
        EXPECT_TRUE(ctx.prepare_messages_for_llm(kCaching, false, o).cache_plan.system_ttl_1h);
        ConversationContext no_system = six_cached_turns();
        no_system.set_cache_main_objective(false);
        EXPECT_FALSE(
            no_system.prepare_messages_for_llm(kCaching, false, o).cache_plan.system_ttl_1h);
    }
}

/// caching.132: the word the call path's prepare (the conversation's kept one) gives.
std::string moved_after_prepare(ConversationContext& ctx, const ContentFormatter& formatter,
                                const CacheOptions& options) {
    internal::PreparedAccess::prepare(ctx, formatter, false, options);
    const internal::KeptPrepare* kept = internal::PreparedAccess::peek(ctx);
    return kept == nullptr ? "<no kept prepare>" : kept->plan_moved;
}

// caching.132: each prepare on the call path names why its plan no longer places the previous
// plan's farthest mark, and says nothing when it does.
TEST(CachePolicy, EachPlanNamesWhyItMovedAMark) {
    ConversationContext ctx = six_cached_turns();
    // Each call ends with the user's turn, as a request does.
    const auto exchange = [&ctx](int n) {
        ctx.add_message(cached({TextBlock{"answer " + std::to_string(n)}}, Direction::kIncoming));
        ctx.add_message(cached({TextBlock{"question " + std::to_string(n)}}));
    };
    ctx.add_message(cached({TextBlock{"turn 6"}}));
    const CacheOptions sliding = policy(CachePolicy::kSliding);
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, sliding), "") << "a first plan moves nothing";
    exchange(7);
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, sliding), "")
        << "the sliding plan keeps the previous newest mark as it grows";
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, policy(CachePolicy::kMarkedTurns)), "policy");
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, policy(CachePolicy::kMarkedTurns)), "policy")
        << "a second prepare of the same list keeps the word of the first";
    exchange(8);
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, policy(CachePolicy::kMarkedTurns)), "")
        << "the marked turns stay where they were";
    EXPECT_EQ(moved_after_prepare(ctx, kNoCaching, sliding), "caching_off");
    EXPECT_EQ(moved_after_prepare(ctx, kNoCaching, sliding), "caching_off");
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, sliding), "") << "no mark before to move";

    // A rewrite of the list (compaction, an edit) keeps the last plan to compare with.
    std::vector<Message> kept(ctx.messages().begin() + 4, ctx.messages().end());
    std::vector<std::size_t> origins;
    for (std::size_t i = 4; i < ctx.messages().size(); ++i) origins.push_back(i);
    ctx.replace_messages(std::move(kept), origins);
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, sliding), "rewritten");
    exchange(9);
    EXPECT_EQ(moved_after_prepare(ctx, kCaching, sliding), "");
}

// caching.132: the causes a conversation cannot show alone: the head's mark, and a tail mark
// the next plan does not repeat (only the farthest counts).
TEST(CachePolicy, AMovedHeadOrFarthestTailMarkIsNamed) {
    caching::PlanRecord before;
    before.caching = true;
    before.policy = CachePolicy::kSliding;
    before.plan.system_block = 1;
    before.plan.turn_anchors = {CacheAnchor{2, 0}, CacheAnchor{4, 1}};
    caching::PlanRecord now = before;
    EXPECT_EQ(caching::plan_moved(before, now), "");
    now.plan.turn_anchors = {CacheAnchor{4, 1}, CacheAnchor{6, 0}};
    EXPECT_EQ(caching::plan_moved(before, now), "") << "an older mark dropped is no move";
    now.plan.turn_anchors = {CacheAnchor{4, 0}, CacheAnchor{6, 0}};
    EXPECT_EQ(caching::plan_moved(before, now), "tail");
    now = before;
    now.plan.system_ttl_1h = true;
    EXPECT_EQ(caching::plan_moved(before, now), "head");
    now = before;
    now.native = !before.native;
    EXPECT_EQ(caching::plan_moved(before, now), "head");
    now = before;
    now.history_epoch = before.history_epoch + 1;
    EXPECT_EQ(caching::plan_moved(before, now), "rewritten");
    EXPECT_EQ(caching::plan_moved(caching::PlanRecord{}, now), "") << "nothing placed before";
}

}  // namespace
}  // namespace nucleo
