// Hostile plugins (tests/abi/fixtures/hostile.c) against the host: none of them may corrupt it,
// crash it or hang it (abi.102-105). Each test runs under this program's ctest TIMEOUT.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"
#include "plugins/sinks.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::PluginLoader;

const fs::path kHostile = fs::path(ABI_FIXTURE_DIR) / "hostile";
const fs::path kGood = fs::path(ABI_FIXTURE_DIR) / "good";

std::string load_failure(const PluginLoader& loader, const std::string& what) {
    try {
        (void)loader.load(what);
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), nucleo::ErrorKind::kPlugin);
        return e.what();
    }
    ADD_FAILURE() << "loaded " << what;
    return {};
}

TEST(HostilePlugins, ASinkWrittenAfterItsCallReturnedRefusesTheWriteAndSaysSo) {
    std::mutex mutex;
    std::vector<std::string> warnings;
    nucleo::log::set_sink(
        [&](nucleo::log::Level level, std::string_view, std::string_view message) {
            std::lock_guard<std::mutex> lock(mutex);
            if (level >= nucleo::log::Level::kWarn) warnings.emplace_back(message);
        });
    const nucleo::Plugin plugin = PluginLoader().load((kHostile / "nucleo-late_sink.so").string());
    const nucleo::ProviderInstance provider = plugin.make_provider();
    EXPECT_EQ(provider.encode("{}"), R"({"schema_version":1,"path":"/","body":{}})");
    // decode writes to encode's sink, whose call has returned: the write gets a status, the
    // host's memory is untouched, and decode's own output is whole.
    EXPECT_EQ(provider.decode(200, "{}", "{}"), R"({"schema_version":1,"late_write_status":)" +
                                                    std::to_string(NUCLEO_ERR_PLUGIN) + "}");
    nucleo::log::set_sink({});
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("plugin 'late_sink' (encode)"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("after that call returned"), std::string::npos) << warnings[0];
}

TEST(HostilePlugins, ASinkPointerKeptPastItsCallStillLeadsToLiveMemoryThatRefusesTheWrite) {
    std::mutex mutex;
    std::vector<std::string> warnings;
    nucleo::log::set_sink([&](nucleo::log::Level level, std::string_view, std::string_view message) {
        std::lock_guard<std::mutex> lock(mutex);
        if (level >= nucleo::log::Level::kWarn) warnings.emplace_back(message);
    });
    const nucleo::Plugin plugin = PluginLoader().load((kHostile / "nucleo-late_sink_pointer.so").string());
    const nucleo::ProviderInstance provider = plugin.make_provider();
    EXPECT_EQ(provider.encode("{}"), R"({"schema_version":1,"path":"/","body":{}})");
    // Other calls in between take sinks of their own; none of them is the kept one.
    for (int i = 0; i < 3; ++i) EXPECT_NE(provider.capabilities().find("late_sink"), std::string::npos);
    // decode writes through the pointer encode was given (abi.107): the struct is alive, holds
    // encode's closed call number, and the write is refused; decode's own output is whole.
    EXPECT_EQ(provider.decode(200, "{}", "{}"),
              R"({"schema_version":1,"late_write_status":)" + std::to_string(NUCLEO_ERR_PLUGIN) + "}");
    nucleo::log::set_sink({});
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("plugin 'late_sink_pointer' (encode)"), std::string::npos) << warnings[0];
}

TEST(HostilePlugins, ASinkSlotRestsForTheQuarantineBeforeServingAgainAndThePoolStaysBounded) {
    using nucleo::plugins_detail::SinkPool;
    SinkPool pool;
    nucleo_sink* first = pool.acquire();
    pool.release(first);
    // Every slot handed out while `first` rests is another one.
    std::vector<nucleo_sink*> handed;
    for (std::size_t i = 0; i < SinkPool::kQuarantine; ++i) {
        nucleo_sink* s = pool.acquire();
        EXPECT_NE(s, first) << "after " << i << " calls";
        handed.push_back(s);
        pool.release(s);
    }
    // kQuarantine slots came back after it: now it serves again, and a million calls one after
    // another never grow the pool past the quarantine plus one.
    EXPECT_EQ(pool.acquire(), first);
    pool.release(first);
    for (int i = 0; i < 1000000; ++i) pool.release(pool.acquire());
    EXPECT_EQ(pool.size(), SinkPool::kQuarantine + 1);
}

TEST(HostilePlugins, AnEntryThatIsNotItsFilesPluginIsRefusedBeforeInit) {
    const std::string by_path =
        load_failure(PluginLoader(), (kHostile / "nucleo-misnamed.so").string());
    EXPECT_NE(by_path.find("its entry names the plugin 'hostile'"), std::string::npos) << by_path;
    EXPECT_NE(by_path.find("nucleo-misnamed.so (plugin 'misnamed')"), std::string::npos) << by_path;
    // By name: `plugin: misnamed` never gets the library that calls itself "hostile".
    const std::string by_name = load_failure(PluginLoader({kHostile}), "misnamed");
    EXPECT_NE(by_name.find("its entry names the plugin 'hostile'"), std::string::npos) << by_name;
}

TEST(HostilePlugins, TheInstalledFolderComesBeforeNucleoPluginPath) {
    ::setenv("NUCLEO_PLUGIN_PATH", kHostile.c_str(), 1);
    const auto path = PluginLoader({kGood}).search_path();
    ::unsetenv("NUCLEO_PLUGIN_PATH");
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(path.front(), kGood);  // the configured paths first
    const auto at = [&](const fs::path& p) {
        return std::find(path.begin(), path.end(), p) - path.begin();
    };
    EXPECT_LT(at(fs::path(NUCLEO_BUILD_PLUGIN_DIR)), at(kHostile));
    EXPECT_EQ(path.back(), kHostile);
}

TEST(HostilePlugins, ACheckReportsACrashingAndAHangingInitByNameAndListsTheRest) {
    // Under AddressSanitizer the crashing child would spend seconds in the sanitizer's own SEGV
    // report (symbolizing its stack) and exit with status 1: handle_segv=0 lets the signal end the
    // child as it does in a plain build, which is what the check reports (abi.105). The timeout is
    // far above what loading a good plugin takes on a loaded machine under the sanitizers: only
    // the fixture that never returns reaches it.
    const nucleo::test_support::CliRun r = nucleo::test_support::run_command(
        "env ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" NUCLEO_LOG_LEVEL=warn "
        "NUCLEO_PLUGIN_PATH='" +
        kHostile.string() + ":" + kGood.string() + "' '" + std::string(NUCLEO_CLI) +
        "' plugins --check --timeout 15");
    EXPECT_EQ(r.status, 2) << r.err;
    const std::string crashes = (kHostile / "nucleo-init_crashes.so").string();
    const std::string hangs = (kHostile / "nucleo-init_hangs.so").string();
    EXPECT_NE(r.err.find("plugin " + crashes + " crashed while loading: signal 11"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("plugin " + hangs + " did not finish loading within 15 s"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its entry names the plugin 'hostile'"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
    // The listing went on: the good fixtures, the build's own plugins and the late writer.
    for (const char* name : {"c11", "future", "extractive", "late_sink"})
        EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
}

TEST(HostilePlugins, ACheckOfAGoodPluginListsWhatAnInProcessListingDoes) {
    const auto run = [](const std::string& extra) {
        return nucleo::test_support::run_command(
            "env NUCLEO_LOG_LEVEL=warn '" + std::string(NUCLEO_CLI) + "' plugins --json " + extra +
            "'" + (kGood / "nucleo-c11.so").string() + "'");
    };
    const auto in_process = run("");
    const auto checked = run("--check ");
    EXPECT_EQ(in_process.status, 0) << in_process.err;
    EXPECT_EQ(checked.status, 0) << checked.err;
    EXPECT_EQ(checked.out, in_process.out);
    // abi.134: the same file given as `--path FILE.so` is checked once, not refused because the
    // child listed it twice.
    const auto by_path = run("--check --path ");
    EXPECT_EQ(by_path.status, 0) << by_path.err;
    EXPECT_EQ(by_path.out, in_process.out);
}

}  // namespace
