// What an agent turn keeps of a conversation: the most recent exchanges word for word and older
// ones open to compaction, so a long chat keeps going inside a small window (compaction.109); a
// turn that fails leaves the conversation, and the stored document, as they were before it
// (ownership.105).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "agent_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"
#include "sqlite_service.hpp"
#include "support.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::fresh;
using agent_test::LookupInput;
using agent_test::model_for;
using agent_test::sqlite_service;

std::string text_of(const Message& m) {
    std::string out;
    for (const auto& b : m.blocks) {
        if (const auto* t = b.get_if<TextBlock>()) out += t->text;
    }
    return out;
}

/// Every byte of the SQLite store's files: the database and, when present, its write-ahead log.
std::string store_bytes(const std::string& path) {
    std::string out;
    for (const std::string& f : {path, path + "-wal"}) {
        std::ifstream in(f, std::ios::binary);
        out += f + ":" + std::string(std::istreambuf_iterator<char>(in), {}) + "\n";
    }
    return out;
}

/// The ids and texts of a conversation's messages, in order, with their compactable flags.
std::vector<std::string> listing(const ConversationContext& c) {
    std::vector<std::string> out;
    for (const Message& m : c.messages())
        out.push_back(m.id + (m.compactable ? " c " : " p ") + text_of(m));
    return out;
}

class Exchanges : public ::testing::Test {
  protected:
    static AgentOptions options(std::string fault = {}) {
        AgentOptions o;
        o.objective = "You answer questions.";
        if (!fault.empty()) o.extra_headers = {{"x-emulator-fault", std::move(fault)}};
        return o;
    }

    emulator_test::EmulatorProcess emulator_;
    ProviderClient client_ = client_for(emulator_, "anthropic");
    ModelSpec model_ = model_for("anthropic");
};

TEST_F(Exchanges, TheRecentExchangesArePinnedAndOlderOnesMayBeSummarized) {
    // compaction.109: with the default of 4, after six turns the first two exchanges' user
    // message and answer are compactable and the last four's are not.
    Agent agent(client_, model_, options());
    ConversationContext c = fresh();
    for (int i = 1; i <= 6; ++i) agent.run_turn(c, "Question number " + std::to_string(i));
    ASSERT_EQ(c.messages().size(), 12U);
    for (std::size_t i = 0; i < 12; ++i)
        EXPECT_EQ(c.messages()[i].compactable, i < 4) << "message " << i << ": " << listing(c)[i];
}

TEST_F(Exchanges, PinnedExchangesAllKeepsEveryUserMessageAndAnswer) {
    AgentOptions o = options();
    o.pinned_exchanges = std::nullopt;
    Agent agent(client_, model_, o);
    ConversationContext c = fresh();
    for (int i = 1; i <= 6; ++i) agent.run_turn(c, "Question number " + std::to_string(i));
    for (const Message& m : c.messages()) EXPECT_FALSE(m.compactable) << text_of(m);
}

TEST_F(Exchanges, AFiveHundredTurnChatInAThreeThousandTokenWindowKeepsGoing) {
    // compaction.31 alone (every user message and answer pinned) cannot fit forever; with the
    // recent exchanges pinned, older ones are summarized and every turn is answered. The four
    // most recent exchanges stay word for word.
    AgentOptions o = options();
    o.window = std::make_shared<ContextWindowManager>(
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer(),
        ContextWindowSettings{3000, std::nullopt});
    Agent agent(client_, model_, o);
    ConversationContext c = fresh();
    std::vector<std::pair<std::string, std::string>> said;  // (question, answer) per turn
    int compacted_turns = 0;
    for (int i = 1; i <= 500; ++i) {
        const std::string question = "Turn " + std::to_string(i) + ": note that parcel P" +
                                     std::to_string(i * 7) + " left depot D" +
                                     std::to_string(i % 13) +
                                     " at 10:" + std::to_string(10 + i % 50) + ", and say ok.";
        TurnReport r;
        ASSERT_NO_THROW(r = agent.run_turn(c, question)) << "turn " << i;
        ASSERT_EQ(r.end, TurnEnd::kFinalAnswer) << "turn " << i;
        if (r.compaction != CompactionLevel::kNone) ++compacted_turns;
        said.emplace_back(question, r.answer);
        // What the next call starts from fits the window with room for the answer it added.
        ASSERT_LE(get_total_tokens(c, model_), 3000) << "turn " << i;
    }
    EXPECT_GT(compacted_turns, 0) << "the window was never reached: the test proves nothing";
    EXPECT_LT(c.messages().size(), 200U);
    // The last four exchanges, word for word, at the end of the conversation.
    const auto& messages = c.messages();
    ASSERT_GE(messages.size(), 8U);
    for (std::size_t k = 0; k < 4; ++k) {
        const Message& question = messages[messages.size() - 8 + 2 * k];
        const Message& answer = messages[messages.size() - 7 + 2 * k];
        EXPECT_EQ(text_of(question), said[said.size() - 4 + k].first);
        EXPECT_EQ(text_of(answer), said[said.size() - 4 + k].second);
        EXPECT_FALSE(question.compactable);
        EXPECT_FALSE(answer.compactable);
    }
}

TEST_F(Exchanges, AFailedTurnLeavesTheStoredConversationByteForByteAsBefore) {
    // ownership.105: the second turn's call fails (500 on every try). The store's files are
    // byte for byte what the first turn left, and the conversation the service holds is too.
    const std::string path = store_test::temp_sqlite_path();
    auto service = sqlite_service(path);
    Agent agent(client_, model_, options());
    auto thinker = agent.make_thinker("alice", OutputSize::kShort);
    const std::string id = thinker->mint_conversation_id();
    agent.run_turn(*service, thinker, "Where is order 3");
    std::vector<std::string> before;
    {
        auto held = service->obtain_conversation(thinker).get();
        before = listing(*held);
        service->release(*thinker);
    }
    ASSERT_EQ(before.size(), 2U);
    const std::string bytes = store_bytes(path);

    Agent failing(client_, model_, options("500"));
    EXPECT_THROW(failing.run_turn(*service, thinker, "And order 4"), Error);
    EXPECT_EQ(service->owning_thinker(id, "alice"), nullptr);  // released all the same
    EXPECT_EQ(store_bytes(path), bytes);
    {
        auto held = service->obtain_conversation(thinker).get();
        EXPECT_EQ(listing(*held), before);
        service->release(*thinker);
    }
    // A process that restores the conversation finds the first turn and nothing of the second.
    service.reset();
    auto restarted = sqlite_service(path);
    auto again = agent.make_thinker("alice", OutputSize::kShort);
    again->set_conversation_id(id);
    auto restored = restarted->obtain_conversation(again).get();
    EXPECT_EQ(listing(*restored), before);
    restarted->release(*again);
    std::filesystem::remove(path);
}

TEST_F(Exchanges, AFirstTurnThatFailsCreatesNothingInTheStore) {
    // The first save creates the stored conversation; a first turn that fails never reaches it.
    const std::string path = store_test::temp_sqlite_path();
    auto service = sqlite_service(path);
    Agent agent(client_, model_, options("500"));
    auto thinker = agent.make_thinker("alice", OutputSize::kShort);
    const std::string id = thinker->mint_conversation_id();
    EXPECT_THROW(agent.run_turn(*service, thinker, "Where is order 3"), Error);
    EXPECT_EQ(service->owning_thinker(id, "alice"), nullptr);
    service.reset();
    auto restarted = sqlite_service(path);
    auto again = agent.make_thinker("alice", OutputSize::kShort);
    again->set_conversation_id(id);
    try {
        auto restored = restarted->obtain_conversation(again).get();
        EXPECT_TRUE(restored->messages().empty()) << listing(*restored).front();
        restarted->release(*again);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << e.what();
    }
    std::filesystem::remove(path);
}

TEST_F(Exchanges, ATurnThatFailsAfterAToolRoundIsUndoneWhole) {
    // The tool runs, then the next call finds no provider: the conversation is as it was before
    // the turn, its tool call and result included.
    Agent agent(client_, model_, options());
    ConversationContext c = fresh();
    agent.run_turn(c, "Hello there");
    const std::vector<std::string> before = listing(c);
    Agent tooled(client_, model_, options());
    tooled.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                 [&](const LookupInput& in) {
                                     emulator_.stop();  // the next call has no one to answer it
                                     return "order " + in.order_id + " is in Lyon";
                                 });
    EXPECT_THROW(tooled.run_turn(c, "Where is order Q7"), Error);
    EXPECT_EQ(listing(c), before);
}

TEST_F(Exchanges, ATurnThatFailsAfterCompactingPutsTheMessagesBack) {
    // The window check compacts before the call, then the call fails: the conversation is
    // the one before the turn, not the compacted one.
    Agent agent(client_, model_, options());
    ConversationContext c = fresh();
    const std::string filler(1500, 'x');
    for (int i = 1; i <= 6; ++i)
        agent.run_turn(c, "Note " + std::to_string(i) + ": " + filler + " Say ok.");
    const std::vector<std::string> before = listing(c);
    AgentOptions o = options("500");
    o.window = std::make_shared<ContextWindowManager>(
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer(),
        ContextWindowSettings{1500, std::nullopt});
    Agent failing(client_, model_, o);
    CompactionLevel reached = CompactionLevel::kNone;
    TurnCallbacks cb;
    cb.on_compaction = [&](const CompactionReport& r) { reached = r.level; };
    EXPECT_THROW(failing.run_turn(c, "And now?", cb), Error);
    EXPECT_NE(reached, CompactionLevel::kNone)
        << "the turn never compacted: the test proves nothing";
    EXPECT_EQ(listing(c), before);
}

}  // namespace
}  // namespace nucleo
