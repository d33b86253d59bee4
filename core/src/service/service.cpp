// ConversationService (core/include/nucleo/service.hpp; docs/spec/ownership.md).
//
// Locking: State::mu guards the holder map and the job index; each Holder's mu guards its owner,
// retention and save bookkeeping and is the mutex of its handed_off condition. Order: State::mu
// before Holder::mu, never the other way. Store I/O never runs under State::mu, and runs under
// no lock at all while the calling job owns the holder (nobody else may touch it then).
#include "nucleo/service.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/log_internal.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {

namespace {

/// persistence.108: everything parts() holds but the messages, read member by member so the
/// history is never copied (a service test checks the stored snapshot against parts()).
ConversationParts parts_without_messages(const ConversationContext& c) {
    ConversationParts out;
    out.conversation_id = c.conversation_id();
    out.user_id = c.user_id();
    out.workflow_id = c.workflow_id();
    out.prior_spec_id = c.prior_spec_id();
    out.objective = c.main_objective();
    out.cache_main_objective = c.cache_main_objective();
    out.compactable = c.compactable();
    out.tools = c.declared_tools();
    out.artifacts = c.artifacts();
    out.grade = c.grade();
    out.depth = c.depth();
    out.output = c.output();
    return out;
}

using Clock = std::chrono::steady_clock;

struct Holder {
    std::mutex mu;
    std::condition_variable handed_off;
    std::string id;
    std::string user;
    bool temporary = false;
    std::shared_ptr<ConversationContext> context;
    std::shared_ptr<Thinker> owner;
    // Jobs between "found the holder" and "own it or gave up": cleanup never evicts under them.
    // Incremented under State::mu, decremented under Holder::mu (cleanup holds both).
    std::atomic<int> pending{0};
    int parked = 0;  // jobs parked on handed_off right now (guarded by mu)
    Clock::time_point released_at = Clock::now();
    std::chrono::milliseconds retain{0};
    // Save bookkeeping, touched only by the owner. persistence.102: created, saved_parts and
    // saved_version move together, and only after the durable write committed.
    bool created = false;
    ConversationParts saved_parts;
    std::string saved_version;
    // persistence.108: the epoch of the context's message list when saved_parts was taken from
    // it (0: not taken from the live context, the next save compares every message), and
    // (persistence.110) its count of in-place flag changes then.
    std::uint64_t saved_epoch = 0;
    std::uint64_t saved_flag_changes = 0;
    // persistence.111: saved_parts' delta header, kept while saves only append (nullopt: made
    // from saved_parts at the next such save).
    std::optional<SnapshotDelta::Header> saved_header;
    // A create or update failed without saying whether it committed (a store error other than
    // a refusal): the next save re-reads the durable record first (persistence.103).
    bool unsure = false;
    std::optional<int64_t> fencing_token;
    std::string lease_holder;
};

std::string default_host_id() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
    // A counter too: two services of one process are two hosts to each other.
    static std::atomic<int> instances{0};
    return std::string(name[0] != '\0' ? name : "host") + ":" + std::to_string(::getpid()) + ":" +
           std::to_string(++instances);
}

// ownership.21: the title derives from the first user message. Decision: its first line, at most
// 100 bytes, cut at a UTF-8 character boundary.
std::string title_from(const std::string& utterance) {
    std::string title = utterance.substr(0, utterance.find('\n'));
    if (title.size() > 100) {
        std::size_t cut = 100;
        while (cut > 0 && (static_cast<unsigned char>(title[cut]) & 0xC0) == 0x80) --cut;
        title.resize(cut);
    }
    return title;
}

[[noreturn]] void throw_shutting_down(std::string_view id) {
    NUCLEO_LOG_ERROR("[ConvSvc] Shutting down, dropping request for {}", id);
    throw Error(ErrorKind::kInternal, "ConversationService is shutting down");
}

}  // namespace

// ownership.101: holders are keyed by (user, conversation id), never by the id alone.
using HolderKey = std::pair<std::string, std::string>;

struct ConversationService::State {
    ConversationServiceOptions options;
    std::string host_id;
    std::atomic<bool> stopping{false};

    mutable std::mutex mu;
    std::map<HolderKey, std::shared_ptr<Holder>> holders;
    std::unordered_map<std::string, std::set<HolderKey>> jobs;  // job id -> (user, conversation)

    std::mutex cleanup_mu;
    std::condition_variable cleanup_cv;
    std::thread cleanup_thread;

    std::shared_ptr<Holder> find(std::string_view user, std::string_view id) const {
        std::lock_guard lock(mu);
        auto it = holders.find(HolderKey(user, id));
        return it == holders.end() ? nullptr : it->second;
    }

    // Takes ownership of `h` for `thinker`, waiting on handed_off until `deadline` when
    // `may_wait`. False when busy and !may_wait. Consumes one `pending` on every exit but the
    // false one.
    bool take(Holder& h, const std::shared_ptr<Thinker>& thinker, Clock::time_point deadline,
              bool may_wait) {
        std::unique_lock lock(h.mu);
        auto free_or_mine = [&] { return !h.owner || h.owner->job_id == thinker->job_id; };
        if (!free_or_mine()) {
            if (!may_wait) return false;
            ++h.parked;
            const bool got = h.handed_off.wait_until(
                lock, deadline, [&] { return stopping.load() || free_or_mine(); });
            --h.parked;
            if (!got) {
                --h.pending;
                const auto waited = options.acquire_timeout.count();
                throw Error(ErrorKind::kOwnership,
                            "conversation '" + h.id + "' is owned by thinker '" + h.owner->name +
                                "' (job " + h.owner->job_id + ", workflow " + h.owner->workflow_id +
                                "); gave up after " + std::to_string(waited) + " ms");
            }
        }
        if (stopping.load()) {
            --h.pending;
            throw_shutting_down(h.id);
        }
        h.owner = thinker;
        --h.pending;
        return true;
    }

    // Gives up ownership (the caller owns `h`): the lease first, so a local waiter's own lease
    // acquisition finds it free, then the holder, then wakes the waiters.
    void give_up(Holder& h, std::chrono::milliseconds retain) {
        std::string lease_holder;
        {
            std::lock_guard lock(h.mu);
            lease_holder = std::exchange(h.lease_holder, {});
        }
        if (options.lease && !lease_holder.empty()) {
            try {
                options.lease->release(h.user, h.id, lease_holder);
            } catch (const Error& e) {
                NUCLEO_LOG_WARN("[ConvSvc] lease of '{}' already lost at release: {}", h.id,
                                e.what());
            }
        }
        {
            std::lock_guard lock(h.mu);
            h.owner.reset();
            h.retain = retain;
            h.released_at = Clock::now();
        }
        h.handed_off.notify_all();
    }

    // Takes the cross-host lease, polling with bounded backoff until `deadline`.
    void take_lease(Holder& h, Clock::time_point deadline) {
        // The lease names the HOST: jobs of one host exclude each other through the holder's
        // lock, so a local hand-off keeps the token (and the warm context) unless another host
        // took the lease in between.
        const std::string& holder = host_id;
        auto pause = std::chrono::milliseconds(5);
        for (;;) {
            try {
                // ownership.103: never below a token the durable store has seen, read afresh at
                // each attempt (the lease store may have restarted and lost its counter).
                std::optional<int64_t> floor;
                if (options.persistent) {
                    try {
                        if (auto seen = options.persistent->latest(h.user, h.id).fencing_token) {
                            floor = *seen + 1;
                        }
                    } catch (const Error& e) {
                        if (e.kind() != ErrorKind::kNotFound) throw;
                    }
                }
                const LeaseGrant grant = options.lease->acquire(
                    h.user, h.id, holder, options.lease_ttl.count(), floor);
                if (h.fencing_token && *h.fencing_token != grant.fencing_token) {
                    // Another holder may have saved since this host last held it: reload.
                    h.context.reset();
                }
                std::lock_guard lock(h.mu);  // shutdown reads the lease holder
                h.fencing_token = grant.fencing_token;
                h.lease_holder = holder;
                return;
            } catch (const Error& e) {
                if (e.kind() != ErrorKind::kOwnership) throw;
                if (Clock::now() + pause >= deadline) {
                    throw Error(ErrorKind::kOwnership,
                                "conversation '" + h.id + "': another host holds its lease (" +
                                    e.what() + "); gave up after " +
                                    std::to_string(options.acquire_timeout.count()) + " ms");
                }
            }
            std::unique_lock lock(cleanup_mu);
            if (cleanup_cv.wait_for(lock, pause, [&] { return stopping.load(); })) {
                throw_shutting_down(h.id);
            }
            pause = std::min(pause * 2, options.lease_poll_max);
        }
    }

    static void stamp_declarations(ConversationContext& context, const Thinker& thinker) {
        context.set_grade(thinker.grade);
        context.set_depth(thinker.depth);
        context.set_output(thinker.output);
    }

    // persistence.101: the session store is a cache that may fail: a failing get is a miss.
    std::optional<SessionEntry> cached(const Holder& h) const {
        if (!options.session) return std::nullopt;
        try {
            return options.session->get_entry(h.user, h.id);
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("[ConvSvc] session store get of '{}' failed, reading the persistent "
                            "store: {}",
                            h.id, e.what());
            return std::nullopt;
        }
    }

    // persistence.101: a failing put is logged and the entry invalidated (a failing invalidate
    // too is logged: the entry carries its durable version, which readers check).
    void cache(const Holder& h, const ConversationParts& parts, const std::string& version) const {
        if (!options.session) return;
        try {
            options.session->put(h.user, parts, version, options.session_ttl_ms);
            return;
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("[ConvSvc] session store put of '{}' failed, invalidating: {}", h.id,
                            e.what());
        }
        uncache(h);
    }

    // ownership.104, persistence.109: a committed update refreshes the entry by its delta where
    // the session store offers it (abi.128). A miss (the entry mirrored another version, or
    // none) leaves no entry: the store dropped it and the next load reads through. A store
    // without the slot (built before ABI 1.5) gets the whole entry, as before; a failing
    // refresh invalidates.
    void refresh(const Holder& h, std::string_view base_version, const SnapshotDelta& delta) const {
        if (!options.session) return;
        if (!options.session->offers_delta()) {
            cache(h, h.saved_parts, h.saved_version);
            return;
        }
        try {
            if (!options.session->apply(h.user, h.id, base_version, h.saved_version, delta,
                                        options.session_ttl_ms)) {
                NUCLEO_LOG_DEBUG("[ConvSvc] session entry of '{}' was not at version {}: dropped",
                                 h.id, base_version);
            }
            return;
        } catch (const NotImplementedException&) {
            cache(h, h.saved_parts, h.saved_version);  // a wrapper whose inner store lacks it
            return;
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("[ConvSvc] session store delta of '{}' failed, invalidating: {}", h.id,
                            e.what());
        }
        uncache(h);
    }

    void uncache(const Holder& h) const {
        if (!options.session) return;
        try {
            options.session->invalidate(h.user, h.id);
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("[ConvSvc] session store invalidate of '{}' failed: {}", h.id,
                            e.what());
        }
    }

    // The durable record as of its latest version: the version is read BEFORE the snapshot, so
    // a concurrent writer can only make the parts newer than the base, which the store then
    // refuses as a stale base, never accepts (persistence.102). nullopt when absent.
    std::optional<std::pair<ConversationParts, std::string>> read_durable(const Holder& h) const {
        std::optional<std::string> version = latest_version(h);
        if (!version) return std::nullopt;
        try {
            return std::make_pair(options.persistent->load(h.user, h.id), std::move(*version));
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::kNotFound) throw;
            return std::nullopt;
        }
    }

    // The persistent store's latest version of the conversation; nullopt when it holds none.
    std::optional<std::string> latest_version(const Holder& h) const {
        try {
            // persistence.113: the newest version alone, not the whole history.
            if (auto newest = options.persistent->latest(h.user, h.id).version)
                return std::move(newest->version);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::kNotFound) throw;
        }
        return std::nullopt;
    }

    // Fills h.context when empty (the caller owns `h`, no lock held).
    void load(Holder& h, const Thinker& thinker,
              const std::shared_ptr<const ResponseHandler>& handler, bool must_exist) {
        if (h.context) return;
        if (h.temporary) {
            // ownership.3: a temporary (job-id keyed) conversation never consults the stores.
            h.context = std::make_shared<ConversationContext>(h.id, h.user);
            stamp_declarations(*h.context, thinker);
            return;
        }
        std::optional<ConversationParts> parts;
        std::string version;
        std::optional<SessionEntry> entry = cached(h);
        if (entry && !options.persistent) {
            parts = std::move(entry->parts);
        } else if (options.persistent) {
            // persistence.101: the entry serves only when it mirrors the durable store's latest
            // version; otherwise (stale, unversioned, or the record is gone) the persistent
            // store answers and the entry is refreshed or dropped.
            const std::optional<std::string> latest = latest_version(h);
            if (entry && latest && entry->durable_version == *latest) {
                parts = std::move(entry->parts);
                version = *latest;
            } else if (auto durable = latest ? read_durable(h) : std::nullopt) {
                parts = std::move(durable->first);
                version = std::move(durable->second);
                cache(h, *parts, version);  // read-through
            } else if (entry) {
                uncache(h);  // the durable record is gone: so is its mirror
            }
        }
        if (!parts) {
            if (must_exist) {
                throw Error(ErrorKind::kNotFound, "conversation '" + h.id + "' of user '" + h.user +
                                                      "' is in no store (adopted id: it must "
                                                      "exist)");
            }
            h.context = std::make_shared<ConversationContext>(h.id, h.user);
            stamp_declarations(*h.context, thinker);
            h.created = false;
            h.unsure = false;
            h.saved_parts = {};
            h.saved_version.clear();
            h.saved_epoch = 0;
            h.saved_header.reset();
            return;
        }
        h.saved_parts = *parts;
        h.saved_version = version;
        h.saved_epoch = 0;
        h.saved_header.reset();
        h.created = true;
        h.unsure = false;
        for (Message& m : parts->messages) {
            if (m.outgoing() && !m.response_handler) m.response_handler = handler;
        }
        auto context = std::make_shared<ConversationContext>(
            ConversationContext::from_parts(std::move(*parts)));
        // ownership.13, persistence.23: a rehydrated conversation takes the adopting thinker's
        // CURRENT declarations, and the thinker re-declares its current palette (add-only).
        stamp_declarations(*context, thinker);
        if (thinker.palette) context->add_tools(thinker.palette());
        h.context = std::move(context);
    }

    std::shared_ptr<ConversationContext> acquire(
        const std::shared_ptr<Holder>& h, const std::shared_ptr<Thinker>& thinker,
        const std::shared_ptr<const ResponseHandler>& handler, bool must_exist,
        Clock::time_point deadline, bool may_wait) {
        if (!take(*h, thinker, deadline, may_wait)) return nullptr;
        try {
            if (options.lease && !h->temporary) take_lease(*h, deadline);
            load(*h, *thinker, handler, must_exist);
        } catch (...) {
            give_up(*h, std::chrono::milliseconds(0));
            throw;
        }
        {
            std::lock_guard lock(mu);
            jobs[thinker->job_id].insert(HolderKey(h->user, h->id));
        }
        // ownership.13: stamps the context's workflow id with the acquiring turn's.
        h->context->set_workflow_id(thinker->workflow_id);
        return h->context;
    }

    // Releases every holder `job_id` owns; `evict` drops them from memory unless a job waits.
    std::size_t release_job(std::string_view job_id,
                            std::optional<std::chrono::milliseconds> retain, bool evict) {
        std::vector<std::shared_ptr<Holder>> owned;
        {
            std::lock_guard lock(mu);
            auto it = jobs.find(std::string(job_id));
            if (it == jobs.end()) return 0;
            for (const HolderKey& key : it->second) {
                auto h = holders.find(key);
                if (h != holders.end()) owned.push_back(h->second);
            }
            jobs.erase(it);
        }
        std::size_t released = 0;
        for (const auto& h : owned) {
            {
                std::lock_guard lock(h->mu);
                if (!h->owner || h->owner->job_id != job_id) continue;
            }
            give_up(*h, retain.value_or(std::chrono::milliseconds(0)));
            ++released;
            if (evict) {
                std::lock_guard map_lock(mu);
                std::lock_guard lock(h->mu);
                auto it = holders.find(HolderKey(h->user, h->id));
                if (it != holders.end() && it->second == h && !h->owner && h->pending == 0) {
                    holders.erase(it);
                }
            }
        }
        return released;
    }
};

ConversationService::ConversationService(ConversationServiceOptions options)
    : state_(std::make_shared<State>()) {
    state_->options = std::move(options);
    state_->host_id = state_->options.host_id.empty() ? default_host_id() : state_->options.host_id;
    if (state_->options.cleanup_thread) {
        State* s = state_.get();
        s->cleanup_thread = std::thread([this, s] {
            std::unique_lock lock(s->cleanup_mu);
            while (!s->stopping.load()) {
                if (s->cleanup_cv.wait_for(lock, s->options.cleanup_interval,
                                           [s] { return s->stopping.load(); })) {
                    break;
                }
                lock.unlock();
                try {
                    run_cleanup();
                } catch (const std::exception& e) {
                    NUCLEO_LOG_ERROR("[ConvSvc] cleanup failed: {}", e.what());
                }
                lock.lock();
            }
        });
    }
}

ConversationService::~ConversationService() {
    shutdown();
}

std::future<std::shared_ptr<ConversationContext>> ConversationService::obtain_conversation(
    std::string_view conversation_id, std::shared_ptr<Thinker> thinker,
    std::shared_ptr<const ResponseHandler> handler, bool must_exist) {
    std::promise<std::shared_ptr<ConversationContext>> ready;
    try {
        if (!thinker) throw Error(ErrorKind::kInvalidArgument, "obtain_conversation: no thinker");
        if (conversation_id.empty()) {
            throw Error(ErrorKind::kInvalidArgument,
                        "obtain_conversation: empty conversation id (thinker '" + thinker->name +
                            "', job " + thinker->job_id + ")");
        }
        std::shared_ptr<Holder> h;
        {
            std::lock_guard lock(state_->mu);
            if (state_->stopping.load()) throw_shutting_down(conversation_id);
            auto& slot = state_->holders[HolderKey(thinker->user_id, conversation_id)];
            if (!slot) {
                slot = std::make_shared<Holder>();
                slot->id = std::string(conversation_id);
                slot->user = thinker->user_id;
                slot->temporary = thinker->intent() == ConversationIntent::kTemporary;
                // ownership.106: a temporary conversation is never stored; with a persistent
                // store configured that is most likely a forgotten mint or adopt, so say so.
                if (slot->temporary && state_->options.persistent) {
                    NUCLEO_LOG_WARN(
                        "[ConvSvc] conversation '{}' of thinker '{}' is temporary (neither "
                        "mint_conversation_id() nor set_conversation_id() was called): it is never "
                        "saved, though the service has a persistent store",
                        slot->id, thinker->name);
                }
            }
            h = slot;
            ++h->pending;
        }
        const auto deadline = Clock::now() + state_->options.acquire_timeout;
        if (auto context = state_->acquire(h, thinker, handler, must_exist, deadline, false)) {
            ready.set_value(std::move(context));
            return ready.get_future();
        }
        // Busy: park on the holder's condition on a thread of its own, so the caller's future
        // is what waits.
        return std::async(std::launch::async, [state = state_, h, thinker = std::move(thinker),
                                               handler = std::move(handler), must_exist, deadline] {
            return state->acquire(h, thinker, handler, must_exist, deadline, true);
        });
    } catch (...) {
        ready.set_exception(std::current_exception());
        return ready.get_future();
    }
}

std::future<std::shared_ptr<ConversationContext>> ConversationService::obtain_conversation(
    std::shared_ptr<Thinker> thinker, std::shared_ptr<const ResponseHandler> handler) {
    if (!thinker) {
        std::promise<std::shared_ptr<ConversationContext>> refused;
        refused.set_exception(std::make_exception_ptr(
            Error(ErrorKind::kInvalidArgument, "obtain_conversation: no thinker")));
        return refused.get_future();
    }
    const std::string id = thinker->conversation_id();
    const bool must_exist = thinker->intent() == ConversationIntent::kAdopted;
    return obtain_conversation(id, std::move(thinker), std::move(handler), must_exist);
}

std::shared_ptr<Thinker> ConversationService::owning_thinker(std::string_view conversation_id,
                                                             std::string_view user_id) const {
    auto h = state_->find(user_id, conversation_id);
    if (!h) return nullptr;
    std::lock_guard lock(h->mu);
    return h->owner;
}

std::optional<SaveResult> ConversationService::save_conversation(const ConversationContext& context,
                                                                 const Thinker& thinker) {
    const std::string& id = context.conversation_id();
    // The owner's user keys the holder (ownership.101); the document's own user_id field may
    // differ (an imported conversation), so it is not used here.
    auto h = state_->find(thinker.user_id, id);
    if (!h) {
        throw Error(ErrorKind::kOwnership, "save of conversation '" + id + "' by thinker '" +
                                               thinker.name + "' (job " + thinker.job_id +
                                               "): it was never obtained (or was evicted)");
    }
    std::string lease_holder;
    {
        std::lock_guard lock(h->mu);
        lease_holder = h->lease_holder;
        if (!h->owner || h->owner->job_id != thinker.job_id) {
            throw Error(ErrorKind::kOwnership,
                        "save of conversation '" + id + "' by thinker '" + thinker.name +
                            "' (job " + thinker.job_id +
                            "): " + (h->owner ? "owned by job " + h->owner->job_id : "not owned"));
        }
    }
    // From here the caller owns the holder: its bookkeeping is ours without a lock.
    auto& options = state_->options;
    if (h->temporary || !options.persistent) return std::nullopt;
    const std::string& user = h->user;
    if (options.lease && !lease_holder.empty()) {
        // Extends the lease and checks it is still ours; the store's fencing check is the
        // guard that matters (a lease lost between here and the write is refused there).
        options.lease->renew(user, id, lease_holder, options.lease_ttl.count(), h->fencing_token);
    }
    if (h->unsure) {
        // persistence.103: the last write failed without saying whether it committed: the
        // durable record is the truth; the delta is computed from it.
        auto durable = state_->read_durable(*h);
        h->created = durable.has_value();
        h->saved_parts = durable ? std::move(durable->first) : ConversationParts{};
        h->saved_version = durable ? std::move(durable->second) : std::string();
        h->saved_epoch = 0;
        h->saved_header.reset();
        h->unsure = false;
    }
    // persistence.108: when the message list only grew since the last save (same epoch, the
    // saved messages' flags as saved), the delta is built from the appended messages and the
    // top-level fields alone: no copy of the history, no comparison of every message.
    // persistence.110: "the saved messages' flags as saved" is the context's count of in-place
    // flag changes being what it was at the last save: O(1), never a walk of the history.
    const std::vector<Message>& now_messages = context.messages();
    const bool grown_only = h->created && h->saved_epoch != 0 &&
                            h->saved_epoch == context.messages_epoch() &&
                            h->saved_flag_changes == context.message_flag_changes() &&
                            now_messages.size() >= h->saved_parts.messages.size();
    ConversationParts parts = grown_only ? parts_without_messages(context) : context.parts();
    SaveResult result;
    // Any failure below leaves created, saved_parts and saved_version as they were
    // (persistence.102): the next save computes its delta from the last COMMITTED state.
    auto written = [&](auto&& write) {
        try {
            return write();
        } catch (const Error& e) {
            state_->uncache(*h);
            // A refusal is a committed "no"; anything else may have committed.
            h->unsure = e.kind() != ErrorKind::kOwnership && e.kind() != ErrorKind::kNotFound &&
                        e.kind() != ErrorKind::kInvalidArgument;
            throw;
        } catch (...) {
            state_->uncache(*h);
            h->unsure = true;
            throw;
        }
    };
    const bool creating = !h->created;
    std::optional<std::string> utterance;
    std::optional<SnapshotDelta> delta;
    SnapshotDelta::Header next_header;
    if (creating) {
        utterance = context.first_user_utterance();
        if (!utterance) return std::nullopt;
        result = written([&] {
            return options.persistent->create(user, parts, title_from(*utterance),
                                              h->fencing_token);
        });
    } else {
        if (grown_only) {
            // persistence.111: the saved header is made once, then carried from save to save.
            if (!h->saved_header) h->saved_header = SnapshotDelta::header_of(h->saved_parts);
            delta = SnapshotDelta::appended(*h->saved_header, h->saved_parts.messages.size(), parts,
                                            now_messages, next_header);
        } else {
            delta = SnapshotDelta::between(h->saved_parts, parts);
        }
        if (delta->empty()) return std::nullopt;
        try {
            result = written([&] {
                return options.persistent->update(user, id, h->saved_version, *delta,
                                                  h->fencing_token);
            });
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::kNotFound) {
                throw Error(ErrorKind::kNotFound, "save of conversation '" + id +
                                                      "' refused: it was deleted during "
                                                      "the turn of thinker '" +
                                                      thinker.name +
                                                      "' (not recreated): " + e.what());
            }
            throw;
        }
    }
    // Committed: the bookkeeping moves as one, then the cache follows (it may fail).
    h->created = true;
    const std::string base_version = std::exchange(h->saved_version, result.version);
    if (grown_only) {
        // Only the appended messages are copied into the saved state.
        std::vector<Message> kept = std::move(h->saved_parts.messages);
        kept.insert(kept.end(), now_messages.begin() + static_cast<std::ptrdiff_t>(kept.size()),
                    now_messages.end());
        parts.messages = std::move(kept);
    }
    h->saved_parts = std::move(parts);
    h->saved_epoch = context.messages_epoch();
    h->saved_flag_changes = context.message_flag_changes();
    if (grown_only) {
        h->saved_header = std::move(next_header);
    } else {
        h->saved_header.reset();
    }
    if (delta) {
        state_->refresh(*h, base_version, *delta);
    } else {
        state_->cache(*h, h->saved_parts, h->saved_version);
    }
    if (creating && options.embedder) {
        try {
            options.embedder(user, id, *utterance);
        } catch (const std::exception& e) {
            NUCLEO_LOG_ERROR("[ConvSvc] embedding conversation '{}' failed: {}", id, e.what());
        }
    }
    return result;
}

void ConversationService::release(const Thinker& thinker) {
    state_->release_job(thinker.job_id, thinker.retain, false);
}

std::size_t ConversationService::release_all_for_job(std::string_view job_id) {
    return state_->release_job(job_id, std::nullopt, true);
}

bool ConversationService::force_release(std::string_view conversation_id,
                                        std::string_view user_id) {
    std::shared_ptr<Thinker> owner = owning_thinker(conversation_id, user_id);
    if (!owner) return false;
    NUCLEO_LOG_INFO("[ConvSvc] force release of '{}': cancelling workflow {} of job {}",
                    conversation_id, owner->workflow_id, owner->job_id);
    // ownership.102: the thinker's own token by default, then the host's hook if it set one.
    if (owner->cancellation) owner->cancellation->cancel();
    if (owner->cancel_workflow) owner->cancel_workflow();
    return true;
}

std::size_t ConversationService::run_cleanup(std::chrono::steady_clock::time_point now) {
    std::lock_guard map_lock(state_->mu);
    std::size_t evicted = 0;
    for (auto it = state_->holders.begin(); it != state_->holders.end();) {
        // Kept alive past the erase: the lock below unlocks its mutex after the map dropped it.
        const std::shared_ptr<Holder> keep = it->second;
        Holder& h = *keep;
        std::lock_guard lock(h.mu);
        if (!h.owner && h.pending == 0 && h.released_at + h.retain <= now) {
            it = state_->holders.erase(it);
            ++evicted;
        } else {
            ++it;
        }
    }
    return evicted;
}

void ConversationService::shutdown() {
    if (state_->stopping.exchange(true)) return;
    { std::lock_guard lock(state_->cleanup_mu); }
    state_->cleanup_cv.notify_all();
    if (state_->cleanup_thread.joinable()) state_->cleanup_thread.join();
    std::vector<std::shared_ptr<Holder>> all;
    {
        std::lock_guard lock(state_->mu);
        for (auto& [id, h] : state_->holders) all.push_back(h);
    }
    for (const auto& h : all) {
        std::string lease_holder;
        {
            std::lock_guard lock(h->mu);
            lease_holder = std::exchange(h->lease_holder, {});
        }
        h->handed_off.notify_all();
        if (state_->options.lease && !lease_holder.empty()) {
            try {
                state_->options.lease->release(h->user, h->id, lease_holder);
            } catch (const std::exception& e) {
                NUCLEO_LOG_WARN("[ConvSvc] lease of '{}' not released at shutdown: {}", h->id,
                                e.what());
            }
        }
    }
    std::lock_guard lock(state_->mu);
    state_->holders.clear();
    state_->jobs.clear();
}

bool ConversationService::stopping() const noexcept {
    return state_->stopping.load();
}

std::size_t ConversationService::waiters(std::string_view conversation_id) const {
    std::vector<std::shared_ptr<Holder>> same_id;
    {
        std::lock_guard lock(state_->mu);
        for (const auto& [key, h] : state_->holders) {
            if (key.second == conversation_id) same_id.push_back(h);
        }
    }
    std::size_t parked = 0;
    for (const auto& h : same_id) {
        std::lock_guard lock(h->mu);
        parked += static_cast<std::size_t>(h->parked);
    }
    return parked;
}

std::size_t ConversationService::holders() const {
    std::lock_guard lock(state_->mu);
    return state_->holders.size();
}

}  // namespace nucleo
