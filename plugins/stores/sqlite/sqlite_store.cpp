// nucleo-sqlite: the embedded default persistent store (persistence.2) over libsqlite3.
//
// One file (config "path") in WAL mode with a busy timeout, so several processes may share it;
// the schema is created on first open (PRAGMA user_version 1). Statements are prepared once and
// bound, never built from values. Layout (docs/store-documents.md "SQLite"):
//   conversations  one row per (principal, conversation id): title, times, head version,
//                  message count, the highest fencing token seen
//   fields         the document's top-level fields, one row each, in document order
//   messages       the latest messages, one row per position
//   versions       every save: version 1 is the full snapshot, later ones the "changes" text
// A save is one IMMEDIATE transaction writing only the rows the change touches; a version is
// rebuilt by replaying the changes after the nearest snapshot. Keys are bound as BLOBs, so ids
// with quotes, NULs or any length are kept exactly.
//
// Config: {"path": "file.db" (required), "busy_timeout_ms": 5000, "synchronous": "FULL"|"NORMAL"}.
// Decision: synchronous FULL by default -- a save the caller saw committed survives a power cut,
// not only a crash of the process.
#include <rapidjson/document.h>

#include <filesystem>
#include <sqlite3.h>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nucleo/plugin.hpp"
#include "store_common.hpp"

namespace {

namespace st = nucleo::stores;
using nucleo::plugin::Failure;

constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE conversations(
  pk INTEGER PRIMARY KEY AUTOINCREMENT,
  principal BLOB NOT NULL,
  conversation_id BLOB NOT NULL,
  title TEXT NOT NULL,
  embedding TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  head INTEGER NOT NULL,
  message_count INTEGER NOT NULL,
  fencing_token INTEGER,
  UNIQUE(principal, conversation_id));
CREATE INDEX conversations_by_principal ON conversations(principal, pk);
CREATE TABLE fields(
  conv INTEGER NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
  key TEXT NOT NULL,
  ord INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY(conv, key));
CREATE TABLE messages(
  conv INTEGER NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
  pos INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY(conv, pos));
CREATE TABLE versions(
  conv INTEGER NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  saved_at TEXT NOT NULL,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY(conv, version));
)sql";

[[noreturn]] void sqlite_fail(sqlite3* db, int rc, const std::string& what) {
    const int primary = rc & 0xff;
    const int32_t status = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? NUCLEO_ERR_TRANSPORT
                                                                              : NUCLEO_ERR_PLUGIN;
    throw Failure(status, "sqlite store: " + what + ": " +
                              (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

/// A cached prepared statement in use: bound on the way in, reset on the way out.
class Stmt {
  public:
    Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    ~Stmt() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    Stmt& blob(int i, std::string_view v) {
        check(sqlite3_bind_blob64(stmt_, i, v.empty() ? "" : v.data(), v.size(), SQLITE_TRANSIENT));
        return *this;
    }
    Stmt& text(int i, std::string_view v) {
        check(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
        return *this;
    }
    Stmt& integer(int i, int64_t v) {
        check(sqlite3_bind_int64(stmt_, i, v));
        return *this;
    }
    Stmt& maybe(int i, const std::optional<int64_t>& v) {
        check(v ? sqlite3_bind_int64(stmt_, i, *v) : sqlite3_bind_null(stmt_, i));
        return *this;
    }
    Stmt& maybe_text(int i, const std::optional<std::string>& v) {
        if (v) return text(i, *v);
        check(sqlite3_bind_null(stmt_, i));
        return *this;
    }
    /// True while a row is there.
    bool step() {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        sqlite_fail(db_, rc, "running \"" + std::string(sqlite3_sql(stmt_)).substr(0, 60) + "\"");
    }
    void run() { (void)step(); }
    int64_t col_int(int c) { return sqlite3_column_int64(stmt_, c); }
    bool col_null(int c) { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
    std::string col_text(int c) {
        const void* p = sqlite3_column_blob(stmt_, c);  // bytes as stored, NULs included
        const int n = sqlite3_column_bytes(stmt_, c);
        return p != nullptr ? std::string(static_cast<const char*>(p), static_cast<size_t>(n))
                            : std::string();
    }

  private:
    void check(int rc) {
        if (rc != SQLITE_OK) sqlite_fail(db_, rc, "binding a parameter");
    }
    sqlite3* db_;
    sqlite3_stmt* stmt_;
};

class SqliteStore final : public nucleo::plugin::Store {
  public:
    /// abi.109: the options a `sqlite` store takes.
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false, "required": ["path"],
      "properties": {
        "path": {"type": "string", "minLength": 1, "description": "the database file"},
        "busy_timeout_ms": {"type": "integer", "minimum": 0,
                            "description": "wait for a locked database, default 5000"},
        "synchronous": {"type": "string", "enum": ["FULL", "NORMAL"],
                        "description": "SQLite's synchronous pragma, default FULL"}
      }
    })";

    explicit SqliteStore(std::string_view config_json) {
        rapidjson::Document config;
        config.Parse(config_json.data(), config_json.size());
        if (config.HasParseError() || !config.IsObject()) {
            throw Failure(NUCLEO_ERR_CONFIG, "sqlite store: the config is not a JSON object");
        }
        auto path = config.FindMember("path");
        if (path == config.MemberEnd() || !path->value.IsString() ||
            path->value.GetStringLength() == 0) {
            throw Failure(NUCLEO_ERR_CONFIG,
                          "sqlite store: config \"path\" (the database file) is required");
        }
        int64_t busy_ms = 5000;
        if (auto b = config.FindMember("busy_timeout_ms"); b != config.MemberEnd()) {
            if (!b->value.IsInt64() || b->value.GetInt64() < 0) {
                throw Failure(NUCLEO_ERR_CONFIG, "sqlite store: busy_timeout_ms must be >= 0");
            }
            busy_ms = b->value.GetInt64();
        }
        std::string synchronous = "FULL";
        if (auto s = config.FindMember("synchronous"); s != config.MemberEnd()) {
            synchronous = s->value.IsString() ? s->value.GetString() : "";
            if (synchronous != "FULL" && synchronous != "NORMAL") {
                throw Failure(NUCLEO_ERR_CONFIG,
                              "sqlite store: synchronous must be \"FULL\" or \"NORMAL\"");
            }
        }
        const std::string file = path->value.GetString();
        // persistence.107: the default file lives in a per-user data folder that may not exist
        // yet: its missing parent folders are made (owner-only), never guessed elsewhere.
        if (const auto parent = std::filesystem::path(file).parent_path(); !parent.empty()) {
            std::error_code ec;
            if (!std::filesystem::is_directory(parent, ec)) {
                std::filesystem::create_directories(parent, ec);
                if (!ec) {
                    std::filesystem::permissions(parent, std::filesystem::perms::owner_all,
                                                 std::filesystem::perm_options::replace, ec);
                }
                if (ec) {
                    throw Failure(NUCLEO_ERR_CONFIG, "sqlite store: cannot make the folder \"" +
                                                         parent.string() + "\" of \"" + file +
                                                         "\": " + ec.message());
                }
            }
        }
        const int rc = sqlite3_open_v2(
            file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
            nullptr);
        if (rc != SQLITE_OK) {
            std::string message = "sqlite store: cannot open \"" + file + "\": " +
                                  (db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
            sqlite3_close_v2(db_);
            db_ = nullptr;
            throw Failure(NUCLEO_ERR_CONFIG, message);
        }
        try {
            sqlite3_busy_timeout(db_, static_cast<int>(busy_ms));
            exec("PRAGMA journal_mode=WAL");
            exec("PRAGMA foreign_keys=ON");
            exec(("PRAGMA synchronous=" + synchronous).c_str());
            migrate(file);
        } catch (...) {
            close();
            throw;
        }
    }
    ~SqliteStore() override { close(); }

    void capabilities(nucleo::plugin::Sink& out) override {
        out << st::capabilities_answer(true, false, true, false);
    }

    void create_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        st::CreateRequest req = st::parse_create(request_json);
        const std::string now = st::rfc3339_now();
        std::lock_guard lock(mu_);
        Tx tx(*this);
        {
            Stmt s = stmt("SELECT 1 FROM conversations WHERE principal=?1 AND conversation_id=?2");
            if (s.blob(1, principal).blob(2, id).step()) {
                st::fail(NUCLEO_ERR_INVALID_ARGUMENT,
                         "conversation " + st::describe(id) +
                             " exists already (create is the first save only)");
            }
        }
        stmt(
            "INSERT INTO conversations(principal, conversation_id, title, embedding, created_at, "
            "updated_at, head, message_count, fencing_token) VALUES(?1,?2,?3,?4,?5,?5,1,?6,?7)")
            .blob(1, principal)
            .blob(2, id)
            .text(3, req.title)
            .maybe_text(4, req.embedding)
            .text(5, now)
            .integer(6, static_cast<int64_t>(req.snapshot.messages.size()))
            .maybe(7, req.fencing_token)
            .run();
        const int64_t conv = sqlite3_last_insert_rowid(db_);
        std::size_t bytes = write_document(conv, req.snapshot);
        bytes += add_version(conv, 1, now, "snapshot", req.snapshot_text);
        tx.commit();
        out << st::version_answer("1", now, bytes, req.snapshot.messages.size());
    }

    void update_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        st::UpdateRequest req = st::parse_update(request_json);
        const std::string now = st::rfc3339_now();
        std::lock_guard lock(mu_);
        Tx tx(*this);
        int64_t conv = 0, head = 0, count = 0;
        std::optional<int64_t> kept;
        {
            Stmt s = stmt(
                "SELECT pk, head, message_count, fencing_token FROM conversations "
                "WHERE principal=?1 AND conversation_id=?2");
            if (!s.blob(1, principal).blob(2, id).step()) not_found(id);
            conv = s.col_int(0);
            head = s.col_int(1);
            count = s.col_int(2);
            if (!s.col_null(3)) kept = s.col_int(3);
        }
        const std::optional<int64_t> token = st::check_fencing(kept, req.fencing_token, id);
        st::check_base(req, std::to_string(head), id);
        std::size_t bytes = 0, written = 0;
        int64_t new_count = 0;
        if (req.changes) {
            new_count =
                static_cast<int64_t>(req.changes->checked_count(static_cast<std::size_t>(count)));
            bytes += apply_changes(conv, *req.changes);
            written = req.changes->inserted();
            bytes += add_version(conv, head + 1, now, "changes", req.changes_text);
        } else {
            stmt("DELETE FROM messages WHERE conv=?1").integer(1, conv).run();
            stmt("DELETE FROM fields WHERE conv=?1").integer(1, conv).run();
            bytes += write_document(conv, *req.snapshot);
            new_count = static_cast<int64_t>(req.snapshot->messages.size());
            written = req.snapshot->messages.size();
            bytes += add_version(conv, head + 1, now, "snapshot", req.snapshot_text);
        }
        stmt(
            "UPDATE conversations SET head=?2, message_count=?3, fencing_token=?4, updated_at=?5 "
            "WHERE pk=?1")
            .integer(1, conv)
            .integer(2, head + 1)
            .integer(3, new_count)
            .maybe(4, token)
            .text(5, now)
            .run();
        tx.commit();
        out << st::version_answer(std::to_string(head + 1), now, bytes, written);
    }

    void load_conversation(std::string_view principal, std::string_view id,
                           nucleo::plugin::Sink& out) override {
        std::string text;
        {
            std::lock_guard lock(mu_);
            Tx tx(*this, false);
            const int64_t conv = find(principal, id);
            st::StoredDocument doc;
            Stmt f = stmt("SELECT key, value FROM fields WHERE conv=?1 ORDER BY ord");
            f.integer(1, conv);
            while (f.step()) doc.fields.emplace_back(f.col_text(0), f.col_text(1));
            Stmt m = stmt("SELECT body FROM messages WHERE conv=?1 ORDER BY pos");
            m.integer(1, conv);
            while (m.step()) doc.messages.push_back(m.col_text(0));
            text = doc.to_json();
        }
        out << text;
    }

    void delete_conversation(std::string_view principal, std::string_view id) override {
        std::lock_guard lock(mu_);
        stmt("DELETE FROM conversations WHERE principal=?1 AND conversation_id=?2")
            .blob(1, principal)
            .blob(2, id)
            .run();
        if (sqlite3_changes(db_) == 0) not_found(id);
    }

    void list_conversations(std::string_view principal, std::string_view query_json,
                            nucleo::plugin::Sink& out) override {
        const st::ListQuery query = st::parse_list(query_json);
        const int64_t after = query.cursor ? parse_cursor(*query.cursor) : 0;
        std::vector<st::ListedConversation> page;
        std::optional<std::string> next;
        {
            std::lock_guard lock(mu_);
            Stmt s = stmt(
                "SELECT pk, conversation_id, title, created_at, updated_at FROM "
                "conversations WHERE principal=?1 AND pk>?2 ORDER BY pk LIMIT ?3");
            s.blob(1, principal)
                .integer(2, after)
                .integer(3, static_cast<int64_t>(query.limit) + 1);
            int64_t last = after;
            while (s.step()) {
                if (page.size() == query.limit) {
                    next = std::to_string(last);
                    break;
                }
                last = s.col_int(0);
                page.push_back({s.col_text(1), s.col_text(2), s.col_text(3), s.col_text(4)});
            }
        }
        out << st::list_answer(page, next);
    }

    void version_history(std::string_view principal, std::string_view id,
                         nucleo::plugin::Sink& out) override {
        std::vector<st::VersionEntry> versions;
        std::optional<int64_t> token;
        {
            std::lock_guard lock(mu_);
            Tx tx(*this, false);
            const int64_t conv = find(principal, id);
            Stmt s = stmt("SELECT version, saved_at FROM versions WHERE conv=?1 ORDER BY version");
            s.integer(1, conv);
            while (s.step()) versions.push_back({std::to_string(s.col_int(0)), s.col_text(1)});
            Stmt f = stmt("SELECT fencing_token FROM conversations WHERE pk=?1");
            f.integer(1, conv);
            if (f.step() && !f.col_null(0)) token = f.col_int(0);
        }
        out << st::history_answer(versions, token);
    }

    /// abi.135: the newest row of the version index and the token, in one read transaction.
    void latest_version(std::string_view principal, std::string_view id,
                        nucleo::plugin::Sink& out) {
        std::optional<st::VersionEntry> newest;
        std::optional<int64_t> token;
        {
            std::lock_guard lock(mu_);
            Tx tx(*this, false);
            const int64_t conv = find(principal, id);
            Stmt s = stmt(
                "SELECT version, saved_at FROM versions WHERE conv=?1 ORDER BY version DESC LIMIT "
                "1");
            s.integer(1, conv);
            if (s.step()) newest = st::VersionEntry{std::to_string(s.col_int(0)), s.col_text(1)};
            Stmt f = stmt("SELECT fencing_token FROM conversations WHERE pk=?1");
            f.integer(1, conv);
            if (f.step() && !f.col_null(0)) token = f.col_int(0);
        }
        out << st::latest_answer(newest, token);
    }

    void load_version(std::string_view principal, std::string_view id, std::string_view version,
                      nucleo::plugin::Sink& out) override {
        std::vector<std::pair<std::string, std::string>> chain;
        {
            std::lock_guard lock(mu_);
            Tx tx(*this, false);
            const int64_t conv = find(principal, id);
            const int64_t v = parse_version(version, id);
            Stmt s = stmt(
                "SELECT kind, body FROM versions WHERE conv=?1 AND version<=?2 AND version>="
                "(SELECT max(version) FROM versions WHERE conv=?1 AND kind='snapshot' AND "
                "version<=?2) ORDER BY version");
            s.integer(1, conv).integer(2, v);
            int64_t rows = 0;
            while (s.step()) {
                chain.emplace_back(s.col_text(0), s.col_text(1));
                ++rows;
            }
            if (rows == 0) no_version(id, version);
            Stmt h = stmt("SELECT head FROM conversations WHERE pk=?1");
            if (!h.integer(1, conv).step() || h.col_int(0) < v) no_version(id, version);
        }
        out << st::replay(chain);
    }

  private:
    /// A transaction: IMMEDIATE for writes (takes the write lock up front, so the busy timeout
    /// applies at BEGIN instead of failing mid-save), DEFERRED for reads (a consistent snapshot).
    class Tx {
      public:
        explicit Tx(SqliteStore& s, bool write = true) : s_(s) {
            s_.exec(write ? "BEGIN IMMEDIATE" : "BEGIN");
        }
        Tx(const Tx&) = delete;
        Tx& operator=(const Tx&) = delete;
        void commit() {
            s_.exec("COMMIT");
            done_ = true;
        }
        ~Tx() {
            if (!done_) sqlite3_exec(s_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
        }

      private:
        SqliteStore& s_;
        bool done_ = false;
    };

    void exec(const char* sql) {
        char* message = nullptr;
        const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
        if (rc != SQLITE_OK) {
            std::string text = message != nullptr ? message : sqlite3_errstr(rc);
            sqlite3_free(message);
            const int32_t status =
                (rc & 0xff) == SQLITE_BUSY ? NUCLEO_ERR_TRANSPORT : NUCLEO_ERR_PLUGIN;
            throw Failure(status, std::string("sqlite store: ") + sql + ": " + text);
        }
    }

    Stmt stmt(const char* sql) {
        auto it = cache_.find(sql);
        if (it == cache_.end()) {
            sqlite3_stmt* s = nullptr;
            const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
            if (rc != SQLITE_OK) sqlite_fail(db_, rc, "preparing a statement");
            it = cache_.emplace(sql, s).first;
        }
        return Stmt(db_, it->second);
    }

    void migrate(const std::string& file) {
        if (user_version() == kSchemaVersion) return;
        // Under the write lock, read again: another process may have created it meanwhile.
        Tx tx(*this);
        const int64_t version = user_version();
        if (version == kSchemaVersion) return;
        if (version > kSchemaVersion) {
            throw Failure(NUCLEO_ERR_CONFIG, "sqlite store: \"" + file + "\" has schema version " +
                                                 std::to_string(version) +
                                                 ", newer than this plugin's " +
                                                 std::to_string(kSchemaVersion));
        }
        {
            // A file of someone else's (tables but no version) is refused, never adopted.
            Stmt s = stmt("SELECT count(*) FROM sqlite_master WHERE type='table'");
            if (s.step() && s.col_int(0) > 0) {
                throw Failure(NUCLEO_ERR_CONFIG,
                              "sqlite store: \"" + file +
                                  "\" holds tables but no nucleo schema version: refusing to "
                                  "guess (use another path)");
            }
        }
        exec(kSchema);
        exec(("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
        tx.commit();
    }

    int64_t user_version() {
        Stmt s = stmt("PRAGMA user_version");
        return s.step() ? s.col_int(0) : 0;
    }

    void close() {
        for (auto& [sql, s] : cache_) sqlite3_finalize(s);
        cache_.clear();
        if (db_ != nullptr) sqlite3_close_v2(db_);
        db_ = nullptr;
    }

    int64_t find(std::string_view principal, std::string_view id) {
        Stmt s = stmt("SELECT pk FROM conversations WHERE principal=?1 AND conversation_id=?2");
        if (!s.blob(1, principal).blob(2, id).step()) not_found(id);
        return s.col_int(0);
    }

    /// Writes a whole document's fields and messages; returns the bytes written.
    std::size_t write_document(int64_t conv, const st::StoredDocument& doc) {
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < doc.fields.size(); ++i) {
            bytes += put_field(conv, doc.fields[i].first, i, doc.fields[i].second);
        }
        for (std::size_t i = 0; i < doc.messages.size(); ++i) {
            bytes += put_message(conv, static_cast<int64_t>(i), doc.messages[i]);
        }
        return bytes;
    }

    std::size_t put_field(int64_t conv, const std::string& key, std::size_t ord,
                          const std::string& value) {
        stmt(
            "INSERT INTO fields(conv, key, ord, value) VALUES(?1,?2,?3,?4) ON CONFLICT(conv, key) "
            "DO UPDATE SET ord=excluded.ord, value=excluded.value")
            .integer(1, conv)
            .text(2, key)
            .integer(3, static_cast<int64_t>(ord))
            .text(4, value)
            .run();
        return key.size() + value.size();
    }

    std::size_t put_message(int64_t conv, int64_t pos, const std::string& body) {
        stmt("INSERT INTO messages(conv, pos, body) VALUES(?1,?2,?3)")
            .integer(1, conv)
            .integer(2, pos)
            .text(3, body)
            .run();
        return body.size();
    }

    std::size_t add_version(int64_t conv, int64_t version, const std::string& saved_at,
                            const char* kind, const std::string& body) {
        stmt("INSERT INTO versions(conv, version, saved_at, kind, body) VALUES(?1,?2,?3,?4,?5)")
            .integer(1, conv)
            .integer(2, version)
            .text(3, saved_at)
            .text(4, kind)
            .text(5, body)
            .run();
        return body.size();
    }

    /// The rows of one conversation, for write_changes. Shifting the tail goes through negative
    /// positions in two UPDATEs, so the (conv, pos) key never collides midway.
    std::size_t apply_changes(int64_t conv, const st::Changes& changes) {
        struct Rows final : st::ChangeWriter {
            SqliteStore& s;
            int64_t conv;
            Rows(SqliteStore& store, int64_t c) : s(store), conv(c) {}
            void delete_messages(int64_t at, int64_t end) override {
                s.stmt("DELETE FROM messages WHERE conv=?1 AND pos>=?2 AND pos<?3")
                    .integer(1, conv)
                    .integer(2, at)
                    .integer(3, end)
                    .run();
            }
            void shift_messages(int64_t from, int64_t by) override {
                s.stmt("UPDATE messages SET pos=-(pos+?3)-1 WHERE conv=?1 AND pos>=?2")
                    .integer(1, conv)
                    .integer(2, from)
                    .integer(3, by)
                    .run();
                s.stmt("UPDATE messages SET pos=-pos-1 WHERE conv=?1 AND pos<0")
                    .integer(1, conv)
                    .run();
            }
            std::size_t insert_message(int64_t pos, const std::string& body) override {
                return s.put_message(conv, pos, body);
            }
            std::size_t put_field(const std::string& key, std::size_t ord,
                                  const std::string& value) override {
                return s.put_field(conv, key, ord, value);
            }
            void delete_field(const std::string& key) override {
                s.stmt("DELETE FROM fields WHERE conv=?1 AND key=?2")
                    .integer(1, conv)
                    .text(2, key)
                    .run();
            }
        } rows(*this, conv);
        return st::write_changes(changes, rows);
    }

    [[noreturn]] static void not_found(std::string_view id) {
        st::fail(NUCLEO_ERR_NOT_FOUND, "no conversation " + st::describe(id) + " for this user");
    }
    [[noreturn]] static void no_version(std::string_view id, std::string_view version) {
        st::fail(NUCLEO_ERR_NOT_FOUND,
                 "conversation " + st::describe(id) + " has no version " + st::describe(version));
    }
    static int64_t digits(std::string_view text) {
        if (text.empty() || text.size() > 18) return -1;
        int64_t n = 0;
        for (char c : text) {
            if (c < '0' || c > '9') return -1;
            n = n * 10 + (c - '0');
        }
        return n;
    }
    static int64_t parse_version(std::string_view version, std::string_view id) {
        const int64_t v = digits(version);
        if (v < 1) no_version(id, version);
        return v;
    }
    static int64_t parse_cursor(const std::string& cursor) {
        const int64_t v = digits(cursor);
        if (v < 0)
            st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "list query.cursor: not a cursor of this store");
        return v;
    }

    std::mutex mu_;
    sqlite3* db_ = nullptr;
    std::unordered_map<const char*, sqlite3_stmt*> cache_;  // keyed by the SQL literal
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("sqlite", "1.0.0",
                    "Embedded persistent conversation store: one SQLite file, WAL, version history",
                    nucleo::plugin::store_factory<SqliteStore>())
