// The hooks through which one model call becomes observable (obs.101, obs.104): the provider
// client opens a CallObservation for each call; the transport and the rate limiter, running on
// the same thread, report each HTTP attempt and each wait to it. Without an open observation the
// hooks do nothing.
#pragma once

#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/catalog.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/transport.hpp"
#include "nucleo/usage.hpp"

namespace nucleo::internal {

/// One call being observed on this thread; nests (the innermost is the current one).
class CallObservation {
public:
    /// `billed`: the provider client's record of billed calls; the entry this call adds to it (if
    /// any) gives the call record its usage, cost and stop reason.
    CallObservation(std::string provider, std::string plugin, const ModelSpec& model,
                    std::string conversation_id, int max_attempts,
                    const std::vector<CallAttempt>& billed);
    ~CallObservation();
    CallObservation(const CallObservation&) = delete;
    CallObservation& operator=(const CallObservation&) = delete;

    /// The call answered: emits its record with the model that answered, the provider's
    /// diagnosis of a cache miss (caching.131), the provider blocks left out (answers.110) and
    /// what the call did with the provider's thread (wire.211).
    void succeeded(std::string_view response_model, const CacheMiss& cache_miss = {},
                   std::size_t provider_blocks_dropped = 0, std::string_view thread = {});
    /// The call failed with the exception in flight: emits its record.
    void failed(const std::exception& e);

    // Reported by the transport and the rate limiter through the free functions below.
    void attempt_started(int attempt, int max_attempts);
    void attempt_ended(int attempt, int max_attempts, long status, const HttpHeaders& headers,
                       std::chrono::milliseconds latency, std::string_view error);
    void waiting(CallProgress progress);

private:
    void emit_call(const std::string& status, std::string error_type, std::string error_message,
                   std::string_view response_model);

    CallRecord base_;
    const std::vector<CallAttempt>& billed_;
    std::size_t billed_before_;
    std::chrono::steady_clock::time_point started_;
    int attempts_ = 0;          ///< attempts that ended
    int started_attempts_ = 0;  ///< attempts the transport began
    long last_status_ = 0;
    std::string last_request_id_;
    CallObservation* outer_;
};

/// The transport's reports; no-ops when no call is observed on this thread.
void attempt_started(int attempt, int max_attempts);
void attempt_ended(int attempt, int max_attempts, long status, const HttpHeaders& headers,
                   std::chrono::milliseconds latency, std::string_view error);
void retry_waiting(int next_attempt, int max_attempts, long status, std::string_view error,
                   std::chrono::milliseconds wait);
/// The rate limiter's report.
void rate_limit_waiting(std::chrono::milliseconds wait);

/// The provider's request id among response headers: request-id, x-request-id, x-amzn-RequestId
/// (case-insensitive); "" when none.
std::string provider_request_id(const HttpHeaders& headers);

}  // namespace nucleo::internal
