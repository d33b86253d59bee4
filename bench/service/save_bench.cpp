// O(delta) saves end to end through the service (persistence.108-110, ownership.104): append one
// message to a conversation of 100 or 10,000 messages and save it with
// ConversationService::save_conversation, the persistent store and the session store configured
// as an operator would:
//   BM_ServiceSave/sqlite_redis/<N>: a SQLite file (synchronous FULL) and the real Redis session
//     store of scripts/services (NUCLEO_TEST_REDIS_URL; the rows are skipped without it);
//   BM_ServiceSave/memory/<N>: the memory store for both: the core's own cost without I/O.
// Each iteration is one add_message + one committed save (a durable version and the session
// entry refreshed). The conversation grows by one message per iteration from N; the iteration
// count is fixed so both sizes grow alike. Target: 10,000 within 1.5x of 100, per deployment.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"

namespace {

nucleo::Message text_message(std::size_t n) {
    std::string text = "message " + std::to_string(n) + " ";
    while (text.size() < 200) text += "lorem ipsum dolor ";
    return n % 2 == 1 ? nucleo::Message::outgoing_text(text) : nucleo::Message::incoming_text(text);
}

std::shared_ptr<nucleo::Thinker> thinker(const std::string& user) {
    auto t = std::make_shared<nucleo::Thinker>();
    t->name = "Bench";
    t->job_id = user + "-job";
    t->user_id = user;
    t->workflow_id = user + "-wf";
    return t;
}

void BM_ServiceSave(benchmark::State& state, const std::string& deployment) {
    static const nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    const auto size = static_cast<std::size_t>(state.range(0));
    const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(size) + "-" +
                            std::to_string(std::rand());
    nucleo::ConversationServiceOptions options;
    options.cleanup_thread = false;
    std::filesystem::path file;
    if (deployment == "memory") {
        options.persistent.emplace(loader.load("memory").make_store("{}"));
        options.session.emplace(loader.load("memory").make_store("{}"));
    } else {
        const char* url = std::getenv("NUCLEO_TEST_REDIS_URL");
        if (url == nullptr) {
            state.SkipWithError("NUCLEO_TEST_REDIS_URL not set (scripts/services start)");
            return;
        }
        const auto dir = std::filesystem::temp_directory_path() / "nucleo-save-bench";
        std::filesystem::create_directories(dir);
        file = dir / ("bench-" + tag + ".db");
        options.persistent.emplace(
            loader.load("sqlite").make_store(R"({"path":")" + file.string() + R"("})"));
        options.session.emplace(
            loader.load("redis").make_store(std::string(R"({"url":")") + url + R"("})"));
    }
    {
        nucleo::ConversationService service(std::move(options));
        auto t = thinker("bench-" + tag);
        const std::string id = t->mint_conversation_id();
        auto ctx = service.obtain_conversation(id, t).get();
        for (std::size_t i = 1; i <= size; ++i) ctx->add_message(text_message(i));
        if (!service.save_conversation(*ctx, *t)) {
            state.SkipWithError("the first save created nothing");
            return;
        }
        std::size_t n = size;
        for (auto _ : state) {
            ctx->add_message(text_message(++n));
            benchmark::DoNotOptimize(service.save_conversation(*ctx, *t));
        }
        state.counters["messages"] = static_cast<double>(size);
        service.release(*t);
    }
    if (!file.empty()) {
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(file.string() + suffix);
    }
}

BENCHMARK_CAPTURE(BM_ServiceSave, memory, std::string("memory"))
    ->Arg(100)
    ->Arg(10'000)
    ->Iterations(400)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ServiceSave, sqlite_redis, std::string("sqlite_redis"))
    ->Arg(100)
    ->Arg(10'000)
    ->Iterations(400)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
