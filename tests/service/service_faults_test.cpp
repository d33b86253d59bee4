// ConversationService under failure: holders keyed by (user, conversation) (ownership.101), and
// the save discipline with the session store as a cache that may fail (persistence.101-103),
// driven through the fault-injecting store plugin (fault_store.cpp) over REAL stores: SQLite for
// the durable record, memory or Redis for the session store, memory for the lease.
#include <filesystem>
#include <future>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

using namespace std::chrono_literals;
using nucleo::ConversationService;
using nucleo::ConversationServiceOptions;
using nucleo::ErrorKind;
using nucleo::Message;
using nucleo::PersistentStore;
using service_test::thinker;
using store_test::error_kind;
using store_test::make_store;

std::string plugin_file(const std::string& name) {
    return std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + name + ".so";
}

/// A fault store wrapping `inner` (a build-tree store plugin) configured by `inner_config`,
/// failing the calls `faults` (a JSON array) names.
nucleo::StoreInstance fault_store(const std::string& inner, const std::string& inner_config,
                                  const std::string& faults = "[]") {
    static const nucleo::PluginLoader loader;
    return loader.load(NUCLEO_FAULT_STORE)
        .make_store(R"({"inner":")" + plugin_file(inner) + R"(","inner_config":)" + inner_config +
                    R"(,"faults":)" + faults + "}");
}

std::string sqlite_config(const std::string& path) {
    return R"({"path":")" + path + R"("})";
}

std::vector<std::string> ids_of(const nucleo::ConversationParts& parts) {
    std::vector<std::string> ids;
    for (const Message& m : parts.messages) ids.push_back(m.id);
    return ids;
}

// ---- ownership.101: two users, one conversation id ----

TEST(UserScopedHolders, AnotherUsersFailedAdoptNeverLocksTheOwnerOut) {
    ConversationServiceOptions options;
    options.persistent.emplace(make_store("memory"));
    options.cleanup_thread = false;
    ConversationService service(std::move(options));
    auto alice = thinker("Chat", "alice");
    const std::string id = alice->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, alice).get();
    ctx->add_message(Message::outgoing_text("alice's question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *alice).has_value());
    service.release(*alice);

    // bob adopts alice's id: not found for him, and nothing of it sticks to the id.
    auto bob = thinker("Chat", "bob");
    bob->set_conversation_id(id);
    EXPECT_EQ(error_kind([&] { service.obtain_conversation(bob).get(); }), ErrorKind::kNotFound);
    EXPECT_FALSE(service.force_release(id, "bob"));

    // alice resumes at once (the bug: "not found for user 'alice'" until cleanup).
    auto again = thinker("Chat", "alice");
    again->set_conversation_id(id);
    auto resumed = service.obtain_conversation(again).get();
    ASSERT_EQ(resumed->messages().size(), 1u);
    EXPECT_EQ(service.owning_thinker(id, "alice"), again);
    EXPECT_EQ(service.owning_thinker(id, "bob"), nullptr);
}

TEST(UserScopedHolders, TwoUsersOwnTheSameIdAtOnceEachTheirOwn) {
    ConversationServiceOptions options;
    auto persistent = make_store("memory");
    options.persistent.emplace(persistent);
    options.cleanup_thread = false;
    options.acquire_timeout = 50ms;  // a wrong wait would fail at once, not hang
    ConversationService service(std::move(options));
    auto alice = thinker("Chat", "alice");
    auto bob = thinker("Chat", "bob");
    const std::string id = alice->mint_conversation_id();
    bob->mint_conversation_id();
    // Both mint the same id (a client reusing ids per user): two conversations, no waiting.
    auto a = service.obtain_conversation(id, alice).get();
    auto b = service.obtain_conversation(id, bob).get();
    ASSERT_NE(a, b);
    EXPECT_EQ(service.holders(), 2u);
    a->add_message(Message::outgoing_text("from alice"));
    b->add_message(Message::outgoing_text("from bob"));
    ASSERT_TRUE(service.save_conversation(*a, *alice).has_value());
    ASSERT_TRUE(service.save_conversation(*b, *bob).has_value());
    EXPECT_EQ(service.owning_thinker(id, "alice"), alice);
    EXPECT_EQ(service.owning_thinker(id, "bob"), bob);

    // bob's release, cleanup and forced release never touch alice's holder.
    service.release(*bob);
    EXPECT_EQ(service.run_cleanup(std::chrono::steady_clock::now() + 24h), 1u);
    EXPECT_EQ(service.owning_thinker(id, "alice"), alice);
    EXPECT_FALSE(service.force_release(id, "bob"));
    EXPECT_FALSE(alice->cancellation->cancelled());
    a->add_message(Message::incoming_text("to alice"));
    ASSERT_TRUE(service.save_conversation(*a, *alice).has_value());

    const PersistentStore store(persistent);
    EXPECT_EQ(store.load("alice", id).messages.size(), 2u);
    EXPECT_EQ(store.load("bob", id).messages.size(), 1u);
}

// ---- ownership.102: force_release cancels the owner's workflow by default ----

TEST(ForceRelease, CancelsTheOwnersTokenWithoutAHook) {
    ConversationServiceOptions options;
    options.persistent.emplace(make_store("memory"));
    options.cleanup_thread = false;
    ConversationService service(std::move(options));
    auto owner = thinker("Owner");
    const std::string id = owner->mint_conversation_id();
    ASSERT_FALSE(owner->cancel_workflow);
    service.obtain_conversation(id, owner).get();
    auto next = thinker("Next");
    next->set_conversation_id(id);
    auto waiting = service.obtain_conversation(id, next);
    std::thread turn([&] {
        owner->cancellation->wait_for(1h);  // the turn stops at its next boundary...
        service.release(*owner);            // ...and its own release hands it over
    });
    EXPECT_TRUE(service.force_release(id, "alice"));
    EXPECT_TRUE(owner->cancellation->cancelled());
    EXPECT_NE(waiting.get(), nullptr);
    EXPECT_EQ(service.owning_thinker(id, "alice"), next);
    EXPECT_FALSE(next->cancellation->cancelled());
    turn.join();
}

// ---- persistence.101-103: every store path through a failure ----

struct Fault {
    std::string name;
    const char* store;   // the store the faults apply to: "persistent", "session" or "lease"
    std::string faults;  // the fault store's "faults" array
    bool surfaces;       // the failure reaches the caller (once) as a failed obtain or save
    bool with_session = true;
};

Fault fails(const char* store, const char* slot, int nth, bool after = false,
            bool surfaces = true, bool with_session = true) {
    return {std::string(store) + "_" + slot + "_" + std::to_string(nth) + (after ? "_after" : ""),
            store,
            std::string(R"([{"slot":")") + slot + R"(","nth":)" + std::to_string(nth) +
                R"(,"after":)" + (after ? "true" : "false") + "}]",
            surfaces, with_session};
}

void PrintTo(const Fault& fault, std::ostream* out) {
    *out << fault.name;
}

class EveryPathFails : public ::testing::TestWithParam<Fault> {};

// Four turns over one conversation, the holder evicted between turns so every turn loads it
// again (session get, version history, load), with a lease (acquire, renew, release). The one
// injected failure surfaces at most as one failed obtain or save; retrying it succeeds; and the
// durable record holds every message once, in order, and takes the next save.
TEST_P(EveryPathFails, TheDurableRecordStaysWholeAndTheNextSaveSucceeds) {
    const Fault fault = GetParam();
    SCOPED_TRACE(fault.name);
    auto faults_of = [&](const char* store) {
        return std::string(fault.store) == store ? fault.faults : std::string("[]");
    };
    const std::string path = store_test::temp_sqlite_path();
    ConversationServiceOptions options;
    options.persistent.emplace(fault_store("sqlite", sqlite_config(path), faults_of("persistent")));
    if (fault.with_session) {
        options.session.emplace(fault_store("memory", "{}", faults_of("session")));
    }
    options.lease.emplace(fault_store("memory", "{}", faults_of("lease")));
    options.cleanup_thread = false;
    options.host_id = "faulty-host";
    ConversationService service(std::move(options));

    int failures = 0;
    // Runs `op`; one failure is allowed when the fault surfaces, then it must succeed.
    auto retried = [&](const auto& op) {
        try {
            return op();
        } catch (const nucleo::Error& e) {
            ++failures;
            EXPECT_TRUE(fault.surfaces) << "this failure must not surface: " << e.what();
            EXPECT_EQ(failures, 1) << e.what();
            return op();
        }
    };

    std::string id;
    std::vector<std::string> expected;
    for (int turn = 0; turn < 4; ++turn) {
        auto t = thinker("Chat");
        if (turn == 0) {
            id = t->mint_conversation_id();
        } else {
            t->set_conversation_id(id);
        }
        auto ctx = retried([&] { return service.obtain_conversation(t).get(); });
        ASSERT_EQ(ids_of(ctx->parts()), expected) << "turn " << turn << " loaded";
        expected.push_back(
            ctx->add_message(Message::outgoing_text("question " + std::to_string(turn))));
        retried([&] { return service.save_conversation(*ctx, *t); });
        expected.push_back(
            ctx->add_message(Message::incoming_text("answer " + std::to_string(turn))));
        retried([&] { return service.save_conversation(*ctx, *t); });
        service.release(*t);
        EXPECT_EQ(service.release_all_for_job(t->job_id), 0u);
        service.run_cleanup(std::chrono::steady_clock::now() + 24h);  // evicted: reload next
    }
    EXPECT_EQ(failures, fault.surfaces ? 1 : 0) << "the fault must fire and surface once";

    // The durable record, read without the fault store: whole and in order.
    const PersistentStore durable(make_store("sqlite", path));
    EXPECT_EQ(ids_of(durable.load("alice", id)), expected);
    // A fresh service over it resumes and saves; its lease store is new too (a counter that
    // starts again), and its token still exceeds every one the record saw (ownership.103).
    ConversationServiceOptions fresh;
    fresh.persistent.emplace(make_store("sqlite", path));
    fresh.lease.emplace(make_store("memory"));
    fresh.cleanup_thread = false;
    ConversationService next(std::move(fresh));
    auto t = thinker("Chat");
    t->set_conversation_id(id);
    auto ctx = next.obtain_conversation(t).get();
    expected.push_back(ctx->add_message(Message::outgoing_text("after the fault")));
    ASSERT_TRUE(next.save_conversation(*ctx, *t).has_value());
    EXPECT_EQ(ids_of(durable.load("alice", id)), expected);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Calls per slot over the four turns (turn 0 creates, turns 1-3 reload): persistent
// create_conversation 1, update_conversation 7, latest_version two per obtain (the lease's
// token floor, then the load's latest version; abi.135), load_conversation one per reload whose
// session entry is not current (every reload without a session store); session get one per obtain,
// put on the create and per read-through, apply one per later save (ownership.104); the lease slot
// in order acquire, renew, renew, release per turn.
INSTANTIATE_TEST_SUITE_P(
    Faults, EveryPathFails,
    ::testing::Values(
        fails("persistent", "create_conversation", 1),
        fails("persistent", "create_conversation", 1, true),
        fails("persistent", "update_conversation", 1),
        fails("persistent", "update_conversation", 1, true),
        fails("persistent", "update_conversation", 4),
        fails("persistent", "update_conversation", 4, true),
        fails("persistent", "latest_version", 1), fails("persistent", "latest_version", 2),
        fails("persistent", "load_conversation", 1, false, true, false),
        fails("persistent", "load_conversation", 2, false, true, false),
        fails("persistent", "latest_version", 3, false, true, false),
        fails("session", "session_get", 2, false, false),
        fails("session", "session_put", 1, false, false),
        fails("session", "session_put", 2, false, false),
        fails("session", "session_put", 3, true, false),
        fails("session", "session_apply", 1, false, false),
        fails("session", "session_apply", 2, true, false),
        Fault{"session_put_and_invalidate", "session",
              R"([{"slot":"session_put","nth":2},{"slot":"session_invalidate","nth":1}])", false},
        fails("lease", "lease", 1), fails("lease", "lease", 1, true), fails("lease", "lease", 2),
        fails("lease", "lease", 3), fails("lease", "lease", 4, false, false),
        fails("lease", "lease", 5)),
    [](const auto& info) { return info.param.name; });

// persistence.113: obtaining and reloading a conversation never reads its version history (the
// first version_history call would fail); the token floor and the durable version come from
// latest_version, so a hand-off costs the same after 40 saves as after one.
TEST(HandOff, AnObtainNeverReadsTheWholeVersionHistory) {
    const std::string path = store_test::temp_sqlite_path();
    const std::string no_history = R"([{"slot":"version_history","nth":1}])";
    std::string id;
    std::vector<std::string> expected;
    for (int host = 0; host < 3; ++host) {
        ConversationServiceOptions options;
        options.persistent.emplace(fault_store("sqlite", sqlite_config(path), no_history));
        options.lease.emplace(make_store("memory"));
        options.cleanup_thread = false;
        options.host_id = "host-" + std::to_string(host);
        ConversationService service(std::move(options));
        for (int turn = 0; turn < 4; ++turn) {
            auto t = thinker("Chat");
            if (id.empty()) {
                id = t->mint_conversation_id();
            } else {
                t->set_conversation_id(id);
            }
            auto ctx = service.obtain_conversation(t).get();
            ASSERT_EQ(ids_of(ctx->parts()), expected) << "host " << host << " turn " << turn;
            for (int save = 0; save < 5; ++save) {
                expected.push_back(ctx->add_message(Message::outgoing_text("q")));
                ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
            }
            service.release(*t);
            service.run_cleanup(std::chrono::steady_clock::now() + 24h);  // evicted: reload next
        }
    }
    EXPECT_EQ(PersistentStore(make_store("sqlite", path)).versions("alice", id).size(),
              expected.size());
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// The session refresh failing right after a committed save (the bug: the next save wrote
// `m1 m2 m3 m2` and every load failed with a duplicate message id).
TEST(SessionCache, AFailingPutAfterACommittedSaveChangesNothingTheNextSaveBuildsOn) {
    const std::string path = store_test::temp_sqlite_path();
    ConversationServiceOptions options;
    options.persistent.emplace(make_store("sqlite", path));
    options.session.emplace(fault_store("memory", "{}",
                                        R"([{"slot":"session_apply","nth":1},)"
                                        R"({"slot":"session_invalidate","nth":1}])"));
    options.cleanup_thread = false;
    ConversationService service(std::move(options));
    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    std::vector<std::string> expected{ctx->add_message(Message::outgoing_text("m1"))};
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());  // put 1
    expected.push_back(ctx->add_message(Message::incoming_text("m2")));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());  // the delta fails, logged
    expected.push_back(ctx->add_message(Message::outgoing_text("m3")));
    const auto third = service.save_conversation(*ctx, *t);
    ASSERT_TRUE(third.has_value());
    EXPECT_EQ(third->messages_written, 1u) << "only m3 is new";
    const PersistentStore durable(make_store("sqlite", path));
    EXPECT_EQ(ids_of(durable.load("alice", id)), expected);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Two hosts share Redis (session) and one SQLite file (durable). Host B's session refresh and
// invalidate fail after its save, leaving the entry of version 1 in Redis; host A, loading
// afterwards, must not take that entry with the durable store's newer version as its base (the
// bug stored `m1 m3 m2`).
TEST(SessionCache, AStaleEntryIsNeverTheBaseOfASaveOnAnotherHost) {
    const std::string path = store_test::temp_sqlite_path();
    const std::string redis = R"({"url":")" + store_test::redis_url() + R"("})";
    const std::string user = store_test::unique("alice");
    auto host = [&](nucleo::StoreInstance session) {
        ConversationServiceOptions o;
        o.persistent.emplace(make_store("sqlite", path));
        o.session.emplace(std::move(session));
        o.cleanup_thread = false;
        return std::make_unique<ConversationService>(std::move(o));
    };
    auto a = host(make_store("redis"));
    auto b = host(fault_store("redis", redis,
                              R"([{"slot":"session_put","nth":1},)"
                              R"({"slot":"session_apply","nth":1},)"
                              R"({"slot":"session_invalidate","nth":1}])"));

    auto ta = thinker("Chat", user);
    const std::string id = ta->mint_conversation_id();
    auto ctx_a = a->obtain_conversation(id, ta).get();
    std::vector<std::string> expected{ctx_a->add_message(Message::outgoing_text("m1"))};
    ASSERT_TRUE(a->save_conversation(*ctx_a, *ta).has_value());  // v1, cached as v1
    a->release(*ta);
    a->run_cleanup(std::chrono::steady_clock::now() + 24h);

    auto tb = thinker("Chat", user);
    tb->set_conversation_id(id);
    auto ctx_b = b->obtain_conversation(tb).get();  // the v1 entry is current: served
    ASSERT_EQ(ids_of(ctx_b->parts()), expected);
    expected.push_back(ctx_b->add_message(Message::incoming_text("m2")));
    ASSERT_TRUE(b->save_conversation(*ctx_b, *tb).has_value());  // v2; delta and invalidate fail
    b->release(*tb);
    const nucleo::SessionStore redis_session(make_store("redis"));
    auto stale = redis_session.get_entry(user, id);
    ASSERT_TRUE(stale.has_value()) << "the fault left the v1 entry in place";
    EXPECT_EQ(stale->durable_version, "1");

    auto ta2 = thinker("Chat", user);
    ta2->set_conversation_id(id);
    auto ctx_a2 = a->obtain_conversation(ta2).get();
    EXPECT_EQ(ids_of(ctx_a2->parts()), expected) << "the durable store is ahead: it answers";
    expected.push_back(ctx_a2->add_message(Message::outgoing_text("m3")));
    ASSERT_TRUE(a->save_conversation(*ctx_a2, *ta2).has_value());
    const PersistentStore durable(make_store("sqlite", path));
    EXPECT_EQ(ids_of(durable.load(user, id)), expected);
    auto refreshed = redis_session.get_entry(user, id);
    ASSERT_TRUE(refreshed.has_value());
    EXPECT_EQ(refreshed->durable_version, "3");
    EXPECT_EQ(ids_of(refreshed->parts), expected);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace
