// The ladder's promises on generated conversations (compaction.101 to compaction.105): a seeded
// generator makes conversations with tool rounds, parallel calls, pinned messages, artifact
// references, images, very large results, tiny and huge windows and every output rung, and each
// one goes through ensure_fits. For every seed: under the trigger and fitting (or, when pinned
// content keeps it above the trigger, fitting the hard limit with the reserve), or
// ContextOverflowException only when pinned content alone cannot fit, the conversation then
// unchanged; no orphan; pinned messages and artifact references verbatim; the last message kept;
// the result accepted by the encoders of all three dialects and by the emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "dialects.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

constexpr int kSeeds = 500;

/// One generated case: the conversation, the model, the window settings, the summarizer's
/// configuration, and what the generator knows about pinned content.
struct Generated {
    ConversationContext conversation{"generated", "alice"};
    ModelSpec model;
    ContextWindowSettings settings;
    std::string summarizer_config = "{}";
    bool pinned_overflows = false;  ///< the pinned messages alone exceed the hard room
};

class Generator {
  public:
    explicit Generator(std::uint64_t seed) : rng_(seed), seed_(seed) {}

    Generated make() {
        Generated g;
        g.model = test_model();
        g.model.id = "generated-" + std::to_string(seed_);
        // Tiny, ordinary and huge windows.
        // Tiny and huge windows are rarer than ordinary ones: the suite's time goes to the latter.
        const int window = pick(40);
        g.model.max_context_tokens = window < 4    ? uniform(1500, 3000)
                                     : window == 4 ? uniform(128000, 200000)
                                                   : uniform(4000, 16000);
        const std::int64_t hard = g.model.max_context_tokens;
        g.model.max_output_tokens = std::max<std::int64_t>(hard / 4, 256);
        g.model.output_budget = {{OutputSize::kShort, std::min<std::int64_t>(256, hard / 8)},
                                 {OutputSize::kMedium, hard / 8},
                                 {OutputSize::kLong, hard / 6},
                                 {OutputSize::kExtended, hard / 4}};
        if (chance(0.5)) g.settings.comfort_context_tokens = uniform(hard / 3, hard);
        if (chance(0.3)) g.settings.compaction_trigger = 0.5 + 0.5 * real();

        ConversationContext& c = g.conversation;
        c = base("generated-" + std::to_string(seed_));
        static const OutputSize rungs[] = {OutputSize::kShort, OutputSize::kMedium,
                                           OutputSize::kLong, OutputSize::kExtended};
        c.set_output(rungs[pick(4)]);

        const ContextWindowManager probe(scripted(), g.settings);
        const std::int64_t limit = probe.limit(g.model);
        const std::int64_t hard_room = hard - output_reserve(c, g.model);
        const std::int64_t room = std::min(probe.trigger_tokens(g.model), hard_room);
        const TokenCounter& counter = TokenCounter::for_model(g.model);
        const auto size = [&] { return counter.total_tokens(c); };

        // Pinned content: well inside the room; or (one seed in ten) more than the hard room; or
        // (one in ten, where the comfort window leaves a gap under the hard room) above the
        // trigger yet inside the hard room, which is accepted above the trigger.
        const double kind = real();
        g.pinned_overflows = kind < 0.1;
        const bool over_trigger = !g.pinned_overflows && kind < 0.2 && room + 400 < hard_room;
        const std::int64_t pinned_budget = g.pinned_overflows ? hard_room + 200
                                           : over_trigger     ? (room + hard_room) / 2
                                                              : room / 5;
        std::int64_t pinned = size();
        const auto pin = [&](Message& m, std::int64_t tokens) {
            if (!g.pinned_overflows && pinned + tokens > pinned_budget) return;
            m.compactable = false;
            pinned += tokens;
        };
        if (g.pinned_overflows || over_trigger) {
            Message big = Message::outgoing_text("Keep all of this: " +
                                                 prose_tokens(pinned_budget - pinned - 100));
            big.compactable = false;
            pinned += counter.count_message(big);
            c.add_message(big);
        }

        const std::int64_t target = static_cast<std::int64_t>(
            static_cast<double>(limit) * (0.5 + 1.5 * real()));
        int round = 0;
        while (size() < target) {
            ++round;
            Message q = Message::outgoing_text("Question " + std::to_string(round) + ": " +
                                               prose_tokens(uniform(10, 120)) + maybe_ref());
            if (chance(0.1)) q.blocks.push_back(ImageBlock{"image/png", "iVBORw0KGgo=", ""});
            if (chance(0.25)) pin(q, counter.count_message(q));
            c.add_message(q);
            const int tool_rounds = pick(4);
            for (int t = 0; t < tool_rounds; ++t) add_tool_round(c, limit, pin, counter);
            Message a = Message::incoming_text("Answer " + std::to_string(round) + ": " +
                                               prose_tokens(uniform(10, 150)) + maybe_ref());
            if (chance(0.2)) pin(a, counter.count_message(a));
            c.add_message(a);
        }
        // The conversation ends with what our side sends next: a question or tool results.
        if (chance(0.5)) {
            add_tool_round(c, limit, pin, counter);
        } else {
            c.add_message(Message::outgoing_text("And now: " + prose_tokens(uniform(5, 40))));
        }

        // The summarizer: faithful, overshooting, or failing below MAXIMUM.
        static const char* configs[] = {
            "{}",
            R"({"overshoot":3.0})",
            R"({"fail_levels":["LIGHT"]})",
            R"({"fail_levels":["LIGHT","MODERATE"]})",
            R"({"fail_levels":["MODERATE","AGGRESSIVE"],"overshoot":2.0})",
        };
        g.summarizer_config = configs[pick(5)];
        return g;
    }

  private:
    template <typename Pin>
    void add_tool_round(ConversationContext& c, std::int64_t limit, const Pin& pin,
                        const TokenCounter& counter) {
        const int calls = 1 + pick(3);  // parallel calls in one turn
        std::vector<std::string> ids;
        for (int k = 0; k < calls; ++k) ids.push_back("u" + std::to_string(next_id_++));
        Message call = tool_call("call-" + ids.front(), ids);
        if (chance(0.1)) pin(call, counter.count_message(call));
        c.add_message(call);
        // The results: in one message, or one message per result.
        const bool split = chance(0.3);
        Message results;
        results.id = "results-" + ids.front();
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const std::int64_t tokens =
                chance(0.05) ? uniform(limit / 4, limit) : uniform(20, 600);  // very large ones
            results.blocks.push_back(
                ToolResultBlock{ids[k], {TextBlock{prose_tokens(tokens) + maybe_ref()}},
                                chance(0.1)});
            if (split) {
                results.id = "result-" + ids[k];
                if (chance(0.05)) pin(results, counter.count_message(results));
                c.add_message(results);
                results = Message{};
            }
        }
        if (!split) {
            if (chance(0.05)) pin(results, counter.count_message(results));
            c.add_message(results);
        }
    }

    /// Prose of about `tokens` tokens (a sentence of prose() is about 16).
    std::string prose_tokens(std::int64_t tokens) {
        return prose(static_cast<int>(std::max<std::int64_t>(1, tokens / 16)),
                     static_cast<int>(rng_() % 100000));
    }
    std::string maybe_ref() {
        if (!chance(0.3)) return "";
        return " See \xC2\xAB"
               "artifact:log~r" +
               std::to_string(rng_() % 1000) + "\xC2\xBB.";
    }
    int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
        return hi <= lo ? lo : lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    double real() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
    bool chance(double p) { return real() < p; }

    std::mt19937_64 rng_;
    std::uint64_t seed_;
    int next_id_ = 1;
};

/// Pinned content the ladder can never shrink: the fixed part, every message in a tool-pair
/// group holding a pinned message (its results counted as they are, an upper bound), and the
/// message kept by position. Used to tell "must fit under the trigger" from "may not".
std::int64_t pinned_upper_bound(const ConversationContext& c, const TokenCounter& counter) {
    const auto& msgs = c.messages();
    std::vector<bool> kept(msgs.size(), false);
    std::map<std::string, std::size_t> use_at;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        for (const ContentBlock& b : msgs[i].blocks) {
            if (const auto* u = b.get_if<ToolUseBlock>()) use_at[u->id] = i;
            if (const auto* r = b.get_if<ToolResultBlock>()) pairs.emplace_back(use_at[r->tool_use_id], i);
        }
    }
    for (std::size_t i = 0; i < msgs.size(); ++i) kept[i] = !msgs[i].compactable;
    kept.back() = true;
    for (const auto& [from, to] : pairs) {
        bool any = false;
        for (std::size_t i = from; i <= to; ++i) any = any || kept[i];
        if (any) {
            for (std::size_t i = from; i <= to; ++i) kept[i] = true;
        }
    }
    std::int64_t n = counter.fixed_tokens(c);
    std::int64_t refs = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (kept[i]) n += counter.count_message(msgs[i], &c.artifacts());
        refs += static_cast<std::int64_t>(
            compaction::artifact_refs(compaction::render_for_summary(msgs[i])).size());
    }
    // A whole-conversation summary at its smallest: header, a few words, every reference.
    return n + 64 + 12 * refs;
}

TEST(Property, TheLadderKeepsItsPromisesOnGeneratedConversations) {
    const emulator_test::EmulatorProcess emulator;
    const DialectClients dialects(emulator);
    int compacted = 0, refused = 0, accepted_above = 0;
    std::set<CompactionLevel> levels;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Generated g = Generator(static_cast<std::uint64_t>(seed)).make();
        ConversationContext& c = g.conversation;
        const TokenCounter& counter = TokenCounter::for_model(g.model);
        const std::int64_t reserve = output_reserve(c, g.model);
        const ConversationContext before = c;
        const std::string before_doc = write_conversation_document(c);
        ContextWindowManager manager(scripted(g.summarizer_config), g.settings);
        const std::int64_t hard = g.model.max_context_tokens;
        const std::int64_t room = std::min(manager.trigger_tokens(g.model), hard - reserve);
        const std::int64_t pinned_max = pinned_upper_bound(c, counter);

        CompactionReport r;
        try {
            r = manager.ensure_fits(c, g.model, reserve);
        } catch (const ContextOverflowException& e) {
            ++refused;
            EXPECT_TRUE(g.pinned_overflows || pinned_max > hard - reserve)
                << "refused although the pinned content fits: " << e.what();
            EXPECT_EQ(write_conversation_document(c), before_doc) << "a refusal changed it";
            continue;
        }
        EXPECT_FALSE(g.pinned_overflows) << "pinned content over the hard room was accepted";
        if (r.compacted()) ++compacted;
        if (r.accepted_above_trigger) ++accepted_above;
        levels.insert(r.level);
        EXPECT_EQ(r.tokens_after, counter.total_tokens(c));
        EXPECT_LE(r.tokens_after + reserve, hard) << "the call does not fit the hard limit";
        if (pinned_max <= room) {
            EXPECT_LE(r.tokens_after, r.trigger_tokens)
                << "above the trigger at " << to_string(r.level) << " though the pinned content ("
                << pinned_max << ") leaves room under " << room;
        }
        EXPECT_LE(r.tokens_after, r.tokens_before) << "compaction made it longer";
        expect_survival(before, c);
        expect_no_orphans(c);
        ASSERT_FALSE(c.messages().empty());
        EXPECT_EQ(c.messages().back().id, before.messages().back().id) << "the last message is gone";
        const Message& last = c.messages().back();
        if (std::none_of(last.blocks.begin(), last.blocks.end(),
                         [](const ContentBlock& b) { return b.is<ToolResultBlock>(); })) {
            EXPECT_EQ(last.blocks, before.messages().back().blocks) << "the question changed";
        }
        if (r.compacted()) dialects.expect_accepted(c, g.model);
        if (::testing::Test::HasFailure()) break;  // the first failing seed is the report
    }
    // The generator reaches what it is for: compactions at several levels and refusals.
    EXPECT_GT(compacted, kSeeds / 4);
    EXPECT_GT(refused, 0);
    EXPECT_GT(accepted_above, 0);
    EXPECT_GE(levels.size(), 3U);
    RecordProperty("compacted", compacted);
    RecordProperty("refused", refused);
    RecordProperty("accepted_above_trigger", accepted_above);
}

/// Every summary header a text holds, counted: the message summary's, a tool result summary's and
/// a tool call input summary's.
std::size_t headers_in(std::string_view text) {
    std::size_t n = 0;
    for (const std::string_view header : {std::string_view(ContextWindowManager::kSummaryHeader),
                                          std::string_view("[Summary of the tool result]"),
                                          std::string_view("[Summary of the tool call input]")}) {
        for (std::size_t at = text.find(header); at != std::string_view::npos;
             at = text.find(header, at + 1))
            ++n;
    }
    return n;
}

/// The texts of a message where a summary can sit: its text blocks, the text of its tool results
/// and its tool call inputs.
std::vector<std::string> texts_of(const Message& m) {
    std::vector<std::string> out;
    for (const ContentBlock& b : m.blocks) {
        if (const auto* t = b.get_if<TextBlock>()) out.push_back(t->text);
        if (const auto* u = b.get_if<ToolUseBlock>()) out.push_back(u->input_json);
        if (const auto* r = b.get_if<ToolResultBlock>()) {
            for (const ContentBlock& inner : r->content) {
                if (const auto* t = inner.get_if<TextBlock>()) out.push_back(t->text);
            }
        }
    }
    return out;
}

TEST(Property, NoSummaryEverQuotesASummaryHeader) {
    // compaction.105 at every level, with the extractive summarizer (which quotes its input's
    // sentences): a generated conversation is compacted, grows by tool rounds and exchanges, and
    // is compacted again three times, so summaries of every kind are summarized again. Every
    // text holds at most one summary header, at its start.
    const SummarizerInstance extractive =
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
    std::set<CompactionLevel> levels;
    int resummarized = 0;
    for (int seed = 1; seed <= kSeeds / 5; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Generated g = Generator(static_cast<std::uint64_t>(seed)).make();
        ConversationContext& c = g.conversation;
        c.add_tool(
            ToolDefinitionBlock{"read_file", "Reads a file.",
                                R"({"type":"object","properties":{"path":{"type":"string"}}})"});
        ContextWindowManager manager(extractive, g.settings);
        const std::int64_t reserve = output_reserve(c, g.model);
        bool summarized_before = false;
        for (int round = 0; round < 4; ++round) {
            if (round > 0) {
                for (int k = 0; k < 6; ++k) {
                    const std::string id = "grow" + std::to_string(round) + "_" + std::to_string(k);
                    c.add_message(tool_call(id + "c", {id + "u"}));
                    c.add_message(tool_results(id + "r", {id + "u"}, 25, seed * 10 + k));
                    c.add_message(Message::incoming_text("Done with " + id + "."));
                    c.add_message(Message::outgoing_text("Next: step " + id + "?"));
                }
            }
            CompactionReport r;
            try {
                r = manager.ensure_fits(c, g.model, reserve);
            } catch (const ContextOverflowException&) {
                break;
            }
            if (r.compacted()) {
                levels.insert(r.level);
                if (summarized_before) ++resummarized;
                summarized_before = true;
            }
            for (const Message& m : c.messages()) {
                for (const std::string& text : texts_of(m)) {
                    const std::size_t n = headers_in(text);
                    const bool at_start = text.starts_with("[Summary of") ||
                                          text.starts_with(R"({"summary":"[Summary of)");
                    EXPECT_TRUE(n == 0 || (n == 1 && at_start))
                        << "round " << round << ", message " << m.id << " holds " << n
                        << " summary headers: " << text.substr(0, 300);
                }
            }
            if (::testing::Test::HasFailure()) return;  // the first failing seed is the report
        }
    }
    // The generator reaches what the test is for: summaries summarized again, at several levels.
    EXPECT_GT(resummarized, kSeeds / 20);
    EXPECT_GE(levels.size(), 2U);
    RecordProperty("resummarized", resummarized);
}

}  // namespace
}  // namespace nucleo
