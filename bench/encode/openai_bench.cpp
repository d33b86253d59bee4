// Encode benchmark of nucleo-openai: a 2,000-message conversation encoded
// through the ABI (PluginLoader → ProviderInstance::encode → the plugin's encode slot → host sink),
// against rapidjson's Writer writing the same output body from a ready DOM, in one run. Target:
// encode ≤ 2× the Writer. The ratio is printed after the runs (bench/RESULTS.md).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"
#include "orders_conversation.hpp"

namespace {

const nucleo::ProviderInstance& openai() {
    static const nucleo::Plugin plugin =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("openai");
    static const nucleo::ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

const std::string& request() {
    static const std::string r = nucleo::bench::conversation(2000);
    return r;
}

void BM_OpenAiEncode2000(benchmark::State& state) {
    const std::string& in = request();
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string out = openai().encode(in);
        bytes = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_OpenAiEncode2000)->Unit(benchmark::kMicrosecond);

void BM_RapidJsonWriterSameBody(benchmark::State& state) {
    rapidjson::Document encoded;
    const std::string out = openai().encode(request());
    encoded.Parse(out.c_str(), out.size());
    const rapidjson::Value& body = encoded["body"];
    std::size_t bytes = 0;
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        body.Accept(w);
        bytes = buffer.GetSize();
        benchmark::DoNotOptimize(buffer.GetString());
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_RapidJsonWriterSameBody)->Unit(benchmark::kMicrosecond);

/// For the record, not the target: the in-situ parse of the request alone, the part of encode that
/// the Writer baseline does not do (encode ≈ this + the Writer + the ABI's copy into the sink).
void BM_RapidJsonParseRequest(benchmark::State& state) {
    const std::string& in = request();
    for (auto _ : state) {
        std::string copy(in);
        rapidjson::Document d;
        d.ParseInsitu(copy.data());
        benchmark::DoNotOptimize(d.IsObject());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.size()));
}
BENCHMARK(BM_RapidJsonParseRequest)->Unit(benchmark::kMicrosecond);

/// Keeps each run's CPU time per iteration so main() can print the ratio of this one run.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            if (r.iterations > 0) {
                cpu_ns[r.benchmark_name()] = r.GetAdjustedCPUTime();
            }
        }
        ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, double> cpu_ns;
};

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    std::printf("request: %zu bytes, 2000 messages\n", request().size());
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    // With --benchmark_repetitions the medians are compared, else the single runs.
    const auto cpu = [&](const std::string& name) {
        for (const std::string& key : {name + "_median", name}) {
            const auto it = reporter.cpu_ns.find(key);
            if (it != reporter.cpu_ns.end()) return it->second;
        }
        return 0.0;
    };
    const double enc = cpu("BM_OpenAiEncode2000");
    const double wr = cpu("BM_RapidJsonWriterSameBody");
    if (enc > 0 && wr > 0) {
        std::printf("encode / Writer (CPU time) = %.2f (target <= 2.00)\n", enc / wr);
    }
    benchmark::Shutdown();
    return 0;
}
