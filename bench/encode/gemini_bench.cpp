// Encode benchmark of nucleo-gemini: the 2,000-message conversation of the OpenAI program
// (orders_conversation.hpp) encoded through the ABI by nucleo-gemini and, in the same run, by
// nucleo-openai; target: Gemini's encode within 1.5× of the Chat Completions dialect's. Also the
// Gemini encode against rapidjson's Writer writing the same body from a ready DOM
// (bench/RESULTS.md).
#include <benchmark/benchmark.h>

#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"
#include "orders_conversation.hpp"
#include "ratio_main.hpp"

namespace {

const nucleo::ProviderInstance& instance(const char* name) {
    // One loaded plugin and instance per dialect, for the whole run.
    static const nucleo::Plugin gemini =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("gemini");
    static const nucleo::Plugin openai =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("openai");
    static const nucleo::ProviderInstance gemini_instance = gemini.make_provider("{}");
    static const nucleo::ProviderInstance openai_instance = openai.make_provider("{}");
    return std::string_view(name) == "gemini" ? gemini_instance : openai_instance;
}

const std::string& request() {
    static const std::string r = nucleo::bench::conversation(2000);
    return r;
}

void encode(benchmark::State& state, const char* plugin) {
    const std::string& in = request();
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string out = instance(plugin).encode(in);
        bytes = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void BM_GeminiEncode2000(benchmark::State& state) {
    encode(state, "gemini");
}
BENCHMARK(BM_GeminiEncode2000)->Unit(benchmark::kMicrosecond);

void BM_OpenAiEncode2000(benchmark::State& state) {
    encode(state, "openai");
}
BENCHMARK(BM_OpenAiEncode2000)->Unit(benchmark::kMicrosecond);

void BM_RapidJsonWriterSameGeminiBody(benchmark::State& state) {
    rapidjson::Document encoded;
    const std::string out = instance("gemini").encode(request());
    encoded.Parse(out.c_str(), out.size());
    const rapidjson::Value& body = encoded["body"];
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        body.Accept(w);
        benchmark::DoNotOptimize(buffer.GetString());
    }
}
BENCHMARK(BM_RapidJsonWriterSameGeminiBody)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    return nucleo::bench::run_with_ratios(
        argc, argv, {{"BM_GeminiEncode2000", "BM_RapidJsonWriterSameGeminiBody"}},
        {{"BM_GeminiEncode2000", "BM_OpenAiEncode2000", 1.5}});
}
