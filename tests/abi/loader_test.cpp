// The loader against the fixture plugins (abi.20: each loads or is refused with its
// message, and none crashes the host). Messages are checked for the file and
// the reason, and for being one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "doc_blocks.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::ErrorKind;
using nucleo::Plugin;
using nucleo::PluginLoader;

const fs::path kGood = fs::path(ABI_FIXTURE_DIR) / "good";
const fs::path kSource = fs::path(NUCLEO_SOURCE_DIR);
const fs::path kFixtures = kSource / "tests" / "abi" / "fixtures";

std::string slurp(const fs::path& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), {}};
}
const fs::path kBad = fs::path(ABI_FIXTURE_DIR) / "bad";

/// Captures every log record ("logger message") while alive.
class LogCapture {
  public:
    LogCapture() {
        nucleo::log::set_level(nucleo::log::Level::kTrace);
        nucleo::log::set_sink(
            [this](nucleo::log::Level, std::string_view logger, std::string_view message) {
                std::lock_guard<std::mutex> lock(mutex_);
                lines_.push_back(std::string(logger) + " " + std::string(message));
            });
    }
    ~LogCapture() {
        nucleo::log::set_sink({});
        nucleo::log::set_level(nucleo::log::Level::kWarn);
    }
    int count(const std::string& a, const std::string& b) {
        std::lock_guard<std::mutex> lock(mutex_);
        int n = 0;
        for (const auto& l : lines_)
            n += (l.find(a) != std::string::npos && l.find(b) != std::string::npos);
        return n;
    }

  private:
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

/// The loader's refusal for `file`, which must be one kPlugin line naming the file.
std::string refusal(const fs::path& file) {
    try {
        (void)PluginLoader().load(file.string());
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        const std::string msg = e.what();
        EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
        return msg;
    }
    ADD_FAILURE() << "loaded " << file;
    return {};
}

// The README's provider snippet compiles (fixtures/readme_provider.cpp is built from it), loads
// and answers its capabilities; the README shows its lines as they are.
TEST(Loader, TheReadmesProviderSnippetCompilesAndLoads) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-mine.so").string());
    EXPECT_EQ(p.info().name, "mine");
    EXPECT_EQ(p.info().factories, std::vector<std::string>{"nucleo.provider/1"});
    EXPECT_EQ(p.make_provider().capabilities(), R"({"schema_version":1,"auth":"bearer"})");

    // The README's block of plugin.hpp is the fixture's, line for line.
    int shown = 0;
    const std::string fixture = slurp(kFixtures / "readme_provider.cpp");
    for (const std::string& block :
         nucleo::test_support::fenced_blocks(slurp(kSource / "README.md"), {"cpp"})) {
        if (block.find("nucleo/plugin.hpp") == std::string::npos) continue;
        EXPECT_GE(std::count(block.begin(), block.end(), '\n'), 8);
        EXPECT_NE(fixture.find(block), std::string::npos) << "the fixture does not hold:\n"
                                                          << block;
        ++shown;
    }
    EXPECT_EQ(shown, 1);
}

// docs/plugin-authoring.md's C and C++ snippets compile (fixtures/authoring_summarizer.cpp holds
// every one, as the doc shows it), and the plugin they make loads and publishes its schema.
TEST(Loader, ThePluginAuthoringSnippetsCompileAndLoad) {
    const Plugin p =
        PluginLoader().load((fs::path(ABI_FIXTURE_DIR) / "authoring" / "nucleo-mine.so").string());
    EXPECT_EQ(p.info().name, "mine");
    EXPECT_EQ(p.info().factories, std::vector<std::string>{"nucleo.summarizer/1"});
    const std::string fixture = slurp(kFixtures / "authoring_summarizer.cpp");
    const auto blocks = nucleo::test_support::fenced_blocks(
        slurp(kSource / "docs" / "plugin-authoring.md"), {"c", "cpp", "c++", "h"});
    EXPECT_EQ(blocks.size(), 2u) << "a new C or C++ block of the doc belongs in the fixture too";
    for (const std::string& block : blocks)
        EXPECT_NE(fixture.find(block), std::string::npos) << "the fixture does not hold:\n"
                                                          << block;
}

TEST(Loader, LoadsTheC11Plugin) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-c11.so").string());
    EXPECT_EQ(p.info().name, "c11");
    EXPECT_EQ(p.info().version, "1.2.3");
    EXPECT_EQ(p.info().abi_major, 1u);
    EXPECT_EQ(p.info().abi_minor, static_cast<uint32_t>(NUCLEO_PLUGIN_ABI_MINOR));  // built with
    EXPECT_EQ(p.info().factories, std::vector<std::string>{"nucleo.summarizer/1"});
    EXPECT_EQ(p.info().file, fs::canonical(kGood / "nucleo-c11.so"));
    EXPECT_EQ(p.make_summarizer().summarize("\"hi\""),
              R"({"schema_version":1,"summary":"hi","by":"c11"})");
}

TEST(Loader, LoadsByNameFromTheConfiguredPathsFirst) {
    const Plugin p = PluginLoader({kGood}).load("c11");
    EXPECT_EQ(p.info().file, fs::canonical(kGood / "nucleo-c11.so"));
    const auto path = PluginLoader({kGood}).search_path();
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(path.front(), kGood);
}

TEST(Loader, NucleoPluginPathComesAfterConfigPathsAndTheInstalledFolder) {
    ::setenv("NUCLEO_PLUGIN_PATH", (kBad.string() + "::" + kGood.string()).c_str(), 1);
    const auto path = PluginLoader({"/config/first"}).search_path();
    ::unsetenv("NUCLEO_PLUGIN_PATH");
    ASSERT_GE(path.size(), 4u);
    EXPECT_EQ(path[0], fs::path("/config/first"));
    // abi.104: NUCLEO_PLUGIN_PATH last, in its own order.
    EXPECT_EQ(path[path.size() - 2], kBad);
    EXPECT_EQ(path[path.size() - 1], kGood);
    // Running from the build tree, the build's plugin folder is searched before the installed one.
    EXPECT_NE(std::find(path.begin(), path.end(), fs::path(NUCLEO_BUILD_PLUGIN_DIR)), path.end());
}

TEST(Loader, FrozenHeaderPluginKeepsLoading) {
    // abi.4: a frozen copy of each released header lives in tests; a plugin built against
    // it must keep loading.
    const Plugin p = PluginLoader().load((kGood / "nucleo-frozen.so").string());
    EXPECT_EQ(p.info().abi_minor, 0u);
    EXPECT_EQ(p.make_summarizer().summarize("1"),
              R"({"schema_version":1,"summary":1,"by":"frozen"})");
}

TEST(Loader, AFrozenProviderHasNoStreamDeltasAndSaysSo) {
    // ABI 1.2 appended decode_event; a 1.0 provider's struct ends before it, so the host neither
    // reads past its struct_size nor calls anything: no slot, no deltas.
    const Plugin p = PluginLoader().load((kGood / "nucleo-frozen.so").string());
    const nucleo::ProviderInstance provider = p.make_provider();
    EXPECT_FALSE(provider.has_decode_event());
    EXPECT_EQ(provider.decode_event("message_start", "{}"), "");
    EXPECT_EQ(provider.decode(200, "{}", "{}"), R"({"schema_version":1,"blocks":[]})");
}

TEST(Loader, FutureMinorWithExtraSlotsLoadsAndExtrasAreIgnored) {
    // abi.3: one built with extra future slots appended (extras ignored). Its extra slots
    // abort() if called, so reaching the end proves the host never touched them.
    const Plugin p = PluginLoader().load((kGood / "nucleo-future.so").string());
    EXPECT_EQ(p.info().abi_minor, 9u);
    EXPECT_EQ(p.make_summarizer().summarize("[]"),
              R"({"schema_version":1,"summary":[],"by":"future"})");
}

TEST(Loader, RefusesAMissingFile) {
    const std::string msg = refusal(kBad / "nucleo-nowhere.so");
    EXPECT_NE(msg.find("no such file"), std::string::npos) << msg;
}

TEST(Loader, RefusesAFileThatIsNotASharedObject) {
    const std::string msg = refusal(kBad / "nucleo-not_elf.so");
    EXPECT_NE(msg.find("not a shared object"), std::string::npos) << msg;
}

TEST(Loader, RefusesASharedObjectWithoutTheEntrySymbol) {
    const std::string msg = refusal(kBad / "nucleo-no_symbol.so");
    EXPECT_NE(msg.find("missing entry symbol nucleo_plugin_entry_v1"), std::string::npos) << msg;
}

TEST(Loader, RefusesANullEntry) {
    const std::string msg = refusal(kBad / "nucleo-null_entry.so");
    EXPECT_NE(msg.find("returned NULL"), std::string::npos) << msg;
}

TEST(Loader, RefusesTheWrongMajor) {
    const std::string msg = refusal(kBad / "nucleo-wrong_major.so");
    EXPECT_NE(msg.find("wrong ABI major 2 (this host speaks 1)"), std::string::npos) << msg;
}

TEST(Loader, RefusesAnEntryStructTooSmall) {
    const std::string msg = refusal(kBad / "nucleo-too_small.so");
    EXPECT_NE(msg.find("entry struct too small (struct_size 24, ABI 1.0 needs 64)"),
              std::string::npos)
        << msg;
}

TEST(Loader, RefusesOnInitFailureWithThePluginsReason) {
    const std::string msg = refusal(kBad / "nucleo-init_fails.so");
    EXPECT_NE(
        msg.find("init failed with status 4: cannot reach the license server at 10.0.0.1:7070"),
        std::string::npos)
        << msg;
}

TEST(Loader, RefusesAFactoryIdItDoesNotServe) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-c11.so").string());
    EXPECT_FALSE(p.serves("nucleo.store/1"));
    try {
        (void)p.make_store();
        FAIL() << "made a store from a summarizer-only plugin";
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        EXPECT_NE(std::string(e.what()).find("does not serve factory nucleo.store/1"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("nucleo-c11.so"), std::string::npos) << e.what();
    }
}

TEST(Loader, UnknownNameListsTheFoldersSearched) {
    try {
        (void)PluginLoader({kGood}).load("nosuchplugin");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
        const std::string msg = e.what();
        EXPECT_NE(msg.find("'nosuchplugin': no nucleo-nosuchplugin.so in " + kGood.string()),
                  std::string::npos)
            << msg;
    }
}

TEST(Loader, DiscoverFindsEachNameOnceInSearchOrder) {
    const auto files = PluginLoader({kGood, kGood}).discover();
    std::vector<std::string> names;
    for (const auto& f : files) names.push_back(f.filename().string());
    for (const char* n :
         {"nucleo-c11.so", "nucleo-frozen.so", "nucleo-future.so", "nucleo-throws.so"}) {
        EXPECT_EQ(std::count(names.begin(), names.end(), n), 1) << n;
    }
}

TEST(Loader, InitOnceWhileLoadedAndLibraryOutlivesItsPluginHandles) {
    LogCapture logs;
    std::optional<nucleo::SummarizerInstance> instance;
    {
        const Plugin a = PluginLoader().load((kGood / "nucleo-c11.so").string());
        const Plugin b = PluginLoader({kGood}).load("c11");  // same file, same library
        EXPECT_EQ(&a.info(), &b.info());
        instance.emplace(a.make_summarizer());
    }
    // Every Plugin handle is gone; the instance alone keeps the library loaded and initialised.
    EXPECT_EQ(logs.count("plugin:c11", " deinit c11"), 0);
    EXPECT_EQ(instance->summarize("2"), R"({"schema_version":1,"summary":2,"by":"c11"})");
    EXPECT_EQ(instance->plugin().name, "c11");
    instance.reset();
    EXPECT_EQ(logs.count("plugin:c11", " deinit c11"), 1);
    // A later load starts over with a fresh init.
    const int inits = logs.count("plugin:c11", " init c11");
    (void)PluginLoader().load((kGood / "nucleo-c11.so").string());
    EXPECT_EQ(logs.count("plugin:c11", " init c11"), inits + 1);
}

TEST(Loader, CreateFailureIsTheMappedKind) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-c11.so").string());
    try {
        (void)p.make_summarizer("\"fail\"");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_NE(std::string(e.what()).find("echo: config says fail"), std::string::npos);
    }
}

// --- a C++ plugin (plugin.hpp) whose methods throw: statuses, never a crash ---------------------

class Throwing : public ::testing::Test {
  protected:
    Plugin plugin = PluginLoader().load((kGood / "nucleo-throws.so").string());
    nucleo::SummarizerInstance s = plugin.make_summarizer();

    nucleo::Error failure(std::string_view request) {
        try {
            (void)s.summarize(request);
        } catch (const nucleo::Error& e) {
            return e;
        }
        ADD_FAILURE() << "no error for " << request;
        return nucleo::Error(ErrorKind::kInternal, "");
    }
};

TEST_F(Throwing, ServesAllThreeKinds) {
    EXPECT_EQ(
        plugin.info().factories,
        (std::vector<std::string>{"nucleo.provider/1", "nucleo.store/1", "nucleo.summarizer/1"}));
    EXPECT_EQ(s.summarize("fine"), R"({"schema_version":1,"summary":"ok"})");
}

TEST_F(Throwing, RuntimeErrorBecomesPluginErrorWithItsText) {
    const auto e = failure("runtime");
    EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
    EXPECT_STREQ(e.what(), "plugin 'throws' summarize failed: boom: the tokenizer exploded");
}

TEST_F(Throwing, InvalidArgumentKeepsItsKind) {
    EXPECT_EQ(failure("invalid").kind(), ErrorKind::kInvalidArgument);
}

TEST_F(Throwing, NonStdExceptionIsCaughtToo) {
    const auto e = failure("int");
    EXPECT_EQ(e.kind(), ErrorKind::kPlugin);
    EXPECT_NE(std::string(e.what()).find("unknown exception"), std::string::npos);
}

TEST_F(Throwing, FailureCarriesStatusAndHttpStatus) {
    const auto e = failure("rate");
    EXPECT_EQ(e.kind(), ErrorKind::kRateLimited);
    EXPECT_STREQ(e.what(), "plugin 'throws' summarize failed: slow down (HTTP 429)");
}

TEST_F(Throwing, UnknownStatusIsAPluginError) {
    EXPECT_EQ(failure("unknown-status").kind(), ErrorKind::kPlugin);
}

TEST_F(Throwing, LongMessagesAreTruncatedNotOverflowed) {
    const auto e = failure("long");
    const std::string prefix = "plugin 'throws' summarize failed: ";
    EXPECT_EQ(std::string(e.what()).size(), prefix.size() + NUCLEO_ERROR_MESSAGE_SIZE - 1);
}

TEST_F(Throwing, CreateThatThrowsIsRefusedWithItsKind) {
    try {
        (void)plugin.make_summarizer(R"({"mode":"fail"})");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_NE(std::string(e.what()).find("thrower: config asked to fail"), std::string::npos);
    }
}

TEST_F(Throwing, ProviderSlotsRoundTrip) {
    const auto provider = plugin.make_provider();
    EXPECT_EQ(provider.capabilities(),
              R"({"schema_version":1,"native_tools":true,"caching":false})");
    EXPECT_EQ(provider.encode(R"({"m":1})"),
              R"({"schema_version":1,"method":"POST","path":"/echo","headers":{},"body":{"m":1}})");
    EXPECT_EQ(provider.decode(200, "{}", "[1]"), R"({"status":200,"headers":{},"body":[1]})");
    try {
        (void)provider.decode(429, "{}", "rate limit exceeded");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kRateLimited);
        EXPECT_NE(std::string(e.what()).find("rate limit exceeded (HTTP 429)"), std::string::npos);
    }
}

TEST_F(Throwing, UnbuiltStoreSurfaceIsNotImplementedNeverEmpty) {
    // persistence.4: planned-but-unbuilt store surface throws NotImplementedException rather
    // than pretending with a no-op or an empty result.
    const auto store = plugin.make_store();
    EXPECT_NE(store.capabilities().find("\"session\":true"), std::string::npos);
    EXPECT_THROW((void)store.load_conversation("alice", "c-1"), nucleo::NotImplementedException);
    EXPECT_THROW((void)store.version_history("alice", "c-1"), nucleo::NotImplementedException);
    EXPECT_THROW(store.session_put("alice", "c-1", "{}", 1000), nucleo::NotImplementedException);
    EXPECT_THROW((void)store.lease("alice", "c-1", "{}"), nucleo::NotImplementedException);
    // The session surface it built: a hit, and another user's id reads as a miss.
    EXPECT_EQ(store.session_get("alice", "c-1"),
              std::optional<std::string>(R"({"conversation_id":"c-1"})"));
    EXPECT_EQ(store.session_get("mallory", "c-1"), std::nullopt);
}

TEST_F(Throwing, ConcurrentCallsOnOneInstance) {
    // plugin.h thread rule: summarize is callable concurrently on one instance.
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 200; ++i) {
                try {
                    (void)s.summarize(i % 2 == 0 ? "fine" : "runtime");
                    ++ok;
                } catch (const nucleo::Error&) {
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(ok.load(), 400);
}

}  // namespace
