// The soak's checks (soak_check.hpp) catch what they claim to: a conversation's history forged in
// the memory store with a fork, a stale turn, a tool_use without its result and acknowledged saves
// the database does not hold, next to a clean one. The stores refuse these writes on the normal
// path; `replace` without a base version and hand-made turns make them here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nucleo/document.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"
#include "soak_check.hpp"

namespace nucleo::soak {
namespace {

const Pool kPool{"t", 1, 1};
const std::string kUser = "t-user-0";
const std::string kId = "t-conv-0";

/// A soak turn appended to `parts`: the question naming `tag` and `base`, a tool call, its
/// result (unless `with_result` is false) and an answer.
void add_turn(ConversationParts& parts, const std::string& tag, std::size_t base,
              bool with_result = true) {
    const auto next_id = [&] { return "m" + std::to_string(parts.messages.size() + 1); };
    Message question = Message::outgoing_text("[soak " + tag + " base=" + std::to_string(base) +
                                              "] Where is order 1?");
    question.id = next_id();
    parts.messages.push_back(question);
    Message call;
    call.direction = Direction::kIncoming;
    call.id = next_id();
    call.blocks.emplace_back(ToolUseBlock{"tu-" + tag, "lookup_order", R"({"order":"1"})"});
    parts.messages.push_back(call);
    if (with_result) {
        Message result;
        result.id = next_id();
        result.blocks.emplace_back(ToolResultBlock{"tu-" + tag, {TextBlock{"shipped"}}, false});
        parts.messages.push_back(result);
    }
    Message answer = Message::incoming_text("It shipped.");
    answer.id = next_id();
    parts.messages.push_back(answer);
}

struct Forge {
    PluginLoader loader{{NUCLEO_BUILD_PLUGIN_DIR}};
    PersistentStore store{loader.load("memory").make_store("{}")};
    ConversationParts saved;
    HostLog log{"h1", {}, {}, {}, 0};

    Forge() { saved.conversation_id = kId; }
    /// Saves `next` (created, else an update from the last save) and logs its acknowledgement.
    void save(const ConversationParts& next) {
        const SaveResult r = saved.messages.empty()
                                 ? store.create(kUser, next, "t")
                                 : store.update(kUser, kId, std::to_string(versions),
                                                SnapshotDelta::between(saved, next));
        ++versions;
        ack(r.version, next);
        saved = next;
    }
    void ack(const std::string& version, const ConversationParts& parts) {
        log.acks.push_back({"h1", kUser, kId, version, "tag",
                            fnv1a(write_conversation_parts(parts, {.pretty = false}))});
    }
    CheckReport check() const { return check_database(store, kPool, {log}); }
    int versions = 0;
};

TEST(SoakCheck, ACleanChainOfTurnsByTwoHostsPasses) {
    Forge f;
    ConversationParts p = f.saved;
    add_turn(p, "h1/0/0", 0);
    f.save(p);
    add_turn(p, "h2/0/0", 4);
    f.save(p);
    const CheckReport r = f.check();
    EXPECT_TRUE(r.clean()) << (r.problems.empty() ? "" : r.problems.front());
    EXPECT_EQ(r.conversations, 1u);
    EXPECT_EQ(r.versions, 2u);
    EXPECT_EQ(r.turns, 2u);
    EXPECT_EQ(r.handoffs, 1u);
    EXPECT_EQ(r.acks, 2u);
    EXPECT_EQ(r.unacknowledged_versions, 0u);
}

TEST(SoakCheck, AVersionThatDoesNotExtendItsPredecessorIsAFork) {
    Forge f;
    ConversationParts p = f.saved;
    add_turn(p, "h1/0/0", 0);
    f.save(p);
    ConversationParts first = p;
    add_turn(p, "h1/0/1", 4);
    f.save(p);
    // A second writer from version 1, its write accepted without the base check.
    add_turn(first, "h2/0/0", 4);
    f.store.replace(kUser, first);
    const CheckReport r = f.check();
    EXPECT_EQ(r.forks, 1u);
    EXPECT_FALSE(r.clean());
}

TEST(SoakCheck, ATurnWrittenFromAStaleBaseIsCaught) {
    Forge f;
    ConversationParts p = f.saved;
    add_turn(p, "h1/0/0", 0);
    f.save(p);
    add_turn(p, "h2/0/0", 0);  // its writer had seen none of the four messages before it
    f.save(p);
    EXPECT_EQ(f.check().stale_writes, 1u);
}

TEST(SoakCheck, AToolUseWithoutItsResultIsCaught) {
    Forge f;
    ConversationParts p = f.saved;
    add_turn(p, "h1/0/0", 0, false);
    f.save(p);
    EXPECT_EQ(f.check().orphan_tool_uses, 1u);
}

TEST(SoakCheck, AnAcknowledgedSaveTheDatabaseDoesNotHoldIsLost) {
    Forge f;
    ConversationParts p = f.saved;
    add_turn(p, "h1/0/0", 0);
    f.save(p);
    ConversationParts other = p;
    add_turn(other, "h1/0/1", 4);
    f.ack("1", other);  // version 1 holds another document
    f.ack("2", other);  // no version 2
    f.ack("", other);   // no version holds it
    const CheckReport r = f.check();
    EXPECT_EQ(r.acks, 4u);
    EXPECT_EQ(r.lost_acks, 3u);
}

}  // namespace
}  // namespace nucleo::soak
