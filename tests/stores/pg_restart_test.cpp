// persistence.8: PostgreSQL restarted mid-run: the save in flight fails loudly, the next one
// succeeds after reconnect. Runs alone (RUN_SERIAL): the restart cuts every connection to the
// server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "nucleo/document.hpp"
#include "nucleo/store.hpp"
#include "support.hpp"

namespace {

using nucleo::SnapshotDelta;

/// pg_ctl restart of the services' PostgreSQL (as the postgres user when we are root, as
/// scripts/services runs it); -w waits until it accepts connections again.
void restart_postgres() {
    std::string pg_ctl;
    for (const auto& dir : std::filesystem::directory_iterator("/usr/lib/postgresql")) {
        const auto candidate = dir.path() / "bin" / "pg_ctl";
        if (std::filesystem::exists(candidate) && candidate.string() > pg_ctl) {
            pg_ctl = candidate.string();
        }
    }
    ASSERT_FALSE(pg_ctl.empty()) << "pg_ctl not found";
    std::string command = "\"" + pg_ctl + "\" -D \"" + store_test::services_dir() +
                          "/pg\" -m fast -w restart >/dev/null";
    if (::geteuid() == 0) command = "runuser -u postgres -- " + command;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(PostgresRestart, TheSaveInFlightFailsLoudlyAndTheNextSucceedsAfterReconnect) {
    nucleo::PersistentStore store(store_test::make_store("postgres"));
    const std::string user = store_test::unique("restart-user");
    nucleo::ConversationParts saved = store_test::conversation(store_test::unique("restart"), 3);
    std::string version = store.create(user, saved, "t").version;
    nucleo::ConversationParts now = saved;
    now.messages.push_back(store_test::next_message(now));
    version = store.update(user, now.conversation_id, version, SnapshotDelta::between(saved, now))
                  .version;
    saved = now;

    restart_postgres();

    now.messages.push_back(store_test::next_message(now));
    const auto delta = SnapshotDelta::between(saved, now);
    std::string message;
    EXPECT_EQ(store_test::error_kind(
                  [&] { store.update(user, now.conversation_id, version, delta); }, &message),
              nucleo::ErrorKind::kTransport);
    EXPECT_NE(message.find("connection"), std::string::npos) << message;

    const auto next = store.update(user, now.conversation_id, version, delta);
    EXPECT_EQ(next.version, "3");
    EXPECT_EQ(store.load_document(user, now.conversation_id),
              nucleo::write_conversation_parts(now, {.pretty = false}));
    EXPECT_EQ(store.versions(user, now.conversation_id).size(), 3u);
}

}  // namespace
