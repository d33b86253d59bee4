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

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"
#include "nucleo/store.hpp"

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

// persistence.113: taking over a conversation (obtain after the holder let it go, so a reload
// from the persistent store) costs the same after 2,000 saves as after 10. Both conversations
// hold 2,000 messages of 200 bytes; one was saved 10 times, the other 2,000 times. Each
// iteration evicts the conversation (as another host would find it) and obtains it again: the
// lease's token floor, the lease, the durable version, the load. BM_VersionHistory reads the
// whole history of the same conversation: what each obtain read twice before latest_version.
void saved_in_versions(nucleo::ConversationService& service,
                       const std::shared_ptr<nucleo::Thinker>& t, const std::string& id,
                       std::size_t versions) {
    constexpr std::size_t kMessages = 2'000;
    auto ctx = service.obtain_conversation(id, t).get();
    std::size_t n = 0;
    while (n < kMessages - versions + 1) ctx->add_message(text_message(++n));
    (void)service.save_conversation(*ctx, *t);
    while (n < kMessages) {
        ctx->add_message(text_message(++n));
        (void)service.save_conversation(*ctx, *t);
    }
    service.release(*t);
}

struct SqliteDeployment {
    std::filesystem::path file;
    std::optional<nucleo::ConversationService> service;
    std::shared_ptr<nucleo::Thinker> owner;
    std::string id;

    explicit SqliteDeployment(std::size_t versions) {
        static const nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(versions);
        const auto dir = std::filesystem::temp_directory_path() / "nucleo-save-bench";
        std::filesystem::create_directories(dir);
        file = dir / ("obtain-" + tag + ".db");
        nucleo::ConversationServiceOptions options;
        options.cleanup_thread = false;
        options.persistent.emplace(
            loader.load("sqlite").make_store(R"({"path":")" + file.string() + R"("})"));
        options.lease.emplace(loader.load("memory").make_store("{}"));
        service.emplace(std::move(options));
        owner = thinker("obtain-" + tag);
        id = owner->mint_conversation_id();
        saved_in_versions(*service, owner, id, versions);
    }
    ~SqliteDeployment() {
        service.reset();
        for (const char* suffix : {"", "-wal", "-shm"})
            std::filesystem::remove(file.string() + suffix);
    }
    SqliteDeployment(const SqliteDeployment&) = delete;
    SqliteDeployment& operator=(const SqliteDeployment&) = delete;
};

void BM_ObtainAfterVersions(benchmark::State& state) {
    SqliteDeployment d(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        d.service->run_cleanup(std::chrono::steady_clock::now() + std::chrono::hours(24));
        auto ctx = d.service->obtain_conversation(d.id, d.owner).get();
        benchmark::DoNotOptimize(ctx);
        d.service->release(*d.owner);
    }
    state.counters["versions"] = static_cast<double>(state.range(0));
}

void BM_VersionHistory(benchmark::State& state) {
    SqliteDeployment d(static_cast<std::size_t>(state.range(0)));
    static const nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    const nucleo::PersistentStore store(
        loader.load("sqlite").make_store(R"({"path":")" + d.file.string() + R"("})"));
    for (auto _ : state) benchmark::DoNotOptimize(store.history(d.owner->user_id, d.id));
    state.counters["versions"] = static_cast<double>(state.range(0));
}

BENCHMARK(BM_ObtainAfterVersions)->Arg(10)->Arg(2'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VersionHistory)->Arg(10)->Arg(2'000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
