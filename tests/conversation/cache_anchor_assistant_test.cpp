// caching.133: on a dialect that takes no mark on assistant output (OpenAI Responses:
// "cache_anchor_assistant": false) the plan moves an anchor that would fall on an assistant turn
// to the last anchorable block of the user turn before it, or drops it; with the capability on,
// nothing changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "caching/cache_plan.hpp"
#include "nucleo/prepared.hpp"

namespace nucleo {
namespace {

using ::testing::ElementsAre;

}  // namespace

/// gtest's printer for an anchor: "{turn, block}".
void PrintTo(const CacheAnchor& a, std::ostream* os) {
    *os << "{" << a.turn << ", " << a.block << "}";
}

namespace {

CacheOptions options(CachePolicy policy, bool assistant) {
    CacheOptions o;
    o.policy = policy;
    o.anchor_assistant = assistant;
    return o;
}

PreparedTurn turn(TurnRole role, std::vector<ContentBlock> blocks, bool cache,
                  const std::string& id) {
    return PreparedTurn{role, std::move(blocks), cache, id};
}

/// The objective, then q1 / a1 (host-marked) / q2 (a text and a tool result) / a2, the model's
/// answer, last: a request that ends with the model's answer.
PreparedConversation ends_with_answer() {
    PreparedConversation p;
    p.system_blocks = {TextBlock{"objective"}};
    p.turns = {turn(TurnRole::kUser, {TextBlock{"q1"}}, false, "m1"),
               turn(TurnRole::kAssistant, {TextBlock{"a1"}}, true, "m2"),
               turn(TurnRole::kUser,
                    {TextBlock{"q2"}, ToolResultBlock{"c1", {TextBlock{"r"}}, false}}, false, "m3"),
               turn(TurnRole::kAssistant, {TextBlock{"a2"}}, true, "m4")};
    return p;
}

// caching.133 under `seed`: a marked assistant turn's anchor moves to the last anchorable block
// of the user turn before it; the capability on keeps caching.4's first text block.
TEST(CacheAnchorAssistant, SeedMovesAMarkedAssistantTurnsAnchorToTheUserTurnBefore) {
    const PreparedConversation p = ends_with_answer();
    const CachePlan on = caching::plan_cache(p, true, options(CachePolicy::kMarkedTurns, true));
    EXPECT_THAT(on.turn_anchors, ElementsAre(CacheAnchor{1, 0}, CacheAnchor{3, 0}));
    EXPECT_EQ(on, caching::plan_cache_breakpoints(p.system_blocks, p.turns, true, true));
    const CachePlan off = caching::plan_cache(p, true, options(CachePolicy::kMarkedTurns, false));
    EXPECT_EQ(off.system_block, std::optional<std::size_t>(0));
    EXPECT_THAT(off.turn_anchors, ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 1}));
}

// caching.133 under `seed`: no user turn before it, a user turn with nothing anchorable, or a
// place the plan already marks: the anchor is dropped and spends nothing, so a later marked turn
// gets the breakpoint.
TEST(CacheAnchorAssistant, SeedDropsAnAnchorWithNoPlaceAndSpendsNothing) {
    PreparedConversation p;
    p.system_blocks = {TextBlock{"objective"}};
    p.turns = {turn(TurnRole::kAssistant, {TextBlock{"greeting"}}, true, "m1"),
               turn(TurnRole::kUser, {ImageBlock{"image/png", "AAAA", ""}}, false, "m2"),
               turn(TurnRole::kAssistant, {TextBlock{"about the image"}}, true, "m3"),
               turn(TurnRole::kUser, {TextBlock{"q"}}, true, "m4"),
               turn(TurnRole::kAssistant, {TextBlock{"a"}}, true, "m5"),
               turn(TurnRole::kAssistant, {TextBlock{"more"}}, true, "m6"),
               turn(TurnRole::kUser, {TextBlock{"q2"}}, true, "m7")};
    const CachePlan off = caching::plan_cache(p, true, options(CachePolicy::kMarkedTurns, false));
    // m1: no turn before; m3: an image only; m5 and m6 both land on m4's text, which m4's own mark
    // holds; m7 keeps its own.
    EXPECT_THAT(off.turn_anchors, ElementsAre(CacheAnchor{3, 0}, CacheAnchor{6, 0}));
    // The capability on: the first three marks and the system's, as caching.4 says.
    const CachePlan on = caching::plan_cache(p, true, options(CachePolicy::kMarkedTurns, true));
    EXPECT_THAT(on.turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 0}, CacheAnchor{3, 0}));
}

// caching.133 under `sliding`: the newest mark, on the model's answer the request ends with,
// goes to the last anchorable block of the latest user turn; the older ones stay on user turns.
TEST(CacheAnchorAssistant, SlidingPutsTheNewestMarkOnTheLatestUserTurn) {
    const PreparedConversation p = ends_with_answer();
    const CachePlan on = caching::plan_cache(p, true, options(CachePolicy::kSliding, true));
    EXPECT_THAT(on.turn_anchors,
                ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 1}, CacheAnchor{3, 0}));
    const CachePlan off = caching::plan_cache(p, true, options(CachePolicy::kSliding, false));
    EXPECT_EQ(off.system_block, std::optional<std::size_t>(0));
    EXPECT_THAT(off.turn_anchors, ElementsAre(CacheAnchor{0, 0}, CacheAnchor{2, 1}));
    // `automatic` where not offered plans as `sliding` (caching.106).
    EXPECT_EQ(caching::plan_cache(p, true, options(CachePolicy::kAutomatic, false)), off);
}

// ---- the property over generated conversations ---------------------------------------------

ContentBlock random_block(std::mt19937& rng, bool user) {
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
        case 0:
            return TextBlock{"  "};
        case 1:
            return ImageBlock{"image/png", "AAAA", ""};
        case 2:
            return JsonBlock{R"({"k":1})"};
        case 3:
            if (user) return ToolResultBlock{"c", {TextBlock{"r"}}, false};
            return ToolUseBlock{"c", "search", "{}"};
        case 4:
            if (!user) return ThinkingBlock{"hm", "sig"};
            return SkillBlock{"skill", "how to"};
        default:
            return TextBlock{"words"};
    }
}

PreparedConversation random_conversation(std::mt19937& rng) {
    PreparedConversation p;
    if (std::bernoulli_distribution(0.8)(rng)) p.system_blocks = {TextBlock{"objective"}};
    p.cache_system = std::bernoulli_distribution(0.7)(rng);
    const int n = std::uniform_int_distribution<int>(0, 14)(rng);
    for (int t = 0; t < n; ++t) {
        const bool user = std::bernoulli_distribution(0.5)(rng);
        PreparedTurn pt{user ? TurnRole::kUser : TurnRole::kAssistant,
                        {},
                        std::bernoulli_distribution(0.4)(rng),
                        "m" + std::to_string(t)};
        const int blocks = std::uniform_int_distribution<int>(0, 3)(rng);
        for (int b = 0; b < blocks; ++b) pt.blocks.push_back(random_block(rng, user));
        p.turns.push_back(std::move(pt));
    }
    // Now and then the registry: a user turn of no message, last.
    if (std::bernoulli_distribution(0.2)(rng))
        p.turns.push_back(turn(TurnRole::kUser, {TextBlock{"registry"}}, false, ""));
    return p;
}

bool in_assistant_turn(const PreparedConversation& p, const CacheAnchor& a) {
    return p.turns[a.turn].role == TurnRole::kAssistant;
}

// caching.133 with caching.2: over generated conversations, every policy with the capability
// off places no mark in an assistant turn, never more than 4, never two on one block, in request
// order, and keeps every user-turn anchor the plan with the capability on places (a moved or
// dropped anchor never displaces one); a conversation whose plan puts nothing in an assistant
// turn plans the same either way.
TEST(CacheAnchorAssistant, NoPlanPutsAMarkInAnAssistantTurnAndTheUserMarksStay) {
    std::mt19937 rng(133);
    for (int round = 0; round < 3000; ++round) {
        const PreparedConversation p = random_conversation(rng);
        for (const CachePolicy policy : {CachePolicy::kMarkedTurns, CachePolicy::kSliding}) {
            for (const bool tool_use : {true, false}) {
                CacheOptions on = options(policy, true);
                on.anchor_tool_use = tool_use;
                if (std::bernoulli_distribution(0.3)(rng)) {  // the minimum, now and then
                    on.min_cacheable_tokens = std::uniform_int_distribution<int>(1, 8)(rng);
                    on.count_block = [](const ContentBlock&) { return std::int64_t{1}; };
                }
                CacheOptions off = on;
                off.anchor_assistant = false;
                const CachePlan with = caching::plan_cache(p, true, on);
                const CachePlan without = caching::plan_cache(p, true, off);
                SCOPED_TRACE("round " + std::to_string(round) + " policy " + to_string(policy));
                EXPECT_LE(without.breakpoints(), CachePlan::kMaxBreakpoints);
                EXPECT_EQ(without.system_block, with.system_block);
                const auto& anchors = without.turn_anchors;
                for (std::size_t i = 0; i < anchors.size(); ++i) {
                    ASSERT_LT(anchors[i].turn, p.turns.size());
                    ASSERT_LT(anchors[i].block, p.turns[anchors[i].turn].blocks.size());
                    EXPECT_FALSE(in_assistant_turn(p, anchors[i]));
                    EXPECT_FALSE(p.turns[anchors[i].turn].message_id.empty());
                    const ContentBlock& b = p.turns[anchors[i].turn].blocks[anchors[i].block];
                    EXPECT_FALSE(b.is<ImageBlock>() || b.is<ThinkingBlock>());
                    if (i > 0) {
                        const CacheAnchor& prev = anchors[i - 1];
                        EXPECT_TRUE(anchors[i].turn > prev.turn ||
                                    (anchors[i].turn == prev.turn && anchors[i].block > prev.block))
                            << "marks out of order or two on one block";
                    }
                }
                bool any_assistant = false;
                for (const CacheAnchor& a : with.turn_anchors) {
                    if (in_assistant_turn(p, a)) {
                        any_assistant = true;
                    } else {
                        EXPECT_NE(std::find(anchors.begin(), anchors.end(), a), anchors.end())
                            << "turn " << a.turn << " block " << a.block << " lost";
                    }
                }
                if (!any_assistant) {
                    EXPECT_EQ(without, with);
                }
            }
        }
        if (HasFailure()) return;  // the first conversation that breaks a rule is enough
    }
}

}  // namespace
}  // namespace nucleo
