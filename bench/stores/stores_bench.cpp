// Performance target (persistence.6): saving one new message into a conversation of 10,000
// messages costs within 3x of saving it into one of 100 (SQLite and PostgreSQL).
//
// BM_SaveOneMessage/<store>/<messages>: one update_conversation carrying a one-message append
// (the `changes` document SnapshotDelta produces for it), into a conversation created with that
// many ~200-byte messages; every iteration is a committed version. BM_DeltaBetween/<messages>:
// the core's side of the same save (comparing the saved and current parts, writing the change).
//
// PostgreSQL comes from NUCLEO_TEST_POSTGRES_URL (scripts/services start DIR; . DIR/env); without
// it the postgres rows are skipped. SQLite writes a file under the temp folder (synchronous FULL).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "nucleo/document.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

namespace {

nucleo::Message text_message(std::size_t n) {
    std::string text = "message " + std::to_string(n) + " ";
    while (text.size() < 200) text += "lorem ipsum dolor ";
    nucleo::Message m =
        n % 2 == 1 ? nucleo::Message::outgoing_text(text) : nucleo::Message::incoming_text(text);
    m.id = "m" + std::to_string(n);
    return m;
}

nucleo::ConversationParts conversation(const std::string& id, std::size_t messages) {
    nucleo::ConversationParts parts;
    parts.conversation_id = id;
    parts.objective.push_back({"task", nucleo::TextBlock{"Answer questions about orders."}});
    for (std::size_t i = 1; i <= messages; ++i) parts.messages.push_back(text_message(i));
    return parts;
}

/// The document JSON of one message, as SnapshotDelta writes it.
std::string message_json(const nucleo::Message& m) {
    nucleo::ConversationParts one;
    one.messages.push_back(m);
    const auto delta = nucleo::SnapshotDelta::between({}, one);
    const std::string& text = delta.changes_json();
    const auto begin = text.find("\"insert\":[") + 10;
    return text.substr(begin, text.rfind("]}]}") - begin);
}

void BM_SaveOneMessage(benchmark::State& state, const std::string& kind) {
    std::string config;
    if (kind == "sqlite") {
        const auto dir = std::filesystem::temp_directory_path() / "nucleo-store-bench";
        std::filesystem::create_directories(dir);
        const auto file = dir / ("bench-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(state.range(0)) + ".db");
        config = R"({"path":")" + file.string() + R"("})";
    } else {
        const char* url = std::getenv("NUCLEO_TEST_POSTGRES_URL");
        if (url == nullptr) {
            state.SkipWithError("NUCLEO_TEST_POSTGRES_URL not set (scripts/services start)");
            return;
        }
        config = std::string(R"({"url":")") + url + R"("})";
    }
    nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    nucleo::PersistentStore store(loader.load(kind).make_store(config));
    const auto size = static_cast<std::size_t>(state.range(0));
    const std::string user = "bench-" + std::to_string(::getpid());
    const std::string id = "conv-" + std::to_string(size) + "-" + std::to_string(std::rand());
    std::string version = store.create(user, conversation(id, size), "bench").version;
    std::size_t count = size;
    for (auto _ : state) {
        const std::string request = R"({"schema_version":1,"base_version":")" + version +
                                    R"(","changes":{"fields":[],"messages":[{"at":)" +
                                    std::to_string(count) + R"(,"remove":0,"insert":[)" +
                                    message_json(text_message(count + 1)) + "]}]}}";
        const std::string answer = store.instance().update_conversation(user, id, request);
        const auto at = answer.find("\"version\":\"") + 11;
        version = answer.substr(at, answer.find('"', at) - at);
        ++count;
    }
    state.counters["messages"] = static_cast<double>(size);
}

void BM_DeltaBetween(benchmark::State& state) {
    const auto saved = conversation("c", static_cast<std::size_t>(state.range(0)));
    auto now = saved;
    now.messages.push_back(text_message(now.messages.size() + 1));
    for (auto _ : state) {
        benchmark::DoNotOptimize(nucleo::SnapshotDelta::between(saved, now));
    }
}

BENCHMARK_CAPTURE(BM_SaveOneMessage, sqlite, std::string("sqlite"))
    ->Arg(100)
    ->Arg(10'000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_SaveOneMessage, postgres, std::string("postgres"))
    ->Arg(100)
    ->Arg(10'000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeltaBetween)->Arg(100)->Arg(10'000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
