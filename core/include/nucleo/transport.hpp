// The core's HTTP transport: every provider call goes through it (abi.24: a
// plugin encodes, the core sends, the plugin decodes).
//
// One HttpTransport per provider instance: it keeps connections alive between calls (libcurl easy
// handles are pooled, so a conversation's calls reuse one TLS connection), applies timeouts,
// honours cancellation, retries 429 / 5xx / 529 with exponential backoff (Retry-After wins when the
// provider sends one) and signs Bedrock requests with SigV4 through libcurl's CURLOPT_AWS_SIGV4.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nucleo/request_body.hpp"

namespace nucleo {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

/// What a provider plugin's encoder produced (method, full URL, headers, body). The body may be
/// several pieces (caching.115), sent one after the other.
struct HttpRequest {
    std::string method = "POST";
    std::string url;
    HttpHeaders headers;
    RequestBody body;
};

/// What came back. `attempts` counts the tries the retry loop made (1 when the first succeeded).
struct HttpResponse {
    long status = 0;
    HttpHeaders headers;
    std::string body;
    int attempts = 1;

    /// The first header of that name (case-insensitive), if any.
    [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

/// A flag shared between the caller and a running call. cancel() makes the transfer abort at its
/// next progress tick and wakes a backoff wait at once; the call throws kTransport "cancelled".
class CancellationToken {
public:
    void cancel();
    [[nodiscard]] bool cancelled() const noexcept { return cancelled_.load(); }
    /// Waits up to `d` or until cancelled; true when cancelled. Used for backoff (no spinning).
    bool wait_for(std::chrono::milliseconds d) const;

private:
    std::atomic<bool> cancelled_{false};
    mutable std::mutex mutex_;
    mutable std::condition_variable cv_;
};

/// Retry policy for one call. Statuses 429, 500, 502, 503, 504 and 529 and connection failures are
/// retried; everything else (400, 401, 404, ...) is returned at once, since repeating a request the
/// provider refused cannot change the answer.
struct RetryPolicy {
    int max_attempts = 4;
    std::chrono::milliseconds initial_backoff{500};
    double multiplier = 2.0;
    std::chrono::milliseconds max_backoff{20000};
    /// limits.140: a Retry-After up to this long is waited out (within the call's deadline); a
    /// longer one fails the call at once, kRateLimited (kOverloaded for a 5xx), naming the wait
    /// asked and this cap, instead of parking the turn.
    std::chrono::milliseconds max_retry_after{60000};
};

/// AWS SigV4 signing parameters (Bedrock). Empty `access_key_id` means unsigned.
struct AwsSigV4 {
    std::string provider = "aws:amz";  ///< libcurl's provider1[:provider2]
    std::string region;
    std::string service = "bedrock";
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;
};

/// The bounds of one call (limits.101-104), set per provider in nucleo.yaml
/// (`providers.<name>.transport`). Each one hit is a kTransport error that names the limit, its
/// value and the host ("no byte for 30 s from api.example.com").
struct TransportLimits {
    /// Establishing the connection (TCP and TLS), per attempt.
    std::chrono::milliseconds connect_timeout{10000};
    /// No byte received for this long (headers or body, plain or streamed answer) ends the
    /// attempt. A plain answer's first byte counts too: a long non-streamed generation needs an
    /// idle timeout above its generation time (or a streamed call, which sends keep-alive events).
    std::chrono::milliseconds idle_timeout{120000};
    /// The whole call, every attempt and every backoff wait included: retries never multiply a
    /// stall past it.
    std::chrono::milliseconds deadline{600000};
    /// The largest answer body kept; a larger one is cut at this size (never buffered whole) and
    /// the call fails without a retry.
    std::size_t max_response_bytes = std::size_t{32} << 20;
};

struct TransportOptions {
    TransportLimits limits;
    RetryPolicy retry;
    std::optional<AwsSigV4> sigv4;
    /// Upper bound on pooled connections kept alive for reuse.
    std::size_t max_idle_connections = 8;
    /// How a wait between attempts (a backoff or a Retry-After) is spent: given the delay and the
    /// call's cancellation token (nullptr when none), it returns true when the call was cancelled
    /// meanwhile. Unset, the default: the thread waits on the token, or sleeps. A test sets it to
    /// see every wait without spending it (limits.141).
    std::function<bool(std::chrono::milliseconds delay, const CancellationToken* cancel)> wait;
};

/// Receives each chunk of a streamed body as it arrives (server-sent events, event streams).
using BodyChunkCallback = std::function<void(std::string_view chunk)>;

/// One call's own bounds and its reader of a streamed answer (the MCP client's Streamable HTTP
/// transport, mcp.42 and mcp.45): a request waits as long as its caller allows, and a stream of
/// events is read as it comes and left as soon as the caller has what it waited for.
struct SendControl {
    /// Replace TransportLimits::deadline and idle_timeout for this call when set.
    std::optional<std::chrono::milliseconds> deadline;
    std::optional<std::chrono::milliseconds> idle_timeout;
    /// Given the status and headers once they are complete (before the first byte of the body).
    std::function<void(const HttpResponse& head)> on_head;
    /// Given each chunk of the body, which is then not kept in HttpResponse::body (the reader
    /// bounds what it keeps). Returning false ends the transfer there: send returns the response
    /// as it stands, not an error.
    std::function<bool(std::string_view chunk)> on_chunk;
};

/// The delay before retry `attempt` (1-based: the wait after the first failure is attempt 1):
/// Retry-After when given (capped by policy.max_retry_after; HttpTransport fails the call instead
/// of waiting out a longer one, limits.140), else exponential backoff capped at max_backoff.
/// Deterministic: no jitter, so tests and logs can say exactly what happened.
std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int attempt,
                                      std::optional<std::chrono::milliseconds> retry_after);

/// Parses a Retry-After value: delta-seconds ("2", "0.5") or an HTTP date. nullopt when absent or
/// unparseable. (The transport prefers Anthropic's `retry-after-ms` header when present.)
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

/// True for statuses worth retrying (429, 500, 502, 503, 504, 529).
bool is_retryable_status(long status) noexcept;

class HttpTransport {
public:
    explicit HttpTransport(TransportOptions options = {});
    ~HttpTransport();
    HttpTransport(const HttpTransport&) = delete;
    HttpTransport& operator=(const HttpTransport&) = delete;

    /// Sends with retries. Returns the last response whatever its status (the plugin's decoder maps
    /// a provider error body to its kind); throws nucleo::Error kTransport when no response could
    /// be had (connection refused after every retry, timeout, cancellation). With `on_chunk`, the
    /// body is also streamed chunk by chunk (a streamed call is retried only before its first
    /// chunk arrived). Thread-safe: concurrent calls use separate pooled handles.
    HttpResponse send(const HttpRequest& request, const CancellationToken* cancel = nullptr,
                      const BodyChunkCallback& on_chunk = {});
    /// Sends with `control`'s bounds and reader (see SendControl); otherwise as above.
    HttpResponse send(const HttpRequest& request, const CancellationToken* cancel,
                      const SendControl& control);

    [[nodiscard]] const TransportOptions& options() const noexcept { return options_; }

private:
    struct Pool;
    HttpResponse send_impl(const HttpRequest& request, const CancellationToken* cancel,
                           const BodyChunkCallback& on_chunk, const SendControl* control);
    TransportOptions options_;
    std::unique_ptr<Pool> pool_;
};

}  // namespace nucleo
