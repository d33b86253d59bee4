// The conformance kit (`nucleo plugin check`, abi.126) passes every store plugin, each against its
// real server: the persistent, session and lease surfaces its capabilities claim.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"
#include "support.hpp"

namespace {

using nucleo::test_support::CliRun;

CliRun kit(const std::string& plugin, const std::string& config) {
    return nucleo::test_support::run_command("env NUCLEO_LOG_LEVEL=off '" + std::string(NUCLEO_CLI) + "' plugin check '" +
                                             std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + plugin +
                                             ".so' --store-config '" + config + "'");
}

void expect_passes(const std::string& plugin, const std::string& config) {
    const CliRun r = kit(plugin, config);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(" failed, 0 findings"), std::string::npos) << r.out;
}

TEST(StoreKit, MemoryPasses) { expect_passes("memory", "{}"); }
TEST(StoreKit, SqlitePasses) { expect_passes("sqlite", R"({"path":")" + store_test::temp_sqlite_path() + R"("})"); }
TEST(StoreKit, PostgresPasses) { expect_passes("postgres", R"({"url":")" + store_test::postgres_url() + R"("})"); }
// abi.131: without --store-config, a store whose options take a "path" (sqlite) gets a temporary
// database of the run's own, removed afterwards; it used to fail every case.
TEST(StoreKit, SqlitePassesWithoutAStoreConfig) {
    const CliRun r = nucleo::test_support::run_command(
        "env NUCLEO_LOG_LEVEL=off '" + std::string(NUCLEO_CLI) + "' plugin check sqlite --path '" +
        std::string(NUCLEO_BUILD_PLUGIN_DIR) + "'");
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(" failed, 0 findings"), std::string::npos) << r.out;
}
TEST(StoreKit, RedisPasses) { expect_passes("redis", R"({"url":")" + store_test::redis_url() + R"("})"); }

}  // namespace
