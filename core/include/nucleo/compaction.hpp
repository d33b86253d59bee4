// When a conversation outgrows its window: the ContextWindowManager and the compaction ladder.
//
// The rules are docs/spec/compaction.md: the comfort window and the trigger decide when compaction
// starts (compaction.1-4), the ladder LIGHT → MODERATE → AGGRESSIVE → MAXIMUM decides how much is
// summarized (compaction.10-16), and what must survive (objective, tools, artifact registry,
// messages marked compactable=false, artifact references, tool_use/tool_result pairs) survives
// (compaction.30-34). Only exhausting the hard context raises ContextOverflowException
// (compaction.21).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo {

/// The default comfort window (compaction.1).
inline constexpr std::int64_t kDefaultComfortContextTokens = 128000;
/// The default compaction trigger (compaction.3).
inline constexpr double kDefaultCompactionTrigger = 0.92;
/// compaction.110: without a compaction_target, a compaction brings the conversation down to this
/// share of the trigger (0.6 of the limit at the default trigger).
inline constexpr double kDefaultCompactionTargetShare = 0.65;

/// The ladder's levels (compaction.10), plus kNone for "nothing was needed".
enum class CompactionLevel { kNone, kLight, kModerate, kAggressive, kMaximum };
const char* to_string(CompactionLevel level) noexcept;

/// What a thinker sets: the comfort window and the
/// trigger (compaction.1, compaction.3). Unset falls through to the catalog entry, then the
/// defaults.
struct ContextWindowSettings {
    std::optional<std::int64_t> comfort_context_tokens;
    std::optional<double> compaction_trigger;
    /// compaction.108: the share of the limit a compaction brings the conversation down to, below
    /// the trigger (hysteresis), so that compactions are rare and each rewrites the cached prefix
    /// once for many calls. Unset: kDefaultCompactionTargetShare of the trigger (compaction.110).
    /// Must lie in (0, trigger]; the trigger itself turns hysteresis off.
    std::optional<double> compaction_target;
};

/// One summary compaction made (compaction.40).
struct CompactionSummary {
    CompactionLevel level = CompactionLevel::kNone;
    /// Ids of the messages it stands for (for a tool-result summary: the message holding it).
    std::vector<std::string> replaced;
    /// The id of the summary message, or of the message whose tool results were summarized.
    std::string message_id;
    std::int64_t source_tokens = 0;    ///< what was summarized, by the model's counter
    std::int64_t target_tokens = 0;    ///< what the summarizer was asked for
    std::int64_t summary_tokens = 0;   ///< what came back, by the model's counter
    std::int64_t reported_tokens = 0;  ///< what the summarizer said it wrote ("summary_tokens")
    bool cut = false;                  ///< cut to the target at MAXIMUM
    double cost = 0;                   ///< dollars the summarizer reported (0 for offline ones)
    std::string model;                 ///< the model the summarizer called, when it says
};

/// What ensure_fits did. tokens_* are get_total_tokens before and after.
struct CompactionReport {
    CompactionLevel level = CompactionLevel::kNone;  ///< the highest level run
    std::int64_t tokens_before = 0;
    std::int64_t tokens_after = 0;
    std::int64_t limit = 0;           ///< min(comfort window, the model's hard limit)
    std::int64_t trigger_tokens = 0;  ///< trigger × limit: compaction starts above this
    std::int64_t hard_limit = 0;      ///< the model's max_context_tokens
    std::int64_t output_reserve = 0;  ///< the room kept for the answer
    /// Summaries kept in the conversation, in the order they were made.
    std::vector<CompactionSummary> summaries;
    /// One line per summary that failed below MAXIMUM (its originals were kept).
    std::vector<std::string> failures;
    /// True when the ladder ended above the trigger but input + reserve fits the hard limit
    /// (compaction.21: accepted as long as the whole call fits the model's hard limit).
    bool accepted_above_trigger = false;

    /// compaction.108: what a compaction brings the conversation down to: target × limit, or
    /// trigger_tokens when no target is set.
    std::int64_t target_tokens = 0;
    /// compaction.108: the tokens of the messages from the first one this compaction changed to
    /// the end, as they were: the prefix a provider held in its cache that the next call writes
    /// again. 0 when nothing was summarized.
    std::int64_t cached_tokens_given_up = 0;
    /// wire.192: thinking blocks taken out of the answers after the first message this
    /// compaction changed: their prefix changed, and a model that binds a thinking block to its
    /// prefix refuses one sent after another prefix.
    std::int64_t thinking_blocks_dropped = 0;

    /// compaction.106: whether the ladder reached its target (tokens_after at or under
    /// target_tokens). False with accepted_above_trigger: the call fits, the target not.
    [[nodiscard]] bool target_met() const noexcept { return tokens_after <= target_tokens; }

    [[nodiscard]] double cost() const noexcept;
    [[nodiscard]] bool compacted() const noexcept { return !summaries.empty(); }
};

/// The ContextWindowManager: keeps a conversation inside its comfort window, walking the
/// compaction ladder when the trigger is crossed, and refusing a call that cannot fit.
///
/// The ladder (compaction.10-16), stopping at the first level after which the conversation is
/// at or under the trigger AND input plus the output reserve fits the hard limit (compaction.101:
/// a reserve larger than the room between the trigger and the hard limit keeps the ladder
/// climbing even under the trigger):
///  - LIGHT: only tool results, oldest first, the kRecentToolResultsKept most recent kept whole
///    and only as many as the aim needs (compaction.112). Each ToolResultBlock taken (above
///    kMinSummarizedTokens) gets its content replaced by one text summary; the block, its id and
///    its is_error stay, so pairing is untouched, and a pinned tool_use does not shield the
///    result that answers it; a compactable tool call next to a pinned result has its input
///    summarized in place as {"summary": "..."} (compaction.103).
///  - MODERATE: each exchange becomes one summary; the older the exchange, the shorter its
///    summary (targets weighted by 1 / (1 + age), age 0 the newest). An exchange is one answer of
///    the model and what our side sent back before the next answer (a call and its results fall
///    in one exchange), widened until no tool_use/tool_result pair (parallel calls included)
///    crosses its edge.
///  - AGGRESSIVE: everything compactable becomes one summary of the whole conversation.
///  - MAXIMUM: AGGRESSIVE's collapse with the target the fit needs, then the summaries cut to
///    their targets (a bounded cut at a token boundary), so it reaches a fit whenever the parts
///    compaction may not touch leave room for one (compaction.14).
///
/// What survives at every level: the objective, tools and artifact registry are never touched; a
/// message with compactable=false stays word for word, and so does the other side of any tool
/// pair it belongs to (a pair is summarized or kept together, never split); every
/// «artifact:TYPE~ID» reference in summarized text is in its summary (appended when the
/// summarizer dropped it); a conversation with compactable=false is never compacted. The most
/// recent message our side sent (and its pair) and the last message are kept by position at
/// every level (compaction.102): at AGGRESSIVE and MAXIMUM a question stays word for word and,
/// when the message holds tool results, those results get a summary of their own in place and
/// the call they answer stays (a large input summarized in place), so the model answers the
/// latest question and a compacted conversation ends with the message it ended with. The
/// collapse gives the same in-place summaries to every tool result and call input of a pair
/// group it cannot take because a pinned message is in it (compaction.103).
///
/// Summaries are outgoing, app-authored, compactable text messages that begin with
/// kSummaryHeader; one sits where the first message it replaces sat. Summaries at LIGHT and
/// MODERATE run in parallel (up to kMaxParallelSummaries at once); the summarizer instance is
/// thread-safe (plugin.h). Below MAXIMUM a summary that fails — the plugin's error — keeps the
/// original messages and the ladder moves up; a plugin failure at MAXIMUM fails the call (the
/// summarizer's error, with the level named). A summary that would count at least as many tokens
/// as what it replaces (framing included) is refused at every level and the originals stay
/// (compaction.104). A summary summarized again enters without its header, so the new summary
/// replaces it instead of nesting it (compaction.105). Summarizers count with the conversation's
/// own counter ("nucleo.host.tokens/1"); the core counts each summary again and cuts one over its
/// target to it, at every level (compaction.111).
///
/// After the ladder (compaction.21): still above the trigger is accepted while input plus the
/// output reserve fits the model's hard limit; otherwise ContextOverflowException, naming the
/// input reached and the input before, the reserve, the hard limit and the highest level run
/// (compaction.101). Every failure leaves the conversation exactly as it was: the ladder works
/// on a copy of the message list and
/// commits once (ConversationContext::replace_messages).
///
/// Thread rule: one ensure_fits per conversation at a time (the conversation's owner calls it);
/// one manager may serve many conversations concurrently.
class ContextWindowManager {
  public:
    static constexpr std::int64_t kMinSummarizedTokens = 64;
    static constexpr std::int64_t kMinSummaryTokens = 16;
    static constexpr std::size_t kMaxParallelSummaries = 8;
    /// compaction.112: LIGHT keeps this many of the most recent tool results whole.
    static constexpr std::size_t kRecentToolResultsKept = 3;
    static constexpr const char* kSummaryHeader = "[Summary of earlier messages]";

    explicit ContextWindowManager(SummarizerInstance summarizer,
                                  ContextWindowSettings settings = {});

    [[nodiscard]] const ContextWindowSettings& settings() const noexcept { return settings_; }

    /// compaction.1: thinker setting → the catalog's comfort_context_tokens → 128,000.
    [[nodiscard]] std::int64_t comfort_window(const ModelSpec& model) const;
    /// "The limit Nucleo keeps to is the smaller of the comfort window and the model's hard
    /// limit" (a model without max_context_tokens: the comfort window).
    [[nodiscard]] std::int64_t limit(const ModelSpec& model) const;
    /// compaction.3: thinker setting → 0.92. A setting outside (0, 1] is refused
    /// (kInvalidArgument).
    [[nodiscard]] double trigger() const;
    /// floor(trigger × limit): the token count above which compaction starts.
    [[nodiscard]] std::int64_t trigger_tokens(const ModelSpec& model) const;
    /// compaction.108: floor(target × limit), or trigger_tokens without a target. A target
    /// outside (0, trigger) is refused (kInvalidArgument).
    [[nodiscard]] std::int64_t target_tokens(const ModelSpec& model) const;

    /// The check before every call (compaction.4: a thinker checks this before every call to
    /// its model): counts the conversation, walks the ladder when it is above the trigger, and
    /// refuses with ContextOverflowException when input + `output_reserve` cannot fit
    /// model.max_context_tokens. Returns what it did; kNone and no summaries when nothing was
    /// needed.
    CompactionReport ensure_fits(ConversationContext& conversation, const ModelSpec& model,
                                 std::int64_t output_reserve);

  private:
    SummarizerInstance summarizer_;
    ContextWindowSettings settings_;
};

/// The host's model-call service behind the "nucleo.host.model_call/1" plugin extension
/// (plugin.h, ABI 1.1): what the `llm` summarizer asks a model through. A handler takes the
/// request document and returns the answer document (both in plugin.h); it throws nucleo::Error
/// on failure. Installed process-wide, since the extension is reached from any plugin.
using ModelCallHandler = std::function<std::string(std::string_view request_json)>;

/// Installs `handler` (empty: none) for the extension; returns the one it replaces. Without a
/// handler the extension answers NUCLEO_ERR_NOT_IMPLEMENTED naming what to install.
ModelCallHandler set_model_call_handler(ModelCallHandler handler);

/// One model call made through the extension, as recorded (compaction.40: recorded and costed
/// like any other call).
struct ModelCallRecord {
    std::string purpose;   ///< the request's "purpose" ("compaction" for summaries)
    std::string model_id;  ///< the catalog id called
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    double cost = 0;
};

/// The standard handler: a model of the requested grade (SMALL unless the request names another
/// grade or a catalog id) called through ProviderClient — rate-limited, retried, costed from the
/// catalog — as a single-turn conversation (system prompt as the objective, the prompt as the one
/// user message, the answer capped at max_output_tokens). Every call is recorded. Thread-safe.
class ModelCallService {
  public:
    ModelCallService(Config config, PluginLoader loader);
    ~ModelCallService();
    ModelCallService(const ModelCallService&) = delete;
    ModelCallService& operator=(const ModelCallService&) = delete;

    /// Request and answer documents of "nucleo.host.model_call/1" (plugin.h).
    std::string call(std::string_view request_json);
    /// Every call made so far, in order.
    [[nodiscard]] std::vector<ModelCallRecord> records() const;
    /// The handler to install with set_model_call_handler (holds this service by reference:
    /// uninstall before the service dies).
    ModelCallHandler handler();

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace nucleo
