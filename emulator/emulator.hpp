// nucleo-emulator: shared types of the loopback provider emulator (docs/emulator.md). The HTTP
// library stays in main.cpp; everything else works on these plain values so each provider dialect
// is a pure function from a request to a response.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache_diagnostics.hpp"
#include "catalog.hpp"
#include "faults.hpp"
#include "prefix_cache.hpp"
#include "threads.hpp"

namespace nucleo::emulator {

/// Command-line settings. Defaults follow the providers: a 5-minute cache TTL (Anthropic's
/// "ephemeral" default, Bedrock's cachePoint default) and the minimum cacheable prefix each model
/// documents (caching.103); `--min-cacheable` sets one minimum for every model instead.
struct Options {
    std::string host = "127.0.0.1";
    int port = 0;  ///< 0 picks a free port
    std::string port_file;
    int cache_ttl_seconds = 300;
    int min_cacheable_tokens = -1;  ///< -1: the model's documented minimum
    int latency_ms = 0;             ///< added to every provider call
    /// A streamed answer stops this long halfway through its chunks (a slow model mid-answer).
    int stream_stall_ms = 0;
    bool verbose = false;
    /// `--catalog`: the model catalog file, "none" for no catalog, "" for the default one
    /// (catalog_path, wire.186).
    std::string catalog;
    /// Stop (as on SIGTERM) when the process that started the emulator dies (Linux prctl).
    bool exit_with_parent = false;
    /// `--diagnostics-capacity`: how many fingerprints of Anthropic cache diagnostics are kept,
    /// the oldest forgotten first (a bound on memory; a test sets it low to see one forgotten).
    int diagnostics_capacity = static_cast<int>(FingerprintStore::kDefaultCapacity);
    /// `--thread-ttl`: how long an Anthropic message thread lives after the last answer it stored
    /// (the page "Message threads": 5 minutes), on the emulator's clock (wire.203).
    int thread_ttl_seconds = ThreadStore::kDefaultTtlSeconds;
    /// `--thread-capacity`: how many answers of threads are kept, the oldest stored evicted first.
    int thread_capacity = static_cast<int>(ThreadStore::kDefaultCapacity);
};

/// One HTTP request as the dialects see it. Header names are lower-case.
struct Request {
    std::string method;
    std::string path;
    std::vector<std::string> path_params;  ///< e.g. the Bedrock modelId
    std::map<std::string, std::string> headers;
    std::map<std::string, std::string> query;
    std::string body;

    /// The header's value, or "" when absent.
    std::string header(std::string_view lower_name) const;
    bool has_header(std::string_view lower_name) const;
};

/// One HTTP response. A streamed response is written chunk by chunk (each chunk one SSE event or
/// one AWS event-stream message) so a client sees the first token before the last is sent.
struct Response {
    int status = 200;
    std::string content_type = "application/json";
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool streamed = false;
    std::vector<std::string> chunks;
};

/// Coarse error classes; each dialect renders them in its provider's own envelope and status.
enum class ErrorClass {
    kInvalidRequest,  ///< 400
    kAuthentication,  ///< 401 (Anthropic, OpenAI) / 403 (Bedrock)
    kRateLimited,     ///< 429, with retry-after
    kServer,          ///< 500
    kOverloaded,      ///< Anthropic 529 overloaded_error; OpenAI and Bedrock answer 503
};

/// Counters served by GET /stats (for tests and the demo).
struct Stats {
    std::atomic<std::int64_t> anthropic{0}, openai{0}, bedrock{0}, bedrock_stream{0},
        count_tokens{0}, gemini{0}, responses{0};
    std::atomic<std::int64_t> streams{0}, errors{0}, faults{0};
    std::atomic<std::int64_t> cache_writes{0}, cache_reads{0};
    std::atomic<std::int64_t> cache_write_tokens{0}, cache_read_tokens{0};
    /// The bytes of the request bodies received on POST /v1/messages (wire.205): what message
    /// threads save a client shows here.
    std::atomic<std::int64_t> request_bytes{0};
    void reset();
};

/// What every dialect shares: settings, the model catalog, the prefix cache, the fingerprints of
/// cache diagnostics, the message threads and the counters.
struct Context {
    Options options;
    ModelCatalog catalog;  ///< read once at start, then only read (wire.186)
    PrefixCache cache;
    FingerprintStore fingerprints;  ///< Anthropic cache diagnostics, keyed by answer id
    ThreadStore threads;            ///< Anthropic message threads, keyed by answer id
    Stats stats;
    FailFirstCounter fail_first;
};

/// A provider wire format. Implementations: anthropic.cpp, openai.cpp, bedrock.cpp, gemini.cpp,
/// responses.cpp.
class Dialect {
  public:
    virtual ~Dialect() = default;
    /// The provider's answer to a missing or malformed credential, or nullopt when acceptable.
    virtual std::optional<Response> check_auth(const Request& req) const = 0;
    /// An error in the provider's envelope with the provider's status code.
    /// An empty message takes the provider's usual text for the class.
    virtual Response error(ErrorClass cls, const std::string& message) const = 0;
    /// The class `fail-first=N` answers with when no status is given: the provider's usual
    /// transient failure (Anthropic 529 overloaded, the others 500).
    virtual ErrorClass transient_error() const { return ErrorClass::kServer; }
    /// The response header that carries the request id, and the id for the n-th call
    /// (channel.104): Anthropic `request-id`, OpenAI `x-request-id`, Bedrock `x-amzn-RequestId`.
    virtual std::pair<std::string, std::string> request_id(std::uint64_t n) const = 0;
    /// Parses, validates and answers a request whose faults have been applied by the router.
    virtual Response serve(const Request& req, const Faults& faults, Context& ctx) const = 0;
};

std::unique_ptr<Dialect> make_anthropic();
std::unique_ptr<Dialect> make_openai();
std::unique_ptr<Dialect> make_bedrock(bool streaming);
std::unique_ptr<Dialect> make_gemini();
std::unique_ptr<Dialect> make_responses();

/// Routes a request: health and stats, provider routes with authentication and faults.
class Router {
  public:
    explicit Router(Options options, ModelCatalog catalog = {});
    Response handle(const Request& req);
    const Options& options() const { return ctx_.options; }

  private:
    /// x-emulator-reply-first=N: whether this call is among the first N that get the canned
    /// answer (always, without the header).
    bool canned_call(const Request& req);
    Response provider_call(const Dialect& dialect, const Request& req);
    Response advance_clock(const Request& req);
    Response provider_answer(const Dialect& dialect, const Request& req);
    Response stats();

    Context ctx_;
    std::atomic<std::uint64_t> next_request_id_{1};
    std::unique_ptr<Dialect> anthropic_, openai_, bedrock_, bedrock_stream_, gemini_, responses_;
};

/// A JSON response with the given status.
Response json_response(int status, std::string body);

/// A provider error response; a 429 carries `retry-after: 1` as the providers send it.
Response error_response(ErrorClass cls, int status, std::string body);

/// `n` as `width` lower-case hex digits, zero-padded: the variable part of request ids.
std::string hex_id(std::uint64_t n, int width);

/// The minimum cacheable prefix for `model`: `--min-cacheable` when given, else its catalog
/// record's `caching.min_tokens` (`rules`, when the catalog has the model and the record names
/// one, wire.186), else the documented one (caching.103).
inline std::int64_t min_cacheable(const Options& options, const contract::ModelRules* rules,
                                  std::string_view model) {
    if (options.min_cacheable_tokens >= 0) return options.min_cacheable_tokens;
    if (rules != nullptr && rules->min_cache_tokens > 0) return rules->min_cache_tokens;
    return documented_min_cacheable(model);
}

/// Counts a request's cache activity in /stats.
void record_cache(Stats& stats, const CacheUsage& usage);

}  // namespace nucleo::emulator
