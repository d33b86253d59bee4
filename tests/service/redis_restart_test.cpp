// ownership.103: fencing tokens survive a Redis restart. Leases come from the REAL Redis of the
// services fixture (no persistence: a restart loses every counter), the durable record from
// SQLite. Run alone (RUN_SERIAL): the restart cuts every other test's Redis connections.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

using nucleo::ConversationService;
using nucleo::ConversationServiceOptions;
using nucleo::Message;
using service_test::thinker;
using store_test::make_store;

void restart_redis() {
    const std::string command = std::string("\"") + NUCLEO_SOURCE_DIR +
                                "/scripts/services\" restart-redis \"" +
                                store_test::services_dir() + "\" >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(RedisRestart, ALeaseAfterTheRestartGetsATokenAboveEveryOneUsedAndItsSavesStand) {
    (void)store_test::redis_url();  // the services are up (started here when run directly)
    const std::string path = store_test::temp_sqlite_path();
    const std::string user = store_test::unique("alice");
    auto host = [&](const std::string& name) {
        ConversationServiceOptions o;
        o.persistent.emplace(make_store("sqlite", path));
        o.lease.emplace(make_store("redis"));
        o.cleanup_thread = false;
        o.host_id = name;
        return std::make_unique<ConversationService>(std::move(o));
    };
    const nucleo::PersistentStore durable(make_store("sqlite", path));
    std::string id;
    // Three hosts in turn: each new holder gets a new token, recorded by its save.
    for (const char* name : {"host-a", "host-b", "host-c"}) {
        auto service = host(name);
        auto t = thinker("Chat", user);
        if (id.empty()) {
            id = t->mint_conversation_id();
        } else {
            t->set_conversation_id(id);
        }
        auto ctx = service->obtain_conversation(t).get();
        ctx->add_message(Message::outgoing_text(std::string("from ") + name));
        ASSERT_TRUE(service->save_conversation(*ctx, *t).has_value());
        service->release(*t);
    }
    const auto recorded = durable.history(user, id).fencing_token;
    ASSERT_TRUE(recorded.has_value());
    ASSERT_GE(*recorded, 3);

    restart_redis();

    // The counter is gone from Redis; the next lease still gets a token above the recorded one,
    // so its saves are accepted (the bug: token 1, refused as stale forever).
    auto service = host("host-d");
    auto t = thinker("Chat", user);
    t->set_conversation_id(id);
    auto ctx = service->obtain_conversation(t).get();
    ASSERT_EQ(ctx->messages().size(), 3u);
    ctx->add_message(Message::outgoing_text("after the restart"));
    ASSERT_TRUE(service->save_conversation(*ctx, *t).has_value());
    const auto after = durable.history(user, id).fencing_token;
    ASSERT_TRUE(after.has_value());
    EXPECT_GT(*after, *recorded);
    EXPECT_EQ(durable.load(user, id).messages.size(), 4u);
    service->release(*t);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace
