// Every model call observable: one structured record per call and per HTTP attempt (obs.101),
// logged at info and delivered to a host callback (obs.102), and the progress of a call while
// its caller waits (obs.104).
//
// A *call* is one request of ProviderClient::call as the provider bills it (a truncation
// escalation is a second call); an *attempt* is one HTTP exchange of that call (the transport
// retries 429 / 5xx / connection failures, so a call has one attempt or more).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nucleo {

/// obs.101: what one model call or one of its HTTP attempts did. Attribute names for export are
/// those of the OpenTelemetry GenAI semantic conventions (to_otel_attributes_json).
struct CallRecord {
    enum class Kind { kCall, kAttempt };
    Kind kind = Kind::kCall;
    std::string provider;        ///< the provider instance (nucleo.yaml `providers.<name>`)
    std::string provider_system; ///< the GenAI system: anthropic, openai, aws.bedrock, or the plugin
    std::string model;           ///< the catalog id called
    std::string wire_model;      ///< the model the request named
    std::string response_model;  ///< the model that answered, when the answer said (calls only)
    std::string conversation_id;
    /// "ok" (an answer was decoded, or for an attempt an HTTP response below 400), else "error".
    std::string status = "ok";
    long http_status = 0;        ///< 0 when no HTTP response came (connection failure)
    /// The kind of failure when status is "error": the HTTP status ("429"), the error kind
    /// ("transport", "protocol", ...) or "truncated" / "context_window_exceeded" for a billed
    /// call that was not kept.
    std::string error_type;
    std::string error_message;   ///< one line, for a failed call or attempt
    std::chrono::milliseconds latency{0};
    int attempt = 1;             ///< attempts: which one (1-based); calls: how many were made
    int max_attempts = 1;        ///< the retry policy's bound
    /// The provider's request id (request-id, x-request-id or x-amzn-RequestId), "" when none.
    std::string request_id;
    std::string stop_reason;     ///< normalized (calls that were answered)
    std::int64_t input_tokens = 0;        ///< calls only: the uncached input
    std::int64_t output_tokens = 0;
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_write_tokens = 0;
    double cost = 0;             ///< dollars from the catalog's prices (calls only)
    /// caching.131: the provider's diagnosis of a cache miss (calls only; empty: none).
    std::string cache_miss_reason;
    std::int64_t cache_missed_input_tokens = -1;  ///< its estimate; -1 when none
    /// caching.132: why Nucleo's own plan moved its farthest mark (calls only; empty: it did not).
    std::string cache_plan_moved;
    /// wire.211: what the call did with the provider's thread ("" none, "create", "continue",
    /// "replay"; calls only).
    std::string thread;
    /// answers.110: answer blocks of another wire family left out of the request (calls only).
    std::size_t provider_blocks_dropped = 0;
};

/// The record's attributes as one JSON object, named after the OpenTelemetry GenAI semantic
/// conventions (gen_ai.*, error.type, http.response.status_code) and nucleo.* for what they do
/// not name (obs.103).
[[nodiscard]] std::string to_otel_attributes_json(const CallRecord& record);

/// The record as one log line: `gen_ai call` or `gen_ai attempt`, then key=value pairs.
[[nodiscard]] std::string to_log_text(const CallRecord& record);

/// obs.102: receives every record, on the thread that made the call, right after the call or the
/// attempt ended. It must not block for long (the call waits) and should not throw: a throw is
/// caught and logged, never fails the call.
using CallRecordObserver = std::function<void(const CallRecord&)>;

/// Installs `observer` for the whole process (empty: none); returns the one it replaces.
CallRecordObserver set_call_record_observer(CallRecordObserver observer);

/// obs.104: why a caller is waiting, told as it happens.
struct CallProgress {
    enum class Kind {
        kConnecting,     ///< attempt `attempt` of `max_attempts` is being sent
        kRateLimitWait,  ///< the client's own rate limiter holds the call for `wait`
        kRetryWait,      ///< attempt `attempt - 1` failed (`http_status`, or `error`); the next
                         ///< one starts after `wait`
    };
    Kind kind = Kind::kConnecting;
    std::string provider;
    std::string model;
    int attempt = 1;
    int max_attempts = 1;
    long http_status = 0;
    std::string error;
    std::chrono::milliseconds wait{0};
};

/// A short sentence for a status line: "connecting to anthropic (claude-sonnet-5-5)",
/// "rate limit: waiting 3 s", "rate limited (429): retry 2 of 4 in 1 s".
[[nodiscard]] std::string describe(const CallProgress& progress);

/// Receives progress on the calling thread; the same rules as CallRecordObserver.
using CallProgressObserver = std::function<void(const CallProgress&)>;

/// Installs `observer` for the whole process (empty: none); returns the one it replaces.
CallProgressObserver set_call_progress_observer(CallProgressObserver observer);

/// The value every request's User-Agent carries: "nucleo/<version>" (obs.105).
[[nodiscard]] std::string user_agent();

}  // namespace nucleo
