// Tokenizer throughput, single-threaded: MB/s of encode() and count()
// over the mixed corpus that bench/tokens/run generates (tests/tokens/peers/corpus.mjs,
// valid UTF-8 only so the JavaScript peers see the same text). Documents are encoded one by one,
// as messages are. The npm peers are measured on the same file by bench/tokens/peers.mjs.
// Wall-clock time on both sides (UseRealTime here, hrtime there), so the ratio compares like
// with like; on a busy machine both slow down.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "nucleo/tokenizer.hpp"

namespace {

std::vector<std::string> load_corpus() {
    const char* path = std::getenv("NUCLEO_BENCH_CORPUS");
    if (path == nullptr) {
        std::cerr << "set NUCLEO_BENCH_CORPUS to a corpus file (bench/tokens/run makes one)\n";
        std::exit(2);
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    if (!in || data.empty()) {
        std::cerr << "cannot read corpus " << path << "\n";
        std::exit(2);
    }
    std::vector<std::string> docs;
    for (std::size_t at = 0; at + 4 <= data.size();) {
        std::uint32_t len = 0;
        for (int k = 0; k < 4; ++k) {
            len |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[at + k])) << (8 * k);
        }
        at += 4;
        docs.push_back(data.substr(at, len));
        at += len;
    }
    return docs;
}

const std::vector<std::string>& corpus() {
    static const std::vector<std::string> docs = load_corpus();
    return docs;
}

std::int64_t corpus_bytes() {
    std::int64_t n = 0;
    for (const auto& d : corpus()) n += static_cast<std::int64_t>(d.size());
    return n;
}

void BM_Encode(benchmark::State& state, const char* encoding) {
    const nucleo::Tokenizer& tok = nucleo::Tokenizer::get(encoding);
    std::size_t ids = 0;
    for (auto _ : state) {
        ids = 0;
        for (const auto& d : corpus()) {
            auto out = tok.encode(d);
            ids += out.size();
            benchmark::DoNotOptimize(out.data());
        }
    }
    state.SetBytesProcessed(state.iterations() * corpus_bytes());
    state.counters["tokens"] = static_cast<double>(ids);
}

void BM_Count(benchmark::State& state, const char* encoding) {
    const nucleo::Tokenizer& tok = nucleo::Tokenizer::get(encoding);
    std::size_t ids = 0;
    for (auto _ : state) {
        ids = 0;
        for (const auto& d : corpus()) ids += tok.count(d);
        benchmark::DoNotOptimize(ids);
    }
    state.SetBytesProcessed(state.iterations() * corpus_bytes());
    state.counters["tokens"] = static_cast<double>(ids);
}

BENCHMARK_CAPTURE(BM_Encode, o200k_base, "o200k_base")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Encode, cl100k_base, "cl100k_base")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Count, o200k_base, "o200k_base")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Count, cl100k_base, "cl100k_base")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
