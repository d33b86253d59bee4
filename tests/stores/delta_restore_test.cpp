// SnapshotDelta (the `changes` of an incremental save) and the restore rule (persistence.20-22),
// through the memory store where a store is needed.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/store.hpp"
#include "support.hpp"

namespace {

using nucleo::ConversationParts;
using nucleo::SnapshotDelta;
using store_test::conversation;
using store_test::next_message;

TEST(SnapshotDelta, NothingChangedIsEmpty) {
    const auto parts = conversation("c", 5);
    const auto delta = SnapshotDelta::between(parts, parts);
    EXPECT_TRUE(delta.empty());
    EXPECT_EQ(delta.changes_json(), R"({"fields":[],"messages":[]})");
}

TEST(SnapshotDelta, AnAppendIsOneSpliceAtTheEndCarryingOnlyTheNewMessage) {
    const auto saved = conversation("c", 50, 300);
    auto now = saved;
    now.messages.push_back(next_message(now, 300));
    const auto delta = SnapshotDelta::between(saved, now);
    EXPECT_EQ(delta.fields_changed(), 0u);
    EXPECT_EQ(delta.messages_inserted(), 1u);
    EXPECT_EQ(delta.messages_removed(), 0u);
    EXPECT_NE(delta.changes_json().find(R"("at":50,"remove":0)"), std::string::npos);
    EXPECT_LT(delta.changes_json().size(), 600u);
}

TEST(SnapshotDelta, CompactionReplacingARunIsOneSpliceRemovingItAndInsertingTheSummary) {
    const auto saved = conversation("c", 10);
    auto now = saved;
    nucleo::Message summary = nucleo::Message::outgoing_text("Summary of m3..m7");
    summary.id = "s1";
    now.messages.erase(now.messages.begin() + 2, now.messages.begin() + 7);
    now.messages.insert(now.messages.begin() + 2, summary);
    const auto delta = SnapshotDelta::between(saved, now);
    EXPECT_EQ(delta.messages_removed(), 5u);
    EXPECT_EQ(delta.messages_inserted(), 1u);
    EXPECT_NE(delta.changes_json().find(R"("at":2,"remove":5)"), std::string::npos)
        << delta.changes_json();
}

TEST(SnapshotDelta, AChangedFlagRewritesThatMessageOnlyAndHeaderFieldsTravelWhole) {
    const auto saved = conversation("c", 10);
    auto now = saved;
    now.messages[4].compactable = false;
    now.grade = nucleo::Grade::kLarge;
    const auto delta = SnapshotDelta::between(saved, now);
    EXPECT_EQ(delta.messages_removed(), 1u);
    EXPECT_EQ(delta.messages_inserted(), 1u);
    EXPECT_EQ(delta.fields_changed(), 1u);
    EXPECT_NE(delta.changes_json().find(R"("key":"declarations")"), std::string::npos);
    EXPECT_EQ(delta.changes_json().find("\"m1\""), std::string::npos) << "m1 did not change";
}

/// `parts` with the tool "search" declared at the end, and the same with the app-authored message
/// that announces it appended.
std::pair<ConversationParts, ConversationParts> announcing_search(ConversationParts parts) {
    parts.tools.push_back({nucleo::ToolDefinitionBlock{"search", "Search.", R"({"type":"object"})"},
                           parts.messages.size()});
    auto now = parts;
    nucleo::Message announce = nucleo::Message::outgoing_text("Additional tools now available:");
    announce.id = "tools-1";
    announce.app_authored = true;
    announce.blocks.push_back(parts.tools[0].definition);
    now.messages.push_back(announce);
    return {parts, now};
}

TEST(SnapshotDelta, ADeclaredToolAnnouncedInAMessageChangesTheToolsField) {
    // announced_in derives from the messages: the tools field follows the message carrying it.
    const auto [saved, now] = announcing_search(conversation("c", 2));
    const auto delta = SnapshotDelta::between(saved, now);
    EXPECT_EQ(delta.fields_changed(), 1u);
    EXPECT_NE(delta.changes_json().find(R"("announced_in":"tools-1")"), std::string::npos)
        << delta.changes_json();
}

// persistence.108: appended() is between() for a list that only grew, byte for byte.
TEST(SnapshotDelta, AppendedEqualsBetweenForEveryGrowth) {
    const auto saved = conversation("c", 20, 200);
    const auto same = [&](const ConversationParts& now) {
        ConversationParts head = now;
        head.messages.clear();
        const auto fast = SnapshotDelta::appended(saved, head, now.messages);
        const auto full = SnapshotDelta::between(saved, now);
        EXPECT_EQ(fast.changes_json(), full.changes_json());
        EXPECT_EQ(fast.empty(), full.empty());
        EXPECT_EQ(fast.fields_changed(), full.fields_changed());
        EXPECT_EQ(fast.messages_inserted(), full.messages_inserted());
        EXPECT_EQ(fast.messages_removed(), full.messages_removed());
    };
    same(saved);  // nothing
    auto one = saved;
    one.messages.push_back(next_message(one, 200));
    same(one);
    auto many = one;
    for (int i = 0; i < 5; ++i) many.messages.push_back(next_message(many, 50));
    many.grade = nucleo::Grade::kLarge;
    same(many);
    auto fields_only = saved;
    fields_only.prior_spec_id = "anthropic/claude";
    same(fields_only);
    // A tool announced in an appended message changes the tools field too.
    const auto [tools_saved, announced] = announcing_search(saved);
    ConversationParts head = announced;
    head.messages.clear();
    EXPECT_EQ(SnapshotDelta::appended(tools_saved, head, announced.messages).changes_json(),
              SnapshotDelta::between(tools_saved, announced).changes_json());
    // Fewer messages than saved is not a growth: refused, nothing computed.
    EXPECT_THROW((void)SnapshotDelta::appended(one, head, saved.messages), nucleo::Error);
}

// persistence.111: appended() from a Header carried from save to save -- never from the saved
// messages -- is between() byte for byte, through growth that announces tools in messages.
TEST(SnapshotDelta, AppendedFromACarriedHeaderEqualsBetweenSaveAfterSave) {
    auto [saved, now] = announcing_search(conversation("c", 6));
    SnapshotDelta::Header header = SnapshotDelta::header_of(saved);
    for (int save = 0; save < 6; ++save) {
        if (save == 3) {
            ConversationParts more = announcing_search(now).second;
            more.messages.back().id = "tools-2";
            more.tools.back().definition.name = "fetch";
            more.messages.back().blocks.back() = more.tools.back().definition;
            now = more;
        }
        now.messages.push_back(next_message(now, 80));
        ConversationParts head = now;
        head.messages.clear();
        SnapshotDelta::Header next;
        const auto fast =
            SnapshotDelta::appended(header, saved.messages.size(), head, now.messages, next);
        EXPECT_EQ(fast.changes_json(), SnapshotDelta::between(saved, now).changes_json())
            << "save " << save;
        const SnapshotDelta::Header fresh = SnapshotDelta::header_of(now);
        EXPECT_EQ(next.document, fresh.document) << "save " << save;
        EXPECT_EQ(next.definitions, fresh.definitions) << "save " << save;
        header = std::move(next);
        saved = now;
    }
}

// ---- restore (persistence.20-22) ----

struct CapturedLog {
    std::mutex mu;
    std::vector<std::string> warnings;
    CapturedLog() {
        nucleo::log::set_sink(
            [this](nucleo::log::Level level, std::string_view, std::string_view m) {
                std::lock_guard lock(mu);
                if (level == nucleo::log::Level::kWarn) warnings.emplace_back(m);
            });
    }
    ~CapturedLog() { nucleo::log::set_sink({}); }
};

// An orphan-poisoned snapshot as it may sit in a store (a failure mode peers have: a stored
// conversation poisoned by an orphan so every later turn fails).
const char* kPoisoned = R"({"schema_version":1,"conversation_id":"c-orphans","user_id":"u",
 "prior_spec_id":"anthropic/claude-sonnet",
 "messages":[
  {"id":"m1","direction":"outgoing","blocks":[{"type":"text","text":"Where is order 42?"}]},
  {"id":"m2","direction":"incoming","blocks":[{"type":"tool_use","id":"toolu_ok","name":"search","input":{}}]},
  {"id":"m3","direction":"outgoing","blocks":[
     {"type":"tool_result","tool_use_id":"toolu_ok","content":[{"type":"text","text":"shipped"}]},
     {"type":"tool_result","tool_use_id":"toolu_gone1","content":[]}]},
  {"id":"m4","direction":"outgoing","blocks":[
     {"type":"tool_result","tool_use_id":"toolu_gone2","content":[{"type":"text","text":"x"}]}]},
  {"id":"m5","direction":"incoming","blocks":[{"type":"text","text":"It shipped."}]}]})";

// persistence.20: "Message restoration drops any tool_result whose tool_use id appears nowhere in
// the transcript: a provider refuses the WHOLE conversation over one such orphan".
TEST(Restore, OrphanToolResultsAreDroppedAndLoggedOnceWithTheirIds) {
    EXPECT_THROW((void)nucleo::read_conversation_parts(kPoisoned), nucleo::Error)
        << "the strict reader refuses; the restore path must not";
    CapturedLog log;
    const ConversationParts parts = nucleo::restore_parts(kPoisoned);
    ASSERT_EQ(parts.messages.size(), 4u) << "m4 held only an orphan: nothing left to send";
    EXPECT_EQ(parts.messages[2].id, "m3");
    ASSERT_EQ(parts.messages[2].blocks.size(), 1u);
    EXPECT_EQ(parts.messages[2].blocks[0].get_if<nucleo::ToolResultBlock>()->tool_use_id,
              "toolu_ok");
    EXPECT_EQ(parts.messages[3].id, "m5");
    ASSERT_EQ(log.warnings.size(), 1u) << "logged ONCE";
    EXPECT_NE(log.warnings[0].find("toolu_gone1"), std::string::npos) << log.warnings[0];
    EXPECT_NE(log.warnings[0].find("toolu_gone2"), std::string::npos) << log.warnings[0];
    EXPECT_EQ(log.warnings[0].find("toolu_ok"), std::string::npos) << log.warnings[0];
}

TEST(Restore, ACleanSnapshotIsReadAsIsWithoutAWarning) {
    CapturedLog log;
    const auto parts = conversation("c", 4);
    const auto text = nucleo::write_conversation_parts(parts, {.pretty = false});
    EXPECT_EQ(nucleo::write_conversation_parts(nucleo::restore_parts(text), {.pretty = false}),
              text);
    EXPECT_TRUE(log.warnings.empty());
}

// persistence.22: "A restored conversation comes back UNBOUND: the snapshot stores the declaration
// and the spec that last served it (as priorSpecId ...), never a live binding".
TEST(Restore, AConversationLoadedFromAStoreComesBackUnboundWithItsPriorSpecId) {
    nucleo::PersistentStore store(store_test::make_store("memory"));
    // The store keeps what it is given; the poisoned snapshot goes in through the raw slot.
    store.instance().create_conversation(
        "u", "c-orphans",
        std::string(R"({"schema_version":1,"title":"t","snapshot":)") + kPoisoned + "}");
    CapturedLog log;
    const auto restored = nucleo::ConversationContext::from_parts(store.load("u", "c-orphans"));
    EXPECT_FALSE(restored.has_model());
    EXPECT_THROW((void)restored.model(), nucleo::UncorrectableLLMException);
    EXPECT_FALSE(restored.frozen());
    EXPECT_EQ(restored.prior_spec_id(), "anthropic/claude-sonnet");
    EXPECT_EQ(restored.messages().size(), 4u);
    EXPECT_EQ(log.warnings.size(), 1u);
    // The resuming thinker re-declares its palette: add-only, not yet announced.
    auto conversation_again = restored;
    EXPECT_TRUE(conversation_again.add_tool({"search", "Search orders.", R"({"type":"object"})"}));
    EXPECT_EQ(conversation_again.pending_tools(), std::vector<std::string>{"search"});
}

}  // namespace
