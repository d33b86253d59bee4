#include "nucleo/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "llm/call_records.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {
namespace {

constexpr double kMillisPerMinute = 60000.0;

/// Milliseconds until `level` reaches `need` at `per_minute`; 0 when unlimited or already there.
double millis_until(double level, double need, std::int64_t per_minute) {
    if (per_minute <= 0 || level >= need) return 0;
    return std::ceil((need - level) * kMillisPerMinute / static_cast<double>(per_minute));
}

}  // namespace

RateLimiter::RateLimiter(RateLimits limits, Clock::time_point start)
    : limits_(limits),
      request_level_(static_cast<double>(limits.requests_per_minute)),
      token_level_(static_cast<double>(limits.tokens_per_minute)),
      last_refill_(start) {}

void RateLimiter::refill(Clock::time_point now) {
    if (now <= last_refill_) return;
    const double elapsed_ms = std::chrono::duration<double, std::milli>(now - last_refill_).count();
    if (limits_.requests_per_minute > 0) {
        const auto cap = static_cast<double>(limits_.requests_per_minute);
        request_level_ = std::min(cap, request_level_ + elapsed_ms * cap / kMillisPerMinute);
    }
    if (limits_.tokens_per_minute > 0) {
        const auto cap = static_cast<double>(limits_.tokens_per_minute);
        token_level_ = std::min(cap, token_level_ + elapsed_ms * cap / kMillisPerMinute);
    }
    last_refill_ = now;
}

std::chrono::milliseconds RateLimiter::wait_needed(std::int64_t tokens, Clock::time_point now) {
    if (limits_.tokens_per_minute > 0 && tokens > limits_.tokens_per_minute) {
        throw Error(ErrorKind::kInvalidArgument,
                    "a reservation of " + std::to_string(tokens) + " tokens exceeds the model's limit of " +
                        std::to_string(limits_.tokens_per_minute) + " tokens per minute; it can never be admitted");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    refill(now);
    const double wait = std::max(millis_until(request_level_, 1.0, limits_.requests_per_minute),
                                 millis_until(token_level_, static_cast<double>(tokens), limits_.tokens_per_minute));
    return std::chrono::milliseconds(static_cast<std::int64_t>(wait));
}

bool RateLimiter::try_acquire(std::int64_t tokens, Clock::time_point now) {
    if (wait_needed(tokens, now).count() > 0) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    refill(now);
    const bool requests_ok = limits_.requests_per_minute <= 0 || request_level_ >= 1.0;
    const bool tokens_ok = limits_.tokens_per_minute <= 0 || token_level_ >= static_cast<double>(tokens);
    if (!requests_ok || !tokens_ok) return false;  // another thread took it in between
    if (limits_.requests_per_minute > 0) request_level_ -= 1.0;
    if (limits_.tokens_per_minute > 0) token_level_ -= static_cast<double>(tokens);
    return true;
}

std::int64_t RateLimiter::acquire(std::int64_t tokens, const CancellationToken* cancel) {
    for (;;) {
        const auto now = Clock::now();
        if (try_acquire(tokens, now)) return tokens;
        const auto wait = std::max(wait_needed(tokens, now), std::chrono::milliseconds(1));
        internal::rate_limit_waiting(wait);  // obs.104
        if (cancel != nullptr) {
            if (cancel->wait_for(wait)) throw Error(ErrorKind::kTransport, "rate-limit wait cancelled");
        } else {
            std::this_thread::sleep_for(wait);
        }
    }
}

void RateLimiter::settle(std::int64_t reserved_tokens, std::int64_t used_tokens) {
    if (limits_.tokens_per_minute <= 0 || used_tokens >= reserved_tokens) return;
    std::lock_guard<std::mutex> lock(mutex_);
    token_level_ = std::min(static_cast<double>(limits_.tokens_per_minute),
                            token_level_ + static_cast<double>(reserved_tokens - used_tokens));
}

RateLimiter& RateLimiterRegistry::for_model(const std::string& model_id, const RateLimits& limits) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = limiters_[model_id];
    if (!slot) slot = std::make_unique<RateLimiter>(limits);
    return *slot;
}

}  // namespace nucleo
