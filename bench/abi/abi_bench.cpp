// bench/abi: a round trip through a provider-style slot -- 1 KiB JSON
// in, sink out -- must cost under 1 us beyond copying the payload. Three figures in one run:
//   BM_CopyPayload          the baseline: copy 1 KiB into a reused std::string
//   BM_RawSlotRoundTrip     encode() called through the C function pointer, host sink appending
//                           into a reused std::string, caller-owned error initialised each call
//   BM_ProviderInstanceEncode  the C++ wrapper the core uses (ProviderInstance::encode), which
//                           also allocates the returned std::string
//   BM_IsolatedProviderEncode  the same call on an instance with `isolation: process` (abi.130):
//                           the request and its answer framed over the helper's socketpair, a
//                           poll() for the answer and two context switches per call
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"

namespace {

std::string payload_1kib() {
    std::string s = R"({"schema_version":1,"model":"m","messages":[{"role":"user","content":")";
    const std::string tail = R"("}]})";
    s.append(1024 - s.size() - tail.size(), 'x');
    s += tail;
    if (s.size() != 1024) throw std::logic_error("payload is not 1 KiB");
    return s;
}

int32_t append(void* ctx, const char* data, size_t size) {
    static_cast<std::string*>(ctx)->append(data, size);
    return NUCLEO_OK;
}

void BM_CopyPayload(benchmark::State& state) {
    const std::string payload = payload_1kib();
    std::string out;
    out.reserve(payload.size());
    for (auto _ : state) {
        out.clear();
        out.append(payload.data(), payload.size());
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 1024);
}
BENCHMARK(BM_CopyPayload);

void BM_RawSlotRoundTrip(benchmark::State& state) {
    void* lib = ::dlopen(BENCH_ECHO_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        state.SkipWithError(::dlerror());
        return;
    }
    auto entry_fn =
        reinterpret_cast<nucleo_plugin_entry_fn>(::dlsym(lib, NUCLEO_PLUGIN_ENTRY_SYMBOL));
    const auto* factory = static_cast<const nucleo_provider_factory*>(
        entry_fn()->get_factory(NUCLEO_FACTORY_PROVIDER));
    nucleo_instance* inst = nullptr;
    nucleo_error err;
    nucleo_error_init(&err);
    factory->create(nucleo_sv("{}"), &inst, &err);

    const std::string payload = payload_1kib();
    std::string out;
    out.reserve(payload.size());
    const nucleo_sink sink = {sizeof(nucleo_sink), &out, &append};
    for (auto _ : state) {
        out.clear();
        nucleo_error_init(&err);
        const int32_t status = factory->encode(inst, {payload.data(), payload.size()}, &sink, &err);
        benchmark::DoNotOptimize(status);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 1024);
    factory->destroy(inst);
    ::dlclose(lib);
}
BENCHMARK(BM_RawSlotRoundTrip);

/// ProviderInstance::encode of 1 KiB, the result string allocated per call.
void encode_loop(benchmark::State& state, const nucleo::ProviderInstance& provider) {
    const std::string payload = payload_1kib();
    for (auto _ : state) {
        std::string out = provider.encode(payload);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 1024);
}

void BM_ProviderInstanceEncode(benchmark::State& state) {
    encode_loop(state, nucleo::PluginLoader().load(BENCH_ECHO_PLUGIN).make_provider());
}
BENCHMARK(BM_ProviderInstanceEncode);

void BM_IsolatedProviderEncode(benchmark::State& state) {
    encode_loop(state, nucleo::PluginLoader()
                           .load_isolated(BENCH_ECHO_PLUGIN, std::chrono::seconds(10))
                           .make_provider());
}
BENCHMARK(BM_IsolatedProviderEncode);

}  // namespace

BENCHMARK_MAIN();
