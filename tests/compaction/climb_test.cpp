// How far the ladder climbs for its target (compaction.116): a level that leaves the conversation
// under the halfway line between the target and the trigger ends the ladder, so a chat whose
// instructions and newest tool result hold most of a small window keeps its dialogue whole rather
// than being collapsed into one summary; a LIGHT summary is never asked for less than its floor,
// and the extractive summarizer keeps a tool output's first line (compaction.113).
#include <gtest/gtest.h>

#include <string>

#include "compaction_support.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

SummarizerInstance extractive() {
    return PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
}

Message pinned(Direction direction, const std::string& id, const std::string& text) {
    Message m = direction == Direction::kOutgoing ? Message::outgoing_text(text)
                                                  : Message::incoming_text(text);
    m.id = id;
    m.compactable = false;
    return m;
}

/// A search tool's output: a header line with the counts, then passages.
Message search_result(const std::string& id, const std::string& use_id, int sentences, int seed) {
    Message m = tool_results(id, {use_id}, sentences, seed);
    auto& result = std::get<ToolResultBlock>(m.blocks.front().value);
    auto& text = std::get<TextBlock>(result.content.front().value).text;
    text = "search " + use_id +
           ": 55 passages in 9 files mention it: glossary.md (22), "
           "emulator.md (16), operations.md (3)\n" +
           text;
    return m;
}

/// What nucleo demo holds at its third turn: long standing instructions, three exchanges pinned
/// by the agent loop (compaction.109), each with a search and its result, the newest result not
/// yet answered.
ConversationContext three_searches() {
    ConversationContext c = base("three-searches");
    c.put_main_objective("task", prose(230, 7));
    for (int k = 1; k <= 3; ++k) {
        const std::string n = std::to_string(k);
        c.add_message(pinned(Direction::kOutgoing, "q" + n, "Question " + n + ": search it?"));
        c.add_message(tool_call("a" + n, {"t" + n}));
        c.add_message(search_result("r" + n, "t" + n, k == 3 ? 120 : 90, k));
        if (k < 3) c.add_message(pinned(Direction::kIncoming, "ans" + n, "Answer " + n + "."));
    }
    return c;
}

bool has_message_summary(const ConversationContext& c) {
    for (const Message& m : c.messages()) {
        for (const ContentBlock& b : m.blocks) {
            const auto* t = b.get_if<TextBlock>();
            if (t != nullptr && t->text.starts_with(ContextWindowManager::kSummaryHeader)) {
                return true;
            }
        }
    }
    return false;
}

TEST(Climb, LightUnderTheHalfwayLineEndsTheLadderAndTheDialogueStaysWhole) {
    ConversationContext c = three_searches();
    const ConversationContext before = c;
    const ModelSpec model = test_model();
    ContextWindowSettings settings = test_settings();
    settings.compaction_target = 0.6;
    ContextWindowManager manager(extractive(), settings);
    const TokenCounter& counter = TokenCounter::for_model(model);
    // The premise: over the trigger, and what LIGHT may not touch (instructions, tools, pinned
    // texts, the calls and the newest result) already holds more than the target.
    const std::int64_t total = get_total_tokens(c, model);
    ASSERT_GT(total, 9200);
    std::int64_t untouchable = counter.fixed_tokens(c);
    for (const Message& m : c.messages()) {
        if (m.id != "r1" && m.id != "r2") untouchable += counter.count_message(m, &c.artifacts());
    }
    ASSERT_GT(untouchable, 6000) << "the fixture no longer keeps LIGHT from its target";

    const CompactionReport r = manager.ensure_fits(c, model, 512);
    EXPECT_EQ(r.level, CompactionLevel::kLight);
    EXPECT_FALSE(r.target_met());
    const std::int64_t halfway = r.target_tokens + (r.trigger_tokens - r.target_tokens) / 2;
    EXPECT_LE(r.tokens_after, halfway);
    EXPECT_FALSE(has_message_summary(c)) << "an exchange was summarized for the target alone";
    for (const char* id : {"a1", "a2", "a3", "r3"}) {
        ASSERT_NE(c.find_message(id), nullptr) << id;
        EXPECT_EQ(c.find_message(id)->blocks, before.find_message(id)->blocks) << id;
    }
    expect_survival(before, c);
    expect_no_orphans(c);

    // The floor: a LIGHT summary is asked for at least 128 tokens of a result over 256, and the
    // search's header line, its first, is what the extractive summarizer keeps first.
    ASSERT_EQ(r.summaries.size(), 2u);
    for (const CompactionSummary& s : r.summaries) {
        EXPECT_GE(s.target_tokens, 128) << s.message_id;
        const Message* m = c.find_message(s.message_id);
        ASSERT_NE(m, nullptr);
        const auto& result = std::get<ToolResultBlock>(m->blocks.front().value);
        const std::string& text = std::get<TextBlock>(result.content.front().value).text;
        EXPECT_NE(text.find("55 passages in 9 files"), std::string::npos) << text.substr(0, 200);
    }
}

TEST(Climb, OverTheHalfwayLineTheLadderStillClimbs) {
    // Plain questions and answers: LIGHT finds no tool result, so it leaves the conversation over
    // the halfway line and MODERATE runs, down to the target.
    ConversationContext c = moderate_fixture();
    const ConversationContext before = c;
    ContextWindowSettings settings = test_settings();
    settings.compaction_target = 0.6;
    const CompactionReport r =
        ContextWindowManager(extractive(), settings).ensure_fits(c, test_model(), 512);
    EXPECT_GE(r.level, CompactionLevel::kModerate);
    EXPECT_LE(r.tokens_after, r.target_tokens + (r.trigger_tokens - r.target_tokens) / 2);
    EXPECT_TRUE(has_message_summary(c));
    expect_survival(before, c);
    expect_no_orphans(c);
}

}  // namespace
}  // namespace nucleo
