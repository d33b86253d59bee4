// Nucleo and the baselines at equal budgets: see quality.hpp.
#include "quality.hpp"

#include <chrono>
#include <cmath>

#include "baselines.hpp"
#include "nucleo/tokens.hpp"
#include "text.hpp"

namespace nucleo::quality {

namespace {

constexpr std::int64_t kOutputReserve = 4096;

MethodResult score(const Session& session, const ConversationContext& c, std::int64_t tokens,
                   bool reached) {
    MethodResult r{tokens, reached, {}};
    const std::string text = text_of(c);
    for (const Fact& f : session.facts) r.kept.push_back(text.find(f.text) != std::string::npos);
    return r;
}

}  // namespace

const char* method_name(int method) noexcept {
    switch (method) {
        case 0:
            return "nucleo";
        case 1:
            return "head+tail of each result";
        case 2:
            return "clear oldest results";
        case 3:
            return "first + newest messages";
    }
    return "?";
}

ModelSpec quality_model() {
    ModelSpec m;
    m.id = "quality";
    m.provider = "anthropic";
    m.max_context_tokens = 400000;
    m.max_output_tokens = 16384;
    m.native_tools = true;
    return m;  // token_counter: the catalog's default
}

const std::vector<double>& aim_shares() {
    static const std::vector<double> shares = {0.85, 0.75, 0.0, 0.45, 0.30, 0.20, 0.12};
    return shares;
}

Run measure(const Session& session, std::size_t index, double aim_share,
            const SummarizerInstance& summarizer) {
    const ModelSpec model = quality_model();
    const std::int64_t tokens = TokenCounter::for_model(model).total_tokens(session.conversation);
    // The trigger just under the session: comfort window = 0.98 × tokens / trigger.
    ContextWindowSettings settings;
    settings.comfort_context_tokens = static_cast<std::int64_t>(
        std::floor(0.98 * static_cast<double>(tokens) / kDefaultCompactionTrigger));
    if (aim_share > 0) {
        settings.compaction_target = aim_share * static_cast<double>(tokens) /
                                     static_cast<double>(*settings.comfort_context_tokens);
    }
    Run run;
    run.session = index;
    ConversationContext c = session.conversation;
    ContextWindowManager manager(summarizer, settings);
    const auto start = std::chrono::steady_clock::now();
    run.report = manager.ensure_fits(c, model, kOutputReserve);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.aim_share = static_cast<double>(run.report.target_tokens) / static_cast<double>(tokens);
    const std::int64_t budget = run.report.tokens_after;
    run.methods.push_back(score(session, c, budget, true));
    for (const auto& baseline : {head_tail_results, clear_old_results, head_tail_conversation}) {
        const Baseline b = baseline(session.conversation, model, budget);
        run.methods.push_back(score(session, b.conversation, b.tokens, b.reached));
    }
    return run;
}

}  // namespace nucleo::quality
