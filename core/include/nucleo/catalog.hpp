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
    std::string token_counter = "o200k_base";  ///< the counter's name (tokens issue)
    /// The account's rate limits for this model (0: unlimited). Every call reserves one request
    /// and its input tokens plus the output reserve (budget.6).
    std::int64_t requests_per_minute = 0;
    std::int64_t tokens_per_minute = 0;

    /// budget.1: a rung's token budget, capped at max_output_tokens.
    [[nodiscard]] std::int64_t output_budget_for(OutputSize rung) const;
    /// budget.5: the depth's thinking budget; 0 when the depth books no reasoning.
    [[nodiscard]] std::int64_t thinking_budget_for(Depth depth) const;
    [[nodiscard]] bool accepts(Input input) const;
    /// Cost in dollars of one call's usage under this entry's prices; `cache_write_1h_tokens`
    /// (part of `cache_write_tokens`) are priced at the 1-hour write price (caching.108).
    [[nodiscard]] double cost(std::int64_t input_tokens, std::int64_t output_tokens,
                              std::int64_t cache_write_tokens, std::int64_t cache_read_tokens,
                              std::int64_t cache_write_1h_tokens = 0) const;
};

}  // namespace nucleo
