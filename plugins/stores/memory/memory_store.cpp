// nucleo-memory: the in-process "nucleo.store/1" for tests only
// (persistence.2). It offers every surface -- persistent with version history, session with TTLs,
// the ownership lease with fencing tokens -- with the semantics docs/store-documents.md gives the
// real stores, so the conformance suite holds it to the same rules. Everything lives in maps behind
// one mutex and is gone when the instance is destroyed.
//
// Config: {"default_session_ttl_ms": N} (default 3,600,000).
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nucleo/plugin.hpp"
#include "store_common.hpp"

namespace {

namespace st = nucleo::stores;
using Clock = std::chrono::steady_clock;
using Key = std::pair<std::string, std::string>;  // (principal, conversation id)

struct Version {
    std::string saved_at;
    std::string kind;  // "snapshot" | "changes"
    std::string body;
};

struct Conversation {
    uint64_t seq = 0;  // creation order, the list cursor
    st::StoredDocument doc;
    std::string title;
    std::optional<std::string> embedding;
    std::string created_at;
    std::string updated_at;
    std::optional<int64_t> fencing_token;
    std::vector<Version> versions;
};

// abi.128: an entry is kept split too (the envelope read apart at the put) and written back as
// text only when read after a delta, so a delta costs its changes, not the conversation.
struct SessionEntry {
    std::string snapshot;  // the entry's text; stale while `split` holds newer deltas
    Clock::time_point expires;
    std::optional<st::SessionEnvelope> split;
    bool text_stale = false;
};

struct Lease {
    std::string holder;
    int64_t token = 0;
    Clock::time_point expires;
    std::chrono::system_clock::time_point expires_wall;
};

[[noreturn]] void not_found(std::string_view id) {
    st::fail(NUCLEO_ERR_NOT_FOUND, "no conversation " + st::describe(id) + " for this user");
}

class MemoryStore final : public nucleo::plugin::Store {
  public:
    /// abi.109: the options a `memory` store takes.
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false,
      "properties": {
        "default_session_ttl_ms": {"type": "integer", "minimum": 1,
                                   "description": "session entry lifetime when a put gives none"}
      }
    })";

    explicit MemoryStore(std::string_view config_json) {
        if (config_json.empty()) return;
        rapidjson::Document doc;
        doc.Parse(config_json.data(), config_json.size());
        if (doc.HasParseError() || !doc.IsObject()) {
            throw nucleo::plugin::Failure(NUCLEO_ERR_CONFIG,
                                          "memory store: config is not a JSON object");
        }
        if (auto it = doc.FindMember("default_session_ttl_ms"); it != doc.MemberEnd()) {
            if (!it->value.IsInt64() || it->value.GetInt64() <= 0) {
                throw nucleo::plugin::Failure(NUCLEO_ERR_CONFIG,
                                              "memory store: default_session_ttl_ms must be a "
                                              "positive integer");
            }
            default_ttl_ms_ = it->value.GetInt64();
        }
    }

    void capabilities(nucleo::plugin::Sink& out) override {
        out << st::capabilities_answer(true, true, true, true);
    }

    void create_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        st::CreateRequest req = st::parse_create(request_json);
        std::lock_guard lock(mu_);
        Key key{std::string(principal), std::string(id)};
        if (conversations_.count(key) != 0) {
            st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "conversation " + st::describe(id) +
                                                      " exists already (create is the first "
                                                      "save only)");
        }
        Conversation c;
        c.seq = ++seq_;
        c.created_at = c.updated_at = st::rfc3339_now();
        c.title = req.title;
        c.embedding = req.embedding;
        c.fencing_token = req.fencing_token;
        c.doc = std::move(req.snapshot);
        c.versions.push_back({c.created_at, "snapshot", req.snapshot_text});
        out << st::version_answer("1", c.created_at, req.snapshot_text.size(),
                                  c.doc.messages.size());
        conversations_.emplace(std::move(key), std::move(c));
    }

    void update_conversation(std::string_view principal, std::string_view id,
                             std::string_view request_json, nucleo::plugin::Sink& out) override {
        st::UpdateRequest req = st::parse_update(request_json);
        std::lock_guard lock(mu_);
        Conversation& c = find(principal, id);
        const std::string head = std::to_string(c.versions.size());
        std::optional<int64_t> token = st::check_fencing(c.fencing_token, req.fencing_token, id);
        st::check_base(req, head, id);
        // persistence.109: applied in place, never to a copy of the whole conversation:
        // StoredDocument::apply checks the changes against the message count before it changes
        // anything, so a refused change leaves the conversation as it was.
        Version v{st::rfc3339_now(), "", ""};
        std::size_t written = 0;
        if (req.changes) {
            c.doc.apply(*req.changes);
            v.kind = "changes";
            v.body = std::move(req.changes_text);
            written = req.changes->inserted();
        } else {
            c.doc = std::move(*req.snapshot);
            v.kind = "snapshot";
            v.body = std::move(req.snapshot_text);
            written = c.doc.messages.size();
        }
        c.fencing_token = token;
        c.updated_at = v.saved_at;
        const std::size_t bytes = v.body.size();
        c.versions.push_back(std::move(v));
        out << st::version_answer(std::to_string(c.versions.size()), c.updated_at, bytes, written);
    }

    void load_conversation(std::string_view principal, std::string_view id,
                           nucleo::plugin::Sink& out) override {
        std::string text;
        {
            std::lock_guard lock(mu_);
            text = find(principal, id).doc.to_json();
        }
        out << text;
    }

    void delete_conversation(std::string_view principal, std::string_view id) override {
        std::lock_guard lock(mu_);
        if (conversations_.erase(Key{std::string(principal), std::string(id)}) == 0) {
            not_found(id);
        }
    }

    void list_conversations(std::string_view principal, std::string_view query_json,
                            nucleo::plugin::Sink& out) override {
        const st::ListQuery query = st::parse_list(query_json);
        uint64_t after = 0;
        if (query.cursor) after = parse_cursor(*query.cursor);
        std::vector<std::pair<uint64_t, st::ListedConversation>> mine;
        {
            std::lock_guard lock(mu_);
            for (const auto& [key, c] : conversations_) {
                if (key.first != principal || c.seq <= after) continue;
                mine.push_back({c.seq, {key.second, c.title, c.created_at, c.updated_at}});
            }
        }
        std::sort(mine.begin(), mine.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<st::ListedConversation> page;
        std::optional<std::string> next;
        uint64_t last = after;
        for (auto& [seq, item] : mine) {
            if (page.size() == query.limit) {
                next = std::to_string(last);
                break;
            }
            last = seq;
            page.push_back(std::move(item));
        }
        out << st::list_answer(page, next);
    }

    void version_history(std::string_view principal, std::string_view id,
                         nucleo::plugin::Sink& out) override {
        std::vector<st::VersionEntry> versions;
        std::optional<int64_t> token;
        {
            std::lock_guard lock(mu_);
            const Conversation& c = find(principal, id);
            for (std::size_t i = 0; i < c.versions.size(); ++i) {
                versions.push_back({std::to_string(i + 1), c.versions[i].saved_at});
            }
            token = c.fencing_token;
        }
        out << st::history_answer(versions, token);
    }

    /// abi.135: the newest version and the token, under the one lock.
    void latest_version(std::string_view principal, std::string_view id,
                        nucleo::plugin::Sink& out) {
        std::optional<st::VersionEntry> newest;
        std::optional<int64_t> token;
        {
            std::lock_guard lock(mu_);
            const Conversation& c = find(principal, id);
            if (!c.versions.empty()) {
                newest =
                    st::VersionEntry{std::to_string(c.versions.size()), c.versions.back().saved_at};
            }
            token = c.fencing_token;
        }
        out << st::latest_answer(newest, token);
    }

    void load_version(std::string_view principal, std::string_view id, std::string_view version,
                      nucleo::plugin::Sink& out) override {
        std::vector<std::pair<std::string, std::string>> chain;
        {
            std::lock_guard lock(mu_);
            const Conversation& c = find(principal, id);
            const std::size_t n = version_number(version, c.versions.size(), id);
            std::size_t start = n - 1;
            while (start > 0 && c.versions[start].kind != "snapshot") --start;
            for (std::size_t i = start; i < n; ++i) {
                chain.emplace_back(c.versions[i].kind, c.versions[i].body);
            }
        }
        out << st::replay(chain);
    }

    void session_get(std::string_view principal, std::string_view id,
                     nucleo::plugin::Sink& out) override {
        std::string text;
        {
            std::lock_guard lock(mu_);
            auto it = sessions_.find(Key{std::string(principal), std::string(id)});
            if (it == sessions_.end() || it->second.expires <= Clock::now()) {
                st::fail(NUCLEO_ERR_NOT_FOUND,
                         "no session entry for conversation " + st::describe(id));
            }
            SessionEntry& entry = it->second;
            if (entry.text_stale) {
                entry.snapshot =
                    st::session_envelope_text(entry.split->durable_version, entry.split->snapshot);
                entry.text_stale = false;
            }
            text = entry.snapshot;
        }
        out << text;
    }

    void session_put(std::string_view principal, std::string_view id,
                     std::string_view snapshot_json, int64_t ttl_ms) override {
        if (ttl_ms < 0) st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "session_put: ttl_ms is negative");
        const int64_t ttl = ttl_ms == 0 ? default_ttl_ms_ : ttl_ms;
        // abi.128: read apart at the put (already a pass over the whole entry), so a delta
        // never parses the entry.
        std::optional<st::SessionEnvelope> split = st::parse_session_envelope(snapshot_json);
        std::lock_guard lock(mu_);
        sessions_[Key{std::string(principal), std::string(id)}] = {
            std::string(snapshot_json), Clock::now() + std::chrono::milliseconds(ttl),
            std::move(split), false};
    }

    // abi.128: the changes apply only to the entry mirroring the base version; any other entry
    // is dropped and the call answers a miss.
    void session_apply(std::string_view principal, std::string_view id,
                       std::string_view request_json, int64_t ttl_ms) {
        if (ttl_ms < 0) st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "session_apply: ttl_ms is negative");
        const int64_t ttl = ttl_ms == 0 ? default_ttl_ms_ : ttl_ms;
        std::optional<st::SessionDelta> delta;
        std::lock_guard lock(mu_);
        const Key key{std::string(principal), std::string(id)};
        try {
            delta = st::parse_session_delta(request_json);
        } catch (...) {
            sessions_.erase(key);
            throw;
        }
        auto it = sessions_.find(key);
        if (it == sessions_.end() || it->second.expires <= Clock::now() || !it->second.split ||
            it->second.split->durable_version != delta->base_version) {
            if (it != sessions_.end()) sessions_.erase(it);
            st::fail(NUCLEO_ERR_NOT_FOUND, "no session entry of conversation " + st::describe(id) +
                                               " at version " + st::describe(delta->base_version));
        }
        SessionEntry& entry = it->second;
        try {
            entry.split->snapshot.apply(delta->changes);
        } catch (...) {
            sessions_.erase(it);
            throw;
        }
        entry.split->durable_version = delta->version;
        entry.text_stale = true;
        entry.expires = Clock::now() + std::chrono::milliseconds(ttl);
    }

    void session_invalidate(std::string_view principal, std::string_view id) override {
        std::lock_guard lock(mu_);
        sessions_.erase(Key{std::string(principal), std::string(id)});
    }

    void lease(std::string_view principal, std::string_view id, std::string_view request_json,
               nucleo::plugin::Sink& out) override {
        const st::LeaseRequest req = st::parse_lease(request_json);
        std::string answer;
        {
            std::lock_guard lock(mu_);
            Key key{std::string(principal), std::string(id)};
            const auto now = Clock::now();
            auto it = leases_.find(key);
            if (it != leases_.end() && it->second.expires <= now) {
                leases_.erase(it);
                it = leases_.end();
            }
            const auto ttl = std::chrono::milliseconds(req.ttl_ms);
            switch (req.op) {
                case st::LeaseRequest::Op::kAcquire: {
                    if (it != leases_.end() && it->second.holder != req.holder)
                        held_by(id, it->second);
                    if (it == leases_.end()) {
                        int64_t& fence = fences_[key];
                        fence = std::max(fence + 1, req.min_fencing_token.value_or(0));
                        it = leases_.emplace(key, Lease{req.holder, fence, {}, {}}).first;
                    }
                    it->second.expires = now + ttl;
                    it->second.expires_wall = std::chrono::system_clock::now() + ttl;
                    break;
                }
                case st::LeaseRequest::Op::kRenew: {
                    if (it == leases_.end()) lost(id, req.holder);
                    if (it->second.holder != req.holder) held_by(id, it->second);
                    if (req.fencing_token && *req.fencing_token != it->second.token) {
                        stale(id, *req.fencing_token, it->second.token);
                    }
                    it->second.expires = now + ttl;
                    it->second.expires_wall = std::chrono::system_clock::now() + ttl;
                    break;
                }
                case st::LeaseRequest::Op::kRelease: {
                    if (it == leases_.end()) {
                        // Expired or never held: nothing to release, and nobody else holds it.
                        answer = st::lease_answer(fences_[key], req.holder, st::rfc3339_now());
                        break;
                    }
                    if (it->second.holder != req.holder) held_by(id, it->second);
                    answer = st::lease_answer(it->second.token, req.holder, st::rfc3339_now());
                    leases_.erase(it);
                    break;
                }
            }
            if (answer.empty()) {
                answer = st::lease_answer(it->second.token, it->second.holder,
                                          st::rfc3339(it->second.expires_wall));
            }
        }
        out << answer;
    }

  private:
    Conversation& find(std::string_view principal, std::string_view id) {
        auto it = conversations_.find(Key{std::string(principal), std::string(id)});
        if (it == conversations_.end()) not_found(id);
        return it->second;
    }

    static std::size_t version_number(std::string_view version, std::size_t count,
                                      std::string_view id) {
        std::size_t n = 0;
        bool ok = !version.empty() && version.size() < 19;
        for (char ch : version) {
            if (ch < '0' || ch > '9') ok = false;
            n = n * 10 + static_cast<std::size_t>(ch - '0');
        }
        if (!ok || n == 0 || n > count) {
            st::fail(NUCLEO_ERR_NOT_FOUND, "conversation " + st::describe(id) + " has no version " +
                                               st::describe(version));
        }
        return n;
    }

    static uint64_t parse_cursor(const std::string& cursor) {
        uint64_t n = 0;
        if (cursor.empty() || cursor.size() > 19) {
            st::fail(NUCLEO_ERR_INVALID_ARGUMENT, "list query.cursor: not a cursor of this store");
        }
        for (char ch : cursor) {
            if (ch < '0' || ch > '9') {
                st::fail(NUCLEO_ERR_INVALID_ARGUMENT,
                         "list query.cursor: not a cursor of this store");
            }
            n = n * 10 + static_cast<uint64_t>(ch - '0');
        }
        return n;
    }

    [[noreturn]] static void held_by(std::string_view id, const Lease& lease) {
        st::fail(NUCLEO_ERR_OWNERSHIP, "conversation " + st::describe(id) + " is held by " +
                                           st::describe(lease.holder) + " (fencing token " +
                                           std::to_string(lease.token) + ")");
    }
    [[noreturn]] static void lost(std::string_view id, std::string_view holder) {
        st::fail(NUCLEO_ERR_OWNERSHIP, "the lease of " + st::describe(holder) +
                                           " on conversation " + st::describe(id) +
                                           " was lost (expired)");
    }
    [[noreturn]] static void stale(std::string_view id, int64_t presented, int64_t current) {
        st::fail(NUCLEO_ERR_OWNERSHIP, "stale fencing token " + std::to_string(presented) +
                                           " for conversation " + st::describe(id) +
                                           " (the lease carries " + std::to_string(current) + ")");
    }

    std::mutex mu_;
    int64_t default_ttl_ms_ = 3'600'000;
    uint64_t seq_ = 0;
    std::map<Key, Conversation> conversations_;
    std::map<Key, SessionEntry> sessions_;
    std::map<Key, Lease> leases_;
    std::map<Key, int64_t> fences_;  // monotonic per conversation, never reset
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("memory", "1.0.0",
                    "In-process conversation store for tests: persistent, session and lease",
                    nucleo::plugin::store_factory<MemoryStore>())
