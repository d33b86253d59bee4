#include "llm/turn_fragments.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "artifacts/artifacts_internal.hpp"
#include "llm/body_buffer.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {
namespace {

std::string_view text_of(const rapidjson::StringBuffer& b) {
    return {b.GetString(), b.GetSize()};
}

bool anchor_less(const CacheAnchor& a, const CacheAnchor& b) {
    return a.turn != b.turn ? a.turn < b.turn : a.block < b.block;
}

/// The anchors (sorted by anchor_less) on the turns [first, end), found by range: a plan holds a
/// handful, so no run scans them all (caching.114).
using Anchors = std::vector<CacheAnchor>;
std::pair<Anchors::const_iterator, Anchors::const_iterator> anchors_in(const Anchors& sorted,
                                                                       std::size_t first,
                                                                       std::size_t end) {
    const auto by_turn = [](const CacheAnchor& a, std::size_t turn) { return a.turn < turn; };
    const auto from = std::lower_bound(sorted.begin(), sorted.end(), first, by_turn);
    return {from, std::lower_bound(from, sorted.end(), end, by_turn)};
}

}  // namespace

contract::SplitBody SplitRequest::pieces() const {
    contract::SplitBody split{frame->open, frame->turns, frame->close, {}};
    split.chunks.reserve(chunks.size());
    for (const auto& c : chunks) split.chunks.push_back(c.get());
    return split;
}

std::optional<SplitRequest> encode_with_fragments(const ProviderInstance& dialect,
                                                  const ProviderCapabilities& caps,
                                                  std::string_view dialect_id,
                                                  ConversationContext& conversation,
                                                  const PreparedConversation& prepared,
                                                  const SliceRequestWriter& write) {
    if (!caps.turn_fragments || prepared.turns.empty() || !dialect.has_encode_split())
        return std::nullopt;
    // A plan over the plugin's limit, or with an anchor outside the turns, is for the whole
    // encode to refuse: split parts would each be within it.
    if (prepared.cache_plan.breakpoints() > caps.max_cache_breakpoints) return std::nullopt;
    for (const CacheAnchor& a : prepared.cache_plan.turn_anchors) {
        if (a.turn >= prepared.turns.size()) return std::nullopt;
    }
    const contract::WireFamily family = contract::wire_family_from_name(caps.wire_family);
    const std::vector<PreparedTurn>& turns = prepared.turns;
    // conversation.101: turn i renders stored message i (wire.191: the registry rides a
    // message's turn, so no turn comes after them).
    const std::size_t messages = std::min(conversation.messages().size(), turns.size());

    // limits.134: the documents of this request's parts are written into this thread's scratch.
    const DocumentScratch scratch;
    rapidjson::StringBuffer& buffer = scratch.buffer();
    write(buffer, PreparedSlice{0, 0, false});
    const std::string_view context(buffer.GetString(), buffer.GetSize());

    TurnFragments& kept = TurnFragmentsAccess::of(conversation);
    auto found = std::find_if(kept.dialects.begin(), kept.dialects.end(),
                              [&](const TurnFragments::Dialect& d) { return d.id == dialect_id; });
    TurnFragments::Dialect entry;
    if (found != kept.dialects.end()) {
        entry = std::move(*found);
        kept.dialects.erase(found);
    }
    entry.id = dialect_id;
    entry.work = {};
    const std::uint64_t messages_epoch = conversation.messages_epoch();
    const std::uint64_t registry_epoch = ArtifactRegistryAccess::epoch(conversation.artifacts());
    if (entry.context != context || entry.messages_epoch != messages_epoch ||
        entry.registry_epoch != registry_epoch) {
        // Another model, budget, option or tool set; the list changed other than by appends
        // (compaction, an insertion, a copy); or the registry did (a turn's PojoBlocks may render
        // differently): nothing kept is valid.
        entry.runs.clear();
        entry.stable = 0;
        entry.context = context;
        entry.messages_epoch = messages_epoch;
        entry.registry_epoch = registry_epoch;
    }
    // caching.114: under the same epochs the list only grew by appends and messages never change
    // in place (ConversationContext hands them out const; the only in-place edits, compactable and
    // requested_output_tokens, reach no turn), so turns [0, stable) keep their role, cache mark,
    // message id and blocks; only the answer contract moves, and an entry holding it was not kept.
    // The cache marks are therefore no part of a key. A cheap check of what that rests on: the
    // list still holds the last of those messages where it was.
    if (entry.stable > messages ||
        (entry.stable > 0 && turns[entry.stable - 1].message_id != entry.stable_id)) {
        entry.runs.clear();
        entry.stable = 0;
    }
    const std::size_t stable = entry.stable;
    TurnFragments::Work& work = entry.work;

    // caching.114: the layout. A run or chunk boundary between two stable turns stands, so the
    // chunks that end before the last stable turn are kept as they are; runs are read anew only
    // from the first chunk that reaches it (on a growing conversation, the last one or two).
    std::size_t from = 0;  // the first turn whose run is read anew
    if (stable == 0 || entry.head_end >= stable) {
        entry.chunk_ends.clear();
        entry.last_user.reset();
    } else {
        while (!entry.chunk_ends.empty() && entry.chunk_ends.back() >= stable)
            entry.chunk_ends.pop_back();
        from = entry.chunk_ends.empty() ? entry.head_end : entry.chunk_ends.back();
    }
    {
        const auto run_end = [&](std::size_t i) {
            std::size_t end = i + 1;
            while (end < turns.size() && turns[end].role == turns[i].role) ++end;
            work.turns_visited += end - i;
            return end;
        };
        // The last user turn among the messages: among the turns read here, or the one before.
        for (std::size_t i = from; i < messages; ++i) {
            if (turns[i].role == TurnRole::kUser) entry.last_user = i;
        }
        if (from == 0) from = entry.head_end = run_end(0);
        std::size_t runs = 0;
        for (std::size_t i = from; i < turns.size();) {
            i = run_end(i);
            if (++runs == TurnFragments::kRunsPerChunk || i == turns.size()) {
                entry.chunk_ends.push_back(i);
                runs = 0;
            }
        }
    }
    const std::vector<std::size_t>& chunk_ends = entry.chunk_ends;
    const std::size_t chunks = chunk_ends.size();
    const auto chunk_first = [&](std::size_t i) {
        return i == 0 ? entry.head_end : chunk_ends[i - 1];
    };
    // wire.191: the turn this prepare decorated anew (the answer contract, the registry) is the
    // only turn among the messages that may not be as it was last sent.
    std::optional<std::size_t> contract;
    if (entry.last_user && turns[*entry.last_user].ends_with_contract) contract = entry.last_user;
    std::vector<CacheAnchor> anchors = prepared.cache_plan.turn_anchors;
    std::sort(anchors.begin(), anchors.end(), anchor_less);

    // A chunk worth keeping: every turn renders a stored message as stored (not the artifact
    // registry turn, which has no message id, nor this call's answer contract).
    const auto keepable = [&](std::size_t i) {
        for (std::size_t t = chunk_first(i); t < chunk_ends[i]; ++t) {
            ++work.turns_visited;
            if (turns[t].message_id.empty() || turns[t].ends_with_contract) return false;
        }
        return true;
    };
    // caching.111, caching.114: a kept entry is reused when it starts at chunk i and ends where a
    // chunk of this request does, its turns are stable (kept: none was the contract or the
    // registry then, so it ends by `stable`; checked all the same), none is this call's contract
    // (it was the last one's, or its instructions were empty then; both flags they depend on are
    // in the context, so this too is a check), and the anchors on its turns are its own.
    auto old = entry.runs.begin();
    const auto reusable_at = [&](std::size_t i) -> TurnFragments::Run* {
        const std::size_t first = chunk_first(i);
        while (old != entry.runs.end() && old->first < first) ++old;
        if (old == entry.runs.end() || old->first != first || !old->kept || old->end > stable)
            return nullptr;
        if (i + old->chunks > chunks || chunk_ends[i + old->chunks - 1] != old->end) return nullptr;
        if (contract && *contract >= old->first && *contract < old->end) return nullptr;
        const auto [a, b] = anchors_in(anchors, old->first, old->end);
        if (!std::equal(a, b, old->anchors.begin(), old->anchors.end())) return nullptr;
        return &*old;
    };

    std::optional<SplitRequest> out;
    try {
        // The head, the body around the turns, and the first run, from the first run's request.
        buffer.Clear();
        write(buffer, PreparedSlice{0, entry.head_end, true});
        ProviderInstance::EncodedSplit frame = dialect.encode_split(text_of(buffer));
        std::vector<TurnFragments::Run> next;
        next.reserve(entry.runs.size() + TurnFragments::kVolatileChunks + 1);
        const std::size_t volatile_from =
            chunks > TurnFragments::kVolatileChunks ? chunks - TurnFragments::kVolatileChunks : 0;
        for (std::size_t i = 0; i < chunks;) {
            if (TurnFragments::Run* reused = reusable_at(i)) {
                work.chunks_reused += reused->chunks;
                i += reused->chunks;
                next.push_back(std::move(*reused));
                ++old;
                continue;
            }
            // caching.111: consecutive chunks to encode, kept ones and before the last
            // kVolatileChunks of the request, go to the plugin together (at most kChunksPerGroup):
            // one call instead of one per chunk, each carrying the request's tools and options.
            const bool kept_chunk = keepable(i);
            std::size_t j = i + 1;
            if (kept_chunk && i < volatile_from) {
                while (j < volatile_from && j - i < TurnFragments::kChunksPerGroup &&
                       reusable_at(j) == nullptr && keepable(j))
                    ++j;
            }
            TurnFragments::Run group{chunk_first(i), chunk_ends[j - 1], j - i, {},
                                     nullptr,        kept_chunk};
            const auto [a, b] = anchors_in(anchors, group.first, group.end);
            group.anchors.assign(a, b);
            work.chunks_built += j - i;
            buffer.Clear();
            write(buffer, PreparedSlice{group.first, group.end, false});
            // caching.113: the chunk's records are read here, once; later requests that carry it
            // are audited over them.
            group.chunk = std::make_shared<const contract::MessageChunk>(
                family, std::move(dialect.encode_split(text_of(buffer)).turns));
            next.push_back(std::move(group));
            i = j;
        }
        // caching.115: the body is the pieces, shared with what the conversation keeps.
        auto parts = std::make_shared<const SplitFrame>(
            SplitFrame{std::move(frame.open), std::move(frame.turns), std::move(frame.close)});
        static constexpr std::string_view kComma = ",";
        std::vector<RequestBody::Piece> body;
        body.reserve(2 * next.size() + 3);
        body.push_back({parts, parts->open});
        body.push_back({parts, parts->turns});
        SplitRequest request{std::move(frame.head), {}, parts, {}};
        request.chunks.reserve(next.size());
        for (const TurnFragments::Run& chunk : next) {
            body.push_back({nullptr, kComma});
            body.push_back({chunk.chunk, chunk.chunk->wire()});
            request.chunks.push_back(chunk.chunk);
        }
        body.push_back({parts, parts->close});
        request.body = RequestBody::from_pieces(std::move(body));
        entry.runs = std::move(next);
        entry.stable = messages;
        entry.stable_id = messages > 0 ? turns[messages - 1].message_id : std::string();
        out = std::move(request);
    } catch (const Error&) {
        // The whole encode gives the plugin's own answer (its error, or its bytes).
        entry.runs.clear();
        entry.stable = 0;
        entry.context.clear();  // nothing of this request is kept
        out.reset();
    }
    kept.dialects.insert(kept.dialects.begin(), std::move(entry));
    if (kept.dialects.size() > TurnFragments::kMaxDialects)
        kept.dialects.resize(TurnFragments::kMaxDialects);
    return out;
}

}  // namespace nucleo::internal
