// LIGHT as a first step that takes only what the aim needs (compaction.111 to compaction.114):
// summaries counted with the conversation's own counter and cut to their targets, the oldest tool
// results taken first and the most recent kept whole, earlier summaries taken again before the
// ladder moves up, the extractive summarizer landing on its target in the model's tokens, and what
// each summary request asks for.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "compaction_support.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

/// `rounds` tool rounds of about 1,500 tokens each after a pinned question.
ConversationContext tool_rounds(int rounds = 8) {
    ConversationContext c = base("rounds");
    Message q = Message::outgoing_text("Why does the build of module 7 fail?");
    q.id = "q";
    q.compactable = false;
    c.add_message(q);
    for (int k = 1; k <= rounds; ++k) {
        const std::string u = "t" + std::to_string(k);
        c.add_message(tool_call("a" + std::to_string(k), {u}));
        c.add_message(tool_results("r" + std::to_string(k), {u}, 95, k));
    }
    return c;
}

SummarizerInstance extractive() {
    return PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
}

/// Hysteresis off (the target is the trigger): LIGHT needs only a part of the results.
ContextWindowSettings trigger_as_target(std::int64_t window = 10000) {
    return {window, std::nullopt, kDefaultCompactionTrigger};
}

std::set<std::string> summarized_messages(const CompactionReport& r) {
    std::set<std::string> out;
    for (const CompactionSummary& s : r.summaries) out.insert(s.message_id);
    return out;
}

TEST(Light, TakesTheOldestResultsFirstAndOnlyWhatTheAimNeeds) {
    // 16 rounds in a 24,000 window: the older twelve can give what is needed.
    ConversationContext c = tool_rounds(16);
    const ConversationContext before = c;
    ASSERT_GT(get_total_tokens(c, test_model()), 20000);
    ModelSpec model = test_model();
    model.max_context_tokens = 40000;
    const CompactionReport r =
        ContextWindowManager(extractive(), trigger_as_target(24000)).ensure_fits(c, model, 512);
    ASSERT_EQ(r.level, CompactionLevel::kLight);
    const std::set<std::string> taken = summarized_messages(r);
    ASSERT_FALSE(taken.empty());
    // The taken results are the oldest ones: r1..rN with no gap.
    for (std::size_t k = 1; k <= taken.size(); ++k) {
        EXPECT_TRUE(taken.contains("r" + std::to_string(k))) << "r" << k << " skipped";
    }
    // compaction.112: the three most recent results stay whole, word for word.
    for (const char* id : {"r14", "r15", "r16"}) {
        ASSERT_NE(c.find_message(id), nullptr);
        EXPECT_EQ(c.find_message(id)->blocks, before.find_message(id)->blocks) << id;
    }
    // Only what the aim needs: at or under the target, and not far under it.
    EXPECT_LE(r.tokens_after, r.target_tokens);
    EXPECT_GE(r.tokens_after, r.target_tokens * 8 / 10) << "LIGHT cut far more than needed";
}

TEST(Light, TheRecentResultsAreTakenWhenTheOlderCannotGiveEnough) {
    ConversationContext c = tool_rounds();
    // The default hysteresis (0.65 of the trigger) needs more than the older five can give.
    const CompactionReport r =
        ContextWindowManager(extractive(), test_settings()).ensure_fits(c, test_model(), 512);
    EXPECT_EQ(r.level, CompactionLevel::kLight);
    EXPECT_TRUE(summarized_messages(r).contains("r6"));
    EXPECT_LE(r.tokens_after, r.target_tokens);
}

TEST(Light, AResultSummarizedBeforeIsTakenAgainBeforeExchangesAre) {
    // compaction.112: the second compaction shortens the first one's result summaries (their
    // bodies, compaction.105) rather than moving up to MODERATE.
    ConversationContext c = tool_rounds();
    ContextWindowManager manager(extractive(), trigger_as_target());
    const CompactionReport first = manager.ensure_fits(c, test_model(), 512);
    ASSERT_EQ(first.level, CompactionLevel::kLight);
    for (int k = 9; k <= 12; ++k) {
        const std::string u = "t" + std::to_string(k);
        c.add_message(tool_call("a" + std::to_string(k), {u}));
        c.add_message(tool_results("r" + std::to_string(k), {u}, 40, k));
    }
    const CompactionReport second = manager.ensure_fits(c, test_model(), 512);
    ASSERT_EQ(second.level, CompactionLevel::kLight);
    const std::set<std::string> again = summarized_messages(second);
    EXPECT_TRUE(again.contains("r1")) << "the oldest summary was not taken again";
    EXPECT_LE(second.tokens_after, second.target_tokens);
}

TEST(Light, TheExtractiveSummarizerCountsWithTheConversationsCounter) {
    // compaction.111: the summarizer reports the size of what it wrote by the model's counter
    // ("nucleo.host.tokens/1"), which is the count the core makes of the same text.
    ConversationContext c = tool_rounds();
    const CompactionReport r =
        ContextWindowManager(extractive(), test_settings()).ensure_fits(c, test_model(), 512);
    ASSERT_FALSE(r.summaries.empty());
    const TokenCounter& counter = TokenCounter::for_model(test_model());
    const std::string header = "[Summary of the tool result] ";
    for (const CompactionSummary& s : r.summaries) {
        const Message* m = c.find_message(s.message_id);
        ASSERT_NE(m, nullptr);
        const auto& result = std::get<ToolResultBlock>(m->blocks.front().value);
        const std::string& text = std::get<TextBlock>(result.content.front().value).text;
        ASSERT_TRUE(text.starts_with(header)) << text.substr(0, 80);
        EXPECT_EQ(s.reported_tokens, counter.count_text(text.substr(header.size())))
            << s.message_id << ": the plugin did not count with the conversation's counter";
        EXPECT_LE(s.summary_tokens, s.target_tokens) << s.message_id;
        EXPECT_FALSE(s.cut) << s.message_id << ": the extractive summary needed the core's cut";
    }
}

std::vector<std::string> read_lines(const std::string& path) {
    std::vector<std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

TEST(SummaryRequests, AskForAHandoffOfMessagesAndAVerbatimShorteningOfToolOutput) {
    // compaction.114: a run of messages is asked for as a handoff with headings, with the
    // standing instructions as context; a tool result as a verbatim shortening; both within their
    // targets in the model's tokens (compaction.111).
    const std::string record =
        ::testing::TempDir() + "requests-" + std::to_string(::getpid()) + ".jsonl";
    std::remove(record.c_str());
    ConversationContext c = moderate_fixture();
    for (int k = 1; k <= 3; ++k) {
        const std::string u = "t" + std::to_string(k);
        c.add_message(tool_call("a" + std::to_string(k), {u}));
        c.add_message(tool_results("r" + std::to_string(k), {u}, 40, k));
    }
    c.add_message(Message::outgoing_text("And now?"));
    const CompactionReport r =
        ContextWindowManager(scripted(R"({"record_to":")" + record + R"("})"), test_settings())
            .ensure_fits(c, test_model(), 512);
    ASSERT_TRUE(r.compacted());
    int handoffs = 0, tool_outputs = 0;
    for (const std::string& line : read_lines(record)) {
        rapidjson::Document req;
        ASSERT_FALSE(req.Parse(line.c_str()).HasParseError()) << line.substr(0, 200);
        const std::string instructions = req["instructions"].GetString();
        EXPECT_STREQ(req["objective"].GetString(), "You fix build failures in the repository.");
        EXPECT_TRUE(req["token_counter"].IsString());
        if (instructions.find("User requests:") != std::string::npos) {
            ++handoffs;
            for (const char* heading : {"Objective:", "Decisions:", "Files and identifiers:",
                                        "Errors:", "Done:", "Next:"}) {
                EXPECT_NE(instructions.find(heading), std::string::npos) << heading;
            }
        } else {
            EXPECT_NE(instructions.find("one tool call"), std::string::npos) << instructions;
            ++tool_outputs;
        }
    }
    EXPECT_GT(handoffs, 0);
    EXPECT_GT(tool_outputs, 0);
    std::remove(record.c_str());
}

}  // namespace
}  // namespace nucleo
