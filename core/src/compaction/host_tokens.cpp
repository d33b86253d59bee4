// compaction.111: the counters the "nucleo.host.tokens/1" slot counts with, by lease id.
#include "compaction/host_tokens_internal.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace nucleo::internal {
namespace {

struct Leases {
    std::shared_mutex mutex;
    std::map<std::string, const TokenCounter*, std::less<>> by_id;
    std::atomic<std::uint64_t> next{1};
};

Leases& leases() {
    static Leases l;
    return l;
}

}  // namespace

CounterLease::CounterLease(const TokenCounter& counter) {
    Leases& l = leases();
    id_ = "counter-" + std::to_string(l.next.fetch_add(1));
    const std::unique_lock lock(l.mutex);
    l.by_id.emplace(id_, &counter);
}

CounterLease::~CounterLease() {
    Leases& l = leases();
    // A count in flight holds the shared lock: the lease ends only after it returns, so a plugin
    // never counts with a counter that is gone.
    const std::unique_lock lock(l.mutex);
    l.by_id.erase(id_);
}

std::optional<std::int64_t> count_with_leased(std::string_view id, std::string_view text) noexcept {
    try {
        Leases& l = leases();
        const std::shared_lock lock(l.mutex);
        const auto it = l.by_id.find(id);
        if (it == l.by_id.end()) return std::nullopt;
        return it->second->count_text(text);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace nucleo::internal
