// The agent loop against the emulator (tool errors, the round limit, truncation in the
// middle of a tool call, cancellation, compaction between rounds, a resumed conversation
// continuing with its tools).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent_support.hpp"
#include "nucleo/errors.hpp"
#include "sqlite_service.hpp"
#include "support.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::fresh;
using agent_test::LookupInput;
using agent_test::model_for;
using agent_test::requests_seen;
using agent_test::sqlite_service;

std::size_t tool_results_in(const Message& m) {
    std::size_t n = 0;
    for (const auto& b : m.blocks) n += b.is<ToolResultBlock>() ? 1 : 0;
    return n;
}

const ToolResultBlock* first_result(const ConversationContext& c) {
    for (const auto& m : c.messages()) {
        for (const auto& b : m.blocks) {
            if (const auto* r = b.get_if<ToolResultBlock>()) return r;
        }
    }
    return nullptr;
}

std::string result_text(const ToolResultBlock& r) {
    std::string out;
    for (const auto& b : r.content) {
        if (const auto* t = b.get_if<TextBlock>()) out += t->text;
    }
    return out;
}

class AgentLoop : public ::testing::Test {
  protected:
    AgentOptions options(std::string fault = {}) const {
        AgentOptions o;
        o.objective = "You look orders up.";
        if (!fault.empty()) o.extra_headers = {{"x-emulator-fault", std::move(fault)}};
        return o;
    }

    nucleo::emulator_test::EmulatorProcess emulator_;
    ProviderClient client_ = client_for(emulator_, "anthropic");
    ModelSpec model_ = model_for("anthropic");
};

TEST_F(AgentLoop, AToolCallThenTheFinalAnswer) {
    Agent agent(client_, model_, options());
    std::vector<std::string> looked_up;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    looked_up.push_back(in.order_id);
                                    return "order " + in.order_id + " shipped on 2024-05-01";
                                });
    std::vector<std::string> events;
    TurnCallbacks cb;
    cb.on_tool_call_started = [&](const ToolCallEvent& e) { events.push_back("start " + e.name); };
    cb.on_tool_call_finished = [&](const ToolCallEvent& e, const ToolOutput& out) {
        events.push_back(std::string(out.is_error ? "error " : "done ") + e.name);
    };
    cb.on_round_end = [&](const RoundReport& r) {
        events.push_back("round " + std::to_string(r.round));
    };
    std::string streamed;
    cb.on_text_delta = [&](std::string_view t) { streamed += t; };

    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order A42", cb);

    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.rounds, 2);
    EXPECT_EQ(r.tool_calls, 1U);
    EXPECT_EQ(r.tool_errors, 0U);
    // The emulator calls the tool with the question's last word and then quotes its result.
    EXPECT_EQ(looked_up, std::vector<std::string>{"A42"});
    EXPECT_NE(r.answer.find("order A42 shipped on 2024-05-01"), std::string::npos) << r.answer;
    EXPECT_EQ(streamed, r.answer);
    EXPECT_EQ(events, (std::vector<std::string>{"start lookup_order", "done lookup_order",
                                                "round 1", "round 2"}));
    // The palette was declared through add_tools; the objective under "task".
    ASSERT_EQ(c.declared_tools().size(), 1U);
    EXPECT_EQ(c.declared_tools()[0].definition.name, "lookup_order");
    EXPECT_NE(c.objective_slot("task"), nullptr);
    // user, tool call, tool results, answer; the dialogue is non-compactable, the rest is.
    ASSERT_EQ(c.messages().size(), 4U);
    EXPECT_FALSE(c.messages()[0].compactable);
    EXPECT_TRUE(c.messages()[1].compactable);
    EXPECT_TRUE(c.messages()[2].compactable);
    EXPECT_EQ(tool_results_in(c.messages()[2]), 1U);
    EXPECT_FALSE(c.messages()[3].compactable);
    EXPECT_EQ(c.messages()[3].id, r.answer_message_id);
    // The report adds the rounds up, and the totals the turns.
    EXPECT_EQ(r.usage.output_tokens,
              r.round_reports[0].usage.output_tokens + r.round_reports[1].usage.output_tokens);
    EXPECT_GT(r.cost, 0);
    EXPECT_EQ(agent.totals().turns, 1);
    EXPECT_EQ(agent.totals().rounds, 2);
}

TEST_F(AgentLoop, AThrowingToolAndAnErrorResultBecomeIsErrorResults) {
    for (const bool throws : {true, false}) {
        SCOPED_TRACE(throws ? "throws" : "returns an error");
        Agent agent(client_, model_, options());
        agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                    [throws](const LookupInput&) -> ToolOutput {
                                        if (throws) throw std::runtime_error("database down");
                                        return ToolOutput::error("no such order");
                                    });
        ConversationContext c = fresh();
        const TurnReport r = agent.run_turn(c, "Where is order 7");
        EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
        EXPECT_EQ(r.tool_errors, 1U);
        const ToolResultBlock* result = first_result(c);
        ASSERT_NE(result, nullptr);
        EXPECT_TRUE(result->is_error);
        const std::string expected = throws ? "database down" : "no such order";
        EXPECT_NE(result_text(*result).find(expected), std::string::npos) << result_text(*result);
        // The model read it as an error (the emulator says so when the result is marked).
        EXPECT_NE(r.answer.find("reported an error"), std::string::npos) << r.answer;
    }
}

// tools.14, artifacts.9: the model sees data for reasoning, but the data travels intact in the
// registry. A conversation that holds artifacts declares get_artifact_field and
// search_artifact_content itself; the loop answers them from the registry, with no host tool.
TEST_F(AgentLoop, TheArtifactToolsAreAnsweredFromTheRegistry) {
    Agent agent(client_, model_, options("tool-rounds=2,tool-cycle"));
    ConversationContext c = fresh();
    const std::string ref = c.artifacts().register_artifact(
        "link:cite", R"({"url":"https://example.org/a","title":"Intact title"})");
    std::vector<std::string> called;
    TurnCallbacks cb;
    cb.on_tool_call_finished = [&](const ToolCallEvent& e, const ToolOutput& out) {
        called.push_back(e.name + (out.is_error ? " error: " : " ok: ") + out.text);
    };
    const TurnReport r = agent.run_turn(c, "Which page is " + ref, cb);
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    ASSERT_EQ(called.size(), 2U);
    for (const std::string& line : called) {
        EXPECT_EQ(line.find("unknown tool"), std::string::npos) << line;
    }
    // The emulator fills string arguments with the last word of the last user turn. On the first
    // call that is the question's turn, which the registry rides (wire.191: it changed), ending
    // ("...Intact title"}): get_artifact_field gets the reference "title", which resolves to
    // nothing, so the answer is an error naming it -- never an empty success. On the second the
    // registry is not sent again (it did not change) and the word comes from that error's text
    // ("...shows it."): search_artifact_content answers from the registry, finding nothing.
    EXPECT_EQ(called[0].rfind("get_artifact_field error: ", 0), 0U) << called[0];
    EXPECT_NE(called[0].find("'title'"), std::string::npos) << called[0];
    EXPECT_EQ(called[1], "search_artifact_content ok: []") << called[1];
    // The registry's search itself finds the artifact from its intact data.
    const std::vector<ArtifactMatch> found = c.artifacts().search("title");
    ASSERT_EQ(found.size(), 1U);
    EXPECT_EQ(found[0].ref, ref);
    EXPECT_NE(found[0].excerpt.find("Intact title"), std::string::npos) << found[0].excerpt;
}

TEST_F(AgentLoop, TheRoundLimitEndsATurnThatKeepsCallingTools) {
    AgentOptions o = options("always-tool");
    o.max_rounds = 3;
    Agent agent(client_, model_, o);
    int calls = 0;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput&) {
                                    ++calls;
                                    return std::string("still looking");
                                });
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order 9");
    EXPECT_EQ(r.end, TurnEnd::kRoundLimit);
    EXPECT_EQ(r.rounds, 3);
    EXPECT_EQ(calls, 3);
    EXPECT_TRUE(r.answer.empty());
    EXPECT_EQ(requests_seen(emulator_), 3);
    // Every call has its result: the conversation stays answerable by the next turn.
    EXPECT_EQ(tool_results_in(c.messages().back()), 1U);
    Agent next(client_, model_, options());
    next.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                               [](const LookupInput&) { return std::string("found"); });
    EXPECT_EQ(next.run_turn(c, "Any news on order 9").end, TurnEnd::kFinalAnswer);
}

TEST_F(AgentLoop, ATruncatedToolCallIsRetriedAtTheCeilingAndRunsOnce) {
    // An answer budget of 3 tokens (12 bytes for the emulator) cuts the tool call's arguments in
    // the middle; the one retry path escalates to the ceiling and the tool runs once, on whole
    // arguments. Streamed, the display is told to discard what it showed.
    Agent agent(client_, model_, options());
    std::vector<std::string> looked_up;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    looked_up.push_back(in.order_id);
                                    return std::string("ok");
                                });
    ConversationContext c = fresh();
    c.set_output(std::int64_t{3});
    int discarded = 0;
    TurnCallbacks cb;
    cb.on_text_delta = [](std::string_view) {};
    cb.on_discard = [&](std::string_view) { ++discarded; };
    const TurnReport r = agent.run_turn(c, "Where is order LONGORDERNUMBER123", cb);
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(looked_up, std::vector<std::string>{"LONGORDERNUMBER123"});
    ASSERT_GE(r.round_reports.size(), 1U);
    EXPECT_TRUE(r.round_reports[0].escalated);
    EXPECT_GE(discarded, 1);
    // The cut-off call never reached the conversation: one tool_use message, one result message.
    std::size_t uses = 0;
    for (const auto& m : c.messages()) {
        for (const auto& b : m.blocks) uses += b.is<ToolUseBlock>() ? 1 : 0;
    }
    EXPECT_EQ(uses, 1U);
}

TEST_F(AgentLoop, CancellationStopsTheTurnAtTheNextBoundary) {
    Agent agent(client_, model_, options("always-tool"));
    CancellationToken cancel;
    int calls = 0;
    // The tool cancels the turn: its own result is still recorded, then no further call is made.
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput&) {
                                    ++calls;
                                    cancel.cancel();
                                    return std::string("cancel after me");
                                });
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order 5", {}, &cancel);
    EXPECT_EQ(r.end, TurnEnd::kCancelled);
    EXPECT_EQ(r.rounds, 1);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(requests_seen(emulator_), 1);
    EXPECT_EQ(tool_results_in(c.messages().back()), 1U);

    // Cancelled before the turn: the user's message is kept, no call goes out.
    const TurnReport before = agent.run_turn(c, "And order 6", {}, &cancel);
    EXPECT_EQ(before.end, TurnEnd::kCancelled);
    EXPECT_EQ(before.rounds, 0);
    EXPECT_EQ(requests_seen(emulator_), 1);
    EXPECT_EQ(c.messages().back().blocks.at(0).get_if<TextBlock>()->text, "And order 6");
}

TEST_F(AgentLoop, CancellingWhileTheAnswerStreamsDropsIt) {
    // Round 1 is a tool call; the final answer of round 2 streams, and the host cancels at its
    // first piece (a user's Ctrl-C during the display): the answer is not kept, the turn ends
    // cancelled after one counted round, and the conversation ends with the tool results.
    Agent agent(client_, model_, options());
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [](const LookupInput&) { return std::string("ok"); });
    CancellationToken cancel;
    int pieces = 0;
    TurnCallbacks cb;
    cb.on_text_delta = [&](std::string_view) {
        ++pieces;
        cancel.cancel();
    };
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order 5", cb, &cancel);
    EXPECT_GE(pieces, 1);
    EXPECT_EQ(r.end, TurnEnd::kCancelled);
    EXPECT_EQ(r.rounds, 1);
    EXPECT_TRUE(r.answer.empty());
    ASSERT_EQ(c.messages().size(), 3U);
    EXPECT_EQ(tool_results_in(c.messages().back()), 1U);
}

TEST_F(AgentLoop, CompactionRunsBetweenRounds) {
    // Long tool output and a small comfort window: the window check before the later calls walks
    // the ladder; the user's message and the final answer stay word for word. The target is the
    // trigger (no hysteresis), so the ladder stops at LIGHT and the emulator still counts the
    // assistant turns its tool-rounds script reads.
    AgentOptions o = options("tool-rounds=4");
    o.max_rounds = 12;
    o.window = std::make_shared<ContextWindowManager>(
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer(),
        ContextWindowSettings{3000, std::nullopt, kDefaultCompactionTrigger});
    Agent agent(client_, model_, o);
    int call = 0;
    agent.add_tool<LookupInput>(
        "lookup_order", "Looks an order up by id.", [&](const LookupInput&) {
            std::string out = "Report " + std::to_string(++call) + ".";
            for (int i = 0; i < 80; ++i)
                out += " Shipment " + std::to_string(i) + " left depot /var/depot/" +
                       std::to_string(call) + " at 10:" + std::to_string(10 + i % 50) +
                       " with 3 parcels.";
            return out;
        });
    std::vector<CompactionLevel> levels;
    TurnCallbacks cb;
    cb.on_compaction = [&](const CompactionReport& rep) { levels.push_back(rep.level); };
    ConversationContext c = fresh();
    const std::string question = "Where is order 77";
    const TurnReport r = agent.run_turn(c, question, cb);
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_GE(r.rounds, 5);  // four scripted tool rounds, then the answer
    ASSERT_FALSE(levels.empty()) << "the window check never compacted";
    EXPECT_NE(r.compaction, CompactionLevel::kNone);
    // Compaction ran before a later round, never before the first (nothing to compact then).
    EXPECT_EQ(r.round_reports.front().compaction, CompactionLevel::kNone);
    EXPECT_EQ(c.messages().front().blocks.at(0).get_if<TextBlock>()->text, question);
    EXPECT_FALSE(c.messages().back().compactable);
    EXPECT_EQ(c.messages().back().id, r.answer_message_id);
}

TEST_F(AgentLoop, AResumedConversationContinuesWithItsTools) {
    // persistence.23: a conversation saved by one service (the save discipline at
    // every boundary) is restored by another over the same SQLite file, as a restarted process
    // would, and the next turn uses the tools again.
    const std::string path = store_test::temp_sqlite_path();
    std::string id;
    int calls = 0;
    const auto lookup = [&](const LookupInput& in) {
        ++calls;
        return "order " + in.order_id + " is in Lyon";
    };
    {
        auto first = sqlite_service(path);
        ConversationService& service = *first;
        Agent agent(client_, model_, options());
        agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.", lookup);
        auto thinker = agent.make_thinker("alice", OutputSize::kShort);
        id = thinker->mint_conversation_id();
        const TurnReport r = agent.run_turn(service, thinker, "Where is order B1");
        EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
        // Released at the end of the turn.
        EXPECT_EQ(service.owning_thinker(id, "alice"), nullptr);
    }
    auto restarted = sqlite_service(path);
    ConversationService& service = *restarted;
    Agent agent(client_, model_, options());
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.", lookup);
    auto thinker = agent.make_thinker("alice", OutputSize::kShort);
    thinker->set_conversation_id(id);
    const TurnReport r = agent.run_turn(service, thinker, "And where is order B2");
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(calls, 2);
    EXPECT_NE(r.answer.find("order B2 is in Lyon"), std::string::npos) << r.answer;

    // What the second turn saved holds both turns, the first answer still non-compactable.
    auto reader = agent_test::reader_thinker(id);
    auto fresh_service = sqlite_service(path);
    auto restored = fresh_service->obtain_conversation(reader).get();
    ASSERT_EQ(restored->messages().size(), 8U);
    EXPECT_FALSE(restored->messages()[3].compactable);
    EXPECT_FALSE(restored->messages()[7].compactable);
    EXPECT_EQ(restored->declared_tools().size(), 1U);
    fresh_service->release(*reader);
    std::filesystem::remove(path);
}

TEST_F(AgentLoop, AForceReleaseMidTurnCancelsItThroughTheThinkersTokenAndHandsItOver) {
    // ownership.102: make_thinker's thinker carries its workflow token; force_release cancels
    // it (no hook wired by the host), the running turn stops at its next boundary, and its own
    // release hands the conversation over.
    const std::string path = store_test::temp_sqlite_path();
    auto owned = sqlite_service(path);
    ConversationService& service = *owned;
    Agent agent(client_, model_, options());
    std::string id;
    bool forced = false;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    forced = service.force_release(id, "alice");
                                    return "order " + in.order_id + " is in Lyon";
                                });
    auto thinker = agent.make_thinker("alice", OutputSize::kShort);
    ASSERT_FALSE(thinker->cancel_workflow);
    id = thinker->mint_conversation_id();
    const TurnReport r = agent.run_turn(service, thinker, "Where is order B1");
    EXPECT_TRUE(forced);
    EXPECT_TRUE(thinker->cancellation->cancelled());
    EXPECT_EQ(r.end, TurnEnd::kCancelled);
    EXPECT_EQ(service.owning_thinker(id, "alice"), nullptr);  // the turn's own release
    auto next = agent.make_thinker("alice", OutputSize::kShort);
    next->set_conversation_id(id);
    auto ctx = service.obtain_conversation(next).get();
    EXPECT_EQ(ctx->first_user_utterance(), "Where is order B1");
    EXPECT_FALSE(next->cancellation->cancelled()) << "each thinker has its own token";
    service.release(*next);
    std::filesystem::remove(path);
}

class AgentInEveryDialect : public ::testing::TestWithParam<const char*> {
  protected:
    emulator_test::EmulatorProcess emulator_;
};

TEST_P(AgentInEveryDialect, AStreamedToolRoundThenTheAnswer) {
    // The same turn through each dialect plugin, streamed: the tool call's id and arguments come
    // back through the dialect's own stream, the result goes out in its own tool-result form.
    const std::string dialect = GetParam();
    ProviderClient pc = client_for(emulator_, dialect);
    AgentOptions o;
    o.objective = "You look orders up.";
    Agent agent(pc, model_for(dialect), o);
    std::vector<std::string> looked_up;
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    looked_up.push_back(in.order_id);
                                    return "order " + in.order_id + " is in Oslo";
                                });
    std::string streamed;
    TurnCallbacks cb;
    cb.on_text_delta = [&](std::string_view t) { streamed += t; };
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order Z9", cb);
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.rounds, 2);
    EXPECT_EQ(looked_up, std::vector<std::string>{"Z9"});
    EXPECT_NE(r.answer.find("order Z9 is in Oslo"), std::string::npos) << r.answer;
    EXPECT_EQ(streamed, r.answer);
    EXPECT_GT(r.usage.input_tokens + r.usage.cache_read_tokens + r.usage.cache_write_tokens, 0);

    // The next round's streamed request (tool call, tool result, answer, a new question) is valid
    // against the provider's published schema.
    ConversationContext next = c;
    next.add_message(Message::outgoing_text("Thanks, and order Z10?"));
    StreamCallbacks stream;
    stream.on_text_delta = [](std::size_t, std::string_view) {};
    CallOptions options;
    options.stream = &stream;
    const std::string body = pc.build_request(next, model_for(dialect), options).body;
    EXPECT_NE(body.find("Z10"), std::string::npos) << body;
    // The published schemas of ../shared/tools cover the three older dialects; the two newer
    // ones are checked against their SDKs' types in tests/sdk_types.
    if (dialect != "openai-responses" && dialect != "gemini") {
        EXPECT_EQ(emulator_test::validate_wire(dialect, {body}), "");
    }
}

INSTANTIATE_TEST_SUITE_P(FiveDialects, AgentInEveryDialect,
                         ::testing::Values("anthropic", "openai", "openai-responses", "bedrock",
                                           "gemini"));

TEST(AgentApi, BadRegistrationsAreRefusedByName) {
    emulator_test::EmulatorProcess emulator;
    ProviderClient pc = client_for(emulator, "anthropic");
    AgentOptions o;
    o.max_rounds = 0;
    EXPECT_THROW(Agent(pc, model_for("anthropic"), o), Error);
    Agent agent(pc, model_for("anthropic"));
    agent.add_tool<LookupInput>("lookup_order", "x",
                                [](const LookupInput&) { return std::string(); });
    try {
        agent.add_tool<LookupInput>("lookup_order", "y",
                                    [](const LookupInput&) { return std::string(); });
        FAIL() << "a second tool of the same name must be refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("lookup_order"), std::string::npos);
    }
    EXPECT_EQ(agent.palette().size(), 1U);
}

}  // namespace
}  // namespace nucleo
