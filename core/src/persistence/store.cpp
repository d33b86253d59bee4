// The typed store facades over StoreInstance and the lenient restore path (store.hpp).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/store.hpp"

namespace nucleo {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// {"schema_version":1, ...fields written by fn...} as text.
template <typename Fn>
std::string request(Fn&& fn) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    fn(w);
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize());
}

void put(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// The name `put` is taken by SessionStore's members inside them.
void put_string(Writer& w, std::string_view s) {
    put(w, s);
}

void put_raw(Writer& w, const std::string& json, rapidjson::Type type) {
    w.RawValue(json.data(), json.size(), type);
}

void put_fencing(Writer& w, std::optional<int64_t> token) {
    if (!token) return;
    w.Key("fencing_token");
    w.Int64(*token);
}

/// Parses a store's answer; a malformed one is the store's fault (kProtocol, naming the slot).
rapidjson::Document answer(const std::string& text, const char* slot) {
    rapidjson::Document doc;
    // limits.120: a store's answer may carry a snapshot, read under the document depth limit.
    if (json_guard::parse(doc, text, json_guard::kDocumentMaxDepth) || !doc.IsObject()) {
        throw Error(ErrorKind::kProtocol, std::string("store answered ") + slot +
                                              " with something other than a JSON "
                                              "object");
    }
    return doc;
}

std::string string_member(const rapidjson::Value& v, const char* key, const char* slot) {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd() || !it->value.IsString()) {
        throw Error(ErrorKind::kProtocol,
                    std::string("store answer to ") + slot + ": \"" + key + "\" is not a string");
    }
    return std::string(it->value.GetString(), it->value.GetStringLength());
}

std::size_t size_member(const rapidjson::Value& v, const char* key) {
    auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsUint64() ? it->value.GetUint64() : 0;
}

SaveResult save_result(const std::string& text, const char* slot) {
    rapidjson::Document doc = answer(text, slot);
    SaveResult out;
    out.version = string_member(doc, "version", slot);
    if (doc.HasMember("saved_at")) out.saved_at = string_member(doc, "saved_at", slot);
    out.bytes_written = size_member(doc, "bytes_written");
    out.messages_written = size_member(doc, "messages_written");
    return out;
}

LeaseGrant lease_grant(const std::string& text) {
    rapidjson::Document doc = answer(text, "lease");
    LeaseGrant out;
    auto token = doc.FindMember("fencing_token");
    if (token == doc.MemberEnd() || !token->value.IsInt64()) {
        throw Error(ErrorKind::kProtocol, "store answer to lease: \"fencing_token\" is missing");
    }
    out.fencing_token = token->value.GetInt64();
    out.holder = string_member(doc, "holder", "lease");
    out.expires_at = string_member(doc, "expires_at", "lease");
    return out;
}

std::string lease_request(std::string_view op, std::string_view holder, int64_t ttl_ms,
                          std::optional<int64_t> token,
                          std::optional<int64_t> min_token = std::nullopt) {
    return request([&](Writer& w) {
        w.Key("op");
        put(w, op);
        w.Key("holder");
        put(w, holder);
        w.Key("ttl_ms");
        w.Int64(ttl_ms);
        put_fencing(w, token);
        if (min_token) {
            w.Key("min_fencing_token");
            w.Int64(*min_token);
        }
    });
}

const std::string& checked_id(const ConversationParts& parts) {
    if (parts.conversation_id.empty()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "conversation_id: empty (a stored conversation needs its id)");
    }
    return parts.conversation_id;
}

std::string snapshot_text(const ConversationParts& parts) {
    return write_conversation_parts(parts, {.pretty = false});
}

}  // namespace

// ---- restore (persistence.20-22) ----

ConversationParts restore_parts(std::string_view snapshot_json) {
    // The reader's store-restore variant drops each orphan and names it; logging is ours, once.
    std::vector<std::string> dropped;
    ConversationParts parts = read_conversation_parts(snapshot_json, &dropped);
    if (!dropped.empty()) {
        std::string ids;
        for (const std::string& id : dropped) ids += (ids.empty() ? "\"" : ", \"") + id + "\"";
        NUCLEO_LOG_WARN(
            "restoring conversation \"{}\": dropped {} tool_result(s) whose tool_use appears "
            "nowhere in the transcript (a provider refuses the whole conversation over one): "
            "tool_use ids {}",
            parts.conversation_id, dropped.size(), ids);
    }
    return parts;
}

// ---- PersistentStore ----

StoreCapabilities PersistentStore::capabilities() const {
    rapidjson::Document doc = answer(store_.capabilities(), "capabilities");
    auto flag = [&](const char* key) {
        auto it = doc.FindMember(key);
        return it != doc.MemberEnd() && it->value.IsBool() && it->value.GetBool();
    };
    return {flag("persistent"), flag("session"), flag("version_history"), flag("lease")};
}

SaveResult PersistentStore::create(std::string_view principal, const ConversationParts& parts,
                                   std::string_view title,
                                   std::optional<int64_t> fencing_token) const {
    const std::string& id = checked_id(parts);
    const std::string body = request([&](Writer& w) {
        w.Key("snapshot");
        put_raw(w, snapshot_text(parts), rapidjson::kObjectType);
        w.Key("title");
        put(w, title);
        put_fencing(w, fencing_token);
    });
    return save_result(store_.create_conversation(principal, id, body), "create_conversation");
}

SaveResult PersistentStore::update(std::string_view principal, std::string_view conversation_id,
                                   std::string_view base_version, const SnapshotDelta& delta,
                                   std::optional<int64_t> fencing_token) const {
    const std::string body = request([&](Writer& w) {
        w.Key("base_version");
        put(w, base_version);
        w.Key("changes");
        put_raw(w, delta.changes_json(), rapidjson::kObjectType);
        put_fencing(w, fencing_token);
    });
    return save_result(store_.update_conversation(principal, conversation_id, body),
                       "update_conversation");
}

SaveResult PersistentStore::replace(std::string_view principal, const ConversationParts& parts,
                                    std::string_view base_version,
                                    std::optional<int64_t> fencing_token) const {
    const std::string& id = checked_id(parts);
    const std::string body = request([&](Writer& w) {
        if (!base_version.empty()) {
            w.Key("base_version");
            put(w, base_version);
        }
        w.Key("snapshot");
        put_raw(w, snapshot_text(parts), rapidjson::kObjectType);
        put_fencing(w, fencing_token);
    });
    return save_result(store_.update_conversation(principal, id, body), "update_conversation");
}

ConversationParts PersistentStore::load(std::string_view principal,
                                        std::string_view conversation_id) const {
    return restore_parts(load_document(principal, conversation_id));
}

std::string PersistentStore::load_document(std::string_view principal,
                                           std::string_view conversation_id) const {
    return store_.load_conversation(principal, conversation_id);
}

std::vector<StoredVersion> PersistentStore::versions(std::string_view principal,
                                                     std::string_view conversation_id) const {
    return history(principal, conversation_id).versions;
}

VersionHistory PersistentStore::history(std::string_view principal,
                                        std::string_view conversation_id) const {
    rapidjson::Document doc =
        answer(store_.version_history(principal, conversation_id), "version_history");
    VersionHistory out;
    auto list = doc.FindMember("versions");
    if (list == doc.MemberEnd() || !list->value.IsArray()) {
        throw Error(ErrorKind::kProtocol, "store answer to version_history: no \"versions\" array");
    }
    for (const auto& v : list->value.GetArray()) {
        out.versions.push_back({string_member(v, "version", "version_history"),
                                string_member(v, "saved_at", "version_history")});
    }
    if (auto token = doc.FindMember("fencing_token");
        token != doc.MemberEnd() && token->value.IsInt64()) {
        out.fencing_token = token->value.GetInt64();
    }
    return out;
}

LatestVersion PersistentStore::latest(std::string_view principal,
                                      std::string_view conversation_id) const {
    LatestVersion out;
    if (!store_.has_latest_version()) {
        VersionHistory all = history(principal, conversation_id);
        if (!all.versions.empty()) out.version = std::move(all.versions.back());
        out.fencing_token = all.fencing_token;
        return out;
    }
    rapidjson::Document doc =
        answer(store_.latest_version(principal, conversation_id), "latest_version");
    if (auto v = doc.FindMember("version"); v == doc.MemberEnd() || !v->value.IsNull()) {
        out.version = StoredVersion{string_member(doc, "version", "latest_version"),
                                    doc.HasMember("saved_at")
                                        ? string_member(doc, "saved_at", "latest_version")
                                        : std::string()};
    }
    if (auto token = doc.FindMember("fencing_token");
        token != doc.MemberEnd() && !token->value.IsNull()) {
        if (!token->value.IsInt64()) {
            throw Error(ErrorKind::kProtocol,
                        "store answer to latest_version: \"fencing_token\" is not an integer");
        }
        out.fencing_token = token->value.GetInt64();
    }
    return out;
}

ConversationParts PersistentStore::load_version(std::string_view principal,
                                                std::string_view conversation_id,
                                                std::string_view version) const {
    return restore_parts(load_version_document(principal, conversation_id, version));
}

std::string PersistentStore::load_version_document(std::string_view principal,
                                                   std::string_view conversation_id,
                                                   std::string_view version) const {
    return store_.load_version(principal, conversation_id, version);
}

ConversationPage PersistentStore::list(std::string_view principal, std::size_t limit,
                                       const std::optional<std::string>& cursor) const {
    const std::string query = request([&](Writer& w) {
        w.Key("limit");
        w.Uint64(limit);
        if (cursor) {
            w.Key("cursor");
            put(w, *cursor);
        }
    });
    rapidjson::Document doc =
        answer(store_.list_conversations(principal, query), "list_conversations");
    ConversationPage page;
    auto list = doc.FindMember("conversations");
    if (list == doc.MemberEnd() || !list->value.IsArray()) {
        throw Error(ErrorKind::kProtocol,
                    "store answer to list_conversations: no \"conversations\" array");
    }
    for (const auto& c : list->value.GetArray()) {
        const char* slot = "list_conversations";
        page.conversations.push_back(
            {string_member(c, "conversation_id", slot), string_member(c, "title", slot),
             string_member(c, "created_at", slot), string_member(c, "updated_at", slot)});
    }
    auto next = doc.FindMember("next_cursor");
    if (next != doc.MemberEnd() && next->value.IsString()) {
        page.next_cursor = std::string(next->value.GetString(), next->value.GetStringLength());
    }
    return page;
}

void PersistentStore::remove(std::string_view principal, std::string_view conversation_id) const {
    store_.delete_conversation(principal, conversation_id);
}

// ---- SessionStore ----

std::optional<ConversationParts> SessionStore::get(std::string_view principal,
                                                   std::string_view conversation_id) const {
    auto entry = get_entry(principal, conversation_id);
    if (!entry) return std::nullopt;
    return std::move(entry->parts);
}

// persistence.101: an entry is an envelope carrying the durable version it mirrors.
std::optional<SessionEntry> SessionStore::get_entry(std::string_view principal,
                                                    std::string_view conversation_id) const {
    std::optional<std::string> text = store_.session_get(principal, conversation_id);
    if (!text) return std::nullopt;
    rapidjson::Document doc;
    // limits.120: a text the guard refuses goes on as a plain document, whose reader refuses it
    // with the reason.
    const bool parsed = !json_guard::parse(doc, *text, json_guard::kDocumentMaxDepth);
    auto snapshot = !parsed || !doc.IsObject() ? doc.MemberEnd() : doc.FindMember("snapshot");
    if (snapshot == doc.MemberEnd()) {
        // A plain document: it mirrors no known durable version.
        return SessionEntry{restore_parts(*text), {}};
    }
    if (!snapshot->value.IsObject()) {
        throw Error(ErrorKind::kProtocol, "session entry of conversation '" +
                                              std::string(conversation_id) +
                                              "': \"snapshot\" is not an object");
    }
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    snapshot->value.Accept(w);
    SessionEntry entry{restore_parts(std::string_view(buffer.GetString(), buffer.GetSize())), {}};
    if (auto v = doc.FindMember("durable_version"); v != doc.MemberEnd() && v->value.IsString()) {
        entry.durable_version.assign(v->value.GetString(), v->value.GetStringLength());
    }
    return entry;
}

void SessionStore::put(std::string_view principal, const ConversationParts& parts,
                       int64_t ttl_ms) const {
    put(principal, parts, {}, ttl_ms);
}

void SessionStore::put(std::string_view principal, const ConversationParts& parts,
                       std::string_view durable_version, int64_t ttl_ms) const {
    const std::string envelope = request([&](Writer& w) {
        w.Key("durable_version");
        put_string(w, durable_version);
        w.Key("snapshot");
        put_raw(w, snapshot_text(parts), rapidjson::kObjectType);
    });
    store_.session_put(principal, checked_id(parts), envelope, ttl_ms);
}

bool SessionStore::apply(std::string_view principal, std::string_view conversation_id,
                         std::string_view base_version, std::string_view version,
                         const SnapshotDelta& delta, int64_t ttl_ms) const {
    const std::string body = request([&](Writer& w) {
        w.Key("base_version");
        put_string(w, base_version);
        w.Key("version");
        put_string(w, version);
        w.Key("changes");
        put_raw(w, delta.changes_json(), rapidjson::kObjectType);
    });
    return store_.session_apply(principal, conversation_id, body, ttl_ms);
}

void SessionStore::invalidate(std::string_view principal, std::string_view conversation_id) const {
    store_.session_invalidate(principal, conversation_id);
}

// ---- LeaseStore ----

LeaseGrant LeaseStore::acquire(std::string_view principal, std::string_view conversation_id,
                               std::string_view holder, int64_t ttl_ms,
                               std::optional<int64_t> min_fencing_token) const {
    return lease_grant(store_.lease(
        principal, conversation_id,
        lease_request("acquire", holder, ttl_ms, std::nullopt, min_fencing_token)));
}

LeaseGrant LeaseStore::renew(std::string_view principal, std::string_view conversation_id,
                             std::string_view holder, int64_t ttl_ms,
                             std::optional<int64_t> fencing_token) const {
    return lease_grant(store_.lease(principal, conversation_id,
                                    lease_request("renew", holder, ttl_ms, fencing_token)));
}

void LeaseStore::release(std::string_view principal, std::string_view conversation_id,
                         std::string_view holder) const {
    (void)store_.lease(principal, conversation_id,
                       lease_request("release", holder, 0, std::nullopt));
}

}  // namespace nucleo
