// Per-model rate limiting of provider calls, before they go out.
//
// budget.6: the wired binding adds output_reserve(spec) to the
// conversation's input token count when pricing the rate-limiter reservation; Anthropic and Bedrock
// pre-debit max_tokens from their own TPM bucket at request time, so a local reservation smaller
// than max_tokens silently overflows the provider. So one call reserves 1 request and
// (input tokens + output reserve) tokens, and settles to what the provider reported afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace nucleo {

class CancellationToken;

/// Limits of one model; 0 means unlimited.
struct RateLimits {
    std::int64_t requests_per_minute = 0;
    std::int64_t tokens_per_minute = 0;
};

/// Two token buckets (requests and tokens) that refill continuously at their per-minute rate, up to
/// one minute's worth. Thread-safe; waiters park on a condition variable, never spin.
class RateLimiter {
public:
    using Clock = std::chrono::steady_clock;

    explicit RateLimiter(RateLimits limits, Clock::time_point start = Clock::now());

    /// How long from `now` until one request of `tokens` fits both buckets (zero when it fits now).
    /// Throws kInvalidArgument when `tokens` exceeds a minute's capacity: it could never fit.
    [[nodiscard]] std::chrono::milliseconds wait_needed(std::int64_t tokens, Clock::time_point now);

    /// Debits one request and `tokens` when they fit at `now`; false (nothing debited) otherwise.
    bool try_acquire(std::int64_t tokens, Clock::time_point now);

    /// Blocks until the reservation fits, then debits it. A cancelled token aborts the wait with
    /// kTransport "cancelled". Returns the tokens reserved (to settle later).
    std::int64_t acquire(std::int64_t tokens, const CancellationToken* cancel = nullptr);

    /// After the call: gives back what was reserved beyond what the provider reported using
    /// (never takes more: an over-use is the provider's to refuse next time).
    void settle(std::int64_t reserved_tokens, std::int64_t used_tokens);

    [[nodiscard]] const RateLimits& limits() const noexcept { return limits_; }

private:
    void refill(Clock::time_point now);

    RateLimits limits_;
    std::mutex mutex_;
    double request_level_;
    double token_level_;
    Clock::time_point last_refill_;
};

/// One RateLimiter per model id, created on first use.
class RateLimiterRegistry {
public:
    RateLimiter& for_model(const std::string& model_id, const RateLimits& limits);

private:
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<RateLimiter>> limiters_;
};

}  // namespace nucleo
