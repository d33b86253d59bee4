// The ContextWindowManager and the ladder (docs/spec/compaction.md): each level reached on a
// fixture made to need it, each failure rule with a real failing summarizer plugin, the survival
// rules on every level, overflow with the conversation unchanged.
#include <gtest/gtest.h>

#include "compaction_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

std::int64_t tokens(const ConversationContext& c) {
    return get_total_tokens(c, test_model());
}

/// Runs ensure_fits and checks what holds after every successful compaction.
CompactionReport compact(ConversationContext& c, const std::string& summarizer_config = "{}") {
    const ConversationContext before = c;
    ContextWindowManager manager(scripted(summarizer_config), test_settings());
    CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    expect_survival(before, c);
    expect_no_orphans(c);
    EXPECT_EQ(r.tokens_after, tokens(c));
    EXPECT_LE(r.tokens_after, r.trigger_tokens)
        << "stopped above the trigger at " << to_string(r.level);
    return r;
}

TEST(ContextWindow, ComfortResolvesThinkerThenCatalogThenDefault) {
    // compaction.1: "A thinker sets its own with ContextWindowSettings::comfort_context_tokens ...;
    // otherwise the model's catalog entry gives it as comfort_context_tokens; otherwise it is
    // kDefaultComfortContextTokens, 128,000 tokens."
    ModelSpec m = test_model();
    m.max_context_tokens = 200000;
    const SummarizerInstance s = scripted();
    EXPECT_EQ(ContextWindowManager(s).comfort_window(m), 128000);
    m.comfort_context_tokens = 90000;
    EXPECT_EQ(ContextWindowManager(s).comfort_window(m), 90000);
    EXPECT_EQ(ContextWindowManager(s, {50000, std::nullopt}).comfort_window(m), 50000);
    // "The limit Nucleo keeps to is the smaller of the comfort window and the model's hard limit."
    EXPECT_EQ(ContextWindowManager(s, {300000, std::nullopt}).limit(m), 200000);
    EXPECT_EQ(ContextWindowManager(s).limit(m), 90000);
}

TEST(ContextWindow, TriggerDefaultsTo092AndStartsAbout118000) {
    // compaction.3: "With the defaults, on a model whose hard limit is larger than 128,000 tokens,
    // compaction starts once the conversation passes about 118,000 tokens."
    ModelSpec m = test_model();
    m.max_context_tokens = 200000;
    const ContextWindowManager manager(scripted());
    EXPECT_DOUBLE_EQ(manager.trigger(), 0.92);
    EXPECT_EQ(manager.trigger_tokens(m), 117760);
    EXPECT_DOUBLE_EQ(ContextWindowManager(scripted(), {std::nullopt, 0.5}).trigger(), 0.5);
    EXPECT_THROW(ContextWindowManager(scripted(), {std::nullopt, 1.5}), Error);
}

TEST(Ladder, UnderTheTriggerNothingHappens) {
    ConversationContext c = base("small");
    c.add_message(Message::outgoing_text("Hello"));
    const ConversationContext before = c;
    const CompactionReport r =
        ContextWindowManager(scripted(), test_settings()).ensure_fits(c, test_model(), 512);
    EXPECT_EQ(r.level, CompactionLevel::kNone);
    EXPECT_FALSE(r.compacted());
    EXPECT_EQ(write_conversation_document(c), write_conversation_document(before));
}

TEST(Ladder, LightSummarizesOnlyToolResults) {
    // compaction.11: "LIGHT | Only tool results; everything else stays as it was".
    ConversationContext c = light_fixture();
    const ConversationContext before = c;
    ASSERT_GT(tokens(c), 9200);
    const CompactionReport r = compact(c);
    EXPECT_EQ(r.level, CompactionLevel::kLight);
    ASSERT_EQ(c.messages().size(), before.messages().size());
    for (std::size_t i = 0; i < c.messages().size(); ++i) {
        const Message& m = c.messages()[i];
        EXPECT_EQ(m.id, before.messages()[i].id);
        if (m.blocks.front().is<ToolResultBlock>()) continue;
        EXPECT_EQ(m.blocks, before.messages()[i].blocks) << "LIGHT touched " << m.id;
    }
    // "The most recent message your side sent is left as it is below AGGRESSIVE."
    EXPECT_EQ(c.messages().back().blocks, before.messages().back().blocks);
    for (const CompactionSummary& s : r.summaries) EXPECT_EQ(s.level, CompactionLevel::kLight);
    EXPECT_EQ(r.summaries.size(), 6U);
    EXPECT_GT(r.cost(), 0.0);
}

TEST(Ladder, ModerateMakesOneSummaryPerExchangeOlderShorter) {
    // compaction.12: "MODERATE | Each exchange ... becomes one summary; the older the exchange, the
    // shorter its summary".
    ConversationContext c = moderate_fixture();
    const ConversationContext before = c;
    ASSERT_GT(tokens(c), 9200);
    const CompactionReport r = compact(c);
    EXPECT_EQ(r.level, CompactionLevel::kModerate);
    ASSERT_GE(r.summaries.size(), 3U);
    for (const CompactionSummary& s : r.summaries) {
        EXPECT_EQ(s.level, CompactionLevel::kModerate);
        EXPECT_LE(s.replaced.size(), 2U) << "an exchange is one answer and what followed it";
    }
    EXPECT_LT(r.summaries.front().target_tokens, r.summaries.back().target_tokens);
    EXPECT_EQ(c.messages().back().blocks, before.messages().back().blocks);
    EXPECT_TRUE(c.messages().front().app_authored);
}

TEST(Ladder, AggressiveCollapsesEverythingCompactableIntoOne) {
    // compaction.13: "AGGRESSIVE | Everything that may be compacted becomes one summary of the
    // whole conversation".
    ConversationContext c = aggressive_fixture();
    ASSERT_GT(tokens(c), 9200);
    const CompactionReport r = compact(c);
    EXPECT_EQ(r.level, CompactionLevel::kAggressive);
    ASSERT_EQ(r.summaries.size(), 1U);
    // What is left: the non-compactable instruction, the one summary and the latest question,
    // kept by position (compaction.102).
    ASSERT_EQ(c.messages().size(), 3U);
    EXPECT_FALSE(c.messages()[0].compactable);
    EXPECT_EQ(c.messages()[1].id, r.summaries.front().message_id);
    EXPECT_NE(compaction::render_for_summary(c.messages()[2]).find("Summarize"), std::string::npos);
    // The reference survives (the question that carries it is kept).
    EXPECT_NE(all_text(c).find("\xC2\xAB"
                               "artifact:log~a1b2c3\xC2\xBB"),
              std::string::npos);
}

TEST(Ladder, AggressiveGivesTheLastToolResultASummaryOfItsOwn) {
    // compaction.15: "at AGGRESSIVE, when it is a tool result, it gets a summary of its own".
    ConversationContext c = light_fixture();
    const ConversationContext before = c;
    const CompactionReport r = compact(c, R"({"fail_levels":["LIGHT","MODERATE"]})");
    EXPECT_EQ(r.level, CompactionLevel::kAggressive);
    const Message& last = c.messages().back();
    EXPECT_EQ(last.id, "r7");
    const auto* result = last.blocks.front().get_if<ToolResultBlock>();
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(result->tool_use_id, "t7");
    ASSERT_EQ(result->content.size(), 1U);
    EXPECT_TRUE(result->content.front().get_if<TextBlock>()->text.starts_with(
        "[Summary of the tool result]"));
    // The call it answers stays, word for word.
    ASSERT_NE(c.find_message("a7"), nullptr);
    EXPECT_EQ(c.find_message("a7")->blocks, before.find_message("a7")->blocks);
}

TEST(Ladder, MaximumGuaranteesAFitWhereAggressiveDidNot) {
    // AGGRESSIVE's summary fails (its originals kept, compaction.20); MAXIMUM asks for what the
    // fit needs and cuts an overshooting answer to it.
    ConversationContext c = maximum_fixture();
    const CompactionReport r = compact(c, R"({"overshoot":3.0,"fail_levels":["AGGRESSIVE"]})");
    EXPECT_EQ(r.level, CompactionLevel::kMaximum);
    ASSERT_FALSE(r.summaries.empty());
    EXPECT_TRUE(std::any_of(r.summaries.begin(), r.summaries.end(),
                            [](const CompactionSummary& s) { return s.cut; }));
    for (const CompactionSummary& s : r.summaries) {
        if (s.level != CompactionLevel::kMaximum) continue;
        EXPECT_LE(s.summary_tokens, s.target_tokens) << "MAXIMUM's cut is bounded by the target";
    }
}

TEST(Ladder, AnAnswerOverItsTargetIsCutToItAtEveryLevel) {
    // compaction.111: a summarizer three times over its target no longer pushes the ladder up:
    // AGGRESSIVE cuts its summary to the target and fits.
    ConversationContext c = aggressive_fixture(600);
    const CompactionReport r = compact(c, R"({"overshoot":3.0})");
    EXPECT_EQ(r.level, CompactionLevel::kAggressive);
    ASSERT_FALSE(r.summaries.empty());
    for (const CompactionSummary& s : r.summaries) {
        EXPECT_TRUE(s.cut) << s.message_id;
        EXPECT_LE(s.summary_tokens, s.target_tokens) << s.message_id;
    }
}

TEST(Ladder, AFailureAtLightKeepsTheResultsAndMovesUp) {
    // compaction.20: "Below MAXIMUM, a summary that fails keeps the original messages and the
    // ladder moves to the next level".
    ConversationContext c = light_fixture();
    const CompactionReport r = compact(c, R"({"fail_levels":["LIGHT"]})");
    EXPECT_EQ(r.level, CompactionLevel::kModerate);
    ASSERT_FALSE(r.failures.empty());
    EXPECT_NE(r.failures.front().find("LIGHT"), std::string::npos) << r.failures.front();
    for (const CompactionSummary& s : r.summaries) EXPECT_EQ(s.level, CompactionLevel::kModerate);
}

TEST(Ladder, AnEmptyOrInvalidUtf8SummaryIsAFailureAndTheOriginalsStay) {
    // compaction.115: a summarizer that answers nothing, or bytes that are not UTF-8, never puts
    // them in the conversation: each is a failed summary, listed, and MAXIMUM fails the call with
    // the conversation as it was.
    for (const char* answer : {"empty", "bad_utf8"}) {
        SCOPED_TRACE(answer);
        ConversationContext c = light_fixture();
        const std::string before = write_conversation_document(c);
        ContextWindowManager manager(scripted(std::string(R"({"answer":")") + answer + "\"}"),
                                     test_settings());
        try {
            (void)manager.ensure_fits(c, test_model(), 512);
            ADD_FAILURE() << "a conversation took a summary that said nothing";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(std::string(answer) == "empty"
                                                     ? "the summary is empty"
                                                     : "the summary is not valid UTF-8"),
                      std::string::npos)
                << e.what();
        }
        EXPECT_EQ(write_conversation_document(c), before);
    }
}

TEST(Ladder, AFailureAtModerateKeepsTheExchangesAndMovesUp) {
    ConversationContext c = moderate_fixture();
    const CompactionReport r = compact(c, R"({"fail_levels":["MODERATE"]})");
    EXPECT_EQ(r.level, CompactionLevel::kAggressive);
    ASSERT_FALSE(r.failures.empty());
    EXPECT_NE(r.failures.front().find("MODERATE"), std::string::npos);
    ASSERT_EQ(r.summaries.size(), 1U);
    EXPECT_EQ(r.summaries.front().level, CompactionLevel::kAggressive);
}

TEST(Ladder, AFailureAtMaximumFailsTheCallAndChangesNothing) {
    // compaction.20: "A failure at MAXIMUM fails the call."
    ConversationContext c = aggressive_fixture();
    const std::string before = write_conversation_document(c);
    ContextWindowManager manager(scripted(R"({"fail_levels":["AGGRESSIVE","MAXIMUM"]})"),
                                 test_settings());
    try {
        manager.ensure_fits(c, test_model(), 512);
        FAIL() << "a failure at MAXIMUM must fail the call";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        EXPECT_NE(std::string(e.what()).find("MAXIMUM"), std::string::npos) << e.what();
    }
    EXPECT_EQ(write_conversation_document(c), before);
}

TEST(Ladder, ParallelCallsAreSummarizedOrKeptTogetherAtEveryLevel) {
    // compaction.32: "never an orphan on either side, also with parallel calls in one turn".
    for (const char* config :
         {"{}", R"({"fail_levels":["LIGHT"]})", R"({"fail_levels":["LIGHT","MODERATE"]})",
          R"({"fail_levels":["LIGHT","MODERATE"],"overshoot":3.0})"}) {
        SCOPED_TRACE(config);
        ConversationContext c = parallel_fixture();
        ContextWindowManager manager(scripted(config), {2500, std::nullopt});
        const ConversationContext before = c;
        const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
        EXPECT_NE(r.level, CompactionLevel::kNone);
        expect_survival(before, c);
        expect_no_orphans(c);
        // r2 is not compactable, so the call a2 it answers is kept word for word too.
        ASSERT_NE(c.find_message("a2"), nullptr);
        EXPECT_EQ(c.find_message("a2")->blocks, before.find_message("a2")->blocks);
    }
}

TEST(Overflow, WhatCannotFitIsRefusedAndTheConversationIsUnchanged) {
    // compaction.21: "When it does not fit, the call fails with ContextOverflowException".
    ConversationContext c = base("overflow");
    Message huge = Message::outgoing_text(prose(1400, 1));
    huge.compactable = false;
    c.add_message(huge);
    ASSERT_GT(tokens(c), 20000 - 512);
    const std::string before = write_conversation_document(c);
    ContextWindowManager manager(scripted(), test_settings());
    EXPECT_THROW(manager.ensure_fits(c, test_model(), 512), ContextOverflowException);
    EXPECT_EQ(write_conversation_document(c), before);
}

TEST(Overflow, AboveComfortIsAcceptedWhileTheHardLimitHoldsTheReserve) {
    // compaction.21: "A conversation that is still above the comfort window after the ladder is
    // accepted as long as the whole call fits the model's hard limit, counting the room reserved
    // for the answer."
    ConversationContext c = base("accepted");
    Message big = Message::outgoing_text(prose(800, 2));
    big.compactable = false;
    c.add_message(big);
    const std::int64_t n = tokens(c);
    ASSERT_GT(n, 9200);
    ASSERT_LT(n + 512, 20000);
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_TRUE(r.accepted_above_trigger);
    EXPECT_EQ(r.tokens_after, n);
    // The same call with a reserve that does not fit the hard limit is refused.
    EXPECT_THROW(manager.ensure_fits(c, test_model(), 20000 - n + 1), ContextOverflowException);
}

TEST(Overflow, ANonCompactableConversationIsNeverCompacted) {
    // compaction.34: "A conversation marked compactable=false on its ConversationContext is
    // never compacted."
    ConversationContext c = light_fixture();
    c.set_compactable(false);
    const std::string before = write_conversation_document(c);
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    EXPECT_FALSE(r.compacted());
    EXPECT_TRUE(r.accepted_above_trigger);
    EXPECT_EQ(write_conversation_document(c), before);
}

TEST(Extractive, TheEmbeddedDefaultCompactsUnderTheTrigger) {
    // The offline default summarizer through the same ladder.
    ConversationContext c = moderate_fixture();
    const ConversationContext before = c;
    const SummarizerInstance extractive =
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
    const CompactionReport r =
        ContextWindowManager(extractive, test_settings()).ensure_fits(c, test_model(), 512);
    EXPECT_TRUE(r.compacted());
    EXPECT_LE(r.tokens_after, r.trigger_tokens);
    expect_survival(before, c);
    expect_no_orphans(c);
}

TEST(Summaries, CutToTokensRespectsTheTargetAndUtf8) {
    const TokenCounter& counter = TokenCounter::for_model(test_model());
    const std::string text = prose(20, 3) + "日本語のテキスト";
    for (std::int64_t target : {1, 5, 17, 60}) {
        const std::string cut = compaction::cut_to_tokens(counter, text, target);
        EXPECT_LE(counter.count_text(cut), target);
        EXPECT_EQ(text.compare(0, cut.size() >= 3 ? cut.size() - 3 : 0, cut, 0,
                               cut.size() >= 3 ? cut.size() - 3 : 0),
                  0);
    }
    EXPECT_EQ(compaction::cut_to_tokens(counter, "short", 10), "short");
}

}  // namespace
}  // namespace nucleo
