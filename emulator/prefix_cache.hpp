// Prompt-prefix caching as the providers describe it (caching.11,
// docs/emulator.md): a cache entry is keyed by the exact canonical bytes of a request prefix, lives
// a TTL that a read refreshes, and only prefixes of at least the model's minimum cacheable length
// are kept. Tokens are approximated as ceil(bytes / 4) everywhere (docs/emulator.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nucleo::emulator {

/// ceil(bytes / 4): the emulator's one token-counting rule.
inline std::int64_t tokens_for_bytes(std::size_t bytes) {
    return static_cast<std::int64_t>((bytes + 3) / 4);
}

/// Identity of a prefix: two independent 64-bit hashes of the namespace (provider and model) and
/// the canonical bytes, plus the byte length. Storing hashes instead of the bytes keeps memory
/// linear in the conversation; a false hit would need both hashes and the length to collide.
struct PrefixKey {
    std::uint64_t fnv = 0;
    std::uint64_t poly = 0;
    std::size_t bytes = 0;  ///< length of the canonical prefix (namespace excluded)
    bool operator==(const PrefixKey&) const = default;
};

struct PrefixKeyHash {
    std::size_t operator()(const PrefixKey& k) const noexcept {
        return static_cast<std::size_t>(k.fnv ^ (k.poly * 0x9E3779B97F4A7C15ULL) ^ k.bytes);
    }
};

/// Hashes the canonical bytes of a request as they are appended and remembers the key at each
/// block boundary (`mark`) and, when asked, at fixed byte offsets (OpenAI's 128-token steps).
class PrefixHasher {
  public:
    /// `ns` (provider and model) is mixed into the hashes: caches are per model, as with the real
    /// APIs.
    explicit PrefixHasher(std::string_view ns);

    void append(std::string_view bytes);
    /// Records the key of the prefix so far; returns its index.
    std::size_t mark();
    /// Also record a key at byte offsets first, first + step, ... (set before appending).
    void set_auto_marks(std::size_t first, std::size_t step);

    const std::vector<PrefixKey>& marks() const { return marks_; }
    const std::vector<PrefixKey>& auto_marks() const { return auto_marks_; }
    std::size_t bytes() const { return bytes_; }
    /// A short hex digest of everything appended: the source of deterministic ids.
    std::string digest() const;

  private:
    void feed(unsigned char c);
    PrefixKey key() const { return {fnv_, poly_, bytes_}; }

    std::uint64_t fnv_;
    std::uint64_t poly_;
    std::size_t bytes_ = 0;
    std::size_t auto_next_ = 0;
    std::size_t auto_step_ = 0;
    std::vector<PrefixKey> marks_;
    std::vector<PrefixKey> auto_marks_;
};

/// Thread-safe store of cached prefixes with per-entry TTL, refreshed on read. Time is the
/// steady clock plus an offset that only grows (`advance`, the emulator's `POST /clock`), so a test
/// can let an entry expire without waiting for it (caching.103).
class PrefixCache {
  public:
    using Clock = std::chrono::steady_clock;

    /// True when the entry exists and has not expired; a hit pushes its expiry out by its TTL.
    bool lookup_refresh(const PrefixKey& key);
    void write(const PrefixKey& key, std::chrono::seconds ttl);
    std::size_t size();
    /// Forgets every entry and sets the clock offset back to zero.
    void clear();
    /// Moves the cache's clock forward by `by` (negative values are refused by the caller);
    /// returns the total offset.
    std::chrono::seconds advance(std::chrono::seconds by);
    /// The emulator's clock: the steady clock plus the offset `advance` moved it by. The thread
    /// store reads it too, so `POST /clock` expires threads as it expires cache entries.
    Clock::time_point clock();

  private:
    struct Entry {
        Clock::time_point expires;
        std::chrono::seconds ttl;
    };
    void purge_expired(Clock::time_point now);
    Clock::time_point now() const { return Clock::now() + offset_; }

    std::mutex mu_;
    std::chrono::seconds offset_{0};
    std::unordered_map<PrefixKey, Entry, PrefixKeyHash> entries_;
};

/// A cache breakpoint: the index of the mark that ends the cached prefix, and its TTL.
struct Breakpoint {
    std::size_t mark = 0;
    std::chrono::seconds ttl{300};
    bool one_hour = false;  ///< asked for the 1-hour TTL (Anthropic `"ttl":"1h"`, Converse `1h`)
};

/// The input-token split the APIs report. input + creation + read is the whole prompt.
struct CacheUsage {
    std::int64_t input = 0;     ///< tokens neither read from nor written to the cache
    std::int64_t creation = 0;  ///< Anthropic cache_creation_input_tokens / Converse write
    std::int64_t read = 0;      ///< Anthropic cache_read_input_tokens / OpenAI cached_tokens
    /// The part of `creation` written for a 1-hour breakpoint (Anthropic
    /// cache_creation.ephemeral_1h_input_tokens); the rest is ephemeral_5m_input_tokens.
    std::int64_t creation_1h = 0;
    std::int64_t total() const { return input + creation + read; }
};

/// Explicit breakpoints (Anthropic cache_control, Converse cachePoint). The read is the longest
/// cached prefix found at a block boundary up to 20 blocks before any breakpoint (Anthropic's
/// documented lookback); every breakpoint prefix past it that reaches `min_tokens` is written,
/// and creation counts the tokens from the read point to the last prefix written. Of these, the
/// tokens up to the longest 1-hour prefix written are `creation_1h` (caching.101).
CacheUsage explicit_cache(PrefixCache& cache, const PrefixHasher& hasher,
                          const std::vector<Breakpoint>& breakpoints, std::int64_t min_tokens);

/// OpenAI's automatic caching: prompts of 1,024 tokens or more are cached in 128-token steps;
/// the read is the longest step already cached, and every step is (re)written.
CacheUsage automatic_cache(PrefixCache& cache, const PrefixHasher& hasher,
                           std::chrono::seconds ttl);

/// The minimum cacheable prefix the provider documents for `model` (caching.103): 4,096 tokens
/// for Claude Opus 4.5 and Haiku 4.5, 2,048 for the Claude 3 and 3.5 Haiku models, 1,024 for
/// every other model (Sonnet, Opus 4/4.1, Amazon Nova on Bedrock). Matched on the model name as
/// it appears in the request, so Bedrock ids (`global.anthropic.claude-haiku-4-5-...`) and dated
/// Anthropic names resolve alike.
std::int64_t documented_min_cacheable(std::string_view model);

/// The byte offsets OpenAI's automatic caching marks (1,024 tokens, then every 128).
inline constexpr std::size_t kOpenAiFirstCachedBytes = 1024 * 4;
inline constexpr std::size_t kOpenAiCacheStepBytes = 128 * 4;

}  // namespace nucleo::emulator
