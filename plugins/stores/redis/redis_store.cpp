// nucleo-redis: the SESSION store and the cross-host ownership LEASE (persistence.2,
// ownership.40-42), over hiredis.
//
// Session: SET key snapshot PX ttl / GET / DEL. Leases: one hash per conversation {holder, token}
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

#include <chrono>
#include <memory>
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
        const std::string k = key("session", principal, id);
        std::string value;
        {
            std::lock_guard lock(mu_);
            Reply r = command({"GET", k});
            if (r->type == REDIS_REPLY_NIL) {
                st::fail(NUCLEO_ERR_NOT_FOUND,
                         "no session entry for conversation " + st::describe(id));
            }
            value = text(r.get());
        }
        out << value;
    }

    void session_put(std::string_view principal, std::string_view id,
                     std::string_view snapshot_json, int64_t ttl_ms) override {
        if (ttl_ms < 0) st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "session_put: ttl_ms is negative");
        const std::string ttl = std::to_string(ttl_ms == 0 ? default_ttl_ms_ : ttl_ms);
        std::lock_guard lock(mu_);
        command({"SET", key("session", principal, id), snapshot_json, "PX", ttl});
    }

    void session_invalidate(std::string_view principal, std::string_view id) override {
        std::lock_guard lock(mu_);
        command({"DEL", key("session", principal, id)});
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
