// What a model call costs: its token usage and the record of one billed call (answers.105).
// Apart from provider_client.hpp so that the errors a call throws can carry the calls it billed
// (answers.109).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nucleo {

/// Token usage of one call, in Anthropic's split: `input_tokens` is the uncached part of the
/// input, cache reads and writes are counted apart (every dialect normalizes to this).
struct Usage {
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_write_tokens = 0;
    /// caching.108: the part of cache_write_tokens written at the 1-hour TTL (priced apart).
    std::int64_t cache_write_1h_tokens = 0;

    /// Everything the provider read: uncached input, cache reads and cache writes.
    [[nodiscard]] std::int64_t total_input_tokens() const noexcept {
        return input_tokens + cache_read_tokens + cache_write_tokens;
    }

    /// Adds `other`'s counts to these.
    Usage& operator+=(const Usage& other) noexcept {
        input_tokens += other.input_tokens;
        output_tokens += other.output_tokens;
        cache_read_tokens += other.cache_read_tokens;
        cache_write_tokens += other.cache_write_tokens;
        cache_write_1h_tokens += other.cache_write_1h_tokens;
        return *this;
    }
};

/// caching.131: why a call's cache missed, as its provider diagnosed it against the conversation's
/// previous answer (Anthropic's cache diagnostics). An empty `reason`: nothing diverged, or no
/// diagnosis was asked or given.
struct CacheMiss {
    /// The provider's word: model_changed, system_changed, tools_changed, messages_changed,
    /// previous_message_not_found, unavailable; "pending" when the provider had not finished the
    /// comparison when it answered; a word this release does not know is kept as it came.
    std::string reason;
    /// The provider's estimate of the input tokens that would have been read from the cache had
    /// the prefix matched; -1 when it gave none.
    std::int64_t missed_input_tokens = -1;
    /// caching.132: why Nucleo's own breakpoint plan for this call did not place the mark of the
    /// conversation's previous plan that reached farthest: "tail" (the conversation grew past
    /// it), "rewritten" (compaction or an edit changed earlier messages), "policy" (the cache
    /// policy changed), "head" (the system mark or the dialect's tool form changed),
    /// "caching_off" (this call's dialect or model takes no marks); "" when it did.
    std::string plan_moved;

    /// The provider's diagnosis says the cache missed.
    [[nodiscard]] bool missed() const noexcept { return !reason.empty(); }
};

/// How one billed model call ended (answers.105, answers.109).
enum class CallStatus {
    kAnswered,               ///< its answer is the response's
    kTruncated,              ///< cut at the output limit (or at the requested ceiling) and escalated
    kContextWindowExceeded,  ///< stopped at the context window: billed, nothing kept (answers.104)
    kRejected,  ///< its usage was readable but its answer was off the normalized shape (answers.106)
};

/// How a status reads in a report: "answered", "truncated", "context window exceeded",
/// "rejected".
[[nodiscard]] constexpr const char* to_string(CallStatus status) noexcept {
    switch (status) {
        case CallStatus::kAnswered: return "answered";
        case CallStatus::kTruncated: return "truncated";
        case CallStatus::kContextWindowExceeded: return "context window exceeded";
        case CallStatus::kRejected: return "rejected";
    }
    return "unknown";
}

/// One billed model call behind an LLMResponse (answers.105): the provider bills a truncated call
/// as much as the one that answered, so both are on the record.
struct CallAttempt {
    CallStatus status = CallStatus::kAnswered;
    std::string stop_reason;              ///< normalized, as the call's answer said it
    Usage usage;
    double cost = 0;                      ///< dollars, from the catalog entry's prices
    std::int64_t max_tokens = 0;          ///< the output reserve the call was sent with
    int http_attempts = 1;                ///< HTTP attempts of the call (transport retries)
    std::chrono::milliseconds latency{0};  ///< from the request out to the answer decoded
};

}  // namespace nucleo
