// The documents of "nucleo.store/1" and the stored form of a conversation (store_common.hpp).
#include "store_common.hpp"
#include "nucleo/wire/json_guard.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <limits>

#include "nucleo/plugin.hpp"

namespace nucleo::stores {

namespace {

using rapidjson::Value;
constexpr unsigned kParseFlags = rapidjson::kParseFullPrecisionFlag;

[[noreturn]] void invalid(const std::string& message) {
    fail(NUCLEO_ERR_INVALID_ARGUMENT, message);
}

// limits.120: a snapshot or a change set is read under the document depth limit, so a store
// never recurses through a deep text (its Accept below included).
void parse_object(rapidjson::Document& doc, std::string_view json, const char* what) {
    if (auto refusal = json_guard::parse<kParseFlags>(doc, json, json_guard::kDocumentMaxDepth)) {
        invalid(std::string(what) + ": " + refusal->text());
    }
    if (!doc.IsObject()) invalid(std::string(what) + ": expected a JSON object");
}

std::string text_of(const Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
}

std::string string_of(const Value& v) {
    return std::string(v.GetString(), v.GetStringLength());
}

void check_schema_version(const Value& doc, const char* what) {
    auto it = doc.FindMember("schema_version");
    if (it == doc.MemberEnd()) return;  // absent: read as version 1
    if (!it->value.IsInt() || it->value.GetInt() != 1) {
        invalid(std::string(what) + ".schema_version: unsupported (this store reads version 1)");
    }
}

std::optional<int64_t> optional_int(const Value& doc, const char* key, const char* what) {
    auto it = doc.FindMember(key);
    if (it == doc.MemberEnd() || it->value.IsNull()) return std::nullopt;
    if (!it->value.IsInt64()) invalid(std::string(what) + "." + key + ": expected an integer");
    return it->value.GetInt64();
}

std::optional<std::string> optional_string(const Value& doc, const char* key, const char* what) {
    auto it = doc.FindMember(key);
    if (it == doc.MemberEnd() || it->value.IsNull()) return std::nullopt;
    if (!it->value.IsString()) invalid(std::string(what) + "." + key + ": expected a string");
    return string_of(it->value);
}

std::size_t index_of(const Value& v, const std::string& where) {
    if (!v.IsUint64()) invalid(where + ": expected a non-negative integer");
    return static_cast<std::size_t>(v.GetUint64());
}

StoredDocument split(const Value& doc, const std::string& where) {
    if (!doc.IsObject()) invalid(where + ": expected a conversation document (a JSON object)");
    auto version = doc.FindMember("schema_version");
    if (version == doc.MemberEnd() || !version->value.IsInt() || version->value.GetInt() != 1) {
        invalid(where + ".schema_version: a conversation document of schema_version 1 is required");
    }
    StoredDocument out;
    bool saw_messages = false;
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
        std::string key = string_of(m->name);
        if (key == "messages") {
            if (!m->value.IsArray()) invalid(where + ".messages: expected an array");
            for (std::size_t i = 0; i < m->value.Size(); ++i) {
                if (!m->value[i].IsObject()) {
                    invalid(where + ".messages[" + std::to_string(i) + "]: expected an object");
                }
                out.messages.push_back(text_of(m->value[i]));
            }
            saw_messages = true;
            out.fields.emplace_back(std::move(key), std::string());
        } else {
            out.fields.emplace_back(std::move(key), text_of(m->value));
        }
    }
    if (!saw_messages) invalid(where + ".messages: missing (an array is required)");
    return out;
}

template <typename Fn>
std::string write_object(Fn&& fn) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    fn(w);
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize());
}

void put_string(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

void fail(int32_t status, const std::string& message) {
    throw plugin::Failure(status, message);
}

std::string describe(std::string_view id) {
    constexpr std::size_t kShown = 60;
    std::string out = "\"";
    for (std::size_t i = 0; i < id.size() && i < kShown; ++i) {
        const auto c = static_cast<unsigned char>(id[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (id.size() > kShown) out += "...";
    out += '"';
    if (id.size() > kShown) out += " (" + std::to_string(id.size()) + " bytes)";
    return out;
}

void refuse_nul(std::string_view value, const char* role) {
    const std::size_t at = value.find('\0');
    if (at == std::string_view::npos) return;
    invalid(std::string(role) + " " + describe(value) + " holds a NUL byte at position " +
            std::to_string(at) + ", which this store's text type cannot keep (refused, not cut)");
}

// ---- changes ----

Changes Changes::parse(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "changes");
    Changes out;
    if (auto f = doc.FindMember("fields"); f != doc.MemberEnd()) {
        if (!f->value.IsArray()) invalid("changes.fields: expected an array");
        for (std::size_t i = 0; i < f->value.Size(); ++i) {
            const std::string where = "changes.fields[" + std::to_string(i) + "]";
            const Value& item = f->value[i];
            if (!item.IsObject()) invalid(where + ": expected an object");
            FieldChange change;
            auto key = optional_string(item, "key", where.c_str());
            if (!key || key->empty() || *key == "messages") {
                invalid(where + ".key: a top-level field name other than \"messages\" is required");
            }
            change.key = *key;
            auto index = item.FindMember("index");
            if (index == item.MemberEnd()) invalid(where + ".index: missing");
            change.index = index_of(index->value, where + ".index");
            auto removed = item.FindMember("removed");
            const bool is_removed =
                removed != item.MemberEnd() && removed->value.IsBool() && removed->value.GetBool();
            auto value = item.FindMember("value");
            if (!is_removed) {
                if (value == item.MemberEnd()) invalid(where + ".value: missing");
                change.value = text_of(value->value);
            }
            out.fields.push_back(std::move(change));
        }
    }
    if (auto m = doc.FindMember("messages"); m != doc.MemberEnd()) {
        if (!m->value.IsArray()) invalid("changes.messages: expected an array of splices");
        for (std::size_t i = 0; i < m->value.Size(); ++i) {
            const std::string where = "changes.messages[" + std::to_string(i) + "]";
            const Value& item = m->value[i];
            if (!item.IsObject()) invalid(where + ": expected an object");
            Splice s;
            auto at = item.FindMember("at");
            if (at == item.MemberEnd()) invalid(where + ".at: missing");
            s.at = index_of(at->value, where + ".at");
            if (auto r = item.FindMember("remove"); r != item.MemberEnd()) {
                s.remove = index_of(r->value, where + ".remove");
            }
            if (auto ins = item.FindMember("insert"); ins != item.MemberEnd()) {
                if (!ins->value.IsArray()) invalid(where + ".insert: expected an array");
                for (std::size_t k = 0; k < ins->value.Size(); ++k) {
                    if (!ins->value[k].IsObject()) {
                        invalid(where + ".insert[" + std::to_string(k) + "]: expected a message");
                    }
                    s.insert.push_back(text_of(ins->value[k]));
                }
            }
            if (!out.splices.empty()) {
                const Splice& prev = out.splices.back();
                if (s.at < prev.at + prev.remove || (s.at == prev.at && prev.remove == 0)) {
                    invalid(where + ".at: splices must be in ascending order and not overlap");
                }
            }
            out.splices.push_back(std::move(s));
        }
    }
    return out;
}

std::size_t Changes::checked_count(std::size_t count) const {
    std::size_t removed = 0;
    std::size_t inserted_count = 0;
    for (std::size_t i = 0; i < splices.size(); ++i) {
        const Splice& s = splices[i];
        if (s.at > count || s.remove > count - s.at) {
            invalid("changes.messages[" + std::to_string(i) + "]: splice at " +
                    std::to_string(s.at) + " removing " + std::to_string(s.remove) +
                    " lies outside the base version's " + std::to_string(count) + " messages");
        }
        removed += s.remove;
        inserted_count += s.insert.size();
    }
    return count - removed + inserted_count;
}

std::size_t Changes::inserted() const {
    std::size_t n = 0;
    for (const Splice& s : splices) n += s.insert.size();
    return n;
}

// ---- stored document ----

StoredDocument StoredDocument::from_snapshot(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "snapshot");
    return split(doc, "snapshot");
}

std::size_t StoredDocument::messages_index() const {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].first == "messages") return i;
    }
    return fields.size();
}

std::string StoredDocument::to_json() const {
    std::size_t size = 2;
    for (const auto& [k, v] : fields) size += k.size() + v.size() + 4;
    for (const auto& m : messages) size += m.size() + 1;
    std::string out;
    out.reserve(size + 2);
    out += '{';
    bool first = true;
    for (const auto& [key, value] : fields) {
        if (!first) out += ',';
        first = false;
        rapidjson::StringBuffer kb;
        rapidjson::Writer<rapidjson::StringBuffer> kw(kb);
        put_string(kw, key);
        out.append(kb.GetString(), kb.GetSize());
        out += ':';
        if (key == "messages") {
            out += '[';
            for (std::size_t i = 0; i < messages.size(); ++i) {
                if (i > 0) out += ',';
                out += messages[i];
            }
            out += ']';
        } else {
            out += value;
        }
    }
    out += '}';
    return out;
}

void StoredDocument::apply(const Changes& changes) {
    (void)changes.checked_count(messages.size());
    // Splices from the last to the first, so earlier positions stay valid.
    for (auto s = changes.splices.rbegin(); s != changes.splices.rend(); ++s) {
        auto begin = messages.begin() + static_cast<std::ptrdiff_t>(s->at);
        messages.erase(begin, begin + static_cast<std::ptrdiff_t>(s->remove));
        messages.insert(messages.begin() + static_cast<std::ptrdiff_t>(s->at), s->insert.begin(),
                        s->insert.end());
    }
    // Changed fields leave their place and are put back at their new index, lowest first.
    std::vector<const FieldChange*> placed;
    for (const FieldChange& change : changes.fields) {
        std::erase_if(fields, [&](const auto& f) { return f.first == change.key; });
        if (change.value) placed.push_back(&change);
    }
    std::sort(placed.begin(), placed.end(),
              [](const FieldChange* a, const FieldChange* b) { return a->index < b->index; });
    for (const FieldChange* change : placed) {
        const std::size_t at = std::min(change->index, fields.size());
        fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(at),
                      {change->key, *change->value});
    }
}

std::size_t write_changes(const Changes& changes, ChangeWriter& writer) {
    std::size_t bytes = 0;
    for (auto s = changes.splices.rbegin(); s != changes.splices.rend(); ++s) {
        const auto at = static_cast<int64_t>(s->at);
        const auto end = at + static_cast<int64_t>(s->remove);
        if (s->remove > 0) writer.delete_messages(at, end);
        const int64_t shift =
            static_cast<int64_t>(s->insert.size()) - static_cast<int64_t>(s->remove);
        if (shift != 0) writer.shift_messages(end, shift);
        for (std::size_t k = 0; k < s->insert.size(); ++k) {
            bytes += writer.insert_message(at + static_cast<int64_t>(k), s->insert[k]);
        }
    }
    for (const FieldChange& f : changes.fields) {
        if (f.value) {
            bytes += writer.put_field(f.key, f.index, *f.value);
        } else {
            writer.delete_field(f.key);
        }
    }
    return bytes;
}

std::string replay(const std::vector<std::pair<std::string, std::string>>& kind_and_body) {
    StoredDocument doc;
    for (const auto& [kind, body] : kind_and_body) {
        if (kind == "snapshot") {
            doc = StoredDocument::from_snapshot(body);
        } else {
            doc.apply(Changes::parse(body));
        }
    }
    return doc.to_json();
}

// ---- requests ----

CreateRequest parse_create(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "create request");
    check_schema_version(doc, "create request");
    CreateRequest out;
    auto snapshot = doc.FindMember("snapshot");
    if (snapshot == doc.MemberEnd()) invalid("create request.snapshot: missing");
    out.snapshot = split(snapshot->value, "create request.snapshot");
    out.snapshot_text = out.snapshot.to_json();
    out.title = optional_string(doc, "title", "create request").value_or("");
    if (auto e = doc.FindMember("embedding"); e != doc.MemberEnd() && !e->value.IsNull()) {
        out.embedding = text_of(e->value);
    }
    out.fencing_token = optional_int(doc, "fencing_token", "create request");
    return out;
}

UpdateRequest parse_update(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "update request");
    check_schema_version(doc, "update request");
    UpdateRequest out;
    out.base_version = optional_string(doc, "base_version", "update request");
    out.fencing_token = optional_int(doc, "fencing_token", "update request");
    auto changes = doc.FindMember("changes");
    auto snapshot = doc.FindMember("snapshot");
    const bool has_changes = changes != doc.MemberEnd();
    const bool has_snapshot = snapshot != doc.MemberEnd();
    if (has_changes == has_snapshot) {
        invalid("update request: exactly one of \"changes\" and \"snapshot\" is required");
    }
    if (has_changes) {
        if (!out.base_version) {
            invalid(
                "update request.base_version: required with \"changes\" (a change is "
                "relative to the version it was computed from)");
        }
        out.changes_text = text_of(changes->value);
        out.changes = Changes::parse(out.changes_text);
    } else {
        out.snapshot = split(snapshot->value, "update request.snapshot");
        out.snapshot_text = out.snapshot->to_json();
    }
    return out;
}

SessionDelta parse_session_delta(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "session delta");
    check_schema_version(doc, "session delta");
    SessionDelta out;
    auto base = optional_string(doc, "base_version", "session delta");
    auto version = optional_string(doc, "version", "session delta");
    if (!base || base->empty()) invalid("session delta.base_version: a version id is required");
    if (!version || version->empty()) invalid("session delta.version: a version id is required");
    auto changes = doc.FindMember("changes");
    if (changes == doc.MemberEnd()) invalid("session delta.changes: missing");
    out.base_version = std::move(*base);
    out.version = std::move(*version);
    out.changes = Changes::parse(text_of(changes->value));
    return out;
}

std::optional<SessionEnvelope> parse_session_envelope(std::string_view text) {
    rapidjson::Document doc;
    if (json_guard::parse<kParseFlags>(doc, text, json_guard::kDocumentMaxDepth) || !doc.IsObject()) {
        return std::nullopt;
    }
    auto version = doc.FindMember("durable_version");
    auto snapshot = doc.FindMember("snapshot");
    if (version == doc.MemberEnd() || !version->value.IsString() ||
        version->value.GetStringLength() == 0 || snapshot == doc.MemberEnd()) {
        return std::nullopt;
    }
    try {
        return SessionEnvelope{string_of(version->value), split(snapshot->value, "snapshot")};
    } catch (const nucleo::plugin::Failure&) {
        return std::nullopt;  // not a conversation document: kept as it came
    }
}

std::string session_envelope_text(std::string_view durable_version, const StoredDocument& snapshot) {
    return write_object([&](rapidjson::Writer<rapidjson::StringBuffer>& w) {
        w.Key("durable_version");
        put_string(w, durable_version);
        w.Key("snapshot");
        const std::string doc = snapshot.to_json();
        w.RawValue(doc.data(), doc.size(), rapidjson::kObjectType);
    });
}

ListQuery parse_list(std::string_view json) {
    ListQuery out;
    if (json.empty()) return out;
    rapidjson::Document doc;
    parse_object(doc, json, "list query");
    check_schema_version(doc, "list query");
    if (auto limit = optional_int(doc, "limit", "list query")) {
        if (*limit < 1 || *limit > 1000) invalid("list query.limit: must be within 1..1000");
        out.limit = static_cast<std::size_t>(*limit);
    }
    out.cursor = optional_string(doc, "cursor", "list query");
    return out;
}

LeaseRequest parse_lease(std::string_view json) {
    rapidjson::Document doc;
    parse_object(doc, json, "lease request");
    check_schema_version(doc, "lease request");
    LeaseRequest out;
    const auto op = optional_string(doc, "op", "lease request");
    if (op == "acquire") {
        out.op = LeaseRequest::Op::kAcquire;
    } else if (op == "renew") {
        out.op = LeaseRequest::Op::kRenew;
    } else if (op == "release") {
        out.op = LeaseRequest::Op::kRelease;
    } else {
        invalid("lease request.op: expected \"acquire\", \"renew\" or \"release\"");
    }
    out.holder = optional_string(doc, "holder", "lease request").value_or("");
    if (out.holder.empty()) invalid("lease request.holder: a non-empty string is required");
    out.ttl_ms = optional_int(doc, "ttl_ms", "lease request").value_or(0);
    if (out.op != LeaseRequest::Op::kRelease && out.ttl_ms <= 0) {
        invalid("lease request.ttl_ms: a positive duration is required to acquire or renew");
    }
    out.fencing_token = optional_int(doc, "fencing_token", "lease request");
    out.min_fencing_token = optional_int(doc, "min_fencing_token", "lease request");
    return out;
}

std::optional<int64_t> check_fencing(std::optional<int64_t> kept, std::optional<int64_t> presented,
                                     std::string_view id) {
    if (!kept) return presented;
    if (!presented) {
        fail(NUCLEO_ERR_OWNERSHIP,
             "conversation " + describe(id) + " is saved under fencing token " +
                 std::to_string(*kept) +
                 ", and this save carries none: a writer without the ownership lease is refused");
    }
    if (*presented < *kept) {
        fail(NUCLEO_ERR_OWNERSHIP,
             "stale fencing token " + std::to_string(*presented) + " for conversation " +
                 describe(id) + ": a newer owner saved under token " + std::to_string(*kept) +
                 " (the lease was lost or taken over)");
    }
    return presented;
}

void check_base(const UpdateRequest& request, std::string_view head, std::string_view id) {
    if (!request.base_version || *request.base_version == head) return;
    fail(NUCLEO_ERR_OWNERSHIP, "conversation " + describe(id) + " is at version " +
                                   std::string(head) + ", but this save is based on version " +
                                   *request.base_version + ": another writer saved in between");
}

// ---- answers ----

std::string capabilities_answer(bool persistent, bool session, bool version_history, bool lease) {
    return write_object([&](auto& w) {
        w.Key("persistent");
        w.Bool(persistent);
        w.Key("session");
        w.Bool(session);
        w.Key("version_history");
        w.Bool(version_history);
        w.Key("lease");
        w.Bool(lease);
    });
}

std::string version_answer(std::string_view version, std::string_view saved_at,
                           std::size_t bytes_written, std::size_t messages_written) {
    return write_object([&](auto& w) {
        w.Key("version");
        put_string(w, version);
        w.Key("saved_at");
        put_string(w, saved_at);
        w.Key("bytes_written");
        w.Uint64(bytes_written);
        w.Key("messages_written");
        w.Uint64(messages_written);
    });
}

std::string list_answer(const std::vector<ListedConversation>& items,
                        const std::optional<std::string>& next_cursor) {
    return write_object([&](auto& w) {
        w.Key("conversations");
        w.StartArray();
        for (const ListedConversation& c : items) {
            w.StartObject();
            w.Key("conversation_id");
            put_string(w, c.id);
            w.Key("title");
            put_string(w, c.title);
            w.Key("created_at");
            put_string(w, c.created_at);
            w.Key("updated_at");
            put_string(w, c.updated_at);
            w.EndObject();
        }
        w.EndArray();
        w.Key("next_cursor");
        if (next_cursor) {
            put_string(w, *next_cursor);
        } else {
            w.Null();
        }
    });
}

std::string history_answer(const std::vector<VersionEntry>& versions,
                           std::optional<int64_t> fencing_token) {
    return write_object([&](auto& w) {
        if (fencing_token) {
            w.Key("fencing_token");
            w.Int64(*fencing_token);
        }
        w.Key("versions");
        w.StartArray();
        for (const VersionEntry& v : versions) {
            w.StartObject();
            w.Key("version");
            put_string(w, v.version);
            w.Key("saved_at");
            put_string(w, v.saved_at);
            w.EndObject();
        }
        w.EndArray();
    });
}

std::string latest_answer(const std::optional<VersionEntry>& newest,
                          std::optional<int64_t> fencing_token) {
    return write_object([&](auto& w) {
        if (fencing_token) {
            w.Key("fencing_token");
            w.Int64(*fencing_token);
        }
        w.Key("version");
        if (!newest) {
            w.Null();
            return;
        }
        put_string(w, newest->version);
        w.Key("saved_at");
        put_string(w, newest->saved_at);
    });
}

std::string lease_answer(int64_t fencing_token, std::string_view holder,
                         std::string_view expires_at) {
    return write_object([&](auto& w) {
        w.Key("fencing_token");
        w.Int64(fencing_token);
        w.Key("holder");
        put_string(w, holder);
        w.Key("expires_at");
        put_string(w, expires_at);
    });
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms % 1000));
    return buf;
}

std::string rfc3339_now() {
    return rfc3339(std::chrono::system_clock::now());
}

}  // namespace nucleo::stores
