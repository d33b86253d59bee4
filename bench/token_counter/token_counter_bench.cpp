// getTotalTokens after each append over a growing conversation (target: the cost
// at message 10,000 within 2× of the cost at message 100). Each iteration appends one message
// with new content (so it is tokenized, never a memo hit) and asks for the total.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "nucleo/conversation.hpp"
#include "nucleo/tokenizer.hpp"
#include "nucleo/tokens.hpp"

namespace {

std::string sentence(long k) {
    return "Message " + std::to_string(k) + ": the build of src/module_" + std::to_string(k % 97) +
           ".cpp reported " + std::to_string(k % 13) +
           " warnings in parseConfig, and the "
           "retry at step " +
           std::to_string(k * 7) + " passed.";
}

void BM_TotalAfterAppend(benchmark::State& state) {
    const long n = state.range(0);
    nucleo::ConversationContext c("bench", "u");
    c.put_main_objective("task", "Fix the build of the repository.");
    for (long k = 0; k + 1 < n; ++k) {
        c.add_message(k % 2 == 0 ? nucleo::Message::outgoing_text(sentence(k))
                                 : nucleo::Message::incoming_text(sentence(k)));
    }
    nucleo::TokenCounter counter(nucleo::Tokenizer::get("o200k_base"));
    benchmark::DoNotOptimize(counter.total_tokens(c));  // the history is counted once, before
    long k = 1000000;
    for (auto _ : state) {
        c.add_message(nucleo::Message::outgoing_text(sentence(k++)));
        // Only getTotalTokens is timed (manual time): the append is the conversation's cost.
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(counter.total_tokens(c));
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    state.counters["messages_at_end"] = static_cast<double>(c.messages().size());
}
// A fixed iteration count keeps the conversation near its size (100 → 1,100; 10,000 → 11,000).
BENCHMARK(BM_TotalAfterAppend)
    ->Arg(100)
    ->Arg(10000)
    ->Iterations(1000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

/// The same with the tokenizer out of the picture: a count of the new message alone, after the
/// same history, so the figure above can be read as "about the new message alone".
void BM_CountNewMessageOnly(benchmark::State& state) {
    const long n = state.range(0);
    nucleo::ConversationContext c("bench", "u");
    for (long k = 0; k + 1 < n; ++k) c.add_message(nucleo::Message::outgoing_text(sentence(k)));
    nucleo::TokenCounter counter(nucleo::Tokenizer::get("o200k_base"));
    benchmark::DoNotOptimize(counter.total_tokens(c));
    long k = 1000000;
    for (auto _ : state) {
        const nucleo::Message m = nucleo::Message::outgoing_text(sentence(k++));
        const auto start = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(counter.count_message(m));
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
}
BENCHMARK(BM_CountNewMessageOnly)
    ->Arg(100)
    ->Arg(10000)
    ->Iterations(1000)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
