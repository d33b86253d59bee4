// nucleo-postgres: the durable persistent store shared by many hosts (persistence.2), over libpq.
//
// The same layout as the sqlite store (docs/store-documents.md): conversations, fields, messages,
// versions, all prefixed "nucleo_" so the database can be shared. The schema is created and
// migrated by NUMBERED migrations, each in its own transaction under an advisory lock and recorded
// in nucleo_schema_migrations; a partial schema (a table present that the migrations table does
// not account for, or a recorded migration whose tables are gone) fails closed with a clear
// error -- never guessed at. Every value travels as a PQexecParams parameter, never in SQL text.
//
// Keys: PostgreSQL text cannot hold NUL, so an id or principal with a NUL byte is refused
// (kInvalidArgument naming the position), never cut. A B-tree entry is limited to ~2.7 KB, so
// rows are found by sha256(principal NUL id) (unique) and then compared in full; 10 KB ids work.
//
// Connections: a small pool (config pool_size, default 4). When the server goes away (a restart),
// the call in flight fails loudly with kTransport and every idle connection is dropped; the next
// call connects afresh. A save is never retried behind the caller's back (its outcome may be
// unknown); a retry with the same base version is refused (kOwnership) if the first did commit.
//
// Config: {"url": "postgresql://user@host:port/db" (required), "pool_size": 4}.
#include <libpq-fe.h>
#include <rapidjson/document.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nucleo/plugin.hpp"
#include "store_common.hpp"

namespace {

namespace st = nucleo::stores;
using nucleo::plugin::Failure;

// The row of a conversation: found by its key hash, then compared in full.
#define NUCLEO_PG_KEY                                                                    \
    "key_hash=sha256(convert_to($1,'UTF8') || '\\x00'::bytea || convert_to($2,'UTF8')) " \
    "AND principal=$1 AND conversation_id=$2"
#define NUCLEO_PG_NOW \
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

struct Migration {
    int version;
    std::vector<const char*> tables;
    const char* sql;
};

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> list = {
        {1,
         {"nucleo_conversations", "nucleo_fields", "nucleo_messages", "nucleo_versions"},
         R"sql(
CREATE TABLE nucleo_conversations(
  pk BIGSERIAL PRIMARY KEY,
  key_hash BYTEA NOT NULL UNIQUE,
  principal_hash BYTEA NOT NULL,
  principal TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  title TEXT NOT NULL,
  embedding TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  head BIGINT NOT NULL,
  message_count BIGINT NOT NULL,
  fencing_token BIGINT);
CREATE INDEX nucleo_conversations_by_principal ON nucleo_conversations(principal_hash, pk);
CREATE TABLE nucleo_fields(
  conv BIGINT NOT NULL REFERENCES nucleo_conversations(pk) ON DELETE CASCADE,
  key TEXT NOT NULL,
  ord BIGINT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY(conv, key));
CREATE TABLE nucleo_messages(
  conv BIGINT NOT NULL REFERENCES nucleo_conversations(pk) ON DELETE CASCADE,
  pos BIGINT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY(conv, pos));
CREATE TABLE nucleo_versions(
  conv BIGINT NOT NULL REFERENCES nucleo_conversations(pk) ON DELETE CASCADE,
  version BIGINT NOT NULL,
  saved_at TEXT NOT NULL,
  kind TEXT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY(conv, version));
)sql"},
    };
    return list;
}

/// A query parameter: text, or SQL NULL.
using Param = std::optional<std::string>;

struct ResultDeleter {
    void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

/// A connection taken from the pool; given back (or dropped when broken) on destruction.
class Pool;
class Conn {
  public:
    Conn(Pool& pool, PGconn* conn) : pool_(pool), conn_(conn) {}
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    ~Conn();

    /// Runs one statement with parameters; throws Failure mapped from the error.
    Result exec(const char* sql, const std::vector<Param>& params = {}) {
        std::vector<const char*> values;
        values.reserve(params.size());
        for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
        Result r(PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                              nullptr, nullptr, 0));
        const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
        if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
        fail_with(r.get(), sql);
    }

    /// Runs a script of several statements without parameters (migrations only).
    void exec_script(const char* sql) {
        Result r(PQexec(conn_, sql));
        if (r && PQresultStatus(r.get()) == PGRES_COMMAND_OK) return;
        fail_with(r.get(), sql);
    }

    void begin(const char* how = "BEGIN") {
        exec(how);
        in_tx_ = true;
    }
    void commit() {
        exec("COMMIT");
        in_tx_ = false;
    }

  private:
    [[noreturn]] void fail_with(const PGresult* r, const char* sql) {
        const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
        const std::string code = state != nullptr ? state : "";
        std::string message = PQerrorMessage(conn_);
        while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
            message.pop_back();
        }
        const std::string head = std::string(sql).substr(0, 40);
        if (PQstatus(conn_) == CONNECTION_BAD || code.rfind("08", 0) == 0 ||
            code.rfind("57P", 0) == 0) {
            broken_ = true;
            throw Failure(NUCLEO_ERR_TRANSPORT,
                          "postgres store: the connection to the server was lost during \"" + head +
                              "...\" (" + message +
                              "); this call failed and did not retry -- the next call reconnects");
        }
        if (code == "23505") {
            throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                          "postgres store: the conversation exists already (create is the first "
                          "save only)");
        }
        if (code == "22021" || code == "22P05") {
            throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                          "postgres store: a value is not valid text for the database: " + message);
        }
        throw Failure(NUCLEO_ERR_PLUGIN,
                      "postgres store: \"" + head + "...\" failed: " + message + " [" + code + "]");
    }

    friend class Pool;
    Pool& pool_;
    PGconn* conn_;
    bool in_tx_ = false;
    bool broken_ = false;
};

class Pool {
  public:
    Pool(std::string url, std::size_t size) : url_(std::move(url)), size_(size) {}
    ~Pool() {
        for (PGconn* c : idle_) PQfinish(c);
    }

    std::unique_ptr<Conn> take() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !idle_.empty() || open_ < size_; });
        if (!idle_.empty()) {
            PGconn* c = idle_.back();
            idle_.pop_back();
            return std::make_unique<Conn>(*this, c);
        }
        ++open_;
        lock.unlock();
        PGconn* c = PQconnectdb(url_.c_str());
        if (PQstatus(c) != CONNECTION_OK) {
            std::string message = PQerrorMessage(c);
            while (!message.empty() && message.back() == '\n') message.pop_back();
            PQfinish(c);
            lock.lock();
            --open_;
            cv_.notify_one();
            throw Failure(NUCLEO_ERR_TRANSPORT,
                          "postgres store: cannot connect to the server: " + message);
        }
        PQsetNoticeProcessor(
            c, [](void*, const char*) {}, nullptr);  // plugins never print
        return std::make_unique<Conn>(*this, c);
    }

    void give_back(PGconn* c, bool broken) {
        std::vector<PGconn*> dropped;
        {
            std::lock_guard lock(mu_);
            if (broken) {
                // A server restart kills every connection: drop the idle ones too, so the next
                // call connects afresh instead of finding another dead one.
                dropped.swap(idle_);
                open_ -= dropped.size() + 1;
                dropped.push_back(c);
            } else {
                idle_.push_back(c);
            }
        }
        cv_.notify_all();
        for (PGconn* d : dropped) PQfinish(d);
    }

  private:
    std::string url_;
    std::size_t size_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<PGconn*> idle_;
    std::size_t open_ = 0;
};

Conn::~Conn() {
    if (in_tx_ && !broken_) {
        Result r(PQexec(conn_, "ROLLBACK"));
        if (PQstatus(conn_) == CONNECTION_BAD) broken_ = true;
    }
    if (PQstatus(conn_) == CONNECTION_BAD) broken_ = true;
    pool_.give_back(conn_, broken_);
}

std::string value(const Result& r, int row, int col) {
    return std::string(PQgetvalue(r.get(), row, col),
                       static_cast<std::size_t>(PQgetlength(r.get(), row, col)));
}

int64_t number(const Result& r, int row, int col) {
    return std::stoll(value(r, row, col));
}

Param p(std::string_view s) {
    return std::string(s);
}
Param p(int64_t n) {
    return std::to_string(n);
}
Param p(std::size_t n) {
    return std::to_string(n);
}

[[noreturn]] void not_found(std::string_view id) {
    st::fail(NUCLEO_ERR_NOT_FOUND, "no conversation " + st::describe(id) + " for this user");
}

class PostgresStore final : public nucleo::plugin::Store {
  public:
    /// abi.109: the options a `postgres` store takes.
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false, "required": ["url"],
      "properties": {
        "url": {"type": "string", "minLength": 1, "description": "postgresql://user:password@host/db"},
        "pool_size": {"type": "integer", "minimum": 1, "maximum": 64,
                      "description": "connections kept open, default 4"}
      }
    })";

    explicit PostgresStore(std::string_view config_json) {
        rapidjson::Document config;
        config.Parse(config_json.data(), config_json.size());
        if (config.HasParseError() || !config.IsObject()) {
            throw Failure(NUCLEO_ERR_CONFIG, "postgres store: the config is not a JSON object");
        }
        auto url = config.FindMember("url");
        if (url == config.MemberEnd() || !url->value.IsString() ||
            url->value.GetStringLength() == 0) {
            throw Failure(NUCLEO_ERR_CONFIG,
                          "postgres store: config \"url\" (postgresql://...) is required");
        }
        std::size_t pool_size = 4;
        if (auto s = config.FindMember("pool_size"); s != config.MemberEnd()) {
            if (!s->value.IsUint() || s->value.GetUint() == 0 || s->value.GetUint() > 64) {
                throw Failure(NUCLEO_ERR_CONFIG, "postgres store: pool_size must be within 1..64");
            }
            pool_size = s->value.GetUint();
        }
        pool_ = std::make_unique<Pool>(url->value.GetString(), pool_size);
        migrate();
    }

    void capabilities(nucleo::plugin::Sink& out) override {
        out << st::capabilities_answer(true, false, true, false);
    }

    void create_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        check_key(principal, id);
        st::CreateRequest req = st::parse_create(request_json);
        st::refuse_nul(req.title, "title");
        auto c = pool_->take();
        c->begin();
        Result row = c->exec(
            "INSERT INTO nucleo_conversations(key_hash, principal_hash, principal, conversation_id,"
            " title, embedding, created_at, updated_at, head, message_count, fencing_token) "
            "VALUES(sha256(convert_to($1,'UTF8') || '\\x00'::bytea || convert_to($2,'UTF8')), "
            "sha256(convert_to($1,'UTF8')), $1, $2, $3, $4, " NUCLEO_PG_NOW ", " NUCLEO_PG_NOW
            ", 1, $5, $6) ON CONFLICT (key_hash) DO NOTHING RETURNING pk, created_at",
            {p(principal), p(id), p(req.title), req.embedding, p(req.snapshot.messages.size()),
             req.fencing_token ? p(*req.fencing_token) : Param()});
        if (PQntuples(row.get()) == 0) {
            st::fail(NUCLEO_ERR_INVALID_ARGUMENT,
                     "conversation " + st::describe(id) +
                         " exists already (create is the first save only)");
        }
        const int64_t conv = number(row, 0, 0);
        const std::string now = value(row, 0, 1);
        std::size_t bytes = write_document(*c, conv, req.snapshot);
        bytes += add_version(*c, conv, 1, now, "snapshot", req.snapshot_text);
        c->commit();
        out << st::version_answer("1", now, bytes, req.snapshot.messages.size());
    }

    void update_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        check_key(principal, id);
        st::UpdateRequest req = st::parse_update(request_json);
        auto c = pool_->take();
        c->begin();
        Result row = c->exec("SELECT pk, head, message_count, fencing_token, " NUCLEO_PG_NOW
                             " FROM nucleo_conversations WHERE " NUCLEO_PG_KEY " FOR UPDATE",
                             {p(principal), p(id)});
        if (PQntuples(row.get()) == 0) not_found(id);
        const int64_t conv = number(row, 0, 0);
        const int64_t head = number(row, 0, 1);
        const int64_t count = number(row, 0, 2);
        std::optional<int64_t> kept;
        if (!PQgetisnull(row.get(), 0, 3)) kept = number(row, 0, 3);
        const std::string now = value(row, 0, 4);
        const std::optional<int64_t> token = st::check_fencing(kept, req.fencing_token, id);
        st::check_base(req, std::to_string(head), id);
        std::size_t bytes = 0, written = 0, new_count = 0;
        if (req.changes) {
            new_count = req.changes->checked_count(static_cast<std::size_t>(count));
            bytes += apply_changes(*c, conv, *req.changes);
            written = req.changes->inserted();
            bytes += add_version(*c, conv, head + 1, now, "changes", req.changes_text);
        } else {
            c->exec("DELETE FROM nucleo_messages WHERE conv=$1", {p(conv)});
            c->exec("DELETE FROM nucleo_fields WHERE conv=$1", {p(conv)});
            bytes += write_document(*c, conv, *req.snapshot);
            new_count = written = req.snapshot->messages.size();
            bytes += add_version(*c, conv, head + 1, now, "snapshot", req.snapshot_text);
        }
        c->exec(
            "UPDATE nucleo_conversations SET head=$2, message_count=$3, fencing_token=$4, "
            "updated_at=$5 WHERE pk=$1",
            {p(conv), p(head + 1), p(new_count), token ? p(*token) : Param(), p(now)});
        c->commit();
        out << st::version_answer(std::to_string(head + 1), now, bytes, written);
    }

    void load_conversation(std::string_view principal, std::string_view id,
                           nucleo::plugin::Sink& out) override {
        check_key(principal, id);
        st::StoredDocument doc;
        {
            auto c = pool_->take();
            c->begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            const int64_t conv = find(*c, principal, id);
            Result f = c->exec("SELECT key, value FROM nucleo_fields WHERE conv=$1 ORDER BY ord",
                               {p(conv)});
            for (int i = 0; i < PQntuples(f.get()); ++i) {
                doc.fields.emplace_back(value(f, i, 0), value(f, i, 1));
            }
            Result m =
                c->exec("SELECT body FROM nucleo_messages WHERE conv=$1 ORDER BY pos", {p(conv)});
            doc.messages.reserve(static_cast<std::size_t>(PQntuples(m.get())));
            for (int i = 0; i < PQntuples(m.get()); ++i) doc.messages.push_back(value(m, i, 0));
            c->commit();
        }
        out << doc.to_json();
    }

    void delete_conversation(std::string_view principal, std::string_view id) override {
        check_key(principal, id);
        auto c = pool_->take();
        Result r =
            c->exec("DELETE FROM nucleo_conversations WHERE " NUCLEO_PG_KEY, {p(principal), p(id)});
        if (std::string(PQcmdTuples(r.get())) == "0") not_found(id);
    }

    void list_conversations(std::string_view principal, std::string_view query_json,
                            nucleo::plugin::Sink& out) override {
        st::refuse_nul(principal, "principal");
        const st::ListQuery query = st::parse_list(query_json);
        int64_t after = 0;
        if (query.cursor) {
            try {
                std::size_t used = 0;
                after = std::stoll(*query.cursor, &used);
                if (used != query.cursor->size() || after < 0) throw std::invalid_argument("");
            } catch (const std::exception&) {
                st::fail(NUCLEO_ERR_INVALID_ARGUMENT,
                         "list query.cursor: not a cursor of this store");
            }
        }
        std::vector<st::ListedConversation> page;
        std::optional<std::string> next;
        {
            auto c = pool_->take();
            Result r = c->exec(
                "SELECT pk, conversation_id, title, created_at, updated_at FROM "
                "nucleo_conversations WHERE principal_hash=sha256(convert_to($1,'UTF8')) AND "
                "principal=$1 AND pk>$2 ORDER BY pk LIMIT $3",
                {p(principal), p(after), p(query.limit + 1)});
            int64_t last = after;
            for (int i = 0; i < PQntuples(r.get()); ++i) {
                if (page.size() == query.limit) {
                    next = std::to_string(last);
                    break;
                }
                last = number(r, i, 0);
                page.push_back({value(r, i, 1), value(r, i, 2), value(r, i, 3), value(r, i, 4)});
            }
        }
        out << st::list_answer(page, next);
    }

    /// ownership.103: the highest token a save of the conversation presented.
    static std::optional<int64_t> fencing_token_of(Conn& c, int64_t conv) {
        Result f = c.exec("SELECT fencing_token FROM nucleo_conversations WHERE pk=$1", {p(conv)});
        if (PQntuples(f.get()) == 1 && PQgetisnull(f.get(), 0, 0) == 0) {
            return std::stoll(value(f, 0, 0));
        }
        return std::nullopt;
    }

    void version_history(std::string_view principal, std::string_view id,
                         nucleo::plugin::Sink& out) override {
        check_key(principal, id);
        std::vector<st::VersionEntry> versions;
        std::optional<int64_t> token;
        {
            auto c = pool_->take();
            c->begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            const int64_t conv = find(*c, principal, id);
            Result r = c->exec(
                "SELECT version, saved_at FROM nucleo_versions WHERE conv=$1 ORDER BY version",
                {p(conv)});
            for (int i = 0; i < PQntuples(r.get()); ++i) {
                versions.push_back({value(r, i, 0), value(r, i, 1)});
            }
            token = fencing_token_of(*c, conv);
            c->commit();
        }
        out << st::history_answer(versions, token);
    }

    /// abi.135: the newest row of the version index and the token, one snapshot, two index
    /// lookups: the cost of an obtain does not grow with the conversation's versions.
    void latest_version(std::string_view principal, std::string_view id,
                        nucleo::plugin::Sink& out) {
        check_key(principal, id);
        std::optional<st::VersionEntry> newest;
        std::optional<int64_t> token;
        {
            auto c = pool_->take();
            c->begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            const int64_t conv = find(*c, principal, id);
            Result r = c->exec(
                "SELECT version, saved_at FROM nucleo_versions WHERE conv=$1 "
                "ORDER BY version DESC LIMIT 1",
                {p(conv)});
            if (PQntuples(r.get()) == 1) newest = st::VersionEntry{value(r, 0, 0), value(r, 0, 1)};
            token = fencing_token_of(*c, conv);
            c->commit();
        }
        out << st::latest_answer(newest, token);
    }

    void load_version(std::string_view principal, std::string_view id, std::string_view version,
                      nucleo::plugin::Sink& out) override {
        check_key(principal, id);
        int64_t v = -1;
        if (!version.empty() && version.size() < 19 &&
            version.find_first_not_of("0123456789") == std::string_view::npos) {
            v = std::stoll(std::string(version));
        }
        std::vector<std::pair<std::string, std::string>> chain;
        {
            auto c = pool_->take();
            c->begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
            const int64_t conv = find(*c, principal, id);
            if (v >= 1) {
                Result r = c->exec(
                    "SELECT kind, body FROM nucleo_versions WHERE conv=$1 AND version<=$2 AND "
                    "version>=(SELECT max(version) FROM nucleo_versions WHERE conv=$1 AND "
                    "kind='snapshot' AND version<=$2) AND $2<=(SELECT head FROM "
                    "nucleo_conversations WHERE pk=$1) ORDER BY version",
                    {p(conv), p(v)});
                for (int i = 0; i < PQntuples(r.get()); ++i) {
                    chain.emplace_back(value(r, i, 0), value(r, i, 1));
                }
            }
            c->commit();
        }
        if (chain.empty()) {
            st::fail(NUCLEO_ERR_NOT_FOUND, "conversation " + st::describe(id) + " has no version " +
                                               st::describe(version));
        }
        out << st::replay(chain);
    }

  private:
    static void check_key(std::string_view principal, std::string_view id) {
        st::refuse_nul(principal, "principal");
        st::refuse_nul(id, "conversation id");
    }

    static int64_t find(Conn& c, std::string_view principal, std::string_view id) {
        Result r = c.exec("SELECT pk FROM nucleo_conversations WHERE " NUCLEO_PG_KEY,
                          {p(principal), p(id)});
        if (PQntuples(r.get()) == 0) not_found(id);
        return number(r, 0, 0);
    }

    static std::size_t put_field(Conn& c, int64_t conv, const std::string& key, std::size_t ord,
                                 const std::string& val) {
        c.exec(
            "INSERT INTO nucleo_fields(conv, key, ord, value) VALUES($1,$2,$3,$4) "
            "ON CONFLICT (conv, key) DO UPDATE SET ord=excluded.ord, value=excluded.value",
            {p(conv), p(key), p(ord), p(val)});
        return key.size() + val.size();
    }

    static std::size_t put_message(Conn& c, int64_t conv, int64_t pos, const std::string& body) {
        c.exec("INSERT INTO nucleo_messages(conv, pos, body) VALUES($1,$2,$3)",
               {p(conv), p(pos), p(body)});
        return body.size();
    }

    static std::size_t write_document(Conn& c, int64_t conv, const st::StoredDocument& doc) {
        std::size_t bytes = 0;
        for (std::size_t i = 0; i < doc.fields.size(); ++i) {
            bytes += put_field(c, conv, doc.fields[i].first, i, doc.fields[i].second);
        }
        for (std::size_t i = 0; i < doc.messages.size(); ++i) {
            bytes += put_message(c, conv, static_cast<int64_t>(i), doc.messages[i]);
        }
        return bytes;
    }

    static std::size_t add_version(Conn& c, int64_t conv, int64_t version,
                                   const std::string& saved_at, const char* kind,
                                   const std::string& body) {
        c.exec(
            "INSERT INTO nucleo_versions(conv, version, saved_at, kind, body) "
            "VALUES($1,$2,$3,$4,$5)",
            {p(conv), p(version), p(saved_at), p(std::string_view(kind)), p(body)});
        return body.size();
    }

    /// The rows of one conversation, for write_changes (the tail shifts through negative
    /// positions, as in the sqlite store).
    static std::size_t apply_changes(Conn& c, int64_t conv, const st::Changes& changes) {
        struct Rows final : st::ChangeWriter {
            Conn& c;
            int64_t conv;
            Rows(Conn& connection, int64_t id) : c(connection), conv(id) {}
            void delete_messages(int64_t at, int64_t end) override {
                c.exec("DELETE FROM nucleo_messages WHERE conv=$1 AND pos>=$2 AND pos<$3",
                       {p(conv), p(at), p(end)});
            }
            void shift_messages(int64_t from, int64_t by) override {
                c.exec("UPDATE nucleo_messages SET pos=-(pos+$3)-1 WHERE conv=$1 AND pos>=$2",
                       {p(conv), p(from), p(by)});
                c.exec("UPDATE nucleo_messages SET pos=-pos-1 WHERE conv=$1 AND pos<0", {p(conv)});
            }
            std::size_t insert_message(int64_t pos, const std::string& body) override {
                return put_message(c, conv, pos, body);
            }
            std::size_t put_field(const std::string& key, std::size_t ord,
                                  const std::string& value) override {
                return PostgresStore::put_field(c, conv, key, ord, value);
            }
            void delete_field(const std::string& key) override {
                c.exec("DELETE FROM nucleo_fields WHERE conv=$1 AND key=$2", {p(conv), p(key)});
            }
        } rows(c, conv);
        return st::write_changes(changes, rows);
    }

    /// Applies the numbered migrations not yet recorded, each in its own transaction under an
    /// advisory lock (several hosts may start at once), failing closed on a partial schema.
    void migrate() {
        auto c = pool_->take();
        for (const Migration& m : migrations()) {
            c->begin();
            c->exec("SELECT pg_advisory_xact_lock(7307215042)");
            c->exec(
                "CREATE TABLE IF NOT EXISTS nucleo_schema_migrations(version INTEGER PRIMARY "
                "KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
            const bool applied =
                PQntuples(c->exec("SELECT 1 FROM nucleo_schema_migrations WHERE version=$1",
                                  {p(static_cast<int64_t>(m.version))})
                              .get()) > 0;
            std::vector<std::string> present, missing;
            for (const char* table : m.tables) {
                Result r =
                    c->exec("SELECT to_regclass($1) IS NOT NULL", {p(std::string_view(table))});
                (value(r, 0, 0) == "t" ? present : missing).emplace_back(table);
            }
            if (applied && !missing.empty()) {
                throw Failure(NUCLEO_ERR_CONFIG,
                              "postgres store: migration " + std::to_string(m.version) +
                                  " is recorded as applied but table " + missing.front() +
                                  " is missing: partial schema, refusing to guess");
            }
            if (!applied && !present.empty()) {
                throw Failure(NUCLEO_ERR_CONFIG,
                              "postgres store: table " + present.front() +
                                  " exists but nucleo_schema_migrations does not record "
                                  "migration " +
                                  std::to_string(m.version) +
                                  " that creates it: partial schema, refusing to guess");
            }
            if (!applied) {
                c->exec_script(m.sql);
                c->exec("INSERT INTO nucleo_schema_migrations(version) VALUES($1)",
                        {p(static_cast<int64_t>(m.version))});
            }
            c->commit();
        }
        Result newest = c->exec("SELECT coalesce(max(version), 0) FROM nucleo_schema_migrations");
        const int64_t known = migrations().back().version;
        if (number(newest, 0, 0) > known) {
            throw Failure(NUCLEO_ERR_CONFIG,
                          "postgres store: the database is at migration " + value(newest, 0, 0) +
                              ", newer than this plugin's " + std::to_string(known));
        }
    }

    std::unique_ptr<Pool> pool_;
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("postgres", "1.0.0",
                    "Durable persistent conversation store on PostgreSQL: migrations, version "
                    "history, fencing tokens",
                    nucleo::plugin::store_factory<PostgresStore>())
