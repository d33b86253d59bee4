// Anthropic message threads (beta `message-threads-2026-08-12`; docs/emulator.md "Message
// threads", wire.199-wire.205). A request with `thread: {"type": "create"}` leaves its conversation
// (system, tools, messages and the answer) under the id of its answer; a request with
// `thread: {"type": "continue", "previous_message_id": ID}` sends only the turns since that answer
// and is served as the stored conversation followed by them. The shapes are the SDK's
// (@anthropic-ai/sdk 1.17.0: BetaThreadCreateParams, BetaThreadContinueParams and the
// Thread*ErrorDetails of `error.details.error_code`); the lifetime is Anthropic's page "Message
// threads" (a thread expires 5 minutes after the last response it stored).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "catalog.hpp"
#include "json.hpp"
#include "mid_conversation.hpp"

namespace nucleo::emulator {

inline constexpr std::string_view kThreadsBeta = "message-threads-2026-08-12";

/// What a request asks of threads: nothing (no `thread` member, or null), a new thread, or the
/// continuation of the answer `previous`.
struct ThreadAsk {
    enum class Kind { kNone, kCreate, kContinue };
    Kind kind = Kind::kNone;
    std::string previous;
};

/// The 400 for a `thread` member the request may not carry or that is malformed, naming the field:
/// any `thread` without the beta in `anthropic-beta` is an extra input, as every beta member is;
/// with it, an object whose `type` is `create` (no other member) or `continue` (and a string
/// `previous_message_id`), or null. nullopt when fine.
std::optional<Refusal> check_thread_param(const json::Value& doc, const Betas& betas);

/// The ask of a request that passed check_thread_param.
ThreadAsk thread_ask(const json::Value& doc);

/// A thread error as the API answers it: the HTTP status, the error object's `type` and
/// `message`, and its `details.error_code` (the SDK's ThreadNotFoundError, ...).
struct ThreadError {
    int status = 400;
    std::string type = "invalid_request_error";
    std::string message;
    std::string code;
};

/// The API's error body for `e`: `{"type":"error","error":{"type":…,"message":…,"details":
/// {"error_code":…}},"request_id":"req_emu"}`.
std::string thread_error_body(const ThreadError& e);

/// 400 `thread_unsupported_request`: the model's catalog record does not say `threads: true`.
ThreadError thread_unsupported(std::string_view model);
/// 404 `thread_not_found`: nothing is stored under `id` (never stored, expired, evicted, lost).
ThreadError thread_not_found(std::string_view id);
/// 400 `thread_continue_in_flight`: another continue from `id` is being answered.
ThreadError thread_in_flight(std::string_view id);

/// What a thread holds: the fixed fields of its fingerprint, then the conversation. JSON texts,
/// compact, without the cache marks of the requests that sent them.
struct ThreadRecord {
    std::string model;          ///< `model`, as a JSON value
    std::string thinking;       ///< `thinking`, canonical JSON ("null" when absent)
    std::string output_config;  ///< `output_config`, canonical JSON ("null" when absent)
    std::optional<std::string> system;
    std::optional<std::string> tools;
    std::vector<std::string> messages;  ///< each message, the answers among them
};

/// The record of an effective request (the one served): its fingerprint fields, its system and
/// tools, its messages; the answer is appended with add_answer once it is known.
ThreadRecord thread_record(const json::Value& doc);

/// Appends the answer, `{"role":"assistant","content":CONTENT}` with the Message's content as
/// the emulator answered it (`content_json`, a JSON array).
void add_answer(ThreadRecord& record, const std::string& content_json);

/// Rebuilds the conversation a continue is served as, in `doc`: the thread's system and tools
/// where the request leaves them out, the thread's messages followed by the request's, and no
/// `thread` member.
void apply_thread(rapidjson::Document& doc, const ThreadRecord& record);

/// The thread store: records keyed by the id of the answer that ends them, each alive for the
/// TTL after it was stored; at most `capacity`, the oldest stored evicted first. A continued
/// record keeps only its mark (each answer can be continued once) until its TTL runs out.
/// Thread-safe: the emulator serves in parallel. Time is the emulator's clock (`POST /clock`),
/// given by the caller.
class ThreadStore {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t kDefaultCapacity = 10000;
    static constexpr int kDefaultTtlSeconds = 300;

    void configure(std::chrono::seconds ttl, std::size_t capacity);

    /// Starts continuing the answer `id` with a request whose own fields are `asked` (its
    /// fingerprint fields; its system and tools when it sends them): the record to serve, marked
    /// in flight until `finish` or `abandon`; or the error (not found or expired, already
    /// continued, in flight, or a fingerprint field that differs).
    std::variant<ThreadRecord, ThreadError> begin_continue(const std::string& id,
                                                           const ThreadRecord& asked,
                                                           Clock::time_point now);
    /// The continue from `id` was not answered: the answer can be continued again.
    void abandon(const std::string& id);
    /// Stores `record` under the answer `id`, with a new TTL; when it continued `previous`, that
    /// answer is marked continued. Counts a thread created or continued.
    void finish(const std::optional<std::string>& previous, const std::string& id,
                ThreadRecord record, Clock::time_point now);
    /// Forgets the record under `id` (the `thread-lost` fault).
    void forget(const std::string& id);
    void clear();

    struct Counts {
        std::int64_t live = 0;  ///< stored answers not yet continued nor expired
        std::int64_t created = 0;
        std::int64_t continued = 0;
    };
    Counts counts(Clock::time_point now);

  private:
    struct Entry {
        std::optional<ThreadRecord> record;  ///< nullopt once continued
        bool in_flight = false;
        Clock::time_point expires;
        std::list<std::string>::iterator age;
    };
    void erase(std::unordered_map<std::string, Entry>::iterator it);

    std::mutex mu_;
    std::chrono::seconds ttl_{kDefaultTtlSeconds};
    std::size_t capacity_ = kDefaultCapacity;
    std::list<std::string> oldest_first_;
    std::unordered_map<std::string, Entry> entries_;
    std::int64_t created_ = 0;
    std::int64_t continued_ = 0;
};

/// The thread work of one request, between its start and its answer: the record to store under
/// the answer and, for a continue, the answer it continues, marked in flight. Destroyed without
/// `finish` (the request was refused after it began: the rule book, the model's rules, the
/// binding), it abandons the continue, so the answer it names can be continued again.
class ThreadTurn {
  public:
    ThreadTurn(ThreadStore& store, std::optional<std::string> previous, ThreadRecord record);
    ThreadTurn(ThreadTurn&& other) noexcept;
    ThreadTurn& operator=(ThreadTurn&&) = delete;
    ThreadTurn(const ThreadTurn&) = delete;
    ThreadTurn& operator=(const ThreadTurn&) = delete;
    ~ThreadTurn();

    /// Stores the conversation with its answer (`content_json`, the Message's content) under
    /// the answer's `id`.
    void finish(const std::string& id, const std::string& content_json,
                ThreadStore::Clock::time_point now);

  private:
    ThreadStore* store_;
    std::optional<std::string> previous_;
    ThreadRecord record_;
};

/// What the request's faults do to a continue (wire.204).
struct ThreadFaults {
    bool lost = false;  ///< `thread-lost`
    bool busy = false;  ///< `thread-busy`
};

/// Starts the thread work of a request whose `thread` passed check_thread_param. Nothing
/// (std::monostate) for a request without a thread, or one whose model or messages are missing
/// (the field checks refuse it). Else the model must hold threads (`model`: its catalog record's
/// answer), and a continue is rebuilt in `doc` as the conversation it continues followed by its
/// own turns (apply_thread); or the error.
std::variant<std::monostate, ThreadTurn, ThreadError> begin_thread_turn(
    ThreadStore& store, rapidjson::Document& doc, const ModelCatalog::Threads& model,
    const ThreadFaults& faults, ThreadStore::Clock::time_point now);

}  // namespace nucleo::emulator
