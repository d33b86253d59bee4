// Shared by the store plugins: the documents of "nucleo.store/1" (docs/store-documents.md) and
// the stored form of a conversation (docs/spec/persistence.md).
//
// A stored conversation is its top-level fields in document order (each a compact JSON value)
// plus its messages (each a compact JSON object). A save after the first carries a "changes"
// document: the top-level fields that changed and splices of the message list (a splice removes a
// run and inserts messages in its place, so appends, flag changes and compaction's "replace a run
// by a summary" are all one form). Every store keeps the latest state materialised and every save
// as a version; a version is rebuilt by replaying the changes since the nearest full snapshot.
//
// Decision (exactness of versions): a store answers the compact canonical text of the document,
// so a snapshot the core wrote with write_conversation_parts(parts, {.pretty = false}) comes back
// byte-identical, and any other layout of the same document comes back as its compact form.
// Numbers are parsed at full precision so nothing is rounded on the way.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nucleo::stores {

/// Throws nucleo::plugin::Failure(status, message).
[[noreturn]] void fail(int32_t status, const std::string& message);

/// A printable form of an id for error messages: quoted and escaped, cut to 60 bytes with its
/// length said ("\"abc...\" (10240 bytes)"), so a 10 KB or binary id never floods a log line.
std::string describe(std::string_view id);

/// Refuses (NUCLEO_ERR_INVALID_ARGUMENT) an id holding a NUL byte, naming the role ("principal",
/// "conversation id") and the byte position: for stores whose text type cannot hold NUL
/// (PostgreSQL), never truncated silently.
void refuse_nul(std::string_view value, const char* role);

/// One field change of a "changes" document: `value` is the field's new compact JSON, nullopt
/// when the field was removed; `index` is its position among the document's top-level members.
struct FieldChange {
    std::string key;
    std::size_t index = 0;
    std::optional<std::string> value;
};

/// Replaces messages [at, at + remove) of the base version by `insert` (compact JSON objects).
struct Splice {
    std::size_t at = 0;
    std::size_t remove = 0;
    std::vector<std::string> insert;
};

/// The "changes" of an incremental save: fields and splices, splices in ascending `at`, not
/// overlapping, positions in the BASE version's message list.
struct Changes {
    std::vector<FieldChange> fields;
    std::vector<Splice> splices;

    /// Parses and validates a changes object (its JSON text); kInvalidArgument naming the
    /// position ("changes.messages[1].at: ...") when malformed.
    static Changes parse(std::string_view json);
    /// Checks the splices against a base of `count` messages; returns the new count.
    [[nodiscard]] std::size_t checked_count(std::size_t count) const;
    /// Messages written by this change (inserted ones).
    [[nodiscard]] std::size_t inserted() const;
};

/// The row operations a SQL store performs to apply changes to its materialised latest state.
class ChangeWriter {
  public:
    virtual ~ChangeWriter() = default;
    /// Deletes messages at positions [at, end).
    virtual void delete_messages(int64_t at, int64_t end) = 0;
    /// Moves every message at a position >= from by `by` (never colliding midway).
    virtual void shift_messages(int64_t from, int64_t by) = 0;
    /// Writes a message row; returns the bytes written.
    virtual std::size_t insert_message(int64_t pos, const std::string& body) = 0;
    /// Upserts a field row (its document position and value); returns the bytes written.
    virtual std::size_t put_field(const std::string& key, std::size_t ord,
                                  const std::string& value) = 0;
    virtual void delete_field(const std::string& key) = 0;
};

/// Applies changes through `writer`: splices from the last to the first (earlier positions stay
/// valid), then the fields. Only the rows a change touches are written. Returns the bytes written.
std::size_t write_changes(const Changes& changes, ChangeWriter& writer);

/// A conversation document as stored: top-level members in order, with the member "messages"
/// holding an empty value (a placeholder for its position), and the messages apart.
struct StoredDocument {
    std::vector<std::pair<std::string, std::string>> fields;
    std::vector<std::string> messages;

    /// Splits a snapshot (a conversation document object with schema_version and a messages
    /// array); kInvalidArgument naming what is wrong.
    static StoredDocument from_snapshot(std::string_view json);
    /// The compact document text.
    [[nodiscard]] std::string to_json() const;
    /// Applies changes in place (validated against the current message count).
    void apply(const Changes& changes);
    /// The fields' position of the member "messages" (fields.size() when absent).
    [[nodiscard]] std::size_t messages_index() const;
};

/// The create request: {"schema_version":1, "snapshot":{...}, "title":"...", "embedding":[...]?,
/// "fencing_token":N?}. `snapshot` is compact canonical text.
struct CreateRequest {
    StoredDocument snapshot;
    std::string snapshot_text;
    std::string title;
    std::optional<std::string> embedding;
    std::optional<int64_t> fencing_token;
};
CreateRequest parse_create(std::string_view json);

/// The update request: {"schema_version":1, "base_version":"<id>", "changes":{...} |
/// "snapshot":{...}, "fencing_token":N?}. A changes update needs base_version; a snapshot
/// update replaces the whole conversation (base_version optional, checked when present).
struct UpdateRequest {
    std::optional<std::string> base_version;
    std::optional<Changes> changes;
    std::string changes_text;  ///< compact text of "changes", what a version keeps
    std::optional<StoredDocument> snapshot;
    std::string snapshot_text;
    std::optional<int64_t> fencing_token;
};
UpdateRequest parse_update(std::string_view json);

/// abi.128: the session_apply request: {"schema_version":1, "base_version":"<id>",
/// "version":"<id>", "changes":{...}}; kInvalidArgument naming what is wrong.
struct SessionDelta {
    std::string base_version;
    std::string version;
    Changes changes;
};
SessionDelta parse_session_delta(std::string_view json);

/// persistence.101: a session entry the host wrote, read apart: the durable version its envelope
/// names and its snapshot split. nullopt when the text is not such an envelope (a plain document,
/// or text a store keeps as it came), which no delta ever applies to.
struct SessionEnvelope {
    std::string durable_version;
    StoredDocument snapshot;
};
std::optional<SessionEnvelope> parse_session_envelope(std::string_view text);
/// The envelope text of an entry: {"schema_version":1,"durable_version":V,"snapshot":{...}}.
std::string session_envelope_text(std::string_view durable_version, const StoredDocument& snapshot);

/// list query: {"schema_version":1, "limit":N?, "cursor":"..."?}; limit 1..1000, default 100.
struct ListQuery {
    std::size_t limit = 100;
    std::optional<std::string> cursor;
};
ListQuery parse_list(std::string_view json);

/// lease request: {"schema_version":1, "op":"acquire"|"renew"|"release", "holder":"...",
/// "ttl_ms":N, "fencing_token":N?}. ttl_ms is required (> 0) for acquire and renew.
struct LeaseRequest {
    enum class Op { kAcquire, kRenew, kRelease };
    Op op = Op::kAcquire;
    std::string holder;
    int64_t ttl_ms = 0;
    std::optional<int64_t> fencing_token;
    /// ownership.103: a NEW grant gets at least this token (the durable store's highest recorded
    /// token + 1), so a lease store that lost its counter never hands out a used token.
    std::optional<int64_t> min_fencing_token;
};
LeaseRequest parse_lease(std::string_view json);

/// The fencing rule of a persistent store (ownership.42). The store keeps the highest token a
/// save presented for the conversation: a save presenting a lower one, or none once a token was
/// seen, was made by a writer whose lease was lost or taken over: NUCLEO_ERR_OWNERSHIP.
/// Returns the token to keep.
std::optional<int64_t> check_fencing(std::optional<int64_t> kept, std::optional<int64_t> presented,
                                     std::string_view id);
/// The optimistic check of an update: a changes update must be based on the head version.
void check_base(const UpdateRequest& request, std::string_view head, std::string_view id);

// ---- answers ----
std::string capabilities_answer(bool persistent, bool session, bool version_history, bool lease);
/// {"schema_version":1, "version":V, "saved_at":T, "bytes_written":N, "messages_written":M}:
/// the last two are the store's own account of what the save wrote (tests assert saves are
/// incremental with them).
std::string version_answer(std::string_view version, std::string_view saved_at,
                           std::size_t bytes_written, std::size_t messages_written);
struct ListedConversation {
    std::string id, title, created_at, updated_at;
};
std::string list_answer(const std::vector<ListedConversation>& items,
                        const std::optional<std::string>& next_cursor);
struct VersionEntry {
    std::string version, saved_at;
};
/// `fencing_token`: the highest token a save of the conversation presented (ownership.103).
std::string history_answer(const std::vector<VersionEntry>& versions,
                           std::optional<int64_t> fencing_token = {});
/// abi.135: the answer of latest_version: the newest entry (null when none) and the token.
std::string latest_answer(const std::optional<VersionEntry>& newest,
                          std::optional<int64_t> fencing_token = {});
std::string lease_answer(int64_t fencing_token, std::string_view holder,
                         std::string_view expires_at);

/// RFC 3339 UTC with milliseconds ("2024-05-01T12:00:00.123Z").
std::string rfc3339(std::chrono::system_clock::time_point t);
std::string rfc3339_now();

/// Rebuilds a version from its history: the first entry is a full snapshot, the others are
/// ("changes", text) or ("snapshot", text) in order.
std::string replay(const std::vector<std::pair<std::string, std::string>>& kind_and_body);

}  // namespace nucleo::stores
