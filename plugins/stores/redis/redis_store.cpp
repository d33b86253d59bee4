// nucleo-redis: the SESSION store and the cross-host ownership LEASE (persistence.2,
// ownership.40-42), over hiredis.
//
// Session (abi.128): an entry is kept split so a save refreshes it by its delta: a hash
// {v: the durable version, head: the snapshot with an empty "messages" array, n: the message
// count} or {raw: text} for an entry that is no versioned envelope, and a list of the messages
// (compact JSON objects), both expiring together. A whole put replaces both in one MULTI; a delta
// reads the hash under WATCH, checks its version against the delta's base and writes the
// appended messages (RPUSH) and the new head in one MULTI, so an entry never holds changes
// applied to another base even with many hosts writing: a version mismatch or a lost race drops
// the entry (a miss). A read runs as one Lua script (both keys as of one instant). Leases: one hash per conversation {holder, token}
// with a PX expiry; acquire, renew and release run as one Lua script each (atomic on the server).
// A new holder's token comes from INCR on a per-conversation counter key that never expires, so
// fencing tokens only grow (the persistent store refuses a save under a lower one). A counter
// lost with a Redis restart does not break that (ownership.103): an acquire request may carry
// "min_fencing_token" (the durable store's highest recorded token + 1) and a new grant is never
// below it.
//
// Keys are namespaced by principal without ambiguity -- "nucleo:<kind>:<len(principal)>:
// <principal><id>" -- so another user's id reads as not found. Keys and values are binary-safe.
// The persistent surface is not built here: it answers NUCLEO_ERR_NOT_IMPLEMENTED (plugin.hpp).
//
// Config: {"url": "redis://host:port/db" (required), "default_session_ttl_ms": 3600000,
//          "timeout_ms": 5000}. One connection behind a mutex (Redis serialises commands
// anyway); a lost connection fails the call in flight with kTransport and reconnects next call.
#include <hiredis/hiredis.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "nucleo/plugin.hpp"
#include "store_common.hpp"

namespace {

namespace st = nucleo::stores;
using nucleo::plugin::Failure;

// KEYS[1] the lease hash, KEYS[2] the fencing counter. ARGV: op, holder, ttl_ms, token ('' none),
// the least token of a new grant ('' none).
// Answers {status, holder, token, expires_ms}: status ok | held | lost | stale.
constexpr const char* kLeaseScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
local holder, token = cur[1], cur[2]
local op, who, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if op == 'acquire' then
  if holder and holder ~= who then return {'held', holder, token, '0'} end
  if not holder then
    local next = redis.call('INCR', KEYS[2])
    local floor = tonumber(ARGV[5])
    if floor and next < floor then
      redis.call('SET', KEYS[2], floor)
      next = floor
    end
    token = tostring(next)
    redis.call('HSET', KEYS[1], 'holder', who, 'token', token)
  end
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'ok', who, token, tostring(now + ttl)}
elseif op == 'renew' then
  if not holder then return {'lost', who, '0', '0'} end
  if holder ~= who then return {'held', holder, token, '0'} end
  if ARGV[4] ~= '' and ARGV[4] ~= token then return {'stale', holder, token, '0'} end
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {'ok', holder, token, tostring(now + ttl)}
else
  if not holder then
    return {'ok', who, tostring(redis.call('GET', KEYS[2]) or '0'), tostring(now)}
  end
  if holder ~= who then return {'held', holder, token, '0'} end
  redis.call('DEL', KEYS[1])
  return {'ok', holder, token, tostring(now)}
end
)lua";

// KEYS[1] the entry hash, KEYS[2] its message list. Answers nil (a miss), {'raw', text} or
// {'split', v, head, messages}; an entry whose list lost messages (its key expired first) is
// dropped and read as a miss.
constexpr const char* kSessionGetScript = R"lua(
local h = redis.call('HMGET', KEYS[1], 'v', 'head', 'n', 'raw')
if h[4] then return {'raw', h[4]} end
if not h[2] then return false end
if redis.call('LLEN', KEYS[2]) ~= tonumber(h[3]) then
  redis.call('DEL', KEYS[1], KEYS[2])
  return false
end
return {'split', h[1], h[2], redis.call('LRANGE', KEYS[2], 0, -1)}
)lua";

struct ReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string key(const char* kind, std::string_view principal, std::string_view id) {
    std::string k = "nucleo:";
    k += kind;
    k += ':';
    k += std::to_string(principal.size());
    k += ':';
    k.append(principal);
    k.append(id);
    return k;
}

std::string text(const redisReply* r) {
    return r->str != nullptr ? std::string(r->str, r->len) : std::string();
}

class RedisStore final : public nucleo::plugin::Store {
  public:
    /// abi.109: the options a `redis` store takes.
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false, "required": ["url"],
      "properties": {
        "url": {"type": "string", "minLength": 1, "description": "redis://host:port/db"},
        "default_session_ttl_ms": {"type": "integer", "minimum": 1,
                                   "description": "session entry lifetime when a put gives none"},
        "timeout_ms": {"type": "integer", "minimum": 1, "description": "per-command timeout"}
      }
    })";

    explicit RedisStore(std::string_view config_json) {
        rapidjson::Document config;
        config.Parse(config_json.data(), config_json.size());
        if (config.HasParseError() || !config.IsObject()) {
            throw Failure(NUCLEO_ERR_CONFIG, "redis store: the config is not a JSON object");
        }
        auto url = config.FindMember("url");
        if (url == config.MemberEnd() || !url->value.IsString()) {
            throw Failure(NUCLEO_ERR_CONFIG,
                          "redis store: config \"url\" (redis://host:port/db) "
                          "is required");
        }
        parse_url(url->value.GetString());
        for (const char* name : {"default_session_ttl_ms", "timeout_ms"}) {
            auto it = config.FindMember(name);
            if (it == config.MemberEnd()) continue;
            if (!it->value.IsInt64() || it->value.GetInt64() <= 0) {
                throw Failure(NUCLEO_ERR_CONFIG,
                              std::string("redis store: ") + name + " must be a positive integer");
            }
            (std::string(name) == "timeout_ms" ? timeout_ms_ : default_ttl_ms_) =
                it->value.GetInt64();
        }
        std::lock_guard lock(mu_);
        connect();  // fail at create when the server is not there
    }
    ~RedisStore() override {
        if (ctx_ != nullptr) redisFree(ctx_);
    }

    void capabilities(nucleo::plugin::Sink& out) override {
        out << st::capabilities_answer(false, true, false, true);
    }

    void session_get(std::string_view principal, std::string_view id,
                     nucleo::plugin::Sink& out) override {
        const std::string h = key("session", principal, id);
        const std::string l = key("session-messages", principal, id);
        std::string value;
        {
            std::lock_guard lock(mu_);
            Reply r = command({"EVAL", kSessionGetScript, "2", h, l});
            if (r->type == REDIS_REPLY_NIL) {
                st::fail(NUCLEO_ERR_NOT_FOUND,
                         "no session entry for conversation " + st::describe(id));
            }
            if (r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
                st::fail(NUCLEO_ERR_PROTOCOL, "redis store: the session read answered off form");
            }
            if (text(r->element[0]) == "raw") {
                value = text(r->element[1]);
            } else {
                if (r->elements != 4 || r->element[3]->type != REDIS_REPLY_ARRAY) {
                    st::fail(NUCLEO_ERR_PROTOCOL,
                             "redis store: the session read answered off form");
                }
                st::StoredDocument doc = st::StoredDocument::from_snapshot(text(r->element[2]));
                const redisReply* list = r->element[3];
                doc.messages.reserve(list->elements);
                for (std::size_t i = 0; i < list->elements; ++i) {
                    doc.messages.push_back(text(list->element[i]));
                }
                value = st::session_envelope_text(text(r->element[1]), doc);
            }
        }
        out << value;
    }

    void session_put(std::string_view principal, std::string_view id,
                     std::string_view snapshot_json, int64_t ttl_ms) override {
        if (ttl_ms < 0) st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "session_put: ttl_ms is negative");
        const std::string ttl = std::to_string(ttl_ms == 0 ? default_ttl_ms_ : ttl_ms);
        const std::string h = key("session", principal, id);
        const std::string l = key("session-messages", principal, id);
        std::optional<st::SessionEnvelope> entry = st::parse_session_envelope(snapshot_json);
        // UNWATCH first: a WATCH left by a failed delta must never abort this put.
        std::vector<std::vector<std::string_view>> batch = {{"UNWATCH"}, {"MULTI"}, {"DEL", h, l}};
        std::string head;
        std::string count;
        if (entry) {
            std::vector<std::string> messages = std::move(entry->snapshot.messages);
            entry->snapshot.messages.clear();
            head = entry->snapshot.to_json();
            count = std::to_string(messages.size());
            batch.push_back({"HSET", h, "v", entry->durable_version, "head", head, "n", count});
            if (!messages.empty()) {
                std::vector<std::string_view> push = {"RPUSH", l};
                for (const std::string& m : messages) push.emplace_back(m);
                batch.push_back(std::move(push));
                batch.push_back({"PEXPIRE", l, ttl});
            }
            std::lock_guard lock(mu_);
            batch.push_back({"PEXPIRE", h, ttl});
            batch.push_back({"EXEC"});
            put_batch(batch);
            return;
        }
        batch.push_back({"HSET", h, "raw", snapshot_json});
        batch.push_back({"PEXPIRE", h, ttl});
        batch.push_back({"EXEC"});
        std::lock_guard lock(mu_);
        put_batch(batch);
    }

    // abi.128: WATCH the entry, check its version, write the changes in one MULTI. Appends and
    // field changes cost their own bytes; any other splice (compaction, a flag changed in place)
    // rewrites the list.
    void session_apply(std::string_view principal, std::string_view id,
                       std::string_view request_json, int64_t ttl_ms) {
        if (ttl_ms < 0) st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "session_apply: ttl_ms is negative");
        const std::string ttl = std::to_string(ttl_ms == 0 ? default_ttl_ms_ : ttl_ms);
        const std::string h = key("session", principal, id);
        const std::string l = key("session-messages", principal, id);
        std::lock_guard lock(mu_);
        std::optional<st::SessionDelta> delta;
        try {
            delta = st::parse_session_delta(request_json);
        } catch (const Failure& e) {
            drop_entry(h, l, e.status(), e.what());
        }
        const std::string miss = "no session entry of conversation " + st::describe(id) +
                                 " at version " + st::describe(delta->base_version);
        std::vector<Reply> read;
        try {
            read = pipeline({{"WATCH", h, l}, {"HMGET", h, "v", "head", "n"}});
        } catch (const Failure& e) {
            if (e.status() == NUCLEO_ERR_TRANSPORT) throw;  // the WATCH died with the connection
            drop_entry(h, l, NUCLEO_ERR_PROTOCOL,
                       std::string("redis store: the session entry is off form: ") + e.what());
        }
        const redisReply* cur = read[1].get();
        if (cur->type != REDIS_REPLY_ARRAY || cur->elements != 3 ||
            cur->element[0]->type != REDIS_REPLY_STRING || text(cur->element[0]) != delta->base_version ||
            cur->element[1]->type != REDIS_REPLY_STRING || cur->element[2]->type != REDIS_REPLY_STRING) {
            drop_entry(h, l, NUCLEO_ERR_NOT_FOUND, miss);
        }
        std::size_t count = 0;
        st::StoredDocument head;
        std::vector<std::vector<std::string_view>> batch;
        std::string new_head;
        std::string new_count;
        std::vector<std::string> all;  // the whole list, only for a splice that is no append
        try {
            count = static_cast<std::size_t>(std::stoull(text(cur->element[2])));
            head = st::StoredDocument::from_snapshot(text(cur->element[1]));
            const std::size_t after = delta->changes.checked_count(count);
            const bool appends_only = std::all_of(
                delta->changes.splices.begin(), delta->changes.splices.end(),
                [&](const st::Splice& sp) { return sp.at == count && sp.remove == 0; });
            st::Changes fields_only;
            fields_only.fields = delta->changes.fields;
            head.apply(fields_only);
            new_head = head.to_json();
            new_count = std::to_string(after);
            if (!appends_only) {
                Reply list = command({"LRANGE", l, "0", "-1"});
                st::StoredDocument whole;
                for (std::size_t i = 0; i < list->elements; ++i) {
                    whole.messages.push_back(text(list->element[i]));
                }
                if (whole.messages.size() != count) drop_entry(h, l, NUCLEO_ERR_NOT_FOUND, miss);
                st::Changes splices_only;
                splices_only.splices = delta->changes.splices;
                whole.apply(splices_only);
                all = std::move(whole.messages);
            }
            batch.push_back({"MULTI"});
            batch.push_back({"HSET", h, "v", delta->version, "head", new_head, "n", new_count});
            if (!appends_only) {
                batch.push_back({"DEL", l});
                if (!all.empty()) {
                    std::vector<std::string_view> push = {"RPUSH", l};
                    for (const std::string& m : all) push.emplace_back(m);
                    batch.push_back(std::move(push));
                }
            } else {
                for (const st::Splice& sp : delta->changes.splices) {
                    if (sp.insert.empty()) continue;
                    std::vector<std::string_view> push = {"RPUSH", l};
                    for (const std::string& m : sp.insert) push.emplace_back(m);
                    batch.push_back(std::move(push));
                }
            }
            batch.push_back({"PEXPIRE", h, ttl});
            batch.push_back({"PEXPIRE", l, ttl});
            batch.push_back({"EXEC"});
        } catch (const Failure& e) {
            if (e.status() == NUCLEO_ERR_TRANSPORT) throw;
            drop_entry(h, l, e.status(), e.what());
        } catch (const std::exception& e) {
            drop_entry(h, l, NUCLEO_ERR_PROTOCOL, std::string("redis store: the session entry is off form: ") +
                                          e.what());
        }
        if (!transaction(batch, "session_apply")) {
            // Another writer touched the entry between the read and the write.
            drop_entry(h, l, NUCLEO_ERR_NOT_FOUND, miss + " (another writer changed it meanwhile)");
        }
    }

    void session_invalidate(std::string_view principal, std::string_view id) override {
        std::lock_guard lock(mu_);
        command({"DEL", key("session", principal, id), key("session-messages", principal, id)});
    }

    void lease(std::string_view principal, std::string_view id, std::string_view request_json,
               nucleo::plugin::Sink& out) override {
        const st::LeaseRequest req = st::parse_lease(request_json);
        const char* op = req.op == st::LeaseRequest::Op::kAcquire ? "acquire"
                         : req.op == st::LeaseRequest::Op::kRenew ? "renew"
                                                                  : "release";
        const std::string token = req.fencing_token ? std::to_string(*req.fencing_token) : "";
        std::vector<std::string> fields;
        {
            std::lock_guard lock(mu_);
            const std::string floor =
                req.min_fencing_token ? std::to_string(*req.min_fencing_token) : "";
            Reply r = command({"EVAL", kLeaseScript, "2", key("lease", principal, id),
                               key("fence", principal, id), op, req.holder,
                               std::to_string(req.ttl_ms), token, floor});
            if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
                st::fail(NUCLEO_ERR_PROTOCOL, "redis store: the lease script answered off form");
            }
            for (std::size_t i = 0; i < 4; ++i) fields.push_back(text(r->element[i]));
        }
        const std::string& status = fields[0];
        if (status == "held") {
            st::fail(NUCLEO_ERR_OWNERSHIP, "conversation " + st::describe(id) + " is held by " +
                                               st::describe(fields[1]) + " (fencing token " +
                                               fields[2] + ")");
        }
        if (status == "lost") {
            st::fail(NUCLEO_ERR_OWNERSHIP, "the lease of " + st::describe(req.holder) +
                                               " on conversation " + st::describe(id) +
                                               " was lost (expired)");
        }
        if (status == "stale") {
            st::fail(NUCLEO_ERR_OWNERSHIP, "stale fencing token " + token + " for conversation " +
                                               st::describe(id) + " (the lease carries " +
                                               fields[2] + ")");
        }
        const auto expires =
            std::chrono::system_clock::time_point(std::chrono::milliseconds(std::stoll(fields[3])));
        out << st::lease_answer(std::stoll(fields[2]), fields[1], st::rfc3339(expires));
    }

  private:
    void parse_url(const std::string& url) {
        const std::string scheme = "redis://";
        if (url.rfind(scheme, 0) != 0) {
            // Never the url itself: it may carry a password (the host names it redacted).
            throw Failure(NUCLEO_ERR_CONFIG, "redis store: url must start with redis://");
        }
        std::string rest = url.substr(scheme.size());
        if (const auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
        const auto slash = rest.find('/');
        const std::string hostport = rest.substr(0, slash);
        if (slash != std::string::npos && slash + 1 < rest.size()) db_ = rest.substr(slash + 1);
        const auto colon = hostport.rfind(':');
        host_ = hostport.substr(0, colon);
        try {
            port_ = colon == std::string::npos ? 6379 : std::stoi(hostport.substr(colon + 1));
        } catch (const std::exception&) {
            throw Failure(NUCLEO_ERR_CONFIG, "redis store: bad port in url");
        }
        if (host_.empty())
            throw Failure(NUCLEO_ERR_CONFIG, "redis store: no host in url");
    }

    void connect() {
        const timeval tv{static_cast<time_t>(timeout_ms_ / 1000),
                         static_cast<suseconds_t>((timeout_ms_ % 1000) * 1000)};
        ctx_ = redisConnectWithTimeout(host_.c_str(), port_, tv);
        if (ctx_ == nullptr || ctx_->err != 0) {
            const std::string why = ctx_ != nullptr ? ctx_->errstr : "out of memory";
            if (ctx_ != nullptr) redisFree(ctx_);
            ctx_ = nullptr;
            throw Failure(NUCLEO_ERR_TRANSPORT, "redis store: cannot connect to " + host_ + ":" +
                                                    std::to_string(port_) + ": " + why);
        }
        redisSetTimeout(ctx_, tv);
        if (!db_.empty() && db_ != "0") command({"SELECT", db_});
    }

    /// One command, binary-safe; the connection is re-made when a previous call lost it.
    Reply command(const std::vector<std::string_view>& args) {
        if (ctx_ == nullptr) connect();
        std::vector<const char*> argv;
        std::vector<size_t> lens;
        for (std::string_view a : args) {
            argv.push_back(a.data());
            lens.push_back(a.size());
        }
        Reply r(static_cast<redisReply*>(
            redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data())));
        if (!r) {
            const std::string why = ctx_->errstr;
            redisFree(ctx_);
            ctx_ = nullptr;
            throw Failure(NUCLEO_ERR_TRANSPORT, "redis store: the connection was lost during " +
                                                    std::string(args[0]) + " (" + why +
                                                    "); the next call reconnects");
        }
        if (r->type == REDIS_REPLY_ERROR) {
            throw Failure(NUCLEO_ERR_PLUGIN,
                          "redis store: " + std::string(args[0]) + " failed: " + text(r.get()));
        }
        return r;
    }

    /// Sends the commands in one round trip and reads every reply; a command the server refused
    /// fails the call (after all replies were read, so the connection stays in step).
    std::vector<Reply> pipeline(const std::vector<std::vector<std::string_view>>& commands) {
        if (ctx_ == nullptr) connect();
        for (const auto& args : commands) {
            std::vector<const char*> argv;
            std::vector<size_t> lens;
            for (std::string_view a : args) {
                argv.push_back(a.data());
                lens.push_back(a.size());
            }
            if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(),
                                       lens.data()) != REDIS_OK) {
                lost(args[0]);
            }
        }
        std::vector<Reply> replies;
        for (const auto& args : commands) {
            void* raw = nullptr;
            if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) lost(args[0]);
            replies.emplace_back(static_cast<redisReply*>(raw));
        }
        for (std::size_t i = 0; i < replies.size(); ++i) {
            if (replies[i]->type == REDIS_REPLY_ERROR) {
                throw Failure(NUCLEO_ERR_PLUGIN, "redis store: " + std::string(commands[i][0]) +
                                                     " failed: " + text(replies[i].get()));
            }
        }
        return replies;
    }

    /// A MULTI ... EXEC batch in one round trip. False when EXEC was aborted (a WATCHed key
    /// changed); a command refused inside the transaction fails the call.
    bool transaction(const std::vector<std::vector<std::string_view>>& batch, const char* what) {
        std::vector<Reply> replies = pipeline(batch);
        const redisReply* exec = replies.back().get();
        if (exec->type == REDIS_REPLY_NIL) return false;
        if (exec->type != REDIS_REPLY_ARRAY) {
            throw Failure(NUCLEO_ERR_PROTOCOL,
                          std::string("redis store: ") + what + ": EXEC answered off form");
        }
        for (std::size_t i = 0; i < exec->elements; ++i) {
            if (exec->element[i]->type == REDIS_REPLY_ERROR) {
                throw Failure(NUCLEO_ERR_PLUGIN, std::string("redis store: ") + what +
                                                     " failed: " + text(exec->element[i]));
            }
        }
        return true;
    }

    /// Ends a session_apply that did not apply: drops the entry (the caller holds mu_) and fails
    /// with `status`. Dropping a cache entry is never wrong, so it needs no WATCH.
    [[noreturn]] void drop_entry(const std::string& h, const std::string& l, int32_t status,
                                 const std::string& why) {
        try {
            command({"UNWATCH"});
            command({"DEL", h, l});
        } catch (const Failure&) {
            // The connection is gone: so is the WATCH; the entry's version still guards readers.
        }
        st::fail(status, why);
    }

    void put_batch(const std::vector<std::vector<std::string_view>>& batch) {
        if (!transaction(batch, "session_put")) {
            throw Failure(NUCLEO_ERR_PLUGIN, "redis store: session_put: the transaction was aborted");
        }
    }

    [[noreturn]] void lost(std::string_view during) {
        const std::string why = ctx_->errstr;
        redisFree(ctx_);
        ctx_ = nullptr;
        throw Failure(NUCLEO_ERR_TRANSPORT, "redis store: the connection was lost during " +
                                                std::string(during) + " (" + why +
                                                "); the next call reconnects");
    }

    std::mutex mu_;
    redisContext* ctx_ = nullptr;
    std::string host_;
    int port_ = 6379;
    std::string db_;
    int64_t default_ttl_ms_ = 3'600'000;
    int64_t timeout_ms_ = 5'000;
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("redis", "1.0.0",
                    "Session store and cross-host ownership leases with fencing tokens on Redis",
                    nucleo::plugin::store_factory<RedisStore>())
