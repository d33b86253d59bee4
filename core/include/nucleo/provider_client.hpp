// One model call, end to end: prepare (core) → encode (plugin) → send (core transport) → decode
// (plugin) → validate and append (core).
//
// The data flow of one call (channel.1, abi.24), the output budget (budget.1-8) and the cache
// metrics (caching.9): the core resolves the output budget and the reserve, prices the rate-limiter
// reservation (input tokens plus the output reserve), attaches credentials, retries, escalates a
// truncated answer once, and computes the call's cost from the catalog. The plugin only translates.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/budget.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"
#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/rate_limiter.hpp"
#include "nucleo/transport.hpp"
#include "nucleo/usage.hpp"

namespace nucleo {

/// The normalized stop reasons (answers.101): why the model stopped, the same words on every
/// dialect. end_turn (a whole answer), max_tokens (cut at the output limit), tool_use (it waits for
/// tool results), stop_sequence, pause_turn (a long server-side turn paused; send it back to go
/// on), refusal (the model declined), content_filter (the provider's filter stopped or blanked the
/// answer), context_window_exceeded (the input left no room to answer), other (a reason the
/// dialect has no word for), compaction (the provider compacted the conversation into a block of
/// its own and sampled nothing after it; answers.111).
inline constexpr std::array<std::string_view, 10> kStopReasons = {
    "end_turn",       "max_tokens",              "tool_use", "stop_sequence", "pause_turn",
    "refusal",        "content_filter",          "context_window_exceeded",   "other",
    "compaction"};

/// True when `stop_reason` is one of kStopReasons.
[[nodiscard]] bool known_stop_reason(std::string_view stop_reason) noexcept;

/// caching.9, tokens.15: the provider's own numbers for one call belong here, never to the
/// conversation.
struct LLMResponse {
    /// The IncomingMessage appended to the conversation. When `appended` is false (an empty
    /// answer, answers.102) it holds the blocks the answer had (at most thinking or blank text)
    /// and no id: nothing was stored.
    Message message;
    std::string stop_reason;  ///< normalized: one of kStopReasons
    /// The totals over `calls`: every billed call of this response, the truncated ones included.
    Usage usage;
    std::string model;              ///< the wire model that answered (answers.113)
    std::string model_id;           ///< the catalog id it was called as
    std::int64_t max_tokens = 0;    ///< the output reserve sent as the wire maximum
    double cost = 0;                ///< dollars over `calls`, from the catalog entry's prices
    int attempts = 1;               ///< HTTP attempts of the final call (retries included)
    bool escalated = false;         ///< a truncation escalation happened before this answer
    /// False when the answer was empty (no tool call and no text that is not blank): nothing was
    /// appended to the conversation (answers.102).
    bool appended = true;
    /// Every billed call, in order: a truncated call escalated, then the call that answered.
    std::vector<CallAttempt> calls;
    /// caching.131: why the answering call's cache missed, as the provider diagnosed it (empty when
    /// nothing diverged or the model takes no diagnostics).
    CacheMiss cache_miss;
    /// wire.211: what the call did with the provider's thread: "" (none), "create", "continue",
    /// "replay" (a continue the provider refused, replayed whole with a new thread).
    std::string thread;
    /// answers.110: answer blocks of another wire family (ProviderBlock) left out of this call's
    /// request, which its provider cannot take.
    std::size_t provider_blocks_dropped = 0;

    /// Tokens written to the cache (billed at 125%).
    [[nodiscard]] std::int64_t cache_creation_input_tokens() const noexcept {
        return usage.cache_write_tokens;
    }
    /// Tokens read from the cache (billed at 10%).
    [[nodiscard]] std::int64_t cache_read_input_tokens() const noexcept {
        return usage.cache_read_tokens;
    }
    /// 0.0-1.0: the share of the input read from the cache.
    [[nodiscard]] double cache_hit_rate() const noexcept;
};

/// What the plugin's capabilities document says (docs/provider-abi-documents.md).
struct ProviderCapabilities {
    std::string dialect;
    bool native_tools = false;
    bool caching = false;
    bool streaming = false;
    std::string auth = "none";  ///< x-api-key | bearer | sigv4 | none
    /// How a streamed answer is framed (ABI 1.2): "sse" (default) or "aws-eventstream".
    std::string stream_framing = "sse";
    /// answers.110: the plugin decodes answer blocks it does not model into provider blocks and
    /// sends its own wire family's back verbatim (capabilities `provider_blocks`).
    bool provider_blocks = false;
    /// caching.106: the dialect renders a request-level cache marker ("automatic_caching").
    bool automatic_caching = false;
    /// wire.149: "anthropic-messages", "openai-chat", "bedrock-converse"; anything else (or
    /// none) gets the generic request checks only.
    std::string wire_family;
    /// abi.108: the plugin's encoding is local to runs of same-role turns ("turn_fragments"), so
    /// with its ABI 1.4 encode_split the core keeps each run's encoded messages (caching.110).
    bool turn_fragments = false;
    /// "max_cache_breakpoints" (0 when not said).
    std::size_t max_cache_breakpoints = 0;
    /// caching.119: "cache_anchor_tool_use": false when the dialect has no way to mark a tool
    /// call (OpenAI Chat Completions), so the plan never anchors one.
    bool cache_anchor_tool_use = true;
    /// caching.133: "cache_anchor_assistant": false when the dialect takes no mark on assistant
    /// output (OpenAI Responses), so the plan moves an assistant turn's anchor to a user turn.
    bool cache_anchor_assistant = true;
    /// tools.103: the dialect writes a late tool as the provider's mid-conversation tool addition
    /// ("tool_changes"), so a model whose record takes tool changes keeps the tools parameter.
    bool tool_changes = false;
    /// wire.211: the dialect continues the provider's thread when the request document says so
    /// ("threads"), sending only the turns it is handed.
    bool threads = false;
};

/// The incremental events of a streamed answer, delivered to host code AS THE
/// BYTES ARRIVE (the transport's write callback → the core's SSE / event-stream framing → the
/// plugin's decode_event slot, ABI 1.2). `block` is the index of the content block in the answer.
/// Every member is optional; a call streams when any is set and the dialect can stream. The
/// message the call appends is the plugin's decode of the whole body, so it equals the
/// non-streamed one (the deltas are a view of it, never a second source of truth). Callbacks run
/// on the calling thread, inside call(); a callback that throws aborts the call (the answer is
/// not appended).
struct StreamCallbacks {
    std::function<void(std::size_t block, std::string_view text)> on_text_delta;
    std::function<void(std::size_t block, std::string_view thinking)> on_thinking_delta;
    /// A tool call's block opened: its provider-minted id and the tool's name.
    std::function<void(std::size_t block, std::string_view id, std::string_view name)>
        on_tool_call_start;
    /// A piece of a tool call's input JSON (the pieces concatenate to the input).
    std::function<void(std::size_t block, std::string_view partial_json)> on_tool_input_delta;
    /// Usage as the provider reports it during the stream (cumulative where it says so).
    std::function<void(const Usage& usage)> on_usage;
    /// The answer streamed so far is discarded: it was cut off at max_tokens and the call is
    /// retried once at the escalated budget (budget.7), so a display clears what it showed.
    std::function<void(std::string_view reason)> on_discard;

    [[nodiscard]] bool any() const noexcept {
        return on_text_delta || on_thinking_delta || on_tool_call_start || on_tool_input_delta ||
               on_usage || on_discard;
    }
};

/// Per-call options.
struct CallOptions {
    BindingDeclarations binding;                 ///< layer 3 of the budget and depth chains
    const CancellationToken* cancel = nullptr;   ///< stops the call at its next boundary
    /// Estimates the conversation's input tokens for the rate-limiter reservation. Empty: the
    /// request body's size / 4, a deliberate over-estimate for prose (a reservation that is too
    /// large only waits; one that is too small overflows the provider's own bucket).
    std::function<std::int64_t(const ConversationContext&)> input_token_estimate;
    /// Headers added to the request as they are (tracing ids, a gateway's routing header; the
    /// emulator's fault injection in tests). Never credentials: the core attaches those.
    HttpHeaders extra_headers;
    /// Non-null and any(): the call asks for a streamed answer (when the dialect streams) and
    /// delivers its deltas here as they arrive.
    const StreamCallbacks* stream = nullptr;
};

/// A connection to one provider instance (nucleo.yaml `providers.<name>`) through its dialect
/// plugin. Thread-safe: concurrent calls on different conversations share the connection pool
/// and the per-model rate limiters.
class ProviderClient {
public:
    /// The transport's limits are the provider's configured ones (`config.transport`,
    /// limits.101-104), whatever `transport.limits` held; its retry policy is `transport`'s.
    ProviderClient(ProviderConfig config, ProviderInstance dialect, TransportOptions transport = {});

    /// The client for the provider instance `name` of `config`, its plugin found by `loader`.
    static ProviderClient from_config(const Config& config, const PluginLoader& loader,
                                      std::string_view provider_name);

    [[nodiscard]] const ProviderCapabilities& capabilities() const noexcept { return caps_; }
    [[nodiscard]] const ProviderConfig& config() const noexcept { return config_; }

    /// Refuses (kConfig) a catalog entry of another provider instance than this client's: an
    /// entry names the provider it is served by (answers.108), and a Claude entry sent through an
    /// OpenAI client would reach the wrong API under the wrong dialect. The message names both.
    /// An entry that names no provider is accepted.
    void check_model(const ModelSpec& model) const;

    /// budget.102: the declarations a call falls back to after the binding's (the last layer of
    /// the output and depth chains). from_config sets the config's `defaults:`; a client built
    /// directly has none, and a host opts out with set_declaration_defaults({}) (budget.103).
    void set_declaration_defaults(BindingDeclarations defaults) noexcept { defaults_ = defaults; }
    [[nodiscard]] const BindingDeclarations& declaration_defaults() const noexcept { return defaults_; }
    /// `binding` with each undeclared field taken from the declaration defaults.
    [[nodiscard]] BindingDeclarations with_defaults(const BindingDeclarations& binding) const;

    /// Rate limits for one model (0 = unlimited), overriding the catalog entry's `rate_limits`.
    void set_rate_limits(const std::string& model_id, RateLimits limits);

    /// wire.153: the largest request body a call may send, in bytes (default 32 MiB); a larger
    /// encoded body is refused before sending.
    void set_request_body_limit(std::size_t bytes) noexcept { request_body_limit_ = bytes; }

    /// caching.110: with a plugin whose encoding is local to runs of turns (abi.108), the
    /// conversation keeps each run's encoded wire messages and the next request encodes only the
    /// runs that changed; the bytes are those of a whole encode. On by default; off, every request
    /// is encoded whole (the reference the cached bytes are tested against).
    void set_turn_fragment_cache(bool on) noexcept { turn_fragment_cache_ = on; }

    /// The exact wire request the next call would send (prepares the conversation: this is its
    /// render, so the head freezes as for a call). Credentials are attached; with
    /// `redact_secrets` their values are `***` (`<unset>` when missing: a rendered request is
    /// for reading and needs no key), which is what `nucleo render` prints.
    HttpRequest build_request(ConversationContext& conversation, const ModelSpec& model,
                              const CallOptions& options = {}, bool redact_secrets = false);

    /// Calls the model and appends its answer to the conversation. On a truncated answer
    /// (stop reason max_tokens, or output that reached the requested ceiling: budget.101) the
    /// sent message's budget is raised to the model's ceiling and the call is made once more
    /// (budget.7); the truncated answer is never appended, so a cut-off tool call never reaches a
    /// tool, and both calls are on the response's record (answers.105). An empty answer is
    /// returned with `appended` false and nothing stored (answers.102). Errors (the conversation
    /// is then unchanged but for that escalation): a missing key or base URL (kConfig, before any
    /// request), provider refusals of their kind (kRateLimited, kOverloaded, kInvalidArgument,
    /// ...), an answer off its format or a plugin's response off the normalized shape (kProtocol
    /// naming the plugin and the field), a context-window stop (ContextOverflowException, never an
    /// escalation: answers.104), truncation at the ceiling (UncorrectableLLMException). Every
    /// such error carries the calls the provider billed before it (Error::billed_calls(),
    /// answers.109): the truncated call of an escalation whose retry failed, a call stopped at the
    /// context window. An exception that is not an Error (one a host's stream callback throws)
    /// passes through as it is, without that record.
    LLMResponse call(ConversationContext& conversation, const ModelSpec& model,
                     const CallOptions& options = {});

private:
    LLMResponse call_once(ConversationContext& conversation, const ModelSpec& model,
                          const CallOptions& options, std::vector<CallAttempt>& record);
    /// call_once without its record (obs.101): call_once observes this.
    LLMResponse call_once_unobserved(ConversationContext& conversation, const ModelSpec& model,
                                     const CallOptions& options, std::vector<CallAttempt>& record);
    void check_credentials() const;
    /// answers.112: "; 404 at URL: check providers.NAME.base_url (WHERE, from ${VAR}[; note])",
    /// appended to the error of a call answered 404.
    [[nodiscard]] std::string not_found_hint(const std::string& url) const;
    /// wire.211: how a request is built with the provider's thread: never (kOff: a rendered
    /// request, a provider or model without threads), as the conversation allows (kPlan: continue
    /// when the thread holds what the request would send, else create), or the whole conversation
    /// with a new thread (kCreate: the replay after a thread error).
    enum class ThreadMode { kOff, kPlan, kCreate };
    /// What a built request did with the thread: "", "create" or "continue", and the digest the
    /// answer keeps (wire.211).
    struct ThreadUse {
        std::string kind;
        std::string digest;
    };
    HttpRequest build(ConversationContext& conversation, const ModelSpec& model,
                      const CallOptions& options, bool redact_secrets, ThreadMode mode,
                      ThreadUse* thread);
    /// True when this call asks for a streamed answer: the dialect streams and a callback is set.
    [[nodiscard]] bool streams(const CallOptions& options) const noexcept;

    ProviderConfig config_;
    ProviderInstance dialect_;
    ProviderCapabilities caps_;
    /// caching.105, caching.107: options.cache_policy and options.cache_head_ttl of the provider
    /// instance, read once at construction.
    CachePolicy cache_policy_ = kDefaultCachePolicy;
    bool head_ttl_1h_ = false;
    /// wire.211: options.threads of the provider instance (off when absent).
    bool threads_ = false;
    struct Limits;
    std::shared_ptr<HttpTransport> transport_;
    std::shared_ptr<Limits> limits_;
    std::size_t request_body_limit_ = 32U * 1024U * 1024U;
    bool turn_fragment_cache_ = true;
    BindingDeclarations defaults_;
};

}  // namespace nucleo
