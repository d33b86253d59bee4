// limits.134, limits.135: the per-call buffers of a request (the request documents the core writes,
// the plugins' in-situ copies and outputs) are reused from call to call through per-thread pools,
// invisibly: the same conversation built on a fresh thread, twice on one thread, on two threads at
// once, and after a huge request gives byte-identical requests, for every in-tree dialect, with
// the per-turn encode cache and without. What a pool keeps is bounded, and every body leaves the
// audit's padding after its last byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "compaction_support.hpp"
#include "dialect_client.hpp"
#include "llm/body_buffer.hpp"
#include "llm/turn_fragments.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {
namespace {

ModelSpec roomy_model() {
    ModelSpec m = test_model();
    m.provider.clear();
    m.supports_caching = true;
    m.max_context_tokens = 10'000'000;  // the huge request below is built, never sent
    return m;
}

std::vector<ConversationContext> conversations() {
    return {light_fixture(), moderate_fixture(), aggressive_fixture(60), parallel_fixture()};
}

/// A conversation whose request document is about `bytes` long.
ConversationContext huge_conversation(std::size_t bytes) {
    ConversationContext c = base("huge");
    std::string text;
    for (int k = 0; text.size() < bytes; ++k) text += prose(8, k);
    c.add_message(Message::outgoing_text(text));
    return c;
}

/// The bodies of `conversations()`, each built cold (on a fresh copy) by a client of its own.
std::vector<std::string> bodies(const std::string& plugin, bool turn_cache) {
    ProviderClient client = client_of(plugin, turn_cache);
    std::vector<std::string> out;
    for (const ConversationContext& original : conversations()) {
        ConversationContext c = original;
        out.push_back(client.build_request(c, roomy_model(), {}, true).body);
    }
    return out;
}

/// The same, built on a thread that never built a request: every pool it uses is empty.
std::vector<std::string> bodies_on_fresh_thread(const std::string& plugin, bool turn_cache) {
    std::vector<std::string> out;
    std::thread([&] { out = bodies(plugin, turn_cache); }).join();
    return out;
}

/// Restores this thread's document pool bound when the test ends.
struct KeepBound {
    explicit KeepBound(std::size_t bytes) { internal::set_document_scratch_keep_bytes(bytes); }
    ~KeepBound() { internal::set_document_scratch_keep_bytes(0); }
    KeepBound(const KeepBound&) = delete;
    KeepBound& operator=(const KeepBound&) = delete;
};

struct Case {
    const char* plugin;
    bool turn_cache;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.plugin << (c.turn_cache ? " split" : " whole"); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    return std::string(info.param.plugin) + (info.param.turn_cache ? "_split" : "_whole");
}

class RequestBuffers : public ::testing::TestWithParam<Case> {};

TEST_P(RequestBuffers, ReuseIsInvisibleOnOneThreadAndOnTwo) {
    const auto [plugin, turn_cache] = GetParam();
    const std::vector<std::string> expected = bodies_on_fresh_thread(plugin, turn_cache);
    ASSERT_EQ(expected.size(), conversations().size());
    // Twice on this thread: the second time every buffer comes from the pools.
    EXPECT_EQ(bodies(plugin, turn_cache), expected);
    EXPECT_EQ(bodies(plugin, turn_cache), expected);
    // Two threads at once, each several times (each has its own pools).
    std::vector<std::vector<std::vector<std::string>>> seen(2);  // per thread, its distinct rounds
    {
        std::vector<std::thread> threads;
        for (auto& out : seen) {
            threads.emplace_back([&out, plugin = std::string(plugin), cache = turn_cache] {
                for (int round = 0; round < 3; ++round) {
                    std::vector<std::string> got = bodies(plugin, cache);
                    if (out.empty() || got != out.back()) out.push_back(std::move(got));
                }
            });
        }
        for (auto& t : threads) t.join();
    }
    for (const auto& rounds : seen) {
        ASSERT_EQ(rounds.size(), 1U) << "a thread built different bodies from one round to the next";
        EXPECT_EQ(rounds.front(), expected);
    }
}

TEST_P(RequestBuffers, ARequestAfterAHugeOneIsTheSameAndTheKeptScratchIsBounded) {
    const auto [plugin, turn_cache] = GetParam();
    const std::vector<std::string> expected = bodies_on_fresh_thread(plugin, turn_cache);
    constexpr std::size_t kBound = 256 * 1024;
    const KeepBound bound(kBound);

    // A normal request leaves its document buffer in this thread's pool, and the same request
    // again reuses it without growing it.
    EXPECT_EQ(bodies(plugin, turn_cache), expected);
    const internal::ScratchKept after_first = internal::document_scratch_kept();
    EXPECT_GE(after_first.buffers, 1U);
    EXPECT_GT(after_first.bytes, 0U);
    EXPECT_LE(after_first.bytes, after_first.buffers * kBound);
    EXPECT_EQ(bodies(plugin, turn_cache), expected);
    EXPECT_EQ(internal::document_scratch_kept().bytes, after_first.bytes);

    // A request whose document is four times the bound: its buffer is freed, not kept.
    ProviderClient client = client_of(plugin, turn_cache);
    ConversationContext huge = huge_conversation(4 * kBound);
    const HttpRequest big = client.build_request(huge, roomy_model(), {}, true);
    EXPECT_GT(big.body.size(), 4 * kBound);
    const internal::ScratchKept after_huge = internal::document_scratch_kept();
    EXPECT_LE(after_huge.bytes, after_huge.buffers * kBound) << "a buffer above the bound was kept";

    // And what follows is built as on a fresh thread.
    EXPECT_EQ(bodies(plugin, turn_cache), expected);
    EXPECT_GE(internal::document_scratch_kept().buffers, 1U);
}

TEST_P(RequestBuffers, EveryBodyLeavesThePaddingAfterItsLastByte) {
    const auto [plugin, turn_cache] = GetParam();
    ProviderClient client = client_of(plugin, turn_cache);
    std::vector<ConversationContext> all = conversations();
    all.push_back(huge_conversation(300 * 1024));
    for (ConversationContext& c : all) {
        SCOPED_TRACE(c.conversation_id());
        const HttpRequest r = client.build_request(c, roomy_model(), {}, true);
        ASSERT_FALSE(r.body.empty());
        EXPECT_GE(r.body.readable(), r.body.size() + internal::kBodyPadding);
    }
}

TEST(RequestBodyPadding, ReservesOnlyWhatIsMissingAndKeepsTheBytes) {
    std::string body(1000, 'x');
    body.shrink_to_fit();
    internal::reserve_body_padding(body);
    EXPECT_EQ(body, std::string(1000, 'x'));
    EXPECT_GE(body.capacity(), 1000 + internal::kBodyPadding);
    const char* data = body.data();
    internal::reserve_body_padding(body);  // already there: nothing moves
    EXPECT_EQ(body.data(), data);
}

// caching.115, limits.136: the body of a request built through the per-turn encode cache is the
// kept pieces themselves: the next request of a growing conversation carries the very bytes of
// the runs it reuses (the same addresses, not copies), building it joins nothing, and the bytes
// are those of a whole encode.
TEST(PieceBody, TheNextBodyOfAGrowingConversationSharesTheBytesOfTheRunsItReuses) {
    for (const char* plugin : {"anthropic", "openai", "bedrock"}) {
        SCOPED_TRACE(plugin);
        ProviderClient cached = client_of(plugin, true);
        ProviderClient whole = client_of(plugin, false);
        ConversationContext c = base(std::string("pieces-") + plugin);
        for (int i = 0; i < 400; ++i) {
            c.add_message(
                i % 2 == 0
                    ? Message::outgoing_text("Question " + std::to_string(i) + ": " + prose(1, i))
                    : Message::incoming_text("Answer " + std::to_string(i) + ": " + prose(1, i)));
        }
        const HttpRequest first = cached.build_request(c, roomy_model(), {}, true);
        ASSERT_GT(first.body.piece_count(), 4U);
        EXPECT_FALSE(first.body.contiguous()) << "building the request joined its pieces";
        std::vector<const char*> before;
        for (std::size_t i = 0; i < first.body.piece_count(); ++i)
            before.push_back(first.body.piece(i).data());
        for (int turn = 0; turn < 3; ++turn) {
            c.add_message(Message::incoming_text("An answer, " + std::to_string(turn) + "."));
            c.add_message(
                Message::outgoing_text("One more question, " + std::to_string(turn) + "?"));
            const HttpRequest next = cached.build_request(c, roomy_model(), {}, true);
            EXPECT_FALSE(next.body.contiguous());
            // The head's three pieces are written anew; the runs before the last two chunks are
            // the first request's bytes where they lie.
            std::size_t shared = 0;
            for (std::size_t i = 0; i < next.body.piece_count(); ++i) {
                if (std::find(before.begin(), before.end(), next.body.piece(i).data()) !=
                        before.end() &&
                    next.body.piece(i).size() > 1)
                    ++shared;
            }
            EXPECT_GE(shared, 2U) << "turn " << turn;
            EXPECT_EQ(next.body, whole.build_request(c, roomy_model(), {}, true).body.view())
                << "turn " << turn;
            EXPECT_TRUE(next.body.contiguous()) << "reading it joined it";
        }
        // The first request's body is still whole and readable after the conversation moved on.
        EXPECT_GT(first.body.size(), 1000U);
        EXPECT_EQ(first.body.view().front(), '{');
        EXPECT_EQ(first.body.view().back(), '}');
    }
}

/// caching.111: a cold request sends the chunks before the last two to the plugin in groups and
/// keeps each group as one entry; the next request reuses those entries as they are (the same
/// strings, moved, not encoded again), and the bytes stay those of a whole encode.
class GroupedChunks : public ::testing::TestWithParam<const char*> {};

TEST_P(GroupedChunks, AreKeptAndReusedByTheNextRequest) {
    const std::string plugin = GetParam();
    using internal::TurnFragments;
    ProviderClient cached = client_of(plugin, true);
    ProviderClient whole = client_of(plugin, false);
    ConversationContext c = base("grouped");
    // Each message its own run: 38 chunks of 32 runs after the first.
    constexpr std::size_t kMessages = 1 + 37 * TurnFragments::kRunsPerChunk + 5;
    for (std::size_t i = 0; i < kMessages; ++i) {
        const std::string n = std::to_string(i);
        c.add_message(i % 2 == 0 ? Message::outgoing_text("Question " + n + ": " + prose(1, static_cast<int>(i)))
                                 : Message::incoming_text("Answer " + n + ": " + prose(1, static_cast<int>(i))));
    }
    const ModelSpec model = roomy_model();
    const std::string cold = cached.build_request(c, model, {}, true).body;
    EXPECT_EQ(cold, whole.build_request(c, model, {}, true).body);
    const TurnFragments* kept = internal::TurnFragmentsAccess::peek(c);
    ASSERT_TRUE(kept != nullptr && !kept->dialects.empty());
    const std::vector<TurnFragments::Run>& runs = kept->dialects.front().runs;
    // 38 chunks: the first 36 in groups of 16, 16 and 4, then the last two alone.
    ASSERT_EQ(runs.size(), 5U);
    EXPECT_EQ(runs[0].end - runs[0].first, TurnFragments::kChunksPerGroup * TurnFragments::kRunsPerChunk);
    EXPECT_EQ(runs[2].end - runs[2].first, 4 * TurnFragments::kRunsPerChunk);
    EXPECT_EQ(runs[3].end - runs[3].first, TurnFragments::kRunsPerChunk);
    std::vector<const char*> wires;
    for (const auto& r : runs) wires.push_back(r.chunk->wire().data());

    c.add_message(Message::incoming_text("One more answer."));
    const std::string next = cached.build_request(c, model, {}, true).body;
    EXPECT_EQ(next, whole.build_request(c, model, {}, true).body);
    EXPECT_NE(next, cold);
    const std::vector<TurnFragments::Run>& after = internal::TurnFragmentsAccess::peek(c)->dialects.front().runs;
    ASSERT_GE(after.size(), 4U);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(after[i].chunk->wire().data(), wires[i]) << "group " << i << " encoded again";
}

INSTANTIATE_TEST_SUITE_P(Dialects, RequestBuffers,
                         ::testing::Values(Case{"anthropic", true}, Case{"anthropic", false}, Case{"openai", true},
                                           Case{"openai", false}, Case{"bedrock", true}, Case{"bedrock", false}),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Dialects, GroupedChunks, ::testing::Values("anthropic", "openai", "bedrock"));

}  // namespace
}  // namespace nucleo::compaction_test
