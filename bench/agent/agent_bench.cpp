// The agent loop's cost beyond the model (target: framework overhead of one agent
// round (everything but the model's own time, measured against the emulator): under 1 ms for a
// 200-message conversation, and time to the first streamed token within 1 ms of the emulator
// sending it).
//
// Round: BM_AgentRound runs one whole turn on a 200-message conversation (the user's message in,
// the window check through the ContextWindowManager, the call — prepare, encode through the ABI,
// send, decode, validate, append —, the final answer marked, the report). BM_RawRound sends the
// very request that turn sends, already encoded, over the same kept-alive loopback connection to
// the same emulator. The difference is the framework's overhead; the emulator's own time is in
// both. The copy of the conversation each iteration starts from is made with the clock paused and
// its token count warmed, as a live agent's conversation is.
//
// First token: BM_AgentFirstToken times from the start of a streamed turn to its first text
// delta; BM_RawFirstChunk from the start of the raw send to the first body bytes libcurl hands
// over — the moment the emulator's answer reaches the process. The difference is what the
// framework adds before a token shows (prepare and encode before the send; framing and the
// plugin's decode_event after the bytes arrive).
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>

#include "emulator_client.hpp"
#include "emulator_conversation.hpp"
#include "llm/stream_framing.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using Clock = std::chrono::steady_clock;

ModelSpec model() { return bench_support::emulator_model(); }
ConversationContext conversation(int messages) { return bench_support::emulator_conversation(messages); }

constexpr const char* kQuestion = "Where is order 42 now?";

struct Setup {
    emulator_test::EmulatorProcess emulator;
    ProviderConfig config;
    PluginLoader loader{{NUCLEO_BUILD_PLUGIN_DIR}};
    Setup() {
        config.name = "anthropic";
        config.plugin = "anthropic";
        config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
        config.credentials.api_key = "bench";
    }
    ProviderClient client() const { return {config, loader.load("anthropic").make_provider("{}")}; }
    AgentOptions options() const {
        AgentOptions o;
        // The window check runs before the call as in every turn; the comfort window is large, so
        // it only counts (a compaction would be the summarizer's time, not the loop's).
        o.window = std::make_shared<ContextWindowManager>(loader.load("extractive").make_summarizer());
        return o;
    }
};

Setup& setup() {
    static Setup s;
    return s;
}

/// The conversation the timed part starts from: a fresh copy with its token count warm.
ConversationContext start_from(const ConversationContext& base, const ModelSpec& m) {
    ConversationContext c = base;
    benchmark::DoNotOptimize(get_total_tokens(c, m));
    return c;
}

void BM_AgentRound(benchmark::State& state) {
    ProviderClient client = setup().client();
    const ModelSpec m = model();
    Agent agent(client, m, setup().options());
    const ConversationContext base = conversation(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        state.PauseTiming();
        ConversationContext c = start_from(base, m);
        state.ResumeTiming();
        benchmark::DoNotOptimize(agent.run_turn(c, kQuestion));
    }
}
BENCHMARK(BM_AgentRound)->Arg(200)->Unit(benchmark::kMicrosecond)->UseRealTime();

/// The request the agent's turn sends: the conversation with the user's message, rendered.
HttpRequest agent_request(ProviderClient& client, const ConversationContext& base) {
    ConversationContext c = base;
    Message user = Message::outgoing_text(kQuestion);
    user.compactable = false;
    c.add_message(user);
    return client.build_request(c, model());
}

void BM_RawRound(benchmark::State& state) {
    ProviderClient client = setup().client();
    const HttpRequest request = agent_request(client, conversation(static_cast<int>(state.range(0))));
    HttpTransport transport;
    for (auto _ : state) benchmark::DoNotOptimize(transport.send(request));
}
BENCHMARK(BM_RawRound)->Arg(200)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_AgentFirstToken(benchmark::State& state) {
    ProviderClient client = setup().client();
    const ModelSpec m = model();
    Agent agent(client, m, setup().options());
    const ConversationContext base = conversation(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        ConversationContext c = start_from(base, m);
        std::optional<Clock::time_point> first;
        TurnCallbacks cb;
        cb.on_text_delta = [&first](std::string_view) {
            if (!first) first = Clock::now();
        };
        const auto start = Clock::now();
        benchmark::DoNotOptimize(agent.run_turn(c, kQuestion, cb));
        if (!first) {
            state.SkipWithError("no text delta arrived");
            break;
        }
        state.SetIterationTime(std::chrono::duration<double>(*first - start).count());
    }
}
BENCHMARK(BM_AgentFirstToken)->Arg(200)->Unit(benchmark::kMicrosecond)->UseManualTime();

void BM_RawFirstChunk(benchmark::State& state) {
    ProviderClient client = setup().client();
    HttpRequest request = agent_request(client, conversation(static_cast<int>(state.range(0))));
    // The streamed form of the same request.
    const std::string flag = R"("stream":false)";
    std::string body = request.body;
    if (const auto at = body.find(flag); at != std::string::npos) {
        body.replace(at, flag.size(), R"("stream":true)");
    } else {
        body.insert(body.size() - 1, R"(,"stream":true)");
    }
    request.body = std::move(body);
    HttpTransport transport;
    for (auto _ : state) {
        std::optional<Clock::time_point> first;
        const BodyChunkCallback on_chunk = [&first](std::string_view) {
            if (!first) first = Clock::now();
        };
        const auto start = Clock::now();
        benchmark::DoNotOptimize(transport.send(request, nullptr, on_chunk));
        if (!first) {
            state.SkipWithError("no body chunk arrived");
            break;
        }
        state.SetIterationTime(std::chrono::duration<double>(*first - start).count());
    }
}
BENCHMARK(BM_RawFirstChunk)->Arg(200)->Unit(benchmark::kMicrosecond)->UseManualTime();

/// The streamed body of the agent's request, as the emulator sends it.
std::string streamed_body() {
    ProviderClient client = setup().client();
    const ConversationContext base = conversation(200);
    ConversationContext c = base;
    c.add_message(Message::outgoing_text(kQuestion));
    StreamCallbacks cb;
    cb.on_text_delta = [](std::size_t, std::string_view) {};
    CallOptions options;
    options.stream = &cb;
    const HttpRequest request = client.build_request(c, model(), options);
    return HttpTransport().send(request).body;
}

void BM_ArrivalToFirstToken(benchmark::State& state) {
    // From the bytes libcurl hands over to the host's first text delta: the framing and the
    // plugin's decode_event of each event up to the first text (what the streamed path adds after
    // the emulator sent the token; libcurl's own delivery is in BM_RawFirstChunk's time).
    const std::string body = streamed_body();
    const ProviderInstance dialect = setup().loader.load("anthropic").make_provider("{}");
    for (auto _ : state) {
        internal::StreamFramer framer(internal::StreamFraming::kSse);
        bool seen = false;
        framer.feed(body, [&](std::string_view name, std::string_view data) {
            if (seen) return;
            const std::string deltas = dialect.decode_event(name, data);
            seen = deltas.find(R"("type":"text")") != std::string::npos;
        });
        if (!seen) {
            state.SkipWithError("no text delta in the streamed body");
            break;
        }
    }
}
BENCHMARK(BM_ArrivalToFirstToken)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nucleo

BENCHMARK_MAIN();
