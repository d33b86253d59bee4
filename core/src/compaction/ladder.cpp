// ContextWindowManager and the compaction ladder (docs/spec/compaction.md). The rules are in
// the doc comment of compaction.hpp; this file says how they are kept.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/log_internal.hpp"
#include "compaction/work.hpp"
#include "conversation/context_internal.hpp"
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

/// The share of the target a level aims at: a little under it, for the join of summaries a
/// counter may count a token apart and the minimum a summary is given (compaction.111: summaries
/// are counted with the model's counter and cut to their targets, so no wider margin is needed;
/// hysteresis, compaction.110, keeps the next compaction away).
constexpr double kAimShare = 0.95;

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

std::int64_t ContextWindowManager::target_tokens(const ModelSpec& model) const {
    // compaction.110: unset, the target is a fixed share of the trigger, well under it.
    const double t =
        settings_.compaction_target.value_or(kDefaultCompactionTargetShare * trigger());
    if (!(t > 0 && t <= trigger())) {
        throw Error(ErrorKind::kInvalidArgument,
                    "compaction_target must lie in (0, compaction_trigger = " +
                        std::to_string(trigger()) + "], got " + std::to_string(t));
    }
    return static_cast<std::int64_t>(std::floor(t * static_cast<double>(limit(model))));
}

CompactionReport ContextWindowManager::ensure_fits(ConversationContext& conversation,
                                                   const ModelSpec& model,
                                                   std::int64_t output_reserve) {
    const TokenCounter& counter = TokenCounter::for_model(model);
    CompactionReport report;
    report.limit = limit(model);
    report.trigger_tokens = trigger_tokens(model);
    report.target_tokens = target_tokens(model);
    report.hard_limit = model.max_context_tokens > 0 ? model.max_context_tokens : report.limit;
    report.output_reserve = output_reserve;
    report.tokens_before = counter.total_tokens(conversation);
    report.tokens_after = report.tokens_before;
    const std::int64_t hard_room = report.hard_limit - output_reserve;

    // compaction.101: a refusal carries the input it reached, the input it started from, the
    // reserve, the hard limit and the highest level run; the conversation is left as it was.
    auto overflow = [&](std::int64_t tokens, const std::string& after) {
        return ContextOverflowException(
            "conversation '" + conversation.conversation_id() + "': " + std::to_string(tokens) +
            " input tokens " + after + " (from " + std::to_string(report.tokens_before) + ") + " +
            std::to_string(output_reserve) + " reserved for the answer exceed the " +
            std::to_string(report.hard_limit) + "-token context of model '" + model.id +
            "'; the conversation is unchanged");
    };
    // compaction.101: the conversation fits when it is under the trigger AND input plus the
    // reserve fits the hard limit; the ladder climbs until both hold (or MAXIMUM has run).
    auto fits = [&](std::int64_t tokens) {
        return tokens <= report.trigger_tokens && tokens <= hard_room;
    };

    if (fits(report.tokens_before)) return report;
    // compaction.108: once the trigger is crossed, each level aims at the target.
    auto reaches_target = [&](std::int64_t tokens) {
        return tokens <= report.target_tokens && tokens <= hard_room;
    };
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

    // The aim sits a little under the target, and never above the room the reserve leaves.
    const std::int64_t aim =
        std::min(static_cast<std::int64_t>(kAimShare * static_cast<double>(report.target_tokens)),
                 hard_room);
    // compaction.116: the target is what a level aims at, not a reason to climb to the levels
    // that replace the dialogue's own words: once a level leaves the conversation at or under the
    // line halfway between the target and the trigger, the ladder stops there.
    const std::int64_t climb_line =
        report.target_tokens + (report.trigger_tokens - report.target_tokens) / 2;
    auto settles = [&](std::int64_t tokens) {
        return reaches_target(tokens) || (tokens <= climb_line && tokens <= hard_room);
    };
    for (CompactionLevel level : {CompactionLevel::kLight, CompactionLevel::kModerate,
                                  CompactionLevel::kAggressive, CompactionLevel::kMaximum}) {
        report.level = level;
        work.run_level(level, aim, std::min(report.target_tokens, hard_room), hard_room);
        if (settles(work.total())) break;
    }

    report.tokens_after = work.total();
    if (report.tokens_after > hard_room) {
        throw overflow(report.tokens_after,
                       std::string("after compaction up to ") + to_string(report.level));
    }
    report.accepted_above_trigger = report.tokens_after > report.trigger_tokens;
    if (!report.summaries.empty()) {
        // compaction.108: from the first message that changed, the old messages were the
        // cached prefix the next call writes again.
        const auto& old = conversation.messages();
        std::size_t same = 0;
        while (same < old.size() && same < work.msgs.size() && old[same].id == work.msgs[same].id &&
               old[same].blocks == work.msgs[same].blocks)
            ++same;
        for (std::size_t i = same; i < old.size(); ++i)
            report.cached_tokens_given_up +=
                counter.count_message(old[i], &conversation.artifacts());
        // A message rewritten in place keeps its own prefix; every one after it has a new one.
        const bool in_place =
            same < old.size() && same < work.msgs.size() && old[same].id == work.msgs[same].id;
        // wire.192: the answers from the first changed message on follow a new prefix.
        report.thinking_blocks_dropped =
            internal::drop_thinking_from(work.msgs, same + (in_place ? 1 : 0));
        conversation.replace_messages(std::move(work.msgs), work.origins);
        report.tokens_after = counter.total_tokens(conversation);
    }
    // compaction.106, compaction.108: the log says whether the target was met; wire.192: and how
    // many thinking blocks lost their prefix.
    NUCLEO_LOG_INFO(
        "compaction: conversation '{}': {} -> {} tokens at {} ({} summaries), target {} {}; {} "
        "thinking "
        "block(s) dropped (wire.192)",
        conversation.conversation_id(), report.tokens_before, report.tokens_after,
        to_string(report.level), report.summaries.size(), report.target_tokens,
        report.target_met() ? "met"
        : report.tokens_after <= climb_line
            ? "NOT met (compaction.116: under the halfway line "
              "to the trigger, the dialogue kept)"
            : "NOT met (accepted: input + reserve fit the hard limit)",
        report.thinking_blocks_dropped);
    return report;
}

}  // namespace nucleo
