// ConversationService (docs/spec/ownership.md): which job owns which
// conversation, where a conversation comes from when a job obtains it, and the one place that
// persists it (the save discipline).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nucleo/conversation.hpp"
#include "nucleo/response.hpp"
#include "nucleo/store.hpp"
#include "nucleo/thinker.hpp"

namespace nucleo {

/// Called once, after the record of a minted conversation was created, with the title the record
/// got (ownership.21: titled and embedded from that first user message, exactly once). The
/// framework ships no embedder: an application that indexes conversations wires one. A throw is
/// logged and does not fail the save (the record is committed; an index can be rebuilt).
using ConversationEmbedder = std::function<void(
    std::string_view user_id, std::string_view conversation_id, std::string_view first_utterance)>;

/// The service's wiring. Every store is optional (persistence.1: both are optional
/// wiring): without a persistent store only temporary and minted-but-unsaved conversations
/// exist and saves are no-ops returning nullopt.
struct ConversationServiceOptions {
    std::optional<PersistentStore> persistent;
    /// A read-through cache of `persistent`, never written by a save directly (persistence.101).
    std::optional<SessionStore> session;
    /// The cross-host lease (ownership.40-42). With it, obtaining a durable conversation also
    /// takes the lease; its fencing token rides every save; release gives it up.
    std::optional<LeaseStore> lease;
    /// ownership.11: parks until the current owner releases, up to 30 seconds.
    std::chrono::milliseconds acquire_timeout{std::chrono::seconds(30)};
    /// ownership.33: a 5-minute cleanup interval.
    std::chrono::milliseconds cleanup_interval{std::chrono::minutes(5)};
    /// False: no background cleanup thread (tests drive run_cleanup() themselves).
    bool cleanup_thread = true;
    /// TTL of what is put into the session store (0: the store's default).
    int64_t session_ttl_ms = 0;
    /// The lease's TTL. Decision: a lease is taken for this long at acquisition and renewed at
    /// every save, so a turn that saves at least this often never loses it while alive, and a
    /// crashed host's lease lapses within it.
    std::chrono::milliseconds lease_ttl{std::chrono::seconds(60)};
    /// The longest pause between two polls of a lease another host holds. Decision: polling with
    /// bounded exponential backoff (5 ms doubling up to this), not pub/sub: it needs nothing from
    /// the lease store beyond acquire, and a hand-off costs at most one pause.
    std::chrono::milliseconds lease_poll_max{std::chrono::milliseconds(200)};
    /// This service's name as a lease holder: unique per service instance across hosts. Empty:
    /// hostname:pid:<instance number>.
    std::string host_id;
    ConversationEmbedder embedder;
};

/// ownership.10: one job owns one conversation at a time; a second job parks on
/// the conversation's handed-off condition (never spins) until the owner releases, up to
/// acquire_timeout, then fails naming the owner. Not a singleton: an application makes one and
/// shares it (tests make many). Thread rule: every method may be called from any thread.
///
/// Decisions of our own (ownership.3, ownership.14, ownership.40):
///  - Holders are keyed by (user, conversation id) (ownership.101): two users' conversations that
///    share an id are two holders, and nothing one user does (obtaining, failing to adopt,
///    releasing, waiting) changes what the other sees. Another user's conversation reads as not
///    found, exactly as the stores answer another user's id.
///  - Saves go to the persistent store only (persistence.1); the session store is a
///    read-through cache of it that may fail without consequence (persistence.101): an entry
///    carries the durable version it mirrors and is used only while that is the persistent
///    store's latest version, a failing get is a miss, a failing put is logged and the entry
///    invalidated. The save bookkeeping (created, saved parts, saved version) moves as one and
///    only after the durable write committed (persistence.102); after a write that failed without
///    saying whether it committed, the next save re-reads the durable record (persistence.103).
///  - A temporary conversation (the thinker set no id) never consults a store and is never saved;
///    a thinker that adopts it and keeps the temporary default reaches it only while it is warm
///    (in the session store).
///  - With a lease store, the lease is held per host (service instance) while one of its jobs
///    owns the conversation and given up at each release; a warm holder is reloaded from the
///    stores when the lease comes back with another fencing token (another host may have saved
///    since).
class ConversationService {
  public:
    explicit ConversationService(ConversationServiceOptions options = {});
    /// shutdown().
    ~ConversationService();
    ConversationService(const ConversationService&) = delete;
    ConversationService& operator=(const ConversationService&) = delete;

    /// Obtains a conversation for a job (ownership.10-13). The
    /// future is ready at once when the conversation is free or already this job's; otherwise it
    /// completes when the owner releases, or fails after acquire_timeout with kOwnership naming
    /// the owner. Where the conversation comes from: the warm holder; else (durable only) the
    /// session store when its entry mirrors the persistent store's latest version, else the
    /// persistent store (what it returned is put into the session store);
    /// else a fresh conversation when !must_exist, kNotFound when must_exist. A created or
    /// rehydrated conversation takes the thinker's CURRENT declarations; a rehydrated one
    /// re-declares the thinker's palette, and `handler` is attached to each restored outgoing
    /// message that has none (handlers are never persisted). Every acquisition stamps the
    /// thinker's workflow id. Refused while shutting down ("ConversationService is shutting
    /// down", kInternal). The returned context stays shared with the service until eviction:
    /// only the owner touches it.
    std::future<std::shared_ptr<ConversationContext>> obtain_conversation(
        std::string_view conversation_id, std::shared_ptr<Thinker> thinker,
        std::shared_ptr<const ResponseHandler> handler = {}, bool must_exist = false);

    /// The thinker's own conversation as its declared intent says (ownership.2: must_exist follows
    /// the declared intent): thinker->conversation_id(), must_exist when
    /// the id was adopted.
    std::future<std::shared_ptr<ConversationContext>> obtain_conversation(
        std::shared_ptr<Thinker> thinker, std::shared_ptr<const ResponseHandler> handler = {});

    /// ownership.14: the live thinker driving a turn, or nullptr when idle, unknown, or
    /// the conversation belongs to another user.
    [[nodiscard]] std::shared_ptr<Thinker> owning_thinker(std::string_view conversation_id,
                                                          std::string_view user_id) const;

    /// The save discipline (ownership.20-22): at every user message in, answer out, abnormal end.
    /// The first save of a minted (or new adopted-id) conversation creates the record titled from
    /// first_user_utterance(); later saves are updates of the SnapshotDelta from the last saved
    /// parts, with no reads. nullopt (nothing written): a temporary conversation, no persistent
    /// store, nothing changed, or not created yet and no human utterance so far (ownership.21:
    /// nothing exists in the store before the first user message). Throws kOwnership when
    /// `thinker` does not own the conversation or the lease was lost (the store refuses the stale
    /// token), kNotFound when the record was deleted mid-turn (never resurrected). A committed
    /// save refreshes the session store with the version it made -- an update by its delta where
    /// the session store offers it, applied only to the entry of the base version
    /// (ownership.104, persistence.109); a failed one invalidates the entry and changes nothing
    /// the next save builds on (persistence.102).
    std::optional<SaveResult> save_conversation(const ConversationContext& context,
                                                const Thinker& thinker);

    /// ownership.30: ownership and retention only, no persistence. The holder stays
    /// warm for the thinker's retain duration; a waiting job is handed it. Releasing what the
    /// thinker does not own is a no-op.
    void release(const Thinker& thinker);
    /// ownership.31: the safety net at job completion; evicts every conversation the
    /// job still owns (a waiter, if any, is handed it instead). Returns how many it found.
    std::size_t release_all_for_job(std::string_view job_id);
    /// ownership.32: cancels the owning turn's workflow -- the
    /// owner's `cancellation` token by default, then its cancel_workflow hook when set
    /// (ownership.102) -- and lets that turn's own cleanup release the holder, which hands it to
    /// a waiter. True when an owner was found (and cancelled); false when idle, unknown or
    /// another user's.
    bool force_release(std::string_view conversation_id, std::string_view user_id);

    /// One cleanup tick: evicts every UNOWNED holder without waiters whose retention expired at
    /// `now` (ownership.33: eviction never persists). Returns how many. The background thread calls
    /// it every cleanup_interval; tests call it with a chosen `now`.
    std::size_t run_cleanup(
        std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

    /// Graceful shutdown (ownership.34): refuses new obtains, fails waiting ones,
    /// stops the cleanup thread, gives up held leases and clears every holder. Idempotent.
    void shutdown();
    [[nodiscard]] bool stopping() const noexcept;

    /// Jobs parked on the conversation's handed-off condition right now (observability: a
    /// dashboard's "waiting turns", a benchmark timing a hand-off from a parked waiter).
    [[nodiscard]] std::size_t waiters(std::string_view conversation_id) const;
    /// Warm holders in memory (owned or not).
    [[nodiscard]] std::size_t holders() const;

    struct State;

  private:
    std::shared_ptr<State> state_;
};

}  // namespace nucleo
