// The running summary (compaction.117): a conversation compacted again at MODERATE keeps one
// summary of earlier messages, updated in place with what came after it, rather than a chain of
// summaries that grows by one per exchange.
#include <gtest/gtest.h>

#include <string>

#include "compaction_support.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

SummarizerInstance extractive() {
    return PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
}

int message_summaries(const ConversationContext& c) {
    int n = 0;
    for (const Message& m : c.messages()) {
        if (m.blocks.size() != 1) continue;
        const auto* t = m.blocks.front().get_if<TextBlock>();
        if (t != nullptr && t->text.starts_with(ContextWindowManager::kSummaryHeader)) ++n;
    }
    return n;
}

/// Plain exchanges numbered from `first`, then a pending question.
void add_exchanges(ConversationContext& c, int first, int count) {
    for (int k = first; k < first + count; ++k) {
        c.add_message(
            Message::outgoing_text("Question " + std::to_string(k) + ": " + prose(25, k)));
        c.add_message(
            Message::incoming_text("Answer " + std::to_string(k) + ": " + prose(25, 100 + k)));
    }
}

TEST(RunningSummary, ASecondModerateFoldsWhatFollowsIntoTheFirstSummary) {
    ConversationContext c = moderate_fixture();
    const ModelSpec model = test_model();
    // The trigger as target (hysteresis off): each compaction stops just under the trigger, so
    // the conversation comes back to it after a few exchanges.
    ContextWindowManager manager(extractive(), {10000, std::nullopt, kDefaultCompactionTrigger});
    const CompactionReport first = manager.ensure_fits(c, model, 512);
    ASSERT_EQ(first.level, CompactionLevel::kModerate);
    ASSERT_GE(message_summaries(c), 2) << "the first MODERATE makes one summary per exchange";

    for (int round = 0; round < 3; ++round) {
        add_exchanges(c, 20 + 10 * round, 6);
        c.add_message(Message::outgoing_text("And now?"));
        const ConversationContext before = c;
        const CompactionReport again = manager.ensure_fits(c, model, 512);
        ASSERT_TRUE(again.compacted()) << "round " << round;
        ASSERT_EQ(again.level, CompactionLevel::kModerate) << "round " << round;
        // One summary of earlier messages, at the place of the first one, holding one header.
        EXPECT_EQ(message_summaries(c), 1) << "round " << round;
        const Message& head = c.messages().front();
        const std::string& text = std::get<TextBlock>(head.blocks.front().value).text;
        ASSERT_TRUE(text.starts_with(ContextWindowManager::kSummaryHeader)) << text.substr(0, 80);
        EXPECT_EQ(text.find(ContextWindowManager::kSummaryHeader, 1), std::string::npos);
        EXPECT_LE(again.tokens_after, again.trigger_tokens);
        expect_survival(before, c);
        expect_no_orphans(c);
        EXPECT_EQ(c.messages().back().blocks, before.messages().back().blocks);
    }
}

}  // namespace
}  // namespace nucleo
