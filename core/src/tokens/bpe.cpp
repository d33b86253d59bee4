#include "tokens/bpe.hpp"

#include <algorithm>
#include <cstring>
#include <queue>

namespace nucleo::tokens {
namespace {

/// A fast hash for short byte strings (8 bytes per step, multiply-xorshift mixing).
inline std::uint64_t hash_bytes(const std::uint8_t* p, std::size_t n) noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xFF51AFD7ED558CCDULL);
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    std::uint64_t w = 0;
    if (n >= 4) {  // two overlapping 4-byte loads cover 4..7 bytes
        std::uint32_t a;
        std::uint32_t b;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + n - 4, 4);
        w = (static_cast<std::uint64_t>(a) << 32) | b;
    } else if (n > 0) {
        w = (static_cast<std::uint64_t>(p[0]) << 16) | (static_cast<std::uint64_t>(p[n / 2]) << 8) |
            p[n - 1];
    }
    h = (h ^ w) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h;
}

constexpr unsigned kBloomBits = 21;
inline std::uint64_t bloom_bit(std::uint64_t h, int which) noexcept {
    return which == 0 ? (h >> 32) & ((1u << kBloomBits) - 1) : (h >> 11) & ((1u << kBloomBits) - 1);
}

/// The first min(8, n) bytes, zero-padded.
inline std::uint64_t head_of(const std::uint8_t* p, std::size_t n) noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n < 8 ? n : 8);
    return w;
}

/// Pieces up to this many bytes merge with tiktoken's own O(n·m) scan over a flat array (fast
/// for the short pieces of real text); longer ones (long whitespace or symbol runs) use a heap so
/// a 100 kB run stays O(n log n). Both pick the lowest rank, leftmost on ties.
constexpr std::size_t kSmallPiece = 128;

/// tiktoken's _byte_pair_merge on a piece of at most kSmallPiece bytes. Leaves the part
/// boundaries in start[0..m) (start[m-1] == n) and each part's own rank in token[0..m-1) (kept
/// up to date while merging, so no lookup is needed at the end), and returns m.
std::size_t merge_small(const RankTable& ranks, const std::uint8_t* p, std::size_t n,
                        std::uint32_t* start, std::uint32_t* rank, std::uint32_t* token) {
    std::size_t m = n + 1;
    for (std::size_t i = 0; i < n; ++i) token[i] = ranks.find_byte(p[i]);
    std::uint32_t min_rank = kNoRank;
    std::size_t min_i = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) {
        start[i] = static_cast<std::uint32_t>(i);
        rank[i] = ranks.find_pair(p[i], p[i + 1]);
        if (rank[i] < min_rank) {
            min_rank = rank[i];
            min_i = i;
        }
    }
    start[n - 1] = static_cast<std::uint32_t>(n - 1);
    rank[n - 1] = kNoRank;
    start[n] = static_cast<std::uint32_t>(n);
    rank[n] = kNoRank;

    // The rank of parts i..i+2 joined, read before part i+1 is removed (hence i+3).
    auto get_rank = [&](std::size_t i) {
        return i + 3 < m ? ranks.find(p + start[i], start[i + 3] - start[i]) : kNoRank;
    };
    while (min_rank != kNoRank) {
        const std::size_t i = min_i;
        if (i > 0) rank[i - 1] = get_rank(i - 1);
        token[i] = rank[i];  // the merged part is the token the pair's rank names
        rank[i] = get_rank(i);
        std::memmove(start + i + 1, start + i + 2, (m - i - 2) * sizeof(std::uint32_t));
        std::memmove(rank + i + 1, rank + i + 2, (m - i - 2) * sizeof(std::uint32_t));
        std::memmove(token + i + 1, token + i + 2, (m - i - 2) * sizeof(std::uint32_t));
        --m;
        min_rank = kNoRank;
        for (std::size_t k = 0; k + 1 < m; ++k) {
            if (rank[k] < min_rank) {
                min_rank = rank[k];
                min_i = k;
            }
        }
    }
    return m;
}

/// The same merge order with a min-heap of (rank, start) over a linked list of parts.
std::vector<std::uint32_t> merge_large(const RankTable& ranks, const std::uint8_t* p,
                                       std::size_t n) {
    std::vector<std::uint32_t> start(n + 1), next(n + 1), prev(n + 1), rank(n + 1, kNoRank);
    for (std::size_t i = 0; i <= n; ++i) {
        start[i] = static_cast<std::uint32_t>(i);
        next[i] = static_cast<std::uint32_t>(i + 1);
        prev[i] = static_cast<std::uint32_t>(i == 0 ? 0 : i - 1);
    }
    struct Item {
        std::uint32_t rank;
        std::uint32_t node;  // node index == its start offset, which merging never moves
        bool operator>(const Item& o) const {
            return rank != o.rank ? rank > o.rank : node > o.node;
        }
    };
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    for (std::size_t i = 0; i + 1 < n; ++i) {
        rank[i] = ranks.find_pair(p[i], p[i + 1]);
        if (rank[i] != kNoRank) heap.push({rank[i], static_cast<std::uint32_t>(i)});
    }
    std::vector<bool> alive(n + 1, true);
    // Rank of node i joined with its next part; node n is the end sentinel.
    auto pair_rank = [&](std::uint32_t i) {
        const std::uint32_t j = next[i];
        if (j >= n) return kNoRank;
        const std::uint32_t end = start[next[j]];
        return ranks.find(p + start[i], end - start[i]);
    };
    while (!heap.empty()) {
        const Item top = heap.top();
        heap.pop();
        // Stale entries: the node was absorbed, or its pair changed. Equal rank means equal
        // bytes from the same start, so the entry still stands.
        if (!alive[top.node] || rank[top.node] != top.rank) continue;
        const std::uint32_t i = top.node;
        const std::uint32_t j = next[i];
        alive[j] = false;
        next[i] = next[j];
        prev[next[j]] = i;
        rank[i] = pair_rank(i);
        if (rank[i] != kNoRank) heap.push({rank[i], i});
        if (i > 0) {
            const std::uint32_t h = prev[i];
            rank[h] = pair_rank(h);
            if (rank[h] != kNoRank) heap.push({rank[h], h});
        }
    }
    std::vector<std::uint32_t> bounds;
    for (std::uint32_t i = 0; i <= n; i = next[i]) {
        bounds.push_back(start[i]);
        if (i == n) break;
    }
    return bounds;
}

/// A per-thread, direct-mapped cache of short pieces and their tokens (64-byte lines, 256 kB):
/// text repeats its words, and a hit costs no lookup in the multi-megabyte rank table. One cache
/// per encoding; per thread, so encoding stays lock-free.
struct PieceCache {
    static constexpr std::size_t kLines = 4096;
    static constexpr std::size_t kMaxBytes = 22;
    static constexpr std::size_t kMaxTokens = 8;
    struct Line {
        std::uint64_t hash;
        std::uint8_t len;     // 0 = empty
        std::uint8_t ntokens;
        char bytes[kMaxBytes];
        std::uint32_t tokens[kMaxTokens];
    };
    const RankTable* owner = nullptr;
    std::vector<Line> lines;
};

PieceCache& cache_for(const RankTable& ranks) {
    thread_local PieceCache caches[2];
    thread_local int last = 0;
    for (PieceCache& c : caches) {
        if (c.owner == &ranks) return c;
    }
    // Evict the cache not used last (two encodings in turn keep both).
    PieceCache& c = caches[1 - last];
    last = 1 - last;
    c.owner = &ranks;
    c.lines.assign(PieceCache::kLines, PieceCache::Line{});
    return c;
}

template <class Sink>
void encode_piece(const RankTable& ranks, std::string_view piece, Sink&& sink) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(piece.data());
    const std::size_t n = piece.size();
    if (n == 0) return;
    if (n <= 2) {
        if (const std::uint32_t r = ranks.find(p, n); r != kNoRank) {
            sink(r);
            return;
        }
    }
    PieceCache::Line* line = nullptr;
    std::uint64_t h64 = 0;
    if (n <= PieceCache::kMaxBytes) {
        h64 = hash_key(p, n);
        PieceCache& cache = cache_for(ranks);
        line = &cache.lines[h64 & (PieceCache::kLines - 1)];
        if (line->hash == h64 && line->len == n && std::memcmp(line->bytes, p, n) == 0) {
            for (std::size_t k = 0; k < line->ntokens; ++k) sink(line->tokens[k]);
            return;
        }
    }
    if (const std::uint32_t r = line ? ranks.find_hashed(p, n, h64) : ranks.find(p, n);
        r != kNoRank) {
        if (line) {
            line->hash = h64;
            line->len = static_cast<std::uint8_t>(n);
            line->ntokens = 1;
            std::memcpy(line->bytes, p, n);
            line->tokens[0] = r;
        }
        sink(r);
        return;
    }
    if (n <= kSmallPiece) {
        std::uint32_t start[kSmallPiece + 1];
        std::uint32_t rank[kSmallPiece + 1];
        std::uint32_t token[kSmallPiece + 1];
        const std::size_t m = merge_small(ranks, p, n, start, rank, token);
        if (line && m - 1 <= PieceCache::kMaxTokens) {
            line->hash = h64;
            line->len = static_cast<std::uint8_t>(n);
            line->ntokens = static_cast<std::uint8_t>(m - 1);
            std::memcpy(line->bytes, p, n);
            std::memcpy(line->tokens, token, (m - 1) * sizeof(std::uint32_t));
        }
        for (std::size_t k = 0; k + 1 < m; ++k) sink(token[k]);
        return;
    }
    const std::vector<std::uint32_t> bounds = merge_large(ranks, p, n);
    for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
        sink(ranks.find(p + bounds[k], bounds[k + 1] - bounds[k]));
    }
}

}  // namespace

RankTable::RankTable()
    : slots_(1u << 10, Slot{0, 0}), pairs_(1u << 16, kNoRank), bloom_((1u << kBloomBits) / 64, 0) {
    std::fill(std::begin(bytes_), std::end(bytes_), kNoRank);
}

void RankTable::grow() {
    std::vector<Slot> slots(slots_.size() * 2, Slot{0, 0});
    const std::size_t mask = slots.size() - 1;
    for (const Slot& old : slots_) {
        if (old.entry == 0) continue;
        std::size_t idx = old.hash & mask;
        while (slots[idx].entry != 0) idx = (idx + 1) & mask;
        slots[idx] = old;
    }
    slots_.swap(slots);
}

bool RankTable::insert(std::string_view bytes, std::uint32_t rank) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
    if (bytes.empty() || find(p, bytes.size()) != kNoRank) return false;
    // At most 1/3 full: short probe chains for the many misses BPE asks about.
    if ((entries_.size() + 1) * 3 > slots_.size()) grow();
    const std::uint64_t h64 = hash_bytes(p, bytes.size());
    const auto h = static_cast<std::uint32_t>(h64);
    for (int k = 0; k < 2; ++k) {
        const std::uint64_t bit = bloom_bit(h64, k);
        bloom_[bit >> 6] |= std::uint64_t{1} << (bit & 63);
    }
    entries_.push_back({head_of(p, bytes.size()), static_cast<std::uint32_t>(arena_.size()),
                        static_cast<std::uint32_t>(bytes.size()), rank});
    arena_.append(bytes);
    const std::size_t mask = slots_.size() - 1;
    std::size_t idx = h & mask;
    while (slots_[idx].entry != 0) idx = (idx + 1) & mask;
    slots_[idx] = Slot{h, static_cast<std::uint32_t>(entries_.size())};
    if (rank >= by_rank_.size()) by_rank_.resize(static_cast<std::size_t>(rank) + 1, 0);
    by_rank_[rank] = static_cast<std::uint32_t>(entries_.size());
    if (bytes.size() == 2) pairs_[(static_cast<std::size_t>(p[0]) << 8) | p[1]] = rank;
    if (bytes.size() == 1) bytes_[p[0]] = rank;
    return true;
}

std::uint64_t hash_key(const std::uint8_t* p, std::size_t n) noexcept { return hash_bytes(p, n); }

std::uint32_t RankTable::find(const std::uint8_t* s, std::size_t len) const noexcept {
    if (len == 2) return find_pair(s[0], s[1]);
    if (len == 1) return bytes_[s[0]];
    return find_hashed(s, len, hash_bytes(s, len));
}

std::uint32_t RankTable::find_hashed(const std::uint8_t* s, std::size_t len,
                                     std::uint64_t h64) const noexcept {
    if (len == 2) return find_pair(s[0], s[1]);
    if (len == 1) return bytes_[s[0]];
    for (int k = 0; k < 2; ++k) {
        const std::uint64_t bit = bloom_bit(h64, k);
        if (!(bloom_[bit >> 6] & (std::uint64_t{1} << (bit & 63)))) return kNoRank;
    }
    const auto h = static_cast<std::uint32_t>(h64);
    const std::uint64_t head = head_of(s, len);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t idx = h & mask;; idx = (idx + 1) & mask) {
        const Slot slot = slots_[idx];
        if (slot.entry == 0) return kNoRank;
        if (slot.hash != h) continue;
        const Entry& e = entries_[slot.entry - 1];
        if (e.len == len && e.head == head &&
            (len <= 8 || std::memcmp(arena_.data() + e.offset + 8, s + 8, len - 8) == 0)) {
            return e.rank;
        }
    }
}

bool RankTable::bytes(std::uint32_t rank, std::string_view& out) const noexcept {
    if (rank >= by_rank_.size() || by_rank_[rank] == 0) return false;
    const Entry& e = entries_[by_rank_[rank] - 1];
    out = std::string_view(arena_.data() + e.offset, e.len);
    return true;
}

void byte_pair_encode(const RankTable& ranks, std::string_view piece,
                      std::vector<std::uint32_t>& out) {
    encode_piece(ranks, piece, [&](std::uint32_t r) { out.push_back(r); });
}

std::size_t byte_pair_count(const RankTable& ranks, std::string_view piece) {
    std::size_t count = 0;
    encode_piece(ranks, piece, [&](std::uint32_t) { ++count; });
    return count;
}

}  // namespace nucleo::tokens
