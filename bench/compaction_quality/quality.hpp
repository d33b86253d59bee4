// One measured run: a session compacted by ensure_fits at one budget, and the baselines at the
// budget ensure_fits reached, each scored by the planted facts still found verbatim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nucleo/compaction.hpp"
#include "session.hpp"

namespace nucleo::quality {

/// Nucleo, then the three baselines of baselines.hpp.
inline constexpr int kMethods = 4;
const char* method_name(int method) noexcept;

struct MethodResult {
    std::int64_t tokens = 0;
    bool reached = true;     ///< at or under the budget (always true for Nucleo: it sets it)
    std::vector<bool> kept;  ///< per fact of the session
};

struct Run {
    std::size_t session = 0;
    double aim_share = 0;  ///< the target asked for, as a share of the session's tokens
    CompactionReport report;
    double seconds = 0;  ///< ensure_fits alone
    std::vector<MethodResult> methods;
};

/// The model the runs use: the catalog's default counter, a hard limit far above the sessions.
ModelSpec quality_model();

/// The budgets a session is run at, as shares of its tokens, the trigger always just crossed:
/// 0 is the default target (compaction.110); the high shares leave LIGHT room to suffice, the low
/// ones force the ladder higher. Runs are reported by the level the ladder stopped at.
const std::vector<double>& aim_shares();

/// Runs `session` at `aim_share` (see aim_shares) with `summarizer`.
Run measure(const Session& session, std::size_t index, double aim_share,
            const SummarizerInstance& summarizer);

}  // namespace nucleo::quality
