// nucleo/configured.hpp: the stores and summarizer a config chooses, opened for a host as the
// `nucleo` command opens them (persistence.106), and ownership.106's warning for a temporary
// conversation handed to a service that could have saved it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nucleo/configured.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/service.hpp"
#include "nucleo/thinker.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch() {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "host" /
                         ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

/// `text` written as `dir`/nucleo.yaml, loaded.
nucleo::Config config_of(const fs::path& dir, const std::string& text) {
    std::ofstream(dir / "nucleo.yaml") << text;
    return nucleo::Config::load(dir / "nucleo.yaml");
}

const nucleo::PluginLoader& loader() {
    static const nucleo::PluginLoader l({NUCLEO_BUILD_PLUGIN_DIR});
    return l;
}

TEST(Configured, TheStoresAndTheSummarizerAreTheConfigsOwn) {
    const fs::path dir = scratch();
    const nucleo::Config config = config_of(dir,
                                            "stores:\n"
                                            "  session: {plugin: memory}\n"
                                            "  persistent: {plugin: sqlite, options: {path: " +
                                                (dir / "c.db").string() +
                                                "}}\n"
                                                "summarizer: {plugin: extractive}\n");
    nucleo::ConfiguredStores stores = nucleo::open_configured_stores(config, loader());
    ASSERT_TRUE(stores.persistent.has_value());
    ASSERT_TRUE(stores.session.has_value());
    EXPECT_EQ(stores.persistent_where,
              "stores.persistent (sqlite) at " + (dir / "nucleo.yaml").string() + ":3:15");
    EXPECT_TRUE(fs::exists(dir / "c.db"));  // opened now, not at the first save
    EXPECT_EQ(nucleo::make_configured_summarizer(config, loader()).plugin().name, "extractive");

    // Without stores nothing is opened; without a summarizer the embedded extractive one.
    const nucleo::Config bare = config_of(dir, "");
    const nucleo::ConfiguredStores none = nucleo::open_configured_stores(bare, loader());
    EXPECT_FALSE(none.persistent.has_value());
    EXPECT_FALSE(none.session.has_value());
    EXPECT_EQ(none.persistent_where, "");
    EXPECT_EQ(nucleo::make_configured_summarizer(bare, loader()).plugin().name, "extractive");
}

TEST(Configured, AStoreOrSummarizerThatCannotBeMadeNamesWhereItWasChosen) {
    const fs::path dir = scratch();
    const std::string file = (dir / "nucleo.yaml").string();
    try {
        (void)nucleo::open_configured_stores(
            config_of(dir, "stores:\n  persistent: {plugin: no_such_store}\n"), loader());
        ADD_FAILURE() << "an unknown store plugin was opened";
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), nucleo::ErrorKind::kPlugin);
        EXPECT_EQ(std::string(e.what()).rfind(
                      file + ":2:15: stores.persistent (no_such_store): cannot load plugin", 0),
                  0U)
            << e.what();
    }
    try {
        (void)nucleo::make_configured_summarizer(
            config_of(dir, "summarizer: {plugin: no_such_summarizer}\n"), loader());
        ADD_FAILURE() << "an unknown summarizer plugin was made";
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), nucleo::ErrorKind::kPlugin);
        EXPECT_EQ(std::string(e.what()).rfind(
                      file + ":1:13: summarizer (no_such_summarizer): cannot load plugin", 0),
                  0U)
            << e.what();
    }
}

/// The warnings logged while `fn` runs.
template <class Fn>
std::vector<std::string> warnings_during(Fn&& fn) {
    auto seen = std::make_shared<std::vector<std::string>>();
    auto mutex = std::make_shared<std::mutex>();
    nucleo::log::set_sink(
        [seen, mutex](nucleo::log::Level level, std::string_view, std::string_view message) {
            const std::lock_guard lock(*mutex);
            if (level == nucleo::log::Level::kWarn) seen->emplace_back(message);
        });
    fn();
    nucleo::log::set_sink({});
    const std::lock_guard lock(*mutex);
    return *seen;
}

// ownership.106: a temporary conversation beside a persistent store is served and never saved,
// with one warning; a minted one gets none, and without a persistent store there is none.
TEST(Configured, ATemporaryConversationBesideAPersistentStoreIsWarnedOf) {
    const fs::path dir = scratch();
    const nucleo::Config config = config_of(
        dir, "stores:\n  persistent: {plugin: sqlite, options: {path: " + (dir / "c.db").string() +
                 "}}\n");
    nucleo::ConfiguredStores stores = nucleo::open_configured_stores(config, loader());
    nucleo::ConversationServiceOptions options;
    options.persistent = std::move(stores.persistent);
    options.cleanup_thread = false;
    nucleo::ConversationService service(std::move(options));
    const auto thinker = std::make_shared<nucleo::Thinker>();
    thinker->name = "ReportThinker";
    thinker->job_id = "job-7";
    thinker->user_id = "alice";
    const auto temporary = warnings_during([&] {
        (void)service.obtain_conversation(thinker).get();
        service.release(*thinker);
    });
    ASSERT_EQ(temporary.size(), 1U);
    EXPECT_NE(temporary[0].find("conversation 'job-7' of thinker 'ReportThinker' is temporary "
                                "(neither mint_conversation_id() nor set_conversation_id() was "
                                "called): it is never saved, though the service has a persistent "
                                "store"),
              std::string::npos)
        << temporary[0];

    const auto minted = std::make_shared<nucleo::Thinker>(*thinker);
    minted->job_id = "job-8";
    minted->mint_conversation_id();
    EXPECT_TRUE(warnings_during([&] {
                    (void)service.obtain_conversation(minted).get();
                    service.release(*minted);
                }).empty());

    nucleo::ConversationService in_memory_only(nucleo::ConversationServiceOptions{});
    const auto other = std::make_shared<nucleo::Thinker>(*thinker);
    other->job_id = "job-9";
    EXPECT_TRUE(warnings_during([&] {
                    (void)in_memory_only.obtain_conversation(other).get();
                    in_memory_only.release(*other);
                }).empty());
}

}  // namespace
