// caching.110: the next request of a growing conversation. A conversation of N messages (20 tools,
// tool rounds, 3 cache marks) has rendered once and made kWarmUpCalls more calls; each iteration
// appends one turn (the user's and the model's in alternation) and builds the next request through
// ProviderClient::build_request with the in-tree Anthropic plugin (prepare, encode, the post-encode
// audit); the *Responses and *Gemini benchmarks do the same with nucleo-openai-responses and
// nucleo-gemini (responses.15, gemini.15). Timed: the build only, as the thread's CPU time (manual
// time; the machine is shared), 30 appends per repetition so the conversation stays at its size.
// "Cached" keeps each run's encoded messages (abi.108); "Whole" encodes every request whole.
// BM_Memcpy copies a body of the same size, the floor the ratio is read against.
#include <benchmark/benchmark.h>

#include <ctime>
#include <cstring>
#include <string>
#include <vector>

#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace {

using namespace nucleo;

/// The in-tree dialect a benchmark builds its requests with, the wire model it names and how that
/// model caches (caching.118).
struct Dialect {
    const char* plugin;
    const char* wire_model;
    const char* caching;
};
constexpr Dialect kAnthropic{"anthropic", "claude-sonnet-5-5", "explicit"};
/// responses.15, gemini.15: the dialects that joined the per-turn encode cache after it. Every
/// other request here ends with the model's answer, whose tail mark the core moves to the user
/// turn before it on the Responses API (caching.133), so its model takes explicit breakpoints.
constexpr Dialect kResponses{"openai-responses", "gpt-6-sol", "explicit"};
constexpr Dialect kGemini{"gemini", "gemini-3-pro", "explicit"};

ModelSpec bench_model(const Dialect& dialect = kAnthropic) {
    ModelSpec m;
    m.id = "bench-model";
    m.wire_model = dialect.wire_model;
    m.cache_breakpoints = dialect.caching;
    m.max_context_tokens = 100000000;
    m.max_output_tokens = 8192;
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.native_tools = true;
    m.supports_caching = true;
    return m;
}

ProviderClient bench_client(bool cache, const Dialect& dialect = kAnthropic) {
    ProviderConfig config;
    config.name = dialect.plugin;
    config.plugin = dialect.plugin;
    config.base_url = "http://127.0.0.1:9";
    ProviderClient client(
        config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(dialect.plugin).make_provider());
    client.set_turn_fragment_cache(cache);
    client.set_request_body_limit(std::size_t{1} << 30);
    return client;
}

ConversationContext conversation_of(std::size_t messages) {
    ConversationContext c("growing", "alice");
    c.put_main_objective("task", "You fix build failures in the repository.");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    for (int t = 0; t < 20; ++t) {
        c.add_tool(ToolDefinitionBlock{"tool_" + std::to_string(t), "Reads part " + std::to_string(t) + ".",
                                       R"({"type":"object","properties":{"path":{"type":"string"}}})"});
    }
    std::size_t n = 0;
    int round = 0;
    while (n < messages) {
        Message q = Message::outgoing_text("Question " + std::to_string(round) +
                                           ": why does module " + std::to_string(round % 97) +
                                           " fail to link against parseConfig?");
        q.cache = round == 1 || round == 3 || round == 5;
        c.add_message(q);
        ++n;
        if (round % 4 == 0 && n + 2 < messages) {
            const std::string id = "call_" + std::to_string(round);
            Message call;
            call.direction = Direction::kIncoming;
            call.blocks.push_back(TextBlock{"Reading the file."});
            call.blocks.push_back(ToolUseBlock{id, "tool_1", R"({"path":"src/a.cpp"})"});
            c.add_message(call);
            Message result;
            result.blocks.push_back(ToolResultBlock{id, {TextBlock{"42 lines, 3 warnings in parseConfig."}}, false});
            c.add_message(result);
            n += 2;
        }
        if (n < messages) {
            c.add_message(Message::incoming_text("The linker misses module " + std::to_string(round % 97) +
                                                 "; add it to the target's libraries."));
            ++n;
        }
        ++round;
    }
    return c;
}

double thread_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// One turn more: the model's answer after the user's, or the user's next step.
void append_turn(ConversationContext& c, std::size_t& k) {
    if (c.messages().back().outgoing()) {
        c.add_message(Message::incoming_text("Done with step " + std::to_string(k++) + "."));
    } else {
        c.add_message(Message::outgoing_text("Next step " + std::to_string(k++) + ", please."));
    }
}

/// Untimed calls after the first render, before the timed ones: the first next request of a
/// conversation pays once for the growth of the process's heap to its body's size and for the
/// kept turns' first reallocation (BM_FirstNextRequest measures it); the figure read against the
/// targets is the cost of a call in a conversation that keeps growing.
constexpr int kWarmUpCalls = 2;

void next_request(benchmark::State& state, bool cache, const Dialect& dialect = kAnthropic) {
    ProviderClient client = bench_client(cache, dialect);
    ConversationContext c = conversation_of(static_cast<std::size_t>(state.range(0)));
    const ModelSpec model = bench_model(dialect);
    (void)client.build_request(c, model, {}, true);  // the conversation has rendered once
    std::size_t body = 0;
    std::size_t k = 0;
    for (int i = 0; i < kWarmUpCalls; ++i) {
        append_turn(c, k);
        (void)client.build_request(c, model, {}, true);
    }
    for (auto _ : state) {
        append_turn(c, k);
        const double start = thread_seconds();
        HttpRequest r = client.build_request(c, model, {}, true);
        const double stop = thread_seconds();
        body = r.body.size();
        benchmark::DoNotOptimize(r);
        state.SetIterationTime(stop - start);
    }
    state.counters["body_bytes"] = static_cast<double>(body);
}

/// The first next request after the first render, alone (a new conversation each iteration,
/// rendered untimed): what a conversation pays once, beside what it pays per call.
void BM_FirstNextRequest(benchmark::State& state) {
    ProviderClient client = bench_client(true);
    const ModelSpec model = bench_model();
    for (auto _ : state) {
        state.PauseTiming();
        ConversationContext c = conversation_of(static_cast<std::size_t>(state.range(0)));
        (void)client.build_request(c, model, {}, true);
        std::size_t k = 0;
        append_turn(c, k);
        state.ResumeTiming();
        const double start = thread_seconds();
        HttpRequest r = client.build_request(c, model, {}, true);
        const double stop = thread_seconds();
        benchmark::DoNotOptimize(r);
        state.SetIterationTime(stop - start);
    }
}

void BM_NextRequestCached(benchmark::State& state) { next_request(state, true); }
void BM_NextRequestWhole(benchmark::State& state) { next_request(state, false); }
void BM_NextRequestCachedResponses(benchmark::State& state) {
    next_request(state, true, kResponses);
}
void BM_NextRequestWholeResponses(benchmark::State& state) {
    next_request(state, false, kResponses);
}
void BM_NextRequestCachedGemini(benchmark::State& state) {
    next_request(state, true, kGemini);
}
void BM_NextRequestWholeGemini(benchmark::State& state) {
    next_request(state, false, kGemini);
}

/// The first request of a conversation that never rendered (a fresh copy each iteration): the
/// cache's cold cost, one plugin call per 32 runs, against one whole encode.
void first_request(benchmark::State& state, bool cache) {
    ProviderClient client = bench_client(cache);
    const ConversationContext original = conversation_of(static_cast<std::size_t>(state.range(0)));
    const ModelSpec model = bench_model();
    for (auto _ : state) {
        ConversationContext c = original;
        const double start = thread_seconds();
        HttpRequest r = client.build_request(c, model, {}, true);
        const double stop = thread_seconds();
        benchmark::DoNotOptimize(r);
        state.SetIterationTime(stop - start);
    }
}

void BM_FirstRequestCached(benchmark::State& state) { first_request(state, true); }
void BM_FirstRequestWhole(benchmark::State& state) { first_request(state, false); }

void BM_MemcpyOfBody(benchmark::State& state) {
    ProviderClient client = bench_client(false);
    ConversationContext c = conversation_of(static_cast<std::size_t>(state.range(0)));
    const std::string body = client.build_request(c, bench_model(), {}, true).body;
    std::string copy(body.size(), '\0');
    for (auto _ : state) {
        std::memcpy(copy.data(), body.data(), body.size());
        benchmark::DoNotOptimize(copy.data());
        benchmark::ClobberMemory();
    }
    state.counters["body_bytes"] = static_cast<double>(body.size());
}

BENCHMARK(BM_NextRequestCached)->Arg(200)->Arg(2000)->Arg(20000)->Iterations(30)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NextRequestWhole)->Arg(200)->Arg(2000)->Arg(20000)->Iterations(30)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NextRequestCachedResponses)
    ->Arg(200)
    ->Arg(2000)
    ->Arg(20000)
    ->Iterations(30)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NextRequestWholeResponses)
    ->Arg(200)
    ->Arg(2000)
    ->Arg(20000)
    ->Iterations(30)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NextRequestCachedGemini)
    ->Arg(200)
    ->Arg(2000)
    ->Arg(20000)
    ->Iterations(30)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NextRequestWholeGemini)
    ->Arg(200)
    ->Arg(2000)
    ->Arg(20000)
    ->Iterations(30)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstNextRequest)->Arg(200)->Arg(20000)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstRequestCached)->Arg(2000)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstRequestWhole)->Arg(2000)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemcpyOfBody)->Arg(200)->Arg(2000)->Arg(20000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
