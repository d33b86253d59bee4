// The typed face of conversation stores (docs/spec/persistence.md; the leases of ownership.40-42).
//
// A store is a "nucleo.store/1" plugin (sqlite, postgres, redis, memory) reached through
// StoreInstance; these classes speak its documents (docs/store-documents.md) in C++ values:
//  - PersistentStore: create (the first save, a full snapshot and a title), update (every later
//    save: a SnapshotDelta, written without reading the conversation back), load, version history,
//    load a version, list, remove.
//  - SessionStore: the fast store consulted first (get, put with a TTL, invalidate).
//  - LeaseStore: the cross-host ownership lease whose fencing token the persistent store checks.
// Every conversation-addressed call takes the ACTING principal: another user's conversation reads
// as not found (kNotFound), never as "forbidden". A surface the store has not built throws
// NotImplementedException, never an empty answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo {

/// What changed between the parts saved last time and the parts now: the `changes` document of an
/// incremental save (persistence.6: a save writes what changed since the last one (new messages,
/// changed flags), not the whole conversation again).
///
/// Messages are compared by id and content (the response handler is never persisted, so it never
/// counts). The message list changes as splices over the saved list: appended messages are one
/// splice at the end, a message whose flags or content changed is a splice replacing it, and
/// compaction's "replace a run of messages by a summary" is one splice removing the run and
/// inserting the summary. A top-level field of the document (objective, tools, artifacts,
/// declarations, ...) that changed travels whole. Applying the changes to the saved document gives
/// exactly write_conversation_parts(now, {.pretty = false}).
class SnapshotDelta {
  public:
    /// Computes the delta. Cost: one comparison per message, JSON only for what changed.
    static SnapshotDelta between(const ConversationParts& saved, const ConversationParts& now);

    /// persistence.108: between(saved, now) when now's messages are saved's with
    /// `messages[saved.messages.size()...]` appended and nothing else about them changed (the
    /// caller knows it from the message list's epoch and the per-message flags), and
    /// `now_without_messages` holds now's other members. The same changes, byte for byte, at the
    /// cost of the appended messages and the top-level fields, never of the whole history.
    static SnapshotDelta appended(const ConversationParts& saved,
                                  const ConversationParts& now_without_messages,
                                  const std::vector<Message>& messages);

    /// persistence.111: what appended() reads of the saved parts besides their message count --
    /// their top-level document and the positions of their messages carrying a tool definition
    /// -- so a saver that keeps it from one save to the next never walks the saved history.
    struct Header {
        std::string document;
        std::vector<std::size_t> definitions;
    };
    /// The Header of `parts` (one pass over its messages).
    static Header header_of(const ConversationParts& parts);
    /// appended(saved, now_without_messages, messages) from the saved parts' Header and message
    /// count alone: O(appended messages + top-level fields). `now_header` receives the Header of
    /// the parts now, the base of the next save.
    static SnapshotDelta appended(const Header& saved, std::size_t saved_count,
                                  const ConversationParts& now_without_messages,
                                  const std::vector<Message>& messages, Header& now_header);

    /// The `changes` document (compact JSON): {"fields":[{"key","index","value"|"removed"}],
    /// "messages":[{"at","remove","insert":[...]}]}.
    [[nodiscard]] const std::string& changes_json() const noexcept { return changes_json_; }
    /// Nothing changed.
    [[nodiscard]] bool empty() const noexcept { return fields_changed_ == 0 && splices_ == 0; }
    [[nodiscard]] std::size_t fields_changed() const noexcept { return fields_changed_; }
    [[nodiscard]] std::size_t messages_inserted() const noexcept { return inserted_; }
    [[nodiscard]] std::size_t messages_removed() const noexcept { return removed_; }

  private:
    std::string changes_json_;
    std::size_t fields_changed_ = 0;
    std::size_t splices_ = 0;
    std::size_t inserted_ = 0;
    std::size_t removed_ = 0;
};

/// persistence.20: reads a stored snapshot leniently. Restoration drops any tool_result whose
/// tool_use id appears nowhere in the transcript: a provider refuses the WHOLE conversation over
/// one such orphan. The dropped ids are logged ONCE (one WARN record
/// naming the conversation and every id); a message left without blocks is dropped with them
/// (providers refuse empty turns). Everything else is read by read_conversation_parts and refused
/// as it refuses. The parts carry no model binding: a restored conversation comes back UNBOUND,
/// with its prior_spec_id as stickiness input (ConversationContext::from_parts builds it
/// unfrozen, without a model). Decision: a tool_result whose tool_use exists but comes later is
/// not an orphan by that rule (persistence.21); from_parts refuses it loudly rather than this path
/// guessing.
ConversationParts restore_parts(std::string_view snapshot_json);

/// What a store says it offers ("nucleo.store/1" capabilities).
struct StoreCapabilities {
    bool persistent = false;
    bool session = false;
    bool version_history = false;
    bool lease = false;
};

/// One committed save. Version ids and times come from the store.
struct SaveResult {
    std::string version;   ///< the new version's id (opaque; "1", "2", ... in the shipped stores)
    std::string saved_at;  ///< RFC 3339, the store's clock
    std::size_t bytes_written = 0;     ///< the store's account of the bytes this save wrote
    std::size_t messages_written = 0;  ///< messages this save wrote
};

/// One entry of a conversation's version history, oldest first.
struct StoredVersion {
    std::string version;
    std::string saved_at;
};

/// A conversation's version history and the highest fencing token a save of it presented.
struct VersionHistory {
    std::vector<StoredVersion> versions;
    /// ownership.103: the floor of the next lease's token (absent: no save carried one).
    std::optional<int64_t> fencing_token;
};

/// A conversation's newest version and its token floor (PersistentStore::latest).
struct LatestVersion {
    /// Absent when the record holds no version.
    std::optional<StoredVersion> version;
    /// ownership.103: the floor of the next lease's token (absent: no save carried one).
    std::optional<int64_t> fencing_token;
};

/// One conversation of a user's list.
struct ConversationSummary {
    std::string conversation_id;
    std::string title;
    std::string created_at;
    std::string updated_at;
};

/// A page of a user's conversations, in creation order; next_cursor continues it.
struct ConversationPage {
    std::vector<ConversationSummary> conversations;
    std::optional<std::string> next_cursor;
};

/// The persistent store (persistence.1: saves go here). Thread rule: every method may be
/// called concurrently (the plugin does its own locking).
class PersistentStore {
  public:
    explicit PersistentStore(StoreInstance store) : store_(std::move(store)) {}

    [[nodiscard]] StoreCapabilities capabilities() const;

    /// The first save: the full snapshot of `parts` (its conversation_id addresses it; empty is
    /// refused with kInvalidArgument) and the title. kInvalidArgument when the id exists already
    /// for this principal. `fencing_token`: the lease's token when ownership is leased.
    SaveResult create(std::string_view principal, const ConversationParts& parts,
                      std::string_view title, std::optional<int64_t> fencing_token = {}) const;

    /// Every later save: the delta from `base_version` (the version the delta was computed
    /// from). Never reads the conversation back. kNotFound when the conversation is gone (deleted
    /// mid-turn: it is never resurrected); kOwnership when the fencing token is stale, when a
    /// token was recorded and none is presented, or when another writer saved after
    /// `base_version`.
    SaveResult update(std::string_view principal, std::string_view conversation_id,
                      std::string_view base_version, const SnapshotDelta& delta,
                      std::optional<int64_t> fencing_token = {}) const;

    /// A full-snapshot save of an existing conversation (for imports and repairs); the same
    /// refusals as update. `base_version` empty: no optimistic check.
    SaveResult replace(std::string_view principal, const ConversationParts& parts,
                       std::string_view base_version = {},
                       std::optional<int64_t> fencing_token = {}) const;

    /// The latest snapshot, restored (restore_parts: orphan tool_results dropped). kNotFound for a
    /// missing conversation or another user's.
    [[nodiscard]] ConversationParts load(std::string_view principal,
                                         std::string_view conversation_id) const;
    /// The latest snapshot as the store answers it (compact document text), not restored.
    [[nodiscard]] std::string load_document(std::string_view principal,
                                            std::string_view conversation_id) const;

    /// persistence.30: every save is a version, oldest first. The versions and the highest
    /// fencing token recorded (one version_history call).
    [[nodiscard]] VersionHistory history(std::string_view principal,
                                         std::string_view conversation_id) const;
    /// persistence.113: the newest version and the token floor, at a cost that does not grow
    /// with the versions where the plugin offers latest_version (abi.135); otherwise the last
    /// entry of history(). kNotFound for a missing conversation or another user's.
    [[nodiscard]] LatestVersion latest(std::string_view principal,
                                       std::string_view conversation_id) const;
    /// persistence.30: every save is a version, oldest first.
    [[nodiscard]] std::vector<StoredVersion> versions(std::string_view principal,
                                                      std::string_view conversation_id) const;
    /// The conversation exactly as saved at `version`, restored.
    [[nodiscard]] ConversationParts load_version(std::string_view principal,
                                                 std::string_view conversation_id,
                                                 std::string_view version) const;
    /// The document text of a version as the store rebuilt it: byte-identical to
    /// write_conversation_parts(parts, {.pretty = false}) of the parts saved then.
    [[nodiscard]] std::string load_version_document(std::string_view principal,
                                                    std::string_view conversation_id,
                                                    std::string_view version) const;

    /// The principal's conversations in creation order, `limit` (1..1000) per page.
    [[nodiscard]] ConversationPage list(std::string_view principal, std::size_t limit = 100,
                                        const std::optional<std::string>& cursor = {}) const;

    /// Deletes the conversation and its history. kNotFound when absent.
    void remove(std::string_view principal, std::string_view conversation_id) const;

    [[nodiscard]] const StoreInstance& instance() const noexcept { return store_; }

  private:
    StoreInstance store_;
};

/// One session-store entry: the cached parts and the durable version they mirror.
struct SessionEntry {
    ConversationParts parts;
    /// The persistent store's version these parts are (persistence.101); empty when the entry
    /// mirrors no durable version (a deployment without a persistent store, or an entry written
    /// before entries carried it): such an entry is never the base of a save.
    std::string durable_version;
};

/// The session store (persistence.1: consulted first). Thread rule: concurrent.
///
/// Decision (persistence.101): the session store is a read-through CACHE of the persistent one,
/// never a second copy of record. Each entry is the envelope
/// {"schema_version":1,"durable_version":"<id>","snapshot":{...document...}} so a reader can
/// tell whether the durable store moved on since the entry was written; a plain document (no
/// envelope) reads as an entry with no durable version.
class SessionStore {
  public:
    explicit SessionStore(StoreInstance store) : store_(std::move(store)) {}

    /// The cached conversation, restored; nullopt on a miss (or another user's id).
    [[nodiscard]] std::optional<ConversationParts> get(std::string_view principal,
                                                       std::string_view conversation_id) const;
    /// The cached entry with the durable version it mirrors; nullopt on a miss. kProtocol when
    /// the stored text is neither an envelope nor a conversation document.
    [[nodiscard]] std::optional<SessionEntry> get_entry(std::string_view principal,
                                                        std::string_view conversation_id) const;
    /// Caches `parts` under its conversation_id for ttl_ms (0: the store's default), mirroring
    /// no durable version.
    void put(std::string_view principal, const ConversationParts& parts, int64_t ttl_ms = 0) const;
    /// Caches `parts` as the mirror of the persistent store's `durable_version`.
    void put(std::string_view principal, const ConversationParts& parts,
             std::string_view durable_version, int64_t ttl_ms) const;
    /// abi.128, persistence.109: refreshes the entry by one committed save's `delta` when it
    /// mirrors `base_version`, making it the mirror of `version` for ttl_ms (0: the store's
    /// default). False on a miss: the entry mirrored another version (or none, or was absent)
    /// and the store dropped it. NotImplementedException when the plugin has no session_apply
    /// (built before ABI 1.5): offers_delta() says so beforehand.
    bool apply(std::string_view principal, std::string_view conversation_id,
               std::string_view base_version, std::string_view version, const SnapshotDelta& delta,
               int64_t ttl_ms) const;
    /// True when the plugin offers session_apply (abi.128).
    [[nodiscard]] bool offers_delta() const { return store_.has_session_apply(); }
    /// Drops the entry; absent is not an error.
    void invalidate(std::string_view principal, std::string_view conversation_id) const;

    [[nodiscard]] const StoreInstance& instance() const noexcept { return store_; }

  private:
    StoreInstance store_;
};

/// A granted lease: the fencing token to present on every save while it is held.
struct LeaseGrant {
    int64_t fencing_token = 0;
    std::string holder;
    std::string expires_at;  ///< RFC 3339
};

/// The cross-host ownership lease (ownership.40-42): one holder per conversation; each acquisition
/// by a new holder gets a strictly larger fencing token. Held by another holder: kOwnership
/// naming it. Thread rule: concurrent.
class LeaseStore {
  public:
    explicit LeaseStore(StoreInstance store) : store_(std::move(store)) {}

    /// Takes the lease for ttl_ms, or extends it when `holder` holds it already (same token).
    /// `min_fencing_token`: a NEW grant's token is at least this (ownership.103: the durable
    /// store's highest recorded token + 1, so a lease store that lost its counter in a restart
    /// never hands out a token already used).
    LeaseGrant acquire(std::string_view principal, std::string_view conversation_id,
                       std::string_view holder, int64_t ttl_ms,
                       std::optional<int64_t> min_fencing_token = {}) const;
    /// Extends a held lease; kOwnership when it expired or another holder took it (and, with
    /// `fencing_token`, when the token is not the lease's).
    LeaseGrant renew(std::string_view principal, std::string_view conversation_id,
                     std::string_view holder, int64_t ttl_ms,
                     std::optional<int64_t> fencing_token = {}) const;
    /// Gives the lease up; only the holder may (kOwnership otherwise). An expired lease nobody
    /// else took releases fine.
    void release(std::string_view principal, std::string_view conversation_id,
                 std::string_view holder) const;

    [[nodiscard]] const StoreInstance& instance() const noexcept { return store_; }

  private:
    StoreInstance store_;
};

}  // namespace nucleo
