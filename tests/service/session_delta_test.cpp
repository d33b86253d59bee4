// The session store refreshed by the delta of each committed save (ownership.104,
// persistence.109, abi.128) and the O(1) "only grew" check of a save (persistence.110), over REAL
// stores: SQLite for the durable record, Redis or the memory store for the session store, the
// fault-injecting store around them where a call must fail, and a session store built against
// the frozen ABI 1.4 header for the whole-put path.
#include <filesystem>
#include <latch>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

using namespace std::chrono_literals;
using nucleo::ConversationContext;
using nucleo::ConversationParts;
using nucleo::ConversationService;
using nucleo::ConversationServiceOptions;
using nucleo::ErrorKind;
using nucleo::Message;
using nucleo::PersistentStore;
using nucleo::SessionStore;
using service_test::thinker;
using store_test::make_store;

std::string plugin_file(const std::string& name) {
    return std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + name + ".so";
}

std::string redis_config() {
    return R"({"url":")" + store_test::redis_url() + R"("})";
}

/// A fault store wrapping the build-tree store plugin `inner`, failing the calls `faults` names.
nucleo::StoreInstance fault_store(const std::string& inner, const std::string& inner_config,
                                  const std::string& faults) {
    static const nucleo::PluginLoader loader;
    return loader.load(NUCLEO_FAULT_STORE)
        .make_store(R"({"inner":")" + plugin_file(inner) + R"(","inner_config":)" + inner_config +
                    R"(,"faults":)" + faults + "}");
}

/// Faults failing every session_put but the first (the create's): a refresh that fell back to a
/// whole put would drop the entry, so an entry that survives many saves was refreshed by deltas.
std::string every_put_but_the_first_fails() {
    std::string faults = "[";
    for (int n = 2; n <= 80; ++n) {
        if (n > 2) faults += ",";
        faults += R"({"slot":"session_put","nth":)" + std::to_string(n) + "}";
    }
    return faults + "]";
}

/// A service over the SQLite file `path` and the session store `session`, no cleanup thread.
std::unique_ptr<ConversationService> sqlite_service(const std::string& path,
                                                   const nucleo::StoreInstance& session) {
    ConversationServiceOptions options;
    options.persistent.emplace(make_store("sqlite", path));
    options.session.emplace(session);
    options.cleanup_thread = false;
    return std::make_unique<ConversationService>(std::move(options));
}

std::string document(const ConversationParts& parts) {
    return nucleo::write_conversation_parts(parts, {.pretty = false});
}

/// The messages of `parts` as a document: what a reload keeps (the workflow id and the
/// declarations are the adopting thinker's, ownership.13).
std::string messages_document(const ConversationParts& parts) {
    ConversationParts only;
    only.conversation_id = parts.conversation_id;
    only.messages = parts.messages;
    return document(only);
}

/// The session entry mirrors the durable record's latest version, byte for byte.
void expect_entry_mirrors_durable(const SessionStore& session, const PersistentStore& durable,
                                  const std::string& user, const std::string& id) {
    const auto entry = session.get_entry(user, id);
    ASSERT_TRUE(entry.has_value()) << "the entry was dropped";
    EXPECT_EQ(entry->durable_version, durable.versions(user, id).back().version);
    EXPECT_EQ(document(entry->parts), document(durable.load(user, id)));
}

struct Deployment {
    const char* name;
    const char* session;  // "memory" or "redis"
};

class DeltaRefresh : public ::testing::TestWithParam<Deployment> {
  protected:
    std::string session_config() const {
        return std::string(GetParam().session) == "redis" ? redis_config() : std::string("{}");
    }
};

// Many saves of every kind -- appends, a flag set in place on an old message, a top-level field,
// compaction's rewrite -- and after each the entry equals the durable record, refreshed by deltas
// only (every whole put after the create's fails).
TEST_P(DeltaRefresh, TheEntryEqualsTheDurableRecordAfterManyDeltaSaves) {
    const std::string path = store_test::temp_sqlite_path();
    const std::string user = store_test::unique("alice");
    const nucleo::StoreInstance session_store =
        fault_store(GetParam().session, session_config(), every_put_but_the_first_fails());
    auto service_owner = sqlite_service(path, session_store);
    ConversationService& service = *service_owner;
    const SessionStore session(session_store);
    const PersistentStore durable(make_store("sqlite", path));
    ASSERT_TRUE(session.offers_delta());

    auto t = thinker("Chat", user);
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    ctx->add_message(Message::outgoing_text("first question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    expect_entry_mirrors_durable(session, durable, user, id);
    for (int i = 0; i < 30; ++i) {
        ctx->add_message(Message::incoming_text("answer " + std::to_string(i)));
        ctx->add_message(Message::outgoing_text("question " + std::to_string(i)));
        if (i % 7 == 3) ctx->set_message_compactable(ctx->messages()[1].id, i % 2 == 0);
        if (i % 9 == 4) ctx->set_requested_output_tokens(ctx->messages()[2].id, 100 + i);
        if (i == 12) ctx->set_grade(nucleo::Grade::kLarge);
        ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value()) << "save " << i;
        ASSERT_NO_FATAL_FAILURE(expect_entry_mirrors_durable(session, durable, user, id))
            << "after save " << i;
    }
    // Compaction rewrites the list: a splice that is no append.
    std::vector<Message> kept(ctx->messages().begin() + 4, ctx->messages().end());
    std::vector<std::size_t> origins;
    for (std::size_t i = 4; i < ctx->messages().size(); ++i) origins.push_back(i);
    ctx->replace_messages(kept, origins);
    ctx->add_message(Message::incoming_text("after compaction"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    expect_entry_mirrors_durable(session, durable, user, id);
    EXPECT_EQ(document(session.get_entry(user, id)->parts), document(ctx->parts()));

    // A fresh host is served by the entry.
    service.release(*t);
    service.run_cleanup(std::chrono::steady_clock::now() + 24h);
    auto t2 = thinker("Chat", user);
    t2->set_conversation_id(id);
    auto again = service.obtain_conversation(t2).get();
    EXPECT_EQ(messages_document(again->parts()), messages_document(ctx->parts()));
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// A delta refresh that fails (before the store applied it, or after with the answer lost)
// invalidates the entry; the durable save is committed all the same, and the next load reads
// through and puts the entry back, which the next save refreshes by its delta again.
TEST_P(DeltaRefresh, AFailingDeltaInvalidatesTheEntryAndTheSaveStaysCommitted) {
    const std::string path = store_test::temp_sqlite_path();
    const std::string user = store_test::unique("alice");
    const nucleo::StoreInstance session_store =
        fault_store(GetParam().session, session_config(),
                    R"([{"slot":"session_apply","nth":1},)"
                    R"({"slot":"session_apply","nth":3,"after":true}])");
    auto service_owner = sqlite_service(path, session_store);
    ConversationService& service = *service_owner;
    const SessionStore session(session_store);
    const PersistentStore durable(make_store("sqlite", path));

    auto t = thinker("Chat", user);
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    std::vector<std::string> expected{ctx->add_message(Message::outgoing_text("m1"))};
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());  // create: a whole put
    ASSERT_TRUE(session.get_entry(user, id).has_value());
    auto save_one = [&](bool refresh_fails) {
        expected.push_back(ctx->add_message(
            Message::incoming_text("m" + std::to_string(expected.size() + 1))));
        const auto saved = service.save_conversation(*ctx, *t);
        ASSERT_TRUE(saved.has_value()) << "the durable save committed";
        EXPECT_EQ(saved->messages_written, 1u);
        std::vector<std::string> stored;
        for (const Message& m : durable.load(user, id).messages) stored.push_back(m.id);
        EXPECT_EQ(stored, expected);
        if (refresh_fails) {
            EXPECT_FALSE(session.get_entry(user, id).has_value()) << "the failed delta invalidated";
        } else {
            expect_entry_mirrors_durable(session, durable, user, id);
        }
    };
    auto reload = [&] {
        service.release(*t);
        service.run_cleanup(std::chrono::steady_clock::now() + 24h);
        t = thinker("Chat", user);
        t->set_conversation_id(id);
        ctx = service.obtain_conversation(t).get();  // read through: the entry is put back
        expect_entry_mirrors_durable(session, durable, user, id);
    };
    save_one(true);   // apply 1 fails before the store applied it
    reload();
    save_one(false);  // apply 2
    save_one(true);   // apply 3 applied, its answer lost: invalidated all the same
    reload();
    save_one(false);  // apply 4
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// abi.128: a delta whose base is not the entry's version never applies: the entry is dropped.
// Two writers (two connections) race deltas from the same base: at most one applies, and what
// is left is either nothing or exactly the winner's conversation.
TEST_P(DeltaRefresh, AStaleBaseNeverLeavesAWrongEntry) {
    const std::string user = store_test::unique("alice");
    const std::string id = store_test::unique("conv");
    const auto store_a = GetParam().session == std::string("redis") ? make_store("redis")
                                                                    : make_store("memory");
    // The memory store lives in one process: its two "hosts" share the instance.
    const auto store_b = GetParam().session == std::string("redis") ? make_store("redis") : store_a;
    const SessionStore a(store_a);
    const SessionStore b(store_b);

    ConversationParts base = store_test::conversation(id, 6);
    // A stale base: the entry is at 3, the delta is from 2.
    a.put(user, base, "3", 0);
    ConversationParts grown = base;
    grown.messages.push_back(store_test::next_message(base));
    const auto delta = nucleo::SnapshotDelta::between(base, grown);
    EXPECT_FALSE(b.apply(user, id, "2", "4", delta, 0));
    EXPECT_FALSE(a.get_entry(user, id).has_value()) << "a mismatched base drops the entry";
    // No entry at all: a miss, and still nothing.
    EXPECT_FALSE(a.apply(user, id, "3", "4", delta, 0));
    EXPECT_FALSE(a.get_entry(user, id).has_value());

    for (int round = 0; round < 20; ++round) {
        a.put(user, base, "1", 0);
        ConversationParts by_a = base;
        by_a.messages.push_back(store_test::next_message(base));
        by_a.messages.back().id = "from-a";
        ConversationParts by_b = base;
        by_b.messages.push_back(store_test::next_message(base));
        by_b.messages.back().id = "from-b";
        const auto delta_a = nucleo::SnapshotDelta::between(base, by_a);
        const auto delta_b = nucleo::SnapshotDelta::between(base, by_b);
        bool applied_a = false;
        bool applied_b = false;
        std::latch start(2);
        std::thread ta([&] {
            start.arrive_and_wait();
            applied_a = a.apply(user, id, "1", "2", delta_a, 0);
        });
        std::thread tb([&] {
            start.arrive_and_wait();
            applied_b = b.apply(user, id, "1", "2", delta_b, 0);
        });
        ta.join();
        tb.join();
        EXPECT_FALSE(applied_a && applied_b) << "round " << round << ": both applied on one base";
        const auto left = a.get_entry(user, id);
        if (!left) continue;  // the loser dropped the winner's entry: a miss, never wrong
        ASSERT_TRUE(applied_a || applied_b) << "round " << round;
        EXPECT_EQ(left->durable_version, "2");
        EXPECT_EQ(document(left->parts), document(applied_a ? by_a : by_b)) << "round " << round;
    }
    a.invalidate(user, id);
}

// Two hosts over one SQLite file and one session store: host A still holds version 2 while host
// B saved version 3; A's save from its stale base is refused by the durable store and the
// entry, refreshed by B's delta, still mirrors version 3.
TEST_P(DeltaRefresh, AHostSavingFromAStaleBaseLeavesTheEntryOfTheLatestVersion) {
    const std::string path = store_test::temp_sqlite_path();
    const std::string user = store_test::unique("alice");
    const auto session_store = GetParam().session == std::string("redis") ? make_store("redis")
                                                                          : make_store("memory");
    auto a = sqlite_service(path, session_store);
    auto b = sqlite_service(path, session_store);
    const SessionStore session(session_store);
    const PersistentStore durable(make_store("sqlite", path));

    auto ta = thinker("Chat", user);
    const std::string id = ta->mint_conversation_id();
    auto ctx_a = a->obtain_conversation(id, ta).get();
    ctx_a->add_message(Message::outgoing_text("m1"));
    ASSERT_TRUE(a->save_conversation(*ctx_a, *ta).has_value());  // v1
    ctx_a->add_message(Message::incoming_text("m2"));
    ASSERT_TRUE(a->save_conversation(*ctx_a, *ta).has_value());  // v2, by delta
    a->release(*ta);  // retained: A keeps its context at v2

    auto tb = thinker("Chat", user);
    tb->set_conversation_id(id);
    auto ctx_b = b->obtain_conversation(tb).get();  // served by the v2 entry
    ctx_b->add_message(Message::outgoing_text("m3 from b"));
    ASSERT_TRUE(b->save_conversation(*ctx_b, *tb).has_value());  // v3, by delta
    b->release(*tb);
    expect_entry_mirrors_durable(session, durable, user, id);

    auto ta2 = thinker("Chat", user);
    ta2->set_conversation_id(id);
    auto stale = a->obtain_conversation(ta2).get();
    stale->add_message(Message::outgoing_text("m3 from a"));
    const auto kind = store_test::error_kind([&] { a->save_conversation(*stale, *ta2); });
    ASSERT_TRUE(kind.has_value()) << "a save from a stale base must be refused";
    EXPECT_EQ(*kind, ErrorKind::kOwnership);
    // The refused save invalidates (persistence.102); whatever is left is the latest version.
    if (const auto left = session.get_entry(user, id)) {
        EXPECT_EQ(left->durable_version, durable.versions(user, id).back().version);
        EXPECT_EQ(left->parts.messages.back().id, ctx_b->messages().back().id);
    }
    // A's next turn reloads (its holder was reset by the refusal or is evicted) and refreshes it.
    a->release(*ta2);
    a->run_cleanup(std::chrono::steady_clock::now() + 24h);
    auto ta3 = thinker("Chat", user);
    ta3->set_conversation_id(id);
    auto fresh = a->obtain_conversation(ta3).get();
    EXPECT_EQ(messages_document(fresh->parts()), messages_document(durable.load(user, id)));
    fresh->add_message(Message::incoming_text("m4"));
    ASSERT_TRUE(a->save_conversation(*fresh, *ta3).has_value());
    expect_entry_mirrors_durable(session, durable, user, id);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

void PrintTo(const Deployment& d, std::ostream* out) {
    *out << d.name;
}

INSTANTIATE_TEST_SUITE_P(Sessions, DeltaRefresh,
                         ::testing::Values(Deployment{"memory", "memory"},
                                           Deployment{"redis", "redis"}),
                         [](const auto& info) { return std::string(info.param.name); });

// abi.128: a session store built before ABI 1.5 has no session_apply: every committed save puts
// the whole entry, as before, and the entry mirrors the durable record.
TEST(SessionDeltaOldAbi, AStoreWithoutTheSlotGetsTheWholeEntryOnEverySave) {
    const std::string path = store_test::temp_sqlite_path();
    static const nucleo::PluginLoader loader;
    const nucleo::Plugin plugin = loader.load(NUCLEO_FROZEN_1_4_STORE);
    EXPECT_EQ(plugin.info().abi_minor, 4u);
    const nucleo::StoreInstance old_store = plugin.make_store("{}");
    const SessionStore session(old_store);
    EXPECT_FALSE(session.offers_delta());
    const ConversationParts one = store_test::conversation("x", 1);
    const auto delta = nucleo::SnapshotDelta::between(one, store_test::conversation("x", 2));
    EXPECT_THROW(session.apply("alice", "x", "1", "2", delta, 0), nucleo::NotImplementedException);

    auto service_owner = sqlite_service(path, old_store);
    ConversationService& service = *service_owner;
    const PersistentStore durable(make_store("sqlite", path));
    const std::string user = store_test::unique("alice");
    auto t = thinker("Chat", user);
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    for (int i = 0; i < 5; ++i) {
        ctx->add_message(Message::outgoing_text("question " + std::to_string(i)));
        ctx->add_message(Message::incoming_text("answer " + std::to_string(i)));
        ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
        ASSERT_NO_FATAL_FAILURE(expect_entry_mirrors_durable(session, durable, user, id));
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// persistence.110: the in-place flag setters are counted, so a save knows in O(1) whether the
// messages it saved are as saved; a flag set on an old message still reaches the store.
TEST(FlagChanges, AFlagSetOnAnOldMessageIsCountedAndSaved) {
    ConversationContext c("conv", "alice");
    const std::string first = c.add_message(Message::outgoing_text("q"));
    c.add_message(Message::incoming_text("a"));
    EXPECT_EQ(c.message_flag_changes(), 0u);
    c.set_message_compactable(first, false);
    c.set_requested_output_tokens(first, 512);
    EXPECT_EQ(c.message_flag_changes(), 2u);
    EXPECT_THROW(c.set_message_compactable("no-such-id", false), nucleo::Error);
    EXPECT_EQ(c.message_flag_changes(), 2u) << "a refused setter changes nothing";

    auto store = make_store("memory");
    ConversationServiceOptions o;
    o.persistent.emplace(store);
    o.cleanup_thread = false;
    ConversationService service(std::move(o));
    const PersistentStore durable(store);
    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    const std::string old = ctx->add_message(Message::outgoing_text("first question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    ctx->add_message(Message::incoming_text("answer"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    // In place, with an append beside it: the append alone would look like "only grew".
    ctx->set_requested_output_tokens(old, 4096);
    ctx->add_message(Message::outgoing_text("second question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    const ConversationParts stored = durable.load(ctx->user_id(), id);
    ASSERT_EQ(stored.messages.size(), 3u);
    EXPECT_EQ(stored.messages[0].requested_output_tokens, 4096);
    EXPECT_EQ(document(stored), document(ctx->parts()));
}

}  // namespace
