// A simulated long session: a conversation grown round by round (the assistant's calls, their
// results, its answer and the user's next request), ensure_fits before every round, in a window
// that fills around round 17; what compaction does from then on, and what it costs.
#pragma once

#include <cstdint>
#include <vector>

#include "nucleo/compaction.hpp"

namespace nucleo::quality {

struct Compaction {
    int round = 0;
    CompactionLevel level = CompactionLevel::kNone;
    std::int64_t tokens_before = 0;
    std::int64_t tokens_after = 0;
    std::int64_t target = 0;
    std::int64_t cache_given_up = 0;  ///< the report's cached_tokens_given_up
    std::int64_t summary_tokens = 0;  ///< the summaries written, by the model's counter
};

struct LongSession {
    int rounds = 0;
    int fill_round = 0;        ///< the round the window was meant to fill at
    std::int64_t limit = 0;    ///< the comfort window used
    int first_compaction = 0;  ///< 0: none
    std::vector<Compaction> compactions;
    /// Tokens not sent on later calls: each compaction's saving times the rounds it lasted
    /// (until the next compaction or the end).
    std::int64_t saved_over_calls = 0;
};

LongSession simulate(std::uint64_t seed, int rounds, const SummarizerInstance& summarizer);

}  // namespace nucleo::quality
