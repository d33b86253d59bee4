// conversation.101, caching.112: a conversation keeps what it prepared and the next prepare of a
// list that only grew extends it. The kept value is invisible: on seeded generated conversations,
// after every kind of change (appends, compaction, a late tool, a restore, a registered artifact,
// the cache policy, the dialect, thinking, the head's cache flag, an answer contract, a message
// rendering JSON), the incremental prepare equals a fresh one field by field, and the request
// built from it through every dialect, with the per-turn encode cache on and off, equals the
// request of a fresh copy byte for byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compaction_support.hpp"
#include "conversation/context_internal.hpp"
#include "growing_support.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/response.hpp"
#include "render/render_internal.hpp"

namespace nucleo::compaction_test {
namespace {

/// An answer contract whose text depends on both flags it is asked with (tools.20).
class ShapeHandler final : public ResponseHandler {
  public:
    explicit ShapeHandler(bool notation) : notation_(notation) {}
    [[nodiscard]] bool uses_schema_notation() const override { return notation_; }
    [[nodiscard]] std::string response_instructions(bool native, bool thinking) const override {
        return std::string("Answer as JSON") + (native ? "" : " with tool_calls") +
               (thinking ? "." : " with reasoning.");
    }

  private:
    bool notation_;
};

/// Every field of two prepared values, named where they differ.
void expect_equal(const PreparedConversation& a, const PreparedConversation& b) {
    EXPECT_EQ(a.system_blocks, b.system_blocks);
    EXPECT_EQ(a.tool_definitions, b.tool_definitions);
    EXPECT_EQ(a.cache_system, b.cache_system);
    EXPECT_EQ(a.native_tools, b.native_tools);
    EXPECT_EQ(a.cache_plan, b.cache_plan);
    ASSERT_EQ(a.turns.size(), b.turns.size());
    for (std::size_t t = 0; t < a.turns.size(); ++t) {
        SCOPED_TRACE("turn " + std::to_string(t));
        EXPECT_EQ(a.turns[t].role, b.turns[t].role);
        EXPECT_EQ(a.turns[t].blocks, b.turns[t].blocks);
        EXPECT_EQ(a.turns[t].cache, b.turns[t].cache);
        EXPECT_EQ(a.turns[t].message_id, b.turns[t].message_id);
        EXPECT_EQ(a.turns[t].ends_with_contract, b.turns[t].ends_with_contract);
    }
}

TEST(IncrementalPrepare, EqualsAFreshPrepareAfterEveryKindOfChange) {
    constexpr int kSeeds = 40;
    const auto count = [](const ContentBlock& b) {
        return static_cast<std::int64_t>(render::rendered_text(b).size() / 4);
    };
    std::uint64_t extended = 0;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Grower grow(static_cast<std::uint64_t>(seed) * 7919);
        ConversationContext c = base("incremental-" + std::to_string(seed));
        c.add_message(Message::outgoing_text("Fix the build, please."));
        bool native = true;
        bool thinking = false;
        CacheOptions options;
        for (int step = 0; step < 80; ++step) {
            grow.step(c);
            switch (grow.pick(24)) {
                case 0:
                    compact_half(c);
                    break;
                case 1:
                    c.add_tool(ToolDefinitionBlock{"late_tool_" + std::to_string(step),
                                                   "A tool declared late.",
                                                   R"({"type":"object","properties":{}})"});
                    break;
                case 2:
                    c = ConversationContext::from_parts(c.parts());
                    break;  // a restore
                case 3:
                    c.artifacts().register_artifact("note" + std::to_string(step), R"({"n":1})");
                    break;
                case 4:
                    native = !native;
                    break;
                case 5:
                    thinking = !thinking;
                    break;
                case 6:
                    c.set_cache_main_objective(!c.cache_main_objective());
                    break;
                case 7:
                    c.set_cache_policy(grow.pick(2) == 0 ? CachePolicy::kSliding
                                                         : CachePolicy::kAutomatic);
                    options.automatic_offered = grow.pick(2) == 0;
                    break;
                case 8:
                    c.set_cache_policy(std::nullopt);
                    break;
                case 9:
                    options.min_cacheable_tokens = grow.pick(2) == 0 ? 0 : 400;
                    options.count_block = count;
                    break;
                case 10:
                    if (!c.messages().back().outgoing()) {
                        Message m = Message::outgoing_text("Reply in the shape asked, step " +
                                                           std::to_string(step) + ".");
                        m.response_handler = std::make_shared<ShapeHandler>(grow.pick(2) == 0);
                        m.cache = grow.pick(2) == 0;
                        c.add_message(std::move(m));
                    }
                    break;
                case 11:
                    if (!c.messages().back().outgoing()) {
                        Message m;
                        m.direction = Direction::kOutgoing;
                        m.blocks.push_back(TextBlock{"The state now:"});
                        m.blocks.push_back(PojoBlock{
                            "Status", R"({"step":)" + std::to_string(step) + R"(,"ok":true})"});
                        c.add_message(std::move(m));
                    }
                    break;
                default:
                    break;
            }
            const FixedContentFormatter formatter(native, true);
            const internal::KeptPrepare* kept = internal::PreparedAccess::peek(c);
            const std::uint64_t before = kept != nullptr ? kept->extensions : 0;
            // What build_request reads; prepare_messages_for_llm copies it out once it is kept.
            const PreparedConversation incremental =
                internal::PreparedAccess::prepare(c, formatter, thinking, options);
            extended += internal::PreparedAccess::peek(c)->extensions - before;
            expect_equal(c.prepare_messages_for_llm(formatter, thinking, options), incremental);
            // A fresh copy keeps nothing of c's prepares: its prepare is a cold one.
            ConversationContext copy = c;
            const PreparedConversation fresh =
                copy.prepare_messages_for_llm(formatter, thinking, options);
            expect_equal(incremental, fresh);
            if (::testing::Test::HasFailure()) return;  // the first failing step is the report
        }
    }
    // Most steps only appended: most prepares extended what the previous one kept.
    EXPECT_GT(extended, std::uint64_t{kSeeds} * 40);
}

TEST(IncrementalPrepare, AnAppendKeepsThePreparedTurnsInPlace) {
    ConversationContext c = base("in-place");
    c.add_message(Message::outgoing_text("Fix the build, please."));
    c.add_message(Message::incoming_text("Reading the logs."));
    const FixedContentFormatter formatter(true, true);
    const PreparedConversation& first = internal::PreparedAccess::prepare(c, formatter, false, {});
    const ContentBlock* kept_block = first.turns[0].blocks.data();
    const std::uint64_t extensions = internal::PreparedAccess::peek(c)->extensions;
    for (int i = 0; i < 40; ++i) {
        c.add_message(i % 2 == 0 ? Message::outgoing_text("Next " + std::to_string(i))
                                 : Message::incoming_text("Done " + std::to_string(i)));
        const PreparedConversation& next =
            internal::PreparedAccess::prepare(c, formatter, false, {});
        ASSERT_EQ(next.turns.size(), c.messages().size());  // wire.191: the registry rides a turn
        // The first message's turn was not prepared again: its blocks are the same objects.
        EXPECT_EQ(next.turns[0].blocks.data(), kept_block);
    }
    EXPECT_EQ(internal::PreparedAccess::peek(c)->extensions, extensions + 40);
    // Compaction's rewrite drops what was kept: the turns are those of the new list.
    compact_half(c);
    const PreparedConversation& after = internal::PreparedAccess::prepare(c, formatter, false, {});
    ConversationContext copy = c;
    expect_equal(after, copy.prepare_messages_for_llm(formatter, false, {}));
}

// conversation.103: the first prepare leaves room for the conversation to grow, so the call after
// a first render does not move every kept turn (a 20,000-message conversation paid milliseconds
// for that move on its first next request); later growth stays geometric.
TEST(IncrementalPrepare, TheFirstAppendsAfterAFirstRenderDoNotMoveTheTurns) {
    ConversationContext c = base("room");
    for (int i = 0; i < 400; ++i) {
        c.add_message(i % 2 == 0 ? Message::outgoing_text("Step " + std::to_string(i))
                                 : Message::incoming_text("Done " + std::to_string(i)));
    }
    const FixedContentFormatter formatter(true, true);
    const PreparedTurn* storage =
        internal::PreparedAccess::prepare(c, formatter, false, {}).turns.data();
    std::size_t moves = 0;
    for (int i = 0; i < 600; ++i) {
        c.add_message(i % 2 == 0 ? Message::outgoing_text("Next " + std::to_string(i))
                                 : Message::incoming_text("Again " + std::to_string(i)));
        const PreparedTurn* now =
            internal::PreparedAccess::prepare(c, formatter, false, {}).turns.data();
        // Room for half as many again: the first 200 appends land in place.
        if (i < 200) {
            EXPECT_EQ(now, storage) << "append " << i;
        }
        moves += now != storage ? 1 : 0;
        storage = now;
    }
    // From 400 to 1,000 turns: one move at about 600 turns, none before; geometric after.
    EXPECT_EQ(moves, 1U);
}

class IncrementalRequest : public ::testing::TestWithParam<const char*> {};

TEST_P(IncrementalRequest, RequestsEqualThoseOfAFreshCopyWithAndWithoutTheEncodeCache) {
    const ModelSpec model = model_for_test();
    for (int seed = 1; seed <= 12; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const CachePolicy policy =
            seed % 3 == 0 ? CachePolicy::kSliding : CachePolicy::kMarkedTurns;
        ProviderClient cached = client_of(GetParam(), true);
        ProviderClient whole = client_of(GetParam(), false);
        Grower grow(static_cast<std::uint64_t>(seed) * 104729);
        ConversationContext c = base("incremental-request-" + std::to_string(seed));
        c.add_message(Message::outgoing_text("Fix the build, please."));
        for (int step = 0; step < 50; ++step) {
            grow.step(c);
            const int change = grow.pick(16);
            if (change == 0) compact_half(c);
            if (change == 1) c = ConversationContext::from_parts(c.parts());
            c.set_cache_policy(policy);  // the sliding marks move with the tail
            if (change == 2) {
                c.add_tool(ToolDefinitionBlock{"late_tool_" + std::to_string(step),
                                               "A tool declared late.",
                                               R"({"type":"object","properties":{}})"});
            }
            ProviderClient& client = grow.pick(2) == 0 ? cached : whole;
            const HttpRequest kept = client.build_request(c, model, {}, true);
            ConversationContext copy = c;
            const HttpRequest cold = whole.build_request(copy, model, {}, true);
            EXPECT_EQ(kept.url, cold.url);
            EXPECT_EQ(kept.headers, cold.headers);
            EXPECT_TRUE(kept.body == cold.body)
                << "the request built from the kept prepare differs at step " << step;
            if (::testing::Test::HasFailure()) return;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Dialects, IncrementalRequest,
                         ::testing::Values("anthropic", "openai", "bedrock"));

}  // namespace
}  // namespace nucleo::compaction_test
