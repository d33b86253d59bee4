// The per-turn encode cache (caching.110): a conversation keeps, per dialect, the wire messages a
// plugin encoded for each run of same-role turns (abi.108), and the next request encodes only the
// runs that changed and concatenates. The cache is invisible: the bytes are those of a whole
// encode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>

#include "nucleo/wire/contract.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/request_body.hpp"
#include "render/prepared_json.hpp"

namespace nucleo::internal {

/// What a conversation keeps of its last requests' encodings.
struct TurnFragments {
    /// Runs of consecutive same-role turns are encoded kRunsPerChunk at a time (one plugin call,
    /// so a cold conversation costs a few calls, not one per turn); a chunk holds the runs
    /// [1 + i * kRunsPerChunk, ...) of the request (run 0 rides the request's head), the turns
    /// [first, end) they cover, and their wire messages.
    static constexpr std::size_t kRunsPerChunk = 32;
    /// caching.111: chunks encoded in one call are kept as one entry (a Run spanning them); at
    /// most kChunksPerGroup chunks go together, and the last kVolatileChunks of a request (where
    /// cache marks move and turns are appended) are encoded and kept one by one.
    static constexpr std::size_t kChunksPerGroup = 16;
    static constexpr std::size_t kVolatileChunks = 2;
    struct Run {
        std::size_t first = 0;
        std::size_t end = 0;
        std::size_t chunks = 1;  ///< how many chunks of the request the entry spans
        /// caching.114: the plan's anchors among the turns [first, end), sorted by (turn, block):
        /// with the turns unchanged (the epochs of caching.110), the entry's whole key.
        std::vector<CacheAnchor> anchors;
        /// caching.113: the plugin's encode_split "turns" output for the chunk's document, with
        /// the records the audit reads (read once, when the chunk was encoded); shared with the
        /// SplitRequest that carries it.
        std::shared_ptr<const contract::MessageChunk> chunk;
        bool kept = false; ///< false: not reusable (the artifact registry turn, a contract turn)
    };
    /// What one request's encode walked, read by tests (caching.114): on a growing conversation
    /// it does not grow with the conversation.
    struct Work {
        std::size_t turns_visited = 0;  ///< turns whose role or keepability was read
        std::size_t chunks_built = 0;   ///< chunks whose key was built (those encoded)
        std::size_t chunks_reused = 0;  ///< chunks taken from kept entries
    };
    /// One dialect (the provider instance and its plugin), with every member of a run's document
    /// but the run itself (model, budgets, thinking, TTL, options, tool definitions, flags): a
    /// new context drops the dialect's runs, so a dialect holds one conversation's encoding.
    struct Dialect {
        std::string id;
        std::string context;
        std::uint64_t messages_epoch = 0;
        std::uint64_t registry_epoch = 0;
        std::vector<Run> runs;
        /// caching.114: the layout of the last request, extended by the next one under the same
        /// epochs. Turns [0, stable) rendered the stored messages (stable_id: the last one's id);
        /// run 0 is [0, head_end); chunk i is [i == 0 ? head_end : chunk_ends[i - 1],
        /// chunk_ends[i]); last_user is the last user turn among [0, stable).
        std::size_t stable = 0;
        std::string stable_id;
        std::size_t head_end = 0;
        std::vector<std::size_t> chunk_ends;
        std::optional<std::size_t> last_user;
        Work work;  ///< the last request's
    };
    /// Most recently used first; at most kMaxDialects.
    std::vector<Dialect> dialects;
    static constexpr std::size_t kMaxDialects = 4;
};

struct TurnFragmentsAccess {
    static TurnFragments& of(ConversationContext& c) {
        if (!c.turn_fragments_.value) c.turn_fragments_.value = std::make_shared<TurnFragments>();
        return *c.turn_fragments_.value;
    }
    [[nodiscard]] static const TurnFragments* peek(const ConversationContext& c) {
        return c.turn_fragments_.value.get();
    }
};

/// Writes the provider request document of a part of the prepared conversation (the whole
/// request's members, "turn_offset" and write_prepared_json's slice); "stream" is the call's for
/// the part with the head and false for the others.
using SliceRequestWriter = std::function<void(rapidjson::StringBuffer&, const PreparedSlice&)>;

/// The parts of the first run's encode_split around the kept chunks, shared by the request body
/// that carries them (caching.115).
struct SplitFrame {
    std::string open;   ///< encode_split's "open" for the first run's document
    std::string turns;  ///< the first run's wire messages
    std::string close;
};

/// An HTTP request's head document and body, and the pieces the body is made of.
struct SplitRequest {
    std::string head;
    /// caching.115: open + turns + ("," + chunk)... + close, as pieces shared with the
    /// conversation's kept chunks (never joined here).
    RequestBody body;
    std::shared_ptr<const SplitFrame> frame;
    std::vector<std::shared_ptr<const contract::MessageChunk>> chunks;

    /// caching.113: the pieces of `body`, for the audit of a split body (wire.173); valid while
    /// this request lives.
    [[nodiscard]] contract::SplitBody pieces() const;
};

/// caching.110: the request encoded through encode_split (abi.108), reusing the conversation's
/// kept runs; nullopt when the split path does not apply (a plugin without "turn_fragments" or
/// the slot, no turns, a plan the plugin cannot take, an anchor outside the turns) or any part
/// failed: the caller then encodes the request whole, which gives the bytes or the error.
/// `dialect_id` names the provider instance and its plugin.
std::optional<SplitRequest> encode_with_fragments(const ProviderInstance& dialect, const ProviderCapabilities& caps,
                                                  std::string_view dialect_id, ConversationContext& conversation,
                                                  const PreparedConversation& prepared,
                                                  const SliceRequestWriter& write);

}  // namespace nucleo::internal
