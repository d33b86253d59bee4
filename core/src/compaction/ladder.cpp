// ContextWindowManager and the compaction ladder (docs/spec/compaction.md). The rules are in
// the doc comment of compaction.hpp; this file says how they are kept.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/log_internal.hpp"
#include "compaction/work.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {

const char* to_string(CompactionLevel level) noexcept {
    switch (level) {
        case CompactionLevel::kNone:
            return "NONE";
        case CompactionLevel::kLight:
            return "LIGHT";
        case CompactionLevel::kModerate:
            return "MODERATE";
        case CompactionLevel::kAggressive:
            return "AGGRESSIVE";
        case CompactionLevel::kMaximum:
            return "MAXIMUM";
    }
    return "?";
}

double CompactionReport::cost() const noexcept {
    double sum = 0;
    for (const CompactionSummary& s : summaries) sum += s.cost;
    return sum;
}

namespace {

using compaction::Work;

/// The share of the trigger a level aims at: a little under it, so that the summarizers'
/// estimates (the extractive one counts bytes / 4) and the next few messages do not trigger
/// another compaction straight away.
constexpr double kAimShare = 0.85;

}  // namespace

ContextWindowManager::ContextWindowManager(SummarizerInstance summarizer,
                                           ContextWindowSettings settings)
    : summarizer_(std::move(summarizer)), settings_(settings) {
    (void)trigger();  // refuse a bad setting at construction, where it was made
    if (settings_.comfort_context_tokens && *settings_.comfort_context_tokens <= 0) {
        throw Error(ErrorKind::kInvalidArgument,
                    "comfort_context_tokens must be positive, got " +
                        std::to_string(*settings_.comfort_context_tokens));
    }
}

std::int64_t ContextWindowManager::comfort_window(const ModelSpec& model) const {
    if (settings_.comfort_context_tokens) return *settings_.comfort_context_tokens;
    if (model.comfort_context_tokens) return *model.comfort_context_tokens;
    return kDefaultComfortContextTokens;
}

std::int64_t ContextWindowManager::limit(const ModelSpec& model) const {
    const std::int64_t comfort = comfort_window(model);
    return model.max_context_tokens > 0 ? std::min(comfort, model.max_context_tokens) : comfort;
}

double ContextWindowManager::trigger() const {
    const double t = settings_.compaction_trigger.value_or(kDefaultCompactionTrigger);
    if (!(t > 0 && t <= 1)) {
        throw Error(ErrorKind::kInvalidArgument,
                    "compaction_trigger must lie in (0, 1], got " + std::to_string(t));
    }
    return t;
}

std::int64_t ContextWindowManager::trigger_tokens(const ModelSpec& model) const {
    return static_cast<std::int64_t>(std::floor(trigger() * static_cast<double>(limit(model))));
}

CompactionReport ContextWindowManager::ensure_fits(ConversationContext& conversation,
                                                   const ModelSpec& model,
                                                   std::int64_t output_reserve) {
    const TokenCounter& counter = TokenCounter::for_model(model);
    CompactionReport report;
    report.limit = limit(model);
    report.trigger_tokens = trigger_tokens(model);
    report.hard_limit = model.max_context_tokens > 0 ? model.max_context_tokens : report.limit;
    report.output_reserve = output_reserve;
    report.tokens_before = counter.total_tokens(conversation);
    report.tokens_after = report.tokens_before;
    const std::int64_t hard_room = report.hard_limit - output_reserve;

    auto overflow = [&](std::int64_t tokens, const char* after) {
        return ContextOverflowException(
            "conversation '" + conversation.conversation_id() + "': " + std::to_string(tokens) +
            " input tokens + " + std::to_string(output_reserve) +
            " reserved for the answer exceed " + "the " + std::to_string(report.hard_limit) +
            "-token context of model '" + model.id + "' " + after);
    };

    if (report.tokens_before <= report.trigger_tokens && report.tokens_before <= hard_room) {
        return report;
    }
    if (!conversation.compactable()) {
        // compaction.34: a conversation marked compactable=false is never compacted.
        if (report.tokens_before > hard_room) {
            throw overflow(report.tokens_before, "(the conversation is marked not compactable)");
        }
        report.accepted_above_trigger = true;
        return report;
    }

    Work work(counter, summarizer_, conversation, report);
    const std::int64_t fixed = counter.fixed_tokens(conversation);
    work.fixed = fixed;

    for (CompactionLevel level : {CompactionLevel::kLight, CompactionLevel::kModerate,
                                  CompactionLevel::kAggressive, CompactionLevel::kMaximum}) {
        report.level = level;
        const std::int64_t aim =
            static_cast<std::int64_t>(kAimShare * static_cast<double>(report.trigger_tokens));
        work.run_level(level, aim, report.trigger_tokens, hard_room);
        if (work.total() <= report.trigger_tokens) break;
    }

    report.tokens_after = work.total();
    if (report.tokens_after > hard_room) {
        throw overflow(report.tokens_after, "even after MAXIMUM compaction");
    }
    report.accepted_above_trigger = report.tokens_after > report.trigger_tokens;
    if (!report.summaries.empty()) {
        conversation.replace_messages(std::move(work.msgs), work.origins);
        report.tokens_after = counter.total_tokens(conversation);
    }
    NUCLEO_LOG_INFO("compaction: conversation '{}': {} -> {} tokens at {} ({} summaries)",
                    conversation.conversation_id(), report.tokens_before, report.tokens_after,
                    to_string(report.level), report.summaries.size());
    return report;
}

}  // namespace nucleo
