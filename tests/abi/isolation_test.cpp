// `isolation: process` (abi.130): provider plugins that crash or hang in a slot, run in helper
// processes, fail that call with an error naming the plugin, the slot and what happened, and the
// host goes on; the next call gets a new helper. Through the C++ instance, `render`, `send` and
// an agent turn. The hang cases use a short configured deadline and assert the error, never a time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace {

/// Under AddressSanitizer a crashing fixture's helper would print a report and exit 1 instead of
/// dying by its signal; handle_segv=0, inherited by every helper and every nucleo this test
/// starts, lets signal 11 end it as in a release build (as the kit and hostile tests do).
const bool kSegvEndsHelpers = [] {
    const char* old = std::getenv("ASAN_OPTIONS");
    const std::string value =
        old != nullptr && *old != '\0' ? std::string(old) + ":handle_segv=0" : "handle_segv=0";
    return ::setenv("ASAN_OPTIONS", value.c_str(), 1) == 0;
}();

namespace fs = std::filesystem;
using nucleo::Error;
using nucleo::ErrorKind;
using nucleo::PluginLoader;
using namespace std::chrono_literals;

const fs::path kIsolated = fs::path(ABI_FIXTURE_DIR) / "isolated";
const fs::path kHostile = fs::path(ABI_FIXTURE_DIR) / "hostile";

/// The message of what `fn` throws as nucleo::Error of `kind`; fails the test otherwise.
template <class Fn>
std::string error_of(ErrorKind kind, Fn&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), kind) << e.what();
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not a nucleo::Error: " << e.what();
        return e.what();
    }
    ADD_FAILURE() << "nothing was thrown";
    return {};
}

nucleo::ProviderInstance isolated(const std::string& plugin, std::chrono::milliseconds deadline) {
    return PluginLoader({kIsolated})
        .load_isolated(plugin, deadline, "providers.test.transport.deadline_ms")
        .make_provider();
}

using nucleo::test_support::slurp;

nucleo::test_support::CliRun nucleo_cli(const std::string& args) {
    return nucleo::test_support::run_command(std::string("\"") + NUCLEO_CLI + "\" " + args);
}

/// A config whose `anthropic` provider is `plugin` in a helper with `deadline_ms`; the catalog is
/// the shipped one.
fs::path config_with(const std::string& plugin, int deadline_ms, const std::string& isolation) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "abi" / "isolation-config";
    fs::create_directories(dir);
    const fs::path file = dir / (plugin + "-" + isolation + ".yaml");
    std::ofstream(file) << "include: " << NUCLEO_SOURCE_DIR << "/config/models.yaml\n"
                        << "plugins: {paths: [" << kIsolated.string() << "]}\n"
                        << "providers:\n"
                        << "  anthropic:\n"
                        << "    plugin: " << plugin << "\n"
                        << "    base_url: http://127.0.0.1:9\n"
                        << "    api_key: sk-test\n"
                        << "    isolation: " << isolation << "\n"
                        << "    transport: {deadline_ms: " << deadline_ms << "}\n"
                        << "  openai: {plugin: openai}\n"
                        << "  bedrock: {plugin: bedrock}\n"
                        << "  gemini: {plugin: gemini}\n"
                        << "  openai-responses: {plugin: openai-responses}\n";
    return file;
}

const std::string kDocument =
    std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/minimal.json";

// ---- the instance -------------------------------------------------------------------------

TEST(Isolation, ACrashInEverySlotIsThatCallsErrorAndANewHelperServesTheNextCall) {
    const auto p = isolated("iso_crash", 10s);
    EXPECT_NE(p.capabilities().find("schema_version"), std::string::npos);
    EXPECT_EQ(p.plugin().name, "iso_crash");
    const auto crashed = [](const std::string& slot) {
        return "plugin 'iso_crash' " + slot +
               " crashed in its helper process (isolation: process): signal 11";
    };
    EXPECT_NE(error_of(ErrorKind::kPlugin, [&] { (void)p.encode("{}"); }).find(crashed("encode")),
              std::string::npos);
    // The host lives and the next call gets a new helper, with the instance created again.
    EXPECT_NE(p.encode("{\"survive\":1}").find("survived"), std::string::npos);
    EXPECT_NE(error_of(ErrorKind::kPlugin, [&] { (void)p.encode_parts("{}"); })
                  .find(crashed("encode_parts")),
              std::string::npos);
    EXPECT_EQ(p.encode_parts("survive").body, "{\"survived\":true}");
    EXPECT_NE(error_of(ErrorKind::kPlugin, [&] { (void)p.decode(200, "{}", "{}"); })
                  .find(crashed("decode")),
              std::string::npos);
    EXPECT_NE(p.decode(200, "{}", "survive").find("survived"), std::string::npos);
    ASSERT_TRUE(p.has_decode_event());
    EXPECT_NE(error_of(ErrorKind::kPlugin, [&] { (void)p.decode_event("e", "{}"); })
                  .find(crashed("decode_event")),
              std::string::npos);
    EXPECT_TRUE(p.has_encode_parts());
    EXPECT_FALSE(p.has_encode_split());
    EXPECT_NE(p.capabilities().find("schema_version"), std::string::npos);
}

TEST(Isolation, AHangEndsAtTheCallsDeadlineWithTheHelperKilled) {
    const auto p = isolated("iso_hang", 300ms);
    const std::string why = error_of(ErrorKind::kPlugin, [&] { (void)p.encode("{}"); });
    EXPECT_NE(why.find("plugin 'iso_hang' encode did not answer by the call's deadline (300 ms, "
                       "providers.test.transport.deadline_ms): its helper process was killed"),
              std::string::npos)
        << why;
    EXPECT_NE(error_of(ErrorKind::kPlugin, [&] { (void)p.decode(200, "{}", "{}"); })
                  .find("'iso_hang' decode did not answer by the call's deadline"),
              std::string::npos);
    EXPECT_NE(p.encode("survive").find("survived"), std::string::npos);
}

TEST(Isolation, ASummarizerInAHelperFailsACrashingOrHangingCallAndServesTheNext) {
    for (const std::string plugin : {"iso_crash", "iso_hang"}) {
        SCOPED_TRACE(plugin);
        const auto s = PluginLoader({kIsolated}).load_isolated(plugin, 300ms).make_summarizer();
        const std::string why =
            error_of(ErrorKind::kPlugin, [&] { (void)s.summarize("{\"text\":\"x\"}"); });
        EXPECT_NE(why.find("plugin '" + plugin + "' summarize " +
                           (plugin == "iso_crash" ? "crashed in its helper process"
                                                  : "did not answer by the call's deadline")),
                  std::string::npos)
            << why;
        EXPECT_NE(s.summarize("{\"text\":\"survive\"}").find("survived"), std::string::npos);
    }
    // A real summarizer gives in a helper what it gives in process.
    const std::string request =
        R"({"schema_version":1,"text":"One. Two is longer than one. Three.","target_tokens":5})";
    const PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    EXPECT_EQ(loader.load_isolated("extractive", 10s).make_summarizer().summarize(request),
              loader.load("extractive").make_summarizer().summarize(request));
}

TEST(Isolation, ACrashOrAHangInInitIsTheLoadsErrorAndTheHostLives) {
    const PluginLoader loader({kHostile});
    const std::string crash = error_of(ErrorKind::kPlugin, [&] {
        (void)loader.load_isolated((kHostile / "nucleo-init_crashes.so").string(), 10s);
    });
    EXPECT_NE(crash.find("plugin 'init_crashes' init crashed in its helper process "
                         "(isolation: process): signal 11"),
              std::string::npos)
        << crash;
    const std::string hang = error_of(ErrorKind::kPlugin, [&] {
        (void)loader.load_isolated((kHostile / "nucleo-init_hangs.so").string(), 300ms, "k");
    });
    // A start is bounded by at least 10 s whatever the call's deadline (abi.130), so a loaded
    // machine's slow exec is not taken for a hang.
    EXPECT_NE(hang.find("plugin 'init_hangs' init did not answer by its helper's start time (10 s, "
                        "the least a start is given; the call's deadline is 300 ms, k)"),
              std::string::npos)
        << hang;
}

TEST(Isolation, TheLoadersRefusalReadsAsInProcessAndTheOptionsAreCheckedHere) {
    const PluginLoader loader({kIsolated});
    const std::string missing =
        error_of(ErrorKind::kPlugin, [&] { (void)loader.load_isolated("no_such", 10s); });
    EXPECT_NE(missing.find("cannot load plugin 'no_such': no nucleo-no_such.so in"),
              std::string::npos)
        << missing;
    const std::string refused = error_of(ErrorKind::kPlugin, [&] {
        (void)loader.load_isolated((kHostile / "nucleo-misnamed.so").string(), 10s);
    });
    EXPECT_NE(refused.find("its entry names the plugin 'hostile'"), std::string::npos) << refused;
    // abi.109 from the schema the helper reported, before any instance is created.
    const auto plugin = loader.load_isolated("iso_crash", 10s);
    EXPECT_TRUE(plugin.isolated());
    EXPECT_TRUE(plugin.serves("nucleo.provider/1"));
    const std::string options =
        error_of(ErrorKind::kConfig, [&] { (void)plugin.make_provider("{\"colour\":1}"); });
    EXPECT_NE(options.find("colour"), std::string::npos) << options;
}

// ---- through the core: an agent turn --------------------------------------------------------

TEST(Isolation, AnAgentTurnOnACrashingOrHangingPluginFailsWithItsErrorAndAddsNoAnswer) {
    for (const std::string plugin : {"iso_crash", "iso_hang"}) {
        SCOPED_TRACE(plugin);
        nucleo::ProviderConfig config;
        config.name = "anthropic";
        config.plugin = plugin;
        config.base_url = "http://127.0.0.1:9";
        config.credentials.api_key = "sk-test";
        config.process_isolation = true;
        config.transport.deadline = 300ms;
        nucleo::ProviderClient client(
            config,
            nucleo::load_provider_plugin(PluginLoader({kIsolated}), config).make_provider());
        nucleo::ModelSpec model;
        model.id = "test-model";
        model.provider = "anthropic";
        model.wire_model = "claude-sonnet-5-5";
        model.max_context_tokens = 200000;
        model.max_output_tokens = 1024;
        model.output_budget = {{nucleo::OutputSize::kShort, 512}};
        nucleo::Agent agent(client, model);
        nucleo::ConversationContext c("c-isolated", "alice");
        c.set_output(nucleo::OutputSize::kShort);
        c.set_depth(nucleo::Depth::kImmediate);
        const std::string why =
            error_of(ErrorKind::kPlugin, [&] { (void)agent.run_turn(c, "Where is order 42?"); });
        EXPECT_NE(why.find("plugin '" + plugin + "' encode"), std::string::npos) << why;
        EXPECT_NE(why.find(plugin == "iso_crash" ? "crashed in its helper process"
                                                 : "did not answer by the call's deadline"),
                  std::string::npos)
            << why;
        // ownership.105: the failed turn is not kept, its user message included.
        EXPECT_TRUE(c.messages().empty());
    }
}

// ---- through the command line: render and send ---------------------------------------------

TEST(Isolation, RenderAndSendOnACrashingOrHangingPluginExitTwoNamingItAndPrintNothing) {
    for (const std::string plugin : {"iso_crash", "iso_hang"}) {
        for (const std::string command : {"render", "send"}) {
            SCOPED_TRACE(plugin + " " + command);
            const fs::path config = config_with(plugin, 300, "process");
            const std::string before = slurp(kDocument);
            const auto run = nucleo_cli(command + " --model claude-sonnet-5-5 --in \"" + kDocument +
                                        "\" --config \"" + config.string() + "\"");
            EXPECT_EQ(run.status, 2) << run.err;
            EXPECT_TRUE(run.out.empty()) << run.out;
            EXPECT_NE(run.err.find("nucleo " + command + ": plugin '" + plugin + "' encode"),
                      std::string::npos)
                << run.err;
            EXPECT_NE(run.err.find(plugin == "iso_crash"
                                       ? "crashed in its helper process (isolation: process): "
                                         "signal 11"
                                       : "did not answer by the call's deadline (300 ms, "
                                         "providers.anthropic.transport.deadline_ms)"),
                      std::string::npos)
                << run.err;
            EXPECT_EQ(slurp(kDocument), before);
        }
    }
}

TEST(Isolation, AnIsolatedProviderRendersTheBytesItRendersInProcess) {
    const std::string args =
        "render --model claude-sonnet-5-5 --in \"" + kDocument + "\" --config ";
    const auto in_process =
        nucleo_cli(args + "\"" + config_with("anthropic", 10000, "in-process").string() + "\"");
    const auto isolated =
        nucleo_cli(args + "\"" + config_with("anthropic", 10000, "process").string() + "\"");
    ASSERT_EQ(in_process.status, 0) << in_process.err;
    ASSERT_EQ(isolated.status, 0) << isolated.err;
    EXPECT_NE(isolated.out.find("/v1/messages"), std::string::npos) << isolated.out;
    EXPECT_EQ(isolated.out, in_process.out);
}

TEST(Isolation, AnInitThatCrashesInItsHelperIsNamedAtItsPlaceAndTheCheckExitsTwo) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "abi" / "isolation-config";
    fs::create_directories(dir);
    const fs::path file = dir / "init-crashes.yaml";
    std::ofstream(file) << "plugins: {paths: [" << kHostile.string() << "]}\n"
                        << "providers:\n"
                        << "  local: {plugin: init_crashes, isolation: process}\n";
    const auto run = nucleo_cli("config --check --config \"" + file.string() + "\"");
    EXPECT_EQ(run.status, 2) << run.out << run.err;
    EXPECT_NE(run.err.find("init-crashes.yaml:3:19: providers.local.plugin: plugin 'init_crashes' "
                           "init crashed in its helper process (isolation: process): signal 11"),
              std::string::npos)
        << run.err;
}

TEST(Isolation, InProcessIsTheDefaultAndTheConfigShowsProcessWhenSet) {
    const auto config = nucleo::Config::parse(
        "providers:\n  a: {plugin: anthropic}\n  b: {plugin: anthropic, isolation: in-process}\n"
        "  c: {plugin: anthropic, isolation: process}\n",
        "inline.yaml");
    EXPECT_FALSE(config.provider("a").process_isolation);
    EXPECT_FALSE(config.provider("b").process_isolation);
    EXPECT_TRUE(config.provider("c").process_isolation);
    const auto shown = nucleo_cli("config --config \"" +
                                  config_with("anthropic", 1000, "process").string() + "\"");
    ASSERT_EQ(shown.status, 0) << shown.err;
    EXPECT_NE(shown.out.find("    isolation: process\n"), std::string::npos) << shown.out;
}

TEST(Isolation, AnIsolatedProviderAnswersAStreamedAskThroughItsHelper) {
    // encode_parts, decode_event and decode in the helper, against nucleo-emulator.
    const auto run =
        nucleo_cli("ask --emulator --model claude-sonnet-5-5 --config \"" +
                   config_with("anthropic", 10000, "process").string() + "\" 'hello there'");
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("This is the emulator's answer to: hello there"), std::string::npos)
        << run.out;
}

TEST(Isolation, PluginsListsAPluginTheConfigIsolatesFromItsHelper) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "abi" / "isolation-config";
    fs::create_directories(dir);
    const fs::path file = dir / "listing.yaml";
    std::ofstream(file) << "plugins: {paths: [" << kHostile.string() << ", " << kIsolated.string()
                        << "]}\n"
                        << "providers:\n"
                        << "  a: {plugin: init_crashes, isolation: process}\n"
                        << "  b: {plugin: init_hangs, isolation: process,"
                        << " transport: {deadline_ms: 300}}\n"
                        << "  c: {plugin: iso_crash, isolation: process}\n";
    const auto run =
        nucleo_cli("plugins --config \"" + file.string() + "\" init_crashes init_hangs iso_crash");
    EXPECT_EQ(run.status, 2) << run.out << run.err;
    EXPECT_NE(run.err.find("nucleo plugins: plugin 'init_crashes' init crashed in its helper "
                           "process (isolation: process): signal 11"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("nucleo plugins: plugin 'init_hangs' init did not answer by its "
                           "helper's start time (10 s, the least a start is given; the call's "
                           "deadline is 300 ms, providers.b.transport.deadline_ms)"),
              std::string::npos)
        << run.err;
    EXPECT_NE(run.out.find("iso_crash"), std::string::npos) << run.out;
}

TEST(Isolation, AnIsolationThatIsNeitherIsRefusedWithItsPlace) {
    const fs::path config = config_with("iso_crash", 300, "sideways");
    const auto run = nucleo_cli("render --model claude-sonnet-5-5 --in \"" + kDocument +
                                "\" --config \"" + config.string() + "\"");
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find("iso_crash-sideways.yaml:8:16: providers.anthropic.isolation: expected "
                           "'in-process' (the default) or 'process', got 'sideways'"),
              std::string::npos)
        << run.err;
}

// ---- the summarizer (abi.133) ------------------------------------------------------------

/// A config whose summarizer is `plugin` with `isolation` and, isolated, `deadline_ms`.
fs::path summarizer_config(const std::string& plugin, const std::string& isolation,
                           int deadline_ms) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "abi" / "isolation-config";
    fs::create_directories(dir);
    const fs::path file = dir / ("summarizer-" + plugin + "-" + isolation + ".yaml");
    std::ofstream(file) << "include: " << NUCLEO_SOURCE_DIR << "/config/models.yaml\n"
                        << "plugins: {paths: [" << kIsolated.string() << ", "
                        << NUCLEO_BUILD_PLUGIN_DIR << "]}\n"
                        << "providers:\n"
                        << "  anthropic: {plugin: anthropic}\n"
                        << "  openai: {plugin: openai}\n"
                        << "  bedrock: {plugin: bedrock}\n"
                        << "  gemini: {plugin: gemini}\n"
                        << "  openai-responses: {plugin: openai-responses}\n"
                        << "summarizer: {plugin: " << plugin << ", isolation: " << isolation
                        << ", deadline_ms: " << deadline_ms << "}\n";
    return file;
}

/// A conversation of 40 questions and answers, each some 150 words that differ, so that a
/// window of 5,000 tokens needs its summaries.
fs::path long_document() {
    const fs::path file =
        fs::path(NUCLEO_BINARY_DIR) / "tests" / "abi" / "isolation-config" / "long.json";
    std::ofstream out(file);
    out << R"({"schema_version": 1, "conversation_id": "long", "messages": [)";
    for (int i = 0; i < 40; ++i) {
        std::string text;
        for (int w = 0; w < 30; ++w)
            text += "Order " + std::to_string(i * 100 + w) + " left depot " +
                    std::to_string(w * 7 + i) + " today. ";
        if (i > 0) out << ",";
        out << R"({"id": "m)" << i << R"(", "direction": ")"
            << (i % 2 == 0 ? "outgoing" : "incoming")
            << R"(", "blocks": [{"type": "text", "text": ")" << text << R"("}]})";
    }
    out << R"(], "declarations": {"grade": "MEDIUM", "depth": "IMMEDIATE", )"
        << R"("output": {"tokens": 1024}}})";
    return file;
}

TEST(Isolation, TheConfigsSummarizerMayRunInAHelperAndAStoreMayNot) {
    const auto config = nucleo::Config::parse(
        "summarizer: {plugin: extractive, isolation: process, deadline_ms: 250}\n", "inline.yaml");
    ASSERT_TRUE(config.summarizer().has_value());
    EXPECT_TRUE(config.summarizer()->process_isolation);
    EXPECT_EQ(config.summarizer()->deadline, 250ms);
    const auto by_default =
        nucleo::Config::parse("summarizer: {plugin: extractive}\n", "inline.yaml");
    EXPECT_FALSE(by_default.summarizer()->process_isolation);
    EXPECT_EQ(by_default.summarizer()->deadline, 60000ms);
    const std::string store = error_of(ErrorKind::kConfig, [] {
        (void)nucleo::Config::parse("stores:\n  persistent: {plugin: sqlite, isolation: process}\n",
                                    "inline.yaml");
    });
    EXPECT_NE(store.find("inline.yaml:2:43: stores.persistent.isolation: a store runs in process "
                         "only"),
              std::string::npos)
        << store;
    const std::string sideways = error_of(ErrorKind::kConfig, [] {
        (void)nucleo::Config::parse("summarizer: {plugin: extractive, isolation: sideways}\n",
                                    "inline.yaml");
    });
    EXPECT_NE(sideways.find("summarizer.isolation: expected 'in-process' (the default) or "
                            "'process', got 'sideways'"),
              std::string::npos)
        << sideways;
    const auto shown = nucleo_cli("config --config \"" +
                                  summarizer_config("extractive", "process", 900).string() + "\"");
    ASSERT_EQ(shown.status, 0) << shown.err;
    EXPECT_NE(shown.out.find("  isolation: process\n  deadline_ms: 900\n"), std::string::npos)
        << shown.out;
}

TEST(Isolation, AnIsolatedSummarizerCompactsAsInProcessToTheSameTarget) {
    // The helper has no host token counter (abi.133), so the summarizer there estimates bytes/4
    // and the core cuts what overshoots: the words may differ, the compaction's shape may not.
    const std::string args = "compact --model claude-sonnet-5-5 --comfort 5000 --report --in \"" +
                             long_document().string() + "\" --config ";
    const auto in_process = nucleo_cli(
        args + "\"" + summarizer_config("extractive", "in-process", 10000).string() + "\"");
    const auto isolated =
        nucleo_cli(args + "\"" + summarizer_config("extractive", "process", 10000).string() + "\"");
    ASSERT_EQ(in_process.status, 0) << in_process.err;
    ASSERT_EQ(isolated.status, 0) << isolated.err;
    for (const auto* run : {&in_process, &isolated}) {
        EXPECT_NE(run->err.find("level           MODERATE\n"), std::string::npos) << run->err;
        EXPECT_NE(run->err.find("summaries       20\n"), std::string::npos) << run->err;
        EXPECT_NE(run->err.find("target          2990 tokens, met\n"), std::string::npos)
            << run->err;
        EXPECT_NE(
            run->out.find(R"([Summary of earlier messages]\nAssistant: Order 300 left depot 3)"),
            std::string::npos)
            << run->out;
    }
}

TEST(Isolation, ACompactionWhoseIsolatedSummarizerCrashesOrHangsLeavesItsInputAndTheHost) {
    const fs::path document = long_document();
    const std::string before = slurp(document);
    for (const std::string plugin : {"iso_crash", "iso_hang"}) {
        SCOPED_TRACE(plugin);
        const auto run =
            nucleo_cli("compact --model claude-sonnet-5-5 --comfort 5000 --report --in \"" +
                       document.string() + "\" --config \"" +
                       summarizer_config(plugin, "process", 300).string() + "\"");
        EXPECT_NE(run.err.find(plugin == "iso_crash"
                                   ? "crashed in its helper process (isolation: process): "
                                     "signal 11"
                                   : "did not answer by the call's deadline (300 ms, "
                                     "summarizer.deadline_ms)"),
                  std::string::npos)
            << run.status << run.out << run.err;
        EXPECT_EQ(slurp(document), before);
    }
}

}  // namespace
