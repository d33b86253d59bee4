// The ladder always finds the fit that exists and never loses the question (compaction.101 to
// compaction.106): the stop rule counts the output reserve, the latest message survives every
// level, a pinned side of a tool pair does not shield the other side from LIGHT, summaries never
// grow and never nest, and a refusal carries its numbers and changes nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "compaction_support.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

/// gpt-4o-mini as the catalog has it: 128,000 context, 16,384 output at EXTENDED.
ModelSpec mini() {
    ModelSpec m;
    m.id = "gpt-4o-mini";
    m.provider = "openai";
    m.wire_model = "gpt-4o-mini-2024-07-18";
    m.max_context_tokens = 128000;
    m.max_output_tokens = 16384;
    m.output_budget = {{OutputSize::kShort, 1024},
                       {OutputSize::kMedium, 4096},
                       {OutputSize::kLong, 8192},
                       {OutputSize::kExtended, 16384}};
    m.native_tools = true;
    m.token_counter = "o200k_base";
    return m;
}

std::int64_t tokens_of(const ConversationContext& c) {
    return get_total_tokens(c, test_model());
}

std::size_t occurrences(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string_view::npos; p = text.find(what, p + 1)) {
        ++n;
    }
    return n;
}

TEST(Fit, UnderTheTriggerButOverTheReserveKeepsClimbing) {
    // compaction.101: with the default comfort window the trigger is 117,760 tokens, but the
    // EXTENDED reserve leaves 128,000 − 16,384 = 111,616 for the input. A conversation between
    // the two is under the trigger after LIGHT (which finds nothing) and must still be compacted.
    const ModelSpec model = mini();
    ConversationContext c = base("mini");
    c.set_output(OutputSize::kExtended);
    for (int k = 1; get_total_tokens(c, model) < 114000; ++k) {
        c.add_message(Message::outgoing_text("Question " + std::to_string(k) + ": " + prose(60, k)));
        c.add_message(Message::incoming_text("Answer " + std::to_string(k) + ": " + prose(60, k + 500)));
    }
    c.add_message(Message::outgoing_text("What is left to fix?"));
    const std::int64_t reserve = output_reserve(c, model);
    ASSERT_EQ(reserve, 16384);
    const std::int64_t n = get_total_tokens(c, model);
    ASSERT_GT(n + reserve, 128000);
    ASSERT_LT(n, 117760);

    const ConversationContext before = c;
    ContextWindowManager manager(scripted());
    const CompactionReport r = manager.ensure_fits(c, model, reserve);
    EXPECT_GE(r.level, CompactionLevel::kModerate);
    EXPECT_EQ(r.tokens_after, get_total_tokens(c, model));
    EXPECT_LE(r.tokens_after + reserve, 128000);
    EXPECT_LE(r.tokens_after, r.trigger_tokens);
    EXPECT_TRUE(r.target_met());
    expect_survival(before, c);
    expect_no_orphans(c);
    EXPECT_EQ(c.messages().back().id, before.messages().back().id);
}

TEST(Fit, ARefusalNamesInputReserveLimitAndLevelAndChangesNothing) {
    // compaction.101 and the bad-input rule: pinned content alone over the hard room.
    ConversationContext c = base("refused");
    Message huge = Message::outgoing_text(prose(1300, 1));
    huge.compactable = false;
    c.add_message(huge);
    for (int k = 0; k < 30; ++k) {
        c.add_message(Message::incoming_text("Answer " + std::to_string(k) + ": " + prose(8, k)));
        c.add_message(Message::outgoing_text("Next " + std::to_string(k) + ": " + prose(8, k + 50)));
    }
    const std::int64_t n = tokens_of(c);
    const std::string before = write_conversation_document(c);
    ContextWindowManager manager(scripted(), test_settings());
    try {
        manager.ensure_fits(c, test_model(), 4000);
        FAIL() << "pinned content over the hard room must be refused";
    } catch (const ContextOverflowException& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("from " + std::to_string(n)), std::string::npos) << what;
        EXPECT_NE(what.find("4000 reserved"), std::string::npos) << what;
        EXPECT_NE(what.find("20000-token context"), std::string::npos) << what;
        EXPECT_NE(what.find("MAXIMUM"), std::string::npos) << what;
    }
    EXPECT_EQ(write_conversation_document(c), before);
}

TEST(LastMessage, AQuestionSurvivesAggressiveAndMaximum) {
    // compaction.102: the latest question is kept by position at every level.
    for (const char* config : {"{}", R"({"overshoot":3.0})"}) {
        SCOPED_TRACE(config);
        ConversationContext c = config == std::string("{}") ? aggressive_fixture()
                                                            : maximum_fixture();
        const ConversationContext before = c;
        ContextWindowManager manager(scripted(config), test_settings());
        const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
        EXPECT_GE(r.level, CompactionLevel::kAggressive);
        EXPECT_LE(r.tokens_after, r.trigger_tokens);
        ASSERT_FALSE(c.messages().empty());
        EXPECT_EQ(c.messages().back().id, before.messages().back().id);
        EXPECT_EQ(c.messages().back().blocks, before.messages().back().blocks);
        expect_survival(before, c);
        expect_no_orphans(c);
    }
}

TEST(LastMessage, AConversationEndingWithAnAnswerStillEndsWithIt) {
    // compaction.102: a compacted conversation ends with the message it ended with.
    ConversationContext c = aggressive_fixture();
    Message answer = Message::incoming_text("Done: src/f1.cpp to src/f380.cpp are clean.");
    answer.id = "final-answer";
    c.add_message(answer);
    const ConversationContext before = c;
    ContextWindowManager manager(scripted(R"({"overshoot":3.0})"), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_GE(r.level, CompactionLevel::kAggressive);
    EXPECT_EQ(c.messages().back().id, "final-answer");
    EXPECT_EQ(c.messages().back().blocks, before.messages().back().blocks);
    expect_survival(before, c);
    expect_no_orphans(c);
}

TEST(PinnedPairs, AResultNextToAPinnedCallIsSummarizedAtLight) {
    // compaction.103: the pair stays whole (the call word for word, the result's block and id),
    // and the result's content is summarized in place.
    ConversationContext c = base("pinned-call");
    Message q = Message::outgoing_text("Why does module 7 fail?");
    q.compactable = false;
    c.add_message(q);
    Message call = tool_call("a1", {"t1"});
    call.compactable = false;
    c.add_message(call);
    c.add_message(tool_results("r1", {"t1"}, 700, 1));
    c.add_message(Message::incoming_text("The log says parseConfig fails."));
    c.add_message(Message::outgoing_text("Fix it."));
    ASSERT_GT(tokens_of(c), 9200);
    const ConversationContext before = c;
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_EQ(r.level, CompactionLevel::kLight);
    EXPECT_LE(r.tokens_after, r.trigger_tokens);
    ASSERT_EQ(c.messages().size(), before.messages().size());
    const Message* result = c.find_message("r1");
    ASSERT_NE(result, nullptr);
    const auto* block = result->blocks.front().get_if<ToolResultBlock>();
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->tool_use_id, "t1");
    EXPECT_TRUE(block->content.front().get_if<TextBlock>()->text.starts_with(
        "[Summary of the tool result]"));
    expect_survival(before, c);
    expect_no_orphans(c);
}

TEST(PinnedPairs, ACallNextToAPinnedResultHasItsInputSummarizedAtLight) {
    // compaction.103: a compactable tool_use whose result is pinned keeps its id and name; its
    // large input becomes {"summary": "..."} in place, and the pinned result stays word for word.
    ConversationContext c = base("pinned-result");
    c.add_message(Message::outgoing_text("Write the report."));
    Message call;
    call.id = "a1";
    call.direction = Direction::kIncoming;
    call.blocks.push_back(ToolUseBlock{"w1", "read_file",
                                       R"({"path":"report.md","content":")" + prose(700, 4) + R"("})"});
    c.add_message(call);
    Message result;
    result.id = "r1";
    result.blocks.push_back(ToolResultBlock{"w1", {TextBlock{"written"}}, false});
    result.compactable = false;
    c.add_message(result);
    c.add_message(Message::incoming_text("Done."));
    c.add_message(Message::outgoing_text("Thanks, now the summary."));
    ASSERT_GT(tokens_of(c), 9200);
    const ConversationContext before = c;
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_EQ(r.level, CompactionLevel::kLight);
    EXPECT_LE(r.tokens_after, r.trigger_tokens);
    const auto* use = c.find_message("a1")->blocks.front().get_if<ToolUseBlock>();
    ASSERT_NE(use, nullptr);
    EXPECT_EQ(use->id, "w1");
    EXPECT_EQ(use->name, "read_file");
    EXPECT_TRUE(use->input_json.starts_with(R"({"summary":"[Summary of the tool call input])"))
        << use->input_json.substr(0, 80);
    expect_survival(before, c);
    expect_no_orphans(c);
}

TEST(Summaries, NeverLongerThanWhatTheyReplace) {
    // compaction.104: pinned content keeps the conversation above the trigger; what may be
    // summarized is a few tiny messages, whose summary (header included) would be longer.
    ConversationContext c = base("tiny");
    Message big = Message::outgoing_text(prose(700, 2));
    big.compactable = false;
    c.add_message(big);
    c.add_message(Message::incoming_text("Ok."));
    c.add_message(Message::outgoing_text("Go on."));
    c.add_message(Message::incoming_text("Sure."));
    Message last = Message::outgoing_text("Next?");
    last.compactable = false;
    c.add_message(last);
    const std::int64_t n = tokens_of(c);
    ASSERT_GT(n, 9200);
    ContextWindowManager manager(scripted(R"({"overshoot":3.0})"), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_LE(r.tokens_after, n) << "compaction made the conversation longer";
    for (const CompactionSummary& s : r.summaries) {
        EXPECT_LT(s.summary_tokens, s.source_tokens) << s.message_id;
    }
    EXPECT_FALSE(r.target_met());
    EXPECT_TRUE(r.accepted_above_trigger);
}

TEST(Summaries, ResummarizingReplacesInsteadOfNesting) {
    // compaction.105: a summary summarized again is replaced; its header is not quoted inside
    // the new one.
    ConversationContext c = aggressive_fixture();
    ContextWindowManager manager(scripted(), test_settings());
    CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    ASSERT_GE(r.level, CompactionLevel::kAggressive);
    for (int k = 1000; k < 1380; ++k) {
        c.add_message(Message::outgoing_text("Is file src/g" + std::to_string(k) + ".cpp clean?"));
        c.add_message(Message::incoming_text("File src/g" + std::to_string(k) + ".cpp has " +
                                             std::to_string(k % 5) + " issues."));
    }
    c.add_message(Message::outgoing_text("And now?"));
    r = manager.ensure_fits(c, test_model(), 512);
    ASSERT_TRUE(r.compacted());
    std::size_t summaries = 0;
    for (const Message& m : c.messages()) {
        const std::string text = compaction::render_for_summary(m);
        const std::size_t headers = occurrences(text, ContextWindowManager::kSummaryHeader);
        EXPECT_LE(headers, 1U) << "nested summary in " << m.id << ": " << text.substr(0, 200);
        summaries += headers;
    }
    EXPECT_GE(summaries, 1U);
}


// compaction.108: with a target the ladder goes down to it, not just under the trigger, and the
// report counts the cached prefix the compaction gave up.
TEST(Hysteresis, ACompactionGoesDownToTheTargetAndCountsTheCacheGivenUp) {
    const ModelSpec model = test_model();
    ConversationContext plain = moderate_fixture();
    ContextWindowSettings off = test_settings();
    off.compaction_target = off.compaction_trigger.value_or(kDefaultCompactionTrigger);
    ContextWindowManager at_trigger(scripted(), off);  // the trigger as target: hysteresis off
    const CompactionReport r0 = at_trigger.ensure_fits(plain, model, 512);
    ASSERT_TRUE(r0.compacted());
    EXPECT_EQ(r0.target_tokens, r0.trigger_tokens);
    // compaction.110: unset, the target is 0.65 of the trigger (5,980 of a 10,000 limit).
    EXPECT_EQ(ContextWindowManager(scripted(), test_settings()).target_tokens(model), 5980);

    ConversationContext c = moderate_fixture();
    const ConversationContext before = c;
    ContextWindowSettings settings = test_settings();
    settings.compaction_target = 0.6;
    ContextWindowManager manager(scripted(), settings);
    EXPECT_EQ(manager.target_tokens(model), 6000);
    const CompactionReport r = manager.ensure_fits(c, model, 512);
    ASSERT_TRUE(r.compacted());
    EXPECT_EQ(r.trigger_tokens, 9200);
    EXPECT_EQ(r.target_tokens, 6000);
    EXPECT_LE(r.tokens_after, 6000);
    EXPECT_TRUE(r.target_met());
    EXPECT_LE(r.tokens_after, r0.tokens_after);
    expect_survival(before, c);
    expect_no_orphans(c);

    // The old messages from the first one that changed, by the model's counter.
    const TokenCounter& counter = TokenCounter::for_model(model);
    std::size_t same = 0;
    while (same < c.messages().size() && c.messages()[same].id == before.messages()[same].id &&
           c.messages()[same].blocks == before.messages()[same].blocks)
        ++same;
    std::int64_t given_up = 0;
    for (std::size_t i = same; i < before.messages().size(); ++i)
        given_up += counter.count_message(before.messages()[i], &before.artifacts());
    EXPECT_GT(given_up, 0);
    EXPECT_EQ(r.cached_tokens_given_up, given_up);
    EXPECT_LE(r.cached_tokens_given_up, r.tokens_before);

    // Under the trigger nothing happens and nothing is given up, target or not.
    const CompactionReport again = manager.ensure_fits(c, model, 512);
    EXPECT_FALSE(again.compacted());
    EXPECT_EQ(again.cached_tokens_given_up, 0);
}

TEST(Hysteresis, ATargetAboveTheTriggerOrNotPositiveIsRefusedAndChangesNothing) {
    // The trigger itself (0.92) is allowed: it turns hysteresis off (compaction.110).
    for (const double target : {0.921, 0.95, 0.0, -0.1}) {
        ConversationContext c = moderate_fixture();
        const std::size_t n = c.messages().size();
        ContextWindowSettings settings = test_settings();
        settings.compaction_target = target;
        ContextWindowManager manager(scripted(), settings);
        try {
            (void)manager.ensure_fits(c, test_model(), 512);
            ADD_FAILURE() << "target " << target << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
            EXPECT_NE(std::string(e.what()).find("compaction_target"), std::string::npos);
        }
        EXPECT_EQ(c.messages().size(), n);
    }
}

}  // namespace
}  // namespace nucleo
