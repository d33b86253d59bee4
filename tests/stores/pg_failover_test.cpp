// persistence.112: PostgreSQL failover. The store's URL names a primary and its streaming replica
// with target_session_attrs=read-write (libpq's multi-host form); the primary commits only once
// the replica has the commit. The primary is stopped at once: the save in flight fails loudly;
// the replica is promoted: the next save goes to it, and every save acknowledged before the
// failover is there, one chain of versions. A pair of servers of its own (scripts/services
// start-pair), removed at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "nucleo/document.hpp"
#include "nucleo/store.hpp"
#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::SnapshotDelta;

/// A primary and a replica started by scripts/services in a folder of this process.
class PostgresPair {
  public:
    PostgresPair()
        : dir_(fs::temp_directory_path() / ("nucleo-pg-pair-" + std::to_string(::getpid()))) {
        services("start-pair");
        url_ = store_test::read_env_file(dir_ / "env")["NUCLEO_TEST_PG_PAIR_URL"];
    }
    ~PostgresPair() { (void)run("stop-pair"); }
    PostgresPair(const PostgresPair&) = delete;
    PostgresPair& operator=(const PostgresPair&) = delete;

    void services(const std::string& command) const {
        ASSERT_EQ(run(command), 0) << "scripts/services " << command << " " << dir_;
    }
    [[nodiscard]] const std::string& url() const { return url_; }

  private:
    [[nodiscard]] int run(const std::string& command) const {
        const std::string line = std::string("\"") + NUCLEO_SOURCE_DIR + "/scripts/services\" " +
                                 command + " \"" + dir_.string() + "\" >/dev/null";
        return std::system(line.c_str());
    }

    fs::path dir_;
    std::string url_;
};

TEST(PostgresFailover, SavesGoOnOnThePromotedReplicaAndNoAcknowledgedSaveIsLost) {
    const PostgresPair pair;
    ASSERT_NE(pair.url().find("target_session_attrs=read-write"), std::string::npos);
    nucleo::PersistentStore store(
        store_test::make_store_with("postgres", R"({"url":")" + pair.url() + R"("})"));
    const std::string user = store_test::unique("failover-user");
    nucleo::ConversationParts saved = store_test::conversation(store_test::unique("failover"), 3);
    std::string version = store.create(user, saved, "t").version;
    for (int i = 0; i < 5; ++i) {  // acknowledged saves, each also on the replica
        nucleo::ConversationParts now = saved;
        now.messages.push_back(store_test::next_message(now));
        version =
            store.update(user, now.conversation_id, version, SnapshotDelta::between(saved, now))
                .version;
        saved = now;
    }
    ASSERT_EQ(version, "6");

    pair.services("stop-primary");
    nucleo::ConversationParts now = saved;
    now.messages.push_back(store_test::next_message(now));
    const auto delta = SnapshotDelta::between(saved, now);
    std::string message;
    EXPECT_EQ(store_test::error_kind(
                  [&] { store.update(user, now.conversation_id, version, delta); }, &message),
              nucleo::ErrorKind::kTransport)
        << "no primary: the save fails loudly";
    EXPECT_FALSE(message.empty());

    pair.services("promote");
    const auto next = store.update(user, now.conversation_id, version, delta);
    EXPECT_EQ(next.version, "7") << "the promoted replica held every acknowledged version";
    EXPECT_EQ(store.load_document(user, now.conversation_id),
              nucleo::write_conversation_parts(now, {.pretty = false}));
    EXPECT_EQ(store.versions(user, now.conversation_id).size(), 7U);
    // A stale writer (the version before the failover's save) is refused on the new primary.
    EXPECT_EQ(
        store_test::error_kind([&] { store.update(user, now.conversation_id, version, delta); }),
        nucleo::ErrorKind::kOwnership);
}

}  // namespace
