#include "prefix_cache.hpp"

#include <algorithm>
#include <cstdio>

namespace nucleo::emulator {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
// Polynomial hash modulo the Mersenne prime 2^61 - 1: independent of FNV-1a.
constexpr std::uint64_t kPolyMod = (1ULL << 61) - 1;
constexpr std::uint64_t kPolyBase = 1000003ULL;
// Anthropic documents that a breakpoint finds cache hits up to 20 blocks before it.
constexpr std::size_t kLookbackBlocks = 20;

}  // namespace

PrefixHasher::PrefixHasher(std::string_view ns) : fnv_(kFnvOffset), poly_(0) {
    for (unsigned char c : ns) feed(c);
    feed(0);  // separator: the namespace never runs into the content
}

void PrefixHasher::feed(unsigned char c) {
    fnv_ = (fnv_ ^ c) * kFnvPrime;
    const unsigned __int128 p = static_cast<unsigned __int128>(poly_) * kPolyBase + c + 1;
    poly_ = static_cast<std::uint64_t>(p % kPolyMod);
}

void PrefixHasher::append(std::string_view bytes) {
    for (unsigned char c : bytes) {
        feed(c);
        ++bytes_;
        if (auto_step_ != 0 && bytes_ == auto_next_) {
            auto_marks_.push_back(key());
            auto_next_ += auto_step_;
        }
    }
}

std::size_t PrefixHasher::mark() {
    marks_.push_back(key());
    return marks_.size() - 1;
}

void PrefixHasher::set_auto_marks(std::size_t first, std::size_t step) {
    auto_next_ = first;
    auto_step_ = step;
}

std::string PrefixHasher::digest() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv_ ^ poly_));
    return buf;
}

bool PrefixCache::lookup_refresh(const PrefixKey& key) {
    std::lock_guard lock(mu_);
    const auto now = this->now();
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    if (now >= it->second.expires) {
        entries_.erase(it);
        return false;
    }
    it->second.expires = now + it->second.ttl;
    return true;
}

void PrefixCache::write(const PrefixKey& key, std::chrono::seconds ttl) {
    std::lock_guard lock(mu_);
    const auto now = this->now();
    purge_expired(now);
    entries_[key] = Entry{now + ttl, ttl};
}

std::size_t PrefixCache::size() {
    std::lock_guard lock(mu_);
    purge_expired(now());
    return entries_.size();
}

void PrefixCache::clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
    offset_ = std::chrono::seconds(0);
}

std::chrono::seconds PrefixCache::advance(std::chrono::seconds by) {
    std::lock_guard lock(mu_);
    offset_ += by;
    return offset_;
}

PrefixCache::Clock::time_point PrefixCache::clock() {
    std::lock_guard lock(mu_);
    return now();
}

std::int64_t documented_min_cacheable(std::string_view model) {
    const auto has = [model](std::string_view part) {
        return model.find(part) != std::string_view::npos;
    };
    if (has("opus-4-5") || has("haiku-4-5")) return 4096;
    if (has("haiku")) return 2048;  // claude-3-haiku, claude-3-5-haiku
    return 1024;
}

void PrefixCache::purge_expired(Clock::time_point now) {
    std::erase_if(entries_, [now](const auto& kv) { return now >= kv.second.expires; });
}

CacheUsage explicit_cache(PrefixCache& cache, const PrefixHasher& hasher,
                          const std::vector<Breakpoint>& breakpoints, std::int64_t min_tokens) {
    const auto& marks = hasher.marks();
    const auto cacheable = [&](std::size_t m) {
        return tokens_for_bytes(marks[m].bytes) >= min_tokens;
    };
    // Longest hit among the block boundaries each breakpoint looks back over.
    std::size_t read_bytes = 0;
    for (const auto& bp : breakpoints) {
        const std::size_t lowest = bp.mark >= kLookbackBlocks ? bp.mark - kLookbackBlocks : 0;
        for (std::size_t m = bp.mark + 1; m-- > lowest;) {
            if (marks[m].bytes <= read_bytes) break;
            if (cacheable(m) && cache.lookup_refresh(marks[m])) {
                read_bytes = marks[m].bytes;
                break;
            }
        }
    }
    // Every cacheable breakpoint prefix beyond the hit is written now.
    std::size_t written_bytes = read_bytes;
    std::size_t written_1h_bytes = read_bytes;
    for (const auto& bp : breakpoints) {
        if (marks[bp.mark].bytes <= read_bytes || !cacheable(bp.mark)) continue;
        cache.write(marks[bp.mark], bp.ttl);
        written_bytes = std::max(written_bytes, marks[bp.mark].bytes);
        if (bp.one_hour) written_1h_bytes = std::max(written_1h_bytes, marks[bp.mark].bytes);
    }
    CacheUsage u;
    u.read = read_bytes == 0 ? 0 : tokens_for_bytes(read_bytes);
    u.creation = written_bytes == read_bytes ? 0 : tokens_for_bytes(written_bytes) - u.read;
    // caching.101: the tokens up to the longest 1-hour prefix were written at the 1-hour rate.
    u.creation_1h =
        written_1h_bytes == read_bytes ? 0 : tokens_for_bytes(written_1h_bytes) - u.read;
    u.input = tokens_for_bytes(hasher.bytes()) - u.read - u.creation;
    return u;
}

CacheUsage automatic_cache(PrefixCache& cache, const PrefixHasher& hasher,
                           std::chrono::seconds ttl) {
    CacheUsage u;
    const auto& steps = hasher.auto_marks();
    std::size_t read_bytes = 0;
    for (std::size_t i = steps.size(); i-- > 0;) {
        if (cache.lookup_refresh(steps[i])) {
            read_bytes = steps[i].bytes;
            break;
        }
    }
    std::size_t written_bytes = read_bytes;
    for (const auto& k : steps) {
        if (k.bytes <= read_bytes) continue;
        cache.write(k, ttl);
        written_bytes = k.bytes;
    }
    // OpenAI reports no write count; `creation` only feeds the emulator's /stats.
    u.read = tokens_for_bytes(read_bytes);
    u.creation = tokens_for_bytes(written_bytes) - u.read;
    u.input = tokens_for_bytes(hasher.bytes()) - u.read - u.creation;
    return u;
}

}  // namespace nucleo::emulator
