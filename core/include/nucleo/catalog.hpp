// The model catalog: what Nucleo knows of each model it may call (config/models.yaml).
//
// The seat's declarations (conversation.20) and the output budget (budget.1): a seat declares a
// Grade (which model), a Depth (how much thinking) and an OutputDeclaration (an OutputSize rung or
// a raw token count); the catalog entry (ModelSpec) translates rungs and depths into token budgets
// and caps them at the model's ceiling. comfort_context_tokens is the entry's comfort window
// (compaction.1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo {

/// Which class of model a seat asks for.
enum class Grade { kSmall, kMedium, kLarge };

/// How much the model thinks before answering. kImmediate is thinking off (conversation.24).
enum class Depth { kImmediate, kStandard, kDeep };

/// A rung of answer size, translated by the catalog entry into tokens.
enum class OutputSize { kShort, kMedium, kLong, kExtended };

/// Accepted inputs beyond text (conversation.22: images, documents).
enum class Input { kImages, kDocuments };

const char* to_string(Grade g) noexcept;
const char* to_string(Depth d) noexcept;
const char* to_string(OutputSize s) noexcept;
const char* to_string(Input i) noexcept;
/// Parse the upper-case names used in YAML and the conversation document ("SMALL", "IMMEDIATE",
/// "SHORT", "IMAGES"); nullopt for anything else.
std::optional<Grade> parse_grade(std::string_view s) noexcept;
std::optional<Depth> parse_depth(std::string_view s) noexcept;
std::optional<OutputSize> parse_output_size(std::string_view s) noexcept;
std::optional<Input> parse_input(std::string_view s) noexcept;

/// Prices in US dollars per million tokens.
struct Prices {
    double input = 0;
    double output = 0;
    double cache_write = 0;
    double cache_read = 0;
    /// caching.108: the 1-hour cache write; nullopt: twice the input price, as Anthropic and
    /// Bedrock price it.
    std::optional<double> cache_write_1h = std::nullopt;
    [[nodiscard]] double cache_write_1h_price() const noexcept {
        return cache_write_1h.value_or(2 * input);
    }
};

/// catalog.2: where a model stands at its provider. A retired model is refused before anything is
/// sent; a deprecated one works, with one warning per process, until its shutdown date.
enum class ModelStatus { kActive, kDeprecated, kRetired };

/// catalog.4: the thinking forms a provider offers (Anthropic's `thinking.type`): a manual budget
/// (`enabled`), the model's own depth steered by an effort level (`adaptive`), thinking only
/// between tool calls (`between_tools`), and none (`disabled`).
enum class ThinkingForm { kEnabled, kAdaptive, kBetweenTools, kDisabled };

const char* to_string(ModelStatus s) noexcept;
const char* to_string(ThinkingForm f) noexcept;
std::optional<ModelStatus> parse_model_status(std::string_view s) noexcept;
/// "enabled", "adaptive", "between_tools", "disabled"; nullopt for anything else.
std::optional<ThinkingForm> parse_thinking_form(std::string_view s) noexcept;

/// catalog.5: what one depth asks of the model, per its record (`thinking.depth`).
struct DepthThinking {
    enum class Kind {
        kNone,         ///< nothing thinking-related is sent
        kDisabled,     ///< the `disabled` form is sent
        kBetweenTools, ///< the `between_tools` form
        kBudget,       ///< the `enabled` form with the depth's thinking budget
        kEffort,       ///< an effort level: `adaptive` + effort (Anthropic), `reasoning_effort` (OpenAI)
    };
    Kind kind = Kind::kNone;
    std::string effort;  ///< kEffort: the level, one of the record's `efforts`
};

/// catalog.4: how a model thinks, as its provider publishes it.
struct ThinkingRecord {
    std::vector<ThinkingForm> forms;        ///< the forms it accepts; empty: no thinking parameter
    bool always = false;                    ///< thinks whether asked or not (spends output tokens)
    std::vector<std::string> efforts;       ///< the effort levels it accepts, lowest first
    std::string default_effort;             ///< what it uses when none is sent
    std::vector<std::string> display;       ///< the `display` values it accepts
    bool bound_to_prefix = false;           ///< a thinking block sent back must keep its prefix
    std::map<Depth, DepthThinking> depth;   ///< what each depth sends; a depth left out: kNone

    [[nodiscard]] bool accepts(ThinkingForm form) const;
    [[nodiscard]] bool accepts_effort(std::string_view effort) const;
    /// The depth's mapping (kNone when the record does not name it).
    [[nodiscard]] DepthThinking for_depth(Depth d) const;
};

/// catalog.3: where the record's figures were read.
struct ModelSource {
    std::vector<std::string> urls;
    std::string read;         ///< the date they were read, YYYY-MM-DD
    std::string third_party;  ///< which figures only a third party states, or empty
};

/// catalog.7: other rates that apply to a whole call whose prompt (input, cache reads and cache
/// writes together) is above `above_prompt_tokens`.
struct PriceTier {
    std::int64_t above_prompt_tokens = 0;
    Prices prices;
};

/// One catalog entry.
struct ModelSpec {
    std::string id;                 ///< catalog id, what --model takes
    std::string provider;           ///< provider instance name in nucleo.yaml
    std::string wire_model;         ///< the model name the provider's API takes
    Grade grade = Grade::kMedium;
    std::int64_t max_context_tokens = 0;
    std::int64_t max_output_tokens = 0;
    std::optional<std::int64_t> comfort_context_tokens;
    std::map<OutputSize, std::int64_t> output_budget;   ///< tokens per rung
    std::map<Depth, std::int64_t> thinking_budget;      ///< reasoning tokens per depth (0: none)
    bool supports_caching = false;
    bool native_tools = true;
    std::int64_t min_cacheable_tokens = 0;
    /// caching.109: whether the provider keeps a cache entry for 1 hour on this model (catalog
    /// `cache_ttls: [5m, 1h]`); every caching model offers the 5-minute TTL. A provider asking
    /// for a 1-hour head on a model without it gets the 5-minute head.
    bool cache_ttl_1h = false;
    Prices prices;
    std::vector<Input> accepted_inputs;
    std::string token_counter = "o200k_base";  ///< the counter's name (tokens.md)
    /// tokens.103: the model's tokens per token of its counter (Claude 4.7 and later count about
    /// 30% more than the tokenizer anthropic_approx was calibrated on); 1 when not given.
    double token_calibration = 1.0;
    ModelStatus status = ModelStatus::kActive;
    std::string shutdown;     ///< deprecated: the date it stops answering (YYYY-MM-DD)
    std::string retired_on;   ///< retired: the date it stopped
    std::string replacement;  ///< deprecated or retired: the catalog id to use instead
    ModelSource source;
    ThinkingRecord thinking;
    /// catalog.6: requests the model refuses: non-default sampling parameters, an assistant
    /// prefill as the last turn, a forced tool choice, function tools with reasoning (an effort
    /// other than `none`).
    bool refuses_sampling = false;
    bool refuses_prefill = false;
    bool refuses_forced_tool_use = false;
    bool refuses_tools_with_reasoning = false;
    /// catalog.9: the model takes a `role: "system"` message inside `messages`
    /// (`mid_conversation: [system_messages]`), and tool additions and removals in it
    /// (`tool_changes`, tools.103).
    bool system_messages = false;
    bool tool_changes = false;
    /// wire.205: the provider holds the conversation as a thread the next call may continue
    /// (catalog `threads: true`; Anthropic's message threads, beta `message-threads-2026-08-12`).
    bool threads = false;
    /// caching.116: whether cache breakpoints are written (`explicit`) or the provider caches on its
    /// own (`automatic`); `none` for a model without caching.
    std::string cache_breakpoints = "explicit";
    /// caching.131: the provider diagnoses a cache miss against the previous answer it names
    /// (catalog `caching.diagnostics: true`; Anthropic's `diagnostics.previous_message_id`).
    bool cache_diagnostics = false;
    std::vector<PriceTier> price_tiers;  ///< catalog.7, by ascending threshold
    /// The account's rate limits for this model (0: unlimited). Every call reserves one request
    /// and its input tokens plus the output reserve (budget.6).
    std::int64_t requests_per_minute = 0;
    std::int64_t tokens_per_minute = 0;

    /// budget.1: a rung's token budget, capped at max_output_tokens.
    [[nodiscard]] std::int64_t output_budget_for(OutputSize rung) const;
    /// budget.5: the depth's thinking budget; 0 when the depth books no reasoning.
    [[nodiscard]] std::int64_t thinking_budget_for(Depth depth) const;
    [[nodiscard]] bool accepts(Input input) const;
    /// catalog.7: the prices of a call whose prompt is `prompt_tokens` (the highest tier whose
    /// threshold it passes, else the base prices).
    [[nodiscard]] const Prices& prices_for(std::int64_t prompt_tokens) const;
    /// catalog.5: what the depth sends. A spec built in code without a thinking record (no forms,
    /// efforts or depth mapping) sends the `enabled` form at every depth but IMMEDIATE that books a
    /// positive thinking budget, as the legacy `thinking_budget:` key reads.
    [[nodiscard]] DepthThinking thinking_at(Depth depth) const;
    /// catalog.5: whether the call thinks at this depth whatever is sent (always-thinking models).
    [[nodiscard]] bool thinks_at(Depth depth) const;
    /// Cost in dollars of one call's usage under this entry's prices, at the tier its prompt
    /// (input + cache writes + cache reads) reaches (catalog.7); `cache_write_1h_tokens`
    /// (part of `cache_write_tokens`) are priced at the 1-hour write price (caching.108).
    [[nodiscard]] double cost(std::int64_t input_tokens, std::int64_t output_tokens,
                              std::int64_t cache_write_tokens, std::int64_t cache_read_tokens,
                              std::int64_t cache_write_1h_tokens = 0) const;
};

/// catalog.2: whether `model` may be called on `today` (YYYY-MM-DD; empty: the current UTC date).
/// A retired model, and a deprecated one on or after its shutdown date, are refused with an
/// Error of kind kInvalidArgument naming the date and the replacement, before anything is sent. A
/// deprecated one before its shutdown is logged once per process and model, at warn, with the date.
void check_model_status(const ModelSpec& model, std::string_view today = {});

}  // namespace nucleo
