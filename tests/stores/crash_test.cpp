// persistence.8: `kill -9` of a host in the middle of a save leaves the last committed version
// loadable. A child process saves in a loop (store_saver); the parent kills it with SIGKILL while
// it saves, then loads with a fresh store instance.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "nucleo/store.hpp"
#include "support.hpp"

extern char** environ;

namespace {

class KillNine : public ::testing::TestWithParam<std::string> {};

TEST_P(KillNine, TheLastCommittedVersionStaysLoadable) {
    const std::string kind = GetParam();
    const std::string sqlite_path = kind == "sqlite" ? store_test::temp_sqlite_path() : "";
    const std::string config = kind == "sqlite"
                                   ? R"({"path":")" + sqlite_path + R"("})"
                                   : R"({"url":")" + store_test::postgres_url() + R"("})";
    const std::string principal = store_test::unique("crash-user");
    const std::string id = store_test::unique("crash");

    int out[2];
    ASSERT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string saver = NUCLEO_STORE_SAVER;
    std::vector<std::string> args{saver, kind, config, principal, id, "20000"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t child = 0;
    ASSERT_EQ(posix_spawn(&child, saver.c_str(), &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);

    // Wait (blocking reads, no sleeps) until 30 saves were committed, then kill mid-loop.
    FILE* lines = fdopen(out[0], "r");
    ASSERT_NE(lines, nullptr);
    long last_committed = 0;
    char line[64];
    while (last_committed < 30 && std::fgets(line, sizeof line, lines) != nullptr) {
        last_committed = std::strtol(line, nullptr, 10);
    }
    ASSERT_GE(last_committed, 30) << "the saver stopped early (see its stderr)";
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    // Versions the child committed after our last read still count as committed.
    while (std::fgets(line, sizeof line, lines) != nullptr) {
        last_committed = std::strtol(line, nullptr, 10);
    }
    std::fclose(lines);

    nucleo::PersistentStore store(store_test::make_store(kind, sqlite_path));
    const auto versions = store.versions(principal, id);
    ASSERT_GE(versions.size(), static_cast<std::size_t>(last_committed));
    EXPECT_LE(versions.size(), static_cast<std::size_t>(last_committed) + 1)
        << "at most the save in flight committed unseen";
    const auto latest = store.load(principal, id);
    EXPECT_EQ(latest.messages.size(), versions.size()) << "version N holds N messages";
    EXPECT_EQ(latest.messages.back().id, "m" + std::to_string(versions.size()));
    const auto committed = store.load_version(principal, id, std::to_string(last_committed));
    EXPECT_EQ(committed.messages.size(), static_cast<std::size_t>(last_committed));
}

INSTANTIATE_TEST_SUITE_P(Stores, KillNine, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
