// Many hosts, one conversation (ownership.40-42) over REAL PostgreSQL (persistent) and Redis
// (session + lease), started by the stores' CTest fixture: two processes contending, and a stale
// writer refused after losing its lease.
#include <cstdio>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "nucleo/errors.hpp"
#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

using namespace std::chrono_literals;
using nucleo::ConversationService;
using nucleo::ConversationServiceOptions;
using nucleo::ErrorKind;
using nucleo::Message;
using nucleo::Thinker;
using service_test::thinker;
using store_test::error_kind;
using store_test::make_store;
using store_test::unique;

ConversationServiceOptions host_options(const std::string& host) {
    ConversationServiceOptions o;
    o.persistent.emplace(make_store("postgres"));
    auto redis = make_store("redis");
    o.session.emplace(redis);
    o.lease.emplace(redis);
    o.host_id = host;
    o.cleanup_thread = false;
    return o;
}

std::string read_line(FILE* in) {
    char buf[256] = {};
    if (std::fgets(buf, sizeof buf, in) == nullptr) return "<eof>";
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
}

// ownership.40: a waiting host is handed the conversation when the owner releases.
TEST(ManyHosts, TwoProcessesContendAndTheWaiterSeesTheOwnersSaves) {
    const std::string user = unique("user");
    ConversationService service(host_options("parent-host"));
    auto parent = thinker("Parent", user);
    const std::string id = parent->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, parent).get();
    ctx->add_message(Message::outgoing_text("question from the parent host"));
    ASSERT_TRUE(service.save_conversation(*ctx, *parent).has_value());

    const std::string cmd = std::string("\"") + NUCLEO_SERVICE_HOST + "\" '" +
                            store_test::postgres_url() + "' '" + store_test::redis_url() + "' '" +
                            user + "' '" + id + "'";
    FILE* child = ::popen(cmd.c_str(), "r");
    ASSERT_NE(child, nullptr);
    EXPECT_EQ(read_line(child), "obtaining");
    // While the child waits for the lease, the parent still owns and saves.
    ctx->add_message(Message::incoming_text("answer from the parent host"));
    ASSERT_TRUE(service.save_conversation(*ctx, *parent).has_value());
    service.release(*parent);

    EXPECT_EQ(read_line(child), "obtained 2");  // it saw both of the parent's saves
    EXPECT_EQ(read_line(child), "saved 3");
    EXPECT_EQ(::pclose(child), 0);

    // Back on this host: the warm holder is reloaded because the lease was taken anew.
    auto again = service.obtain_conversation(id, parent, {}, true).get();
    ASSERT_EQ(again->messages().size(), 3u);
    again->add_message(Message::incoming_text("the parent answers the child's message"));
    auto saved = service.save_conversation(*again, *parent);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->version, "4");
}

// ownership.42: a writer whose lease was lost or taken over has its save refused, and no
// committed save is ever silently lost.
TEST(ManyHosts, StaleWriterIsRefusedAfterLosingItsLease) {
    const std::string user = unique("user");
    auto slow_options = host_options("slow-host");
    slow_options.lease_ttl = 2s;  // it stops renewing: the lease lapses after this
    ConversationService slow(std::move(slow_options));
    ConversationService fast(host_options("fast-host"));

    auto a = thinker("Slow", user);
    const std::string id = a->mint_conversation_id();
    auto ctx_a = slow.obtain_conversation(id, a).get();
    ctx_a->add_message(Message::outgoing_text("committed by the slow host"));
    ASSERT_TRUE(slow.save_conversation(*ctx_a, *a).has_value());

    // The fast host waits (polling with backoff) until the slow host's lease lapses, takes it
    // over with a larger fencing token, and sees the slow host's committed save.
    auto b = thinker("Fast", user);
    b->set_conversation_id(id);
    auto ctx_b = fast.obtain_conversation(id, b, {}, true).get();
    ASSERT_EQ(ctx_b->messages().size(), 1u);
    ctx_b->add_message(Message::incoming_text("committed by the fast host"));
    ASSERT_TRUE(fast.save_conversation(*ctx_b, *b).has_value());

    // The slow host wakes up and saves: refused, and nothing it had not committed lands.
    ctx_a->add_message(Message::incoming_text("a stale write"));
    std::string message;
    EXPECT_EQ(error_kind([&] { slow.save_conversation(*ctx_a, *a); }, &message),
              ErrorKind::kOwnership)
        << message;
    nucleo::PersistentStore store(make_store("postgres"));
    const auto stored = store.load(user, id);
    ASSERT_EQ(stored.messages.size(), 2u);
    EXPECT_EQ(store.versions(user, id).size(), 2u);
    fast.release(*b);
}

}  // namespace
