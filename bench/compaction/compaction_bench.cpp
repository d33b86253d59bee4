// Compacting a 300,000-token agent conversation under the default 128,000-token comfort window
// with the extractive summarizer (target: under 1 s). Each iteration starts from a
// fresh copy with the token counter's memo emptied, so the first count of every message is paid.
#include <benchmark/benchmark.h>

#include <string>

#include "nucleo/compaction.hpp"
#include "nucleo/tokens.hpp"

namespace {

std::string prose(int sentences, int seed) {
    std::string out;
    for (int i = 0; i < sentences; ++i) {
        const int k = seed * 1000 + i;
        out += "Step " + std::to_string(k) + " read src/module_" + std::to_string(k % 97) +
               ".cpp and reported " + std::to_string(k % 13) + " warnings in parseConfig. ";
        if (i % 7 == 3) out += "We decided to keep the retry at " + std::to_string(k) + " ms. ";
    }
    return out;
}

nucleo::ModelSpec model() {
    nucleo::ModelSpec m;
    m.id = "bench";
    m.max_context_tokens = 400000;
    m.max_output_tokens = 16384;
    m.token_counter = "o200k_base";
    return m;
}

/// A user task (kept verbatim), then tool calls with large results and short model notes.
nucleo::ConversationContext conversation(std::int64_t tokens) {
    nucleo::ConversationContext c("bench", "u");
    c.put_main_objective("task", "Fix the build of the repository.");
    nucleo::Message task = nucleo::Message::outgoing_text("Make the build pass on every module.");
    task.compactable = false;
    c.add_message(task);
    const nucleo::TokenCounter& counter = nucleo::TokenCounter::for_model(model());
    for (int k = 0; counter.total_tokens(c) < tokens; ++k) {
        const std::string id = "t" + std::to_string(k);
        nucleo::Message call;
        call.direction = nucleo::Direction::kIncoming;
        call.blocks = {nucleo::TextBlock{"Reading module " + std::to_string(k) + "."},
                       nucleo::ToolUseBlock{id, "read_file", R"({"path":"src/m.cpp"})"}};
        c.add_message(call);
        nucleo::Message result;
        result.blocks = {nucleo::ToolResultBlock{id, {nucleo::TextBlock{prose(100, k)}}, false}};
        c.add_message(result);
    }
    return c;
}

void BM_Compact300kUnder128k(benchmark::State& state) {
    const nucleo::ConversationContext original = conversation(300000);
    const nucleo::SummarizerInstance extractive =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer();
    nucleo::ContextWindowManager manager(extractive);
    nucleo::CompactionReport report;
    for (auto _ : state) {
        state.PauseTiming();
        nucleo::ConversationContext c = original;
        nucleo::TokenCounter::for_model(model()).clear_cache();
        state.ResumeTiming();
        report = manager.ensure_fits(c, model(), 4096);
    }
    state.counters["tokens_before"] = static_cast<double>(report.tokens_before);
    state.counters["tokens_after"] = static_cast<double>(report.tokens_after);
    state.counters["level"] = static_cast<double>(report.level);
    state.counters["summaries"] = static_cast<double>(report.summaries.size());
}
BENCHMARK(BM_Compact300kUnder128k)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
