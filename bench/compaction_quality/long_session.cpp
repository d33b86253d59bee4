// The simulated long session: see long_session.hpp.
#include "long_session.hpp"

#include "nucleo/tokens.hpp"
#include "quality.hpp"
#include "session.hpp"

namespace nucleo::quality {

namespace {

constexpr int kFillRound = 17;
constexpr std::int64_t kOutputReserve = 4096;

RoundOptions round_options() {
    RoundOptions o;
    o.answer = true;
    return o;
}

}  // namespace

LongSession simulate(std::uint64_t seed, int rounds, const SummarizerInstance& summarizer) {
    const ModelSpec model = quality_model();
    const TokenCounter& counter = TokenCounter::for_model(model);
    LongSession out;
    out.rounds = rounds;
    out.fill_round = kFillRound;
    {
        // The same writer, run ahead without compaction, sets the window: the trigger falls at
        // the start of round kFillRound.
        SessionWriter probe(seed);
        ConversationContext c = probe.start("long");
        for (int r = 1; r < kFillRound; ++r) probe.add_round(c, round_options());
        out.limit = static_cast<std::int64_t>(static_cast<double>(counter.total_tokens(c)) /
                                              kDefaultCompactionTrigger);
    }
    SessionWriter writer(seed);
    ConversationContext c = writer.start("long");
    ContextWindowSettings settings;
    settings.comfort_context_tokens = out.limit;
    ContextWindowManager manager(summarizer, settings);
    for (int r = 1; r <= rounds; ++r) {
        const CompactionReport report = manager.ensure_fits(c, model, kOutputReserve);
        if (report.compacted()) {
            Compaction k{r,
                         report.level,
                         report.tokens_before,
                         report.tokens_after,
                         report.target_tokens,
                         report.cached_tokens_given_up,
                         0};
            for (const CompactionSummary& s : report.summaries)
                k.summary_tokens += s.summary_tokens;
            out.compactions.push_back(k);
            if (out.first_compaction == 0) out.first_compaction = r;
        }
        writer.add_round(c, round_options());
    }
    for (std::size_t i = 0; i < out.compactions.size(); ++i) {
        const int until =
            i + 1 < out.compactions.size() ? out.compactions[i + 1].round : rounds + 1;
        out.saved_over_calls +=
            (out.compactions[i].tokens_before - out.compactions[i].tokens_after) *
            (until - out.compactions[i].round);
    }
    return out;
}

}  // namespace nucleo::quality
