// The framework's cost of one model call (target: a call to the emulator on loopback adds under
// 200 µs beyond the emulator's own time). Both benchmarks send the same bytes to the same
// emulator over a kept-alive loopback connection; BM_RawTransport sends the request the plugin
// encoded once, BM_ProviderClientCall does the whole call each time (prepare, encode through the
// ABI, send, decode, validate, append). The difference of their times is the framework overhead.
#include <benchmark/benchmark.h>

#include "emulator_client.hpp"
#include "emulator_conversation.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

ModelSpec model() { return bench_support::emulator_model(); }
ConversationContext conversation(int messages) { return bench_support::emulator_conversation(messages); }

struct Setup {
    emulator_test::EmulatorProcess emulator;
    ProviderConfig config;
    Setup() {
        config.name = "anthropic";
        config.plugin = "anthropic";
        config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
        config.credentials.api_key = "bench";
    }
    ProviderClient client() const {
        PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        return {config, loader.load("anthropic").make_provider("{}")};
    }
};

Setup& setup() {
    static Setup s;
    return s;
}

void BM_ProviderClientCall(benchmark::State& state) {
    ProviderClient client = setup().client();
    const ConversationContext base = conversation(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        ConversationContext c = base;  // the same request every time
        benchmark::DoNotOptimize(client.call(c, model()));
    }
}
BENCHMARK(BM_ProviderClientCall)->Arg(1)->Arg(199)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_RawTransport(benchmark::State& state) {
    ProviderClient client = setup().client();
    ConversationContext c = conversation(static_cast<int>(state.range(0)));
    const HttpRequest request = client.build_request(c, model());
    HttpTransport transport;
    for (auto _ : state) benchmark::DoNotOptimize(transport.send(request));
}
BENCHMARK(BM_RawTransport)->Arg(1)->Arg(199)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace nucleo

BENCHMARK_MAIN();
