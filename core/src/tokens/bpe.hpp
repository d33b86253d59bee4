// Byte-pair merging over a rank table, as tiktoken's byte_pair_merge does it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::tokens {

inline constexpr std::uint32_t kNoRank = 0xFFFFFFFFu;

/// The hash RankTable uses for its keys.
std::uint64_t hash_key(const std::uint8_t* p, std::size_t n) noexcept;

/// Byte strings → ranks (token ids), and back. An open-addressing hash table over one byte
/// arena, plus a direct table for the 65,536 two-byte strings every BPE starts from.
class RankTable {
public:
    RankTable();
    /// Adds `bytes` with `rank`; false when the bytes are already present.
    bool insert(std::string_view bytes, std::uint32_t rank);
    /// The rank of s[0..len), kNoRank when absent.
    [[nodiscard]] std::uint32_t find(const std::uint8_t* s, std::size_t len) const noexcept;
    /// find() with the key's hash_key() already computed.
    [[nodiscard]] std::uint32_t find_hashed(const std::uint8_t* s, std::size_t len,
                                            std::uint64_t h64) const noexcept;
    [[nodiscard]] std::uint32_t find_pair(std::uint8_t a, std::uint8_t b) const noexcept {
        return pairs_[(static_cast<std::size_t>(a) << 8) | b];
    }
    [[nodiscard]] std::uint32_t find_byte(std::uint8_t b) const noexcept { return bytes_[b]; }
    /// The bytes of a rank; false when the table has no such rank.
    bool bytes(std::uint32_t rank, std::string_view& out) const noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

private:
    /// A probe slot keeps the key's hash so most misses end without touching the entries.
    struct Slot {
        std::uint32_t hash;
        std::uint32_t entry;  // entry index + 1; 0 = empty
    };
    /// Keys of up to 8 bytes compare on `head` alone (the common case); longer ones also
    /// compare their tail in the arena.
    struct Entry {
        std::uint64_t head;
        std::uint32_t offset;
        std::uint32_t len;
        std::uint32_t rank;
    };
    void grow();

    std::string arena_;
    std::vector<Entry> entries_;
    std::vector<Slot> slots_;
    std::vector<std::uint32_t> by_rank_;  // rank → entry index + 1
    std::vector<std::uint32_t> pairs_;
    std::uint32_t bytes_[256];
    /// A Bloom filter over the keys (2 bits of 2^21, 256 kB: stays in cache). Most lookups
    /// during BPE are of byte strings that are no token; the filter answers nearly all of them
    /// without touching the multi-megabyte slot array.
    std::vector<std::uint64_t> bloom_;
};

/// Appends the tokens of one pre-split piece (tiktoken: a piece that is itself a token is that
/// token; otherwise byte pairs merge lowest rank first, leftmost on ties).
void byte_pair_encode(const RankTable& ranks, std::string_view piece,
                      std::vector<std::uint32_t>& out);
/// The number of tokens byte_pair_encode would append.
std::size_t byte_pair_count(const RankTable& ranks, std::string_view piece);

}  // namespace nucleo::tokens
