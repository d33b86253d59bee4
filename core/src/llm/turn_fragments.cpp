#include "llm/turn_fragments.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <utility>

#include "artifacts/artifacts_internal.hpp"
#include "llm/body_buffer.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {
namespace {

/// The runs of consecutive same-role turns, as [first, end) pairs.
std::vector<std::pair<std::size_t, std::size_t>> runs_of(const PreparedConversation& p) {
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (std::size_t i = 0; i < p.turns.size();) {
        std::size_t end = i + 1;
        while (end < p.turns.size() && p.turns[end].role == p.turns[i].role) ++end;
        runs.emplace_back(i, end);
        i = end;
    }
    return runs;
}

/// What of a run the messages epoch does not cover: each turn's cache mark (set in place on a
/// stored message) and the plan's anchors in it; appended to `key` without a string per run
/// (caching.112), then '|'.
void append_run_key(std::string& key, const PreparedConversation& p, std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) key += p.turns[i].cache ? 'c' : '-';
    const auto append_number = [&key](std::size_t n) {
        char digits[std::numeric_limits<std::size_t>::digits10 + 1];
        key.append(digits, std::to_chars(std::begin(digits), std::end(digits), n).ptr);
    };
    for (const CacheAnchor& a : p.cache_plan.turn_anchors) {
        if (a.turn < first || a.turn >= end) continue;
        key += ';';
        append_number(a.turn - first);
        key += ':';
        append_number(a.block);
    }
    key += '|';
}

/// A run worth keeping: every turn renders a stored message as stored. The artifact registry turn
/// (no message id) changes with the registry, and the answer contract rides only the latest user
/// turn of one call.
bool keepable(const PreparedConversation& p, std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) {
        if (p.turns[i].message_id.empty() || p.turns[i].ends_with_contract) return false;
    }
    return true;
}

std::string_view text_of(const rapidjson::StringBuffer& b) { return {b.GetString(), b.GetSize()}; }

}  // namespace

contract::SplitBody SplitRequest::pieces() const {
    contract::SplitBody split{open, turns, close, {}};
    split.chunks.reserve(chunks.size());
    for (const auto& c : chunks) split.chunks.push_back(c.get());
    return split;
}

std::optional<SplitRequest> encode_with_fragments(const ProviderInstance& dialect, const ProviderCapabilities& caps,
                                                  std::string_view dialect_id, ConversationContext& conversation,
                                                  const PreparedConversation& prepared,
                                                  const SliceRequestWriter& write) {
    if (!caps.turn_fragments || prepared.turns.empty() || !dialect.has_encode_split()) return std::nullopt;
    // A plan over the plugin's limit, or with an anchor outside the turns, is for the whole
    // encode to refuse: split parts would each be within it.
    if (prepared.cache_plan.breakpoints() > caps.max_cache_breakpoints) return std::nullopt;
    for (const CacheAnchor& a : prepared.cache_plan.turn_anchors) {
        if (a.turn >= prepared.turns.size()) return std::nullopt;
    }
    const auto runs = runs_of(prepared);
    const contract::WireFamily family = contract::wire_family_from_name(caps.wire_family);

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
    const std::uint64_t messages_epoch = conversation.messages_epoch();
    const std::uint64_t registry_epoch = ArtifactRegistryAccess::epoch(conversation.artifacts());
    if (entry.context != context || entry.messages_epoch != messages_epoch ||
        entry.registry_epoch != registry_epoch) {
        // Another model, budget, option or tool set; the list changed other than by appends
        // (compaction, an insertion, a copy); or the registry did (a turn's PojoBlocks may render
        // differently): nothing kept is valid.
        entry.runs.clear();
        entry.context = context;
        entry.messages_epoch = messages_epoch;
        entry.registry_epoch = registry_epoch;
    }

    std::optional<SplitRequest> out;
    try {
        // The head, the body around the turns, and the first run, from the first run's request.
        buffer.Clear();
        write(buffer, PreparedSlice{0, runs.front().second, true});
        ProviderInstance::EncodedSplit frame = dialect.encode_split(text_of(buffer));
        // The chunks of this request: their turns, keys, and whether they may be kept.
        constexpr std::size_t kPer = TurnFragments::kRunsPerChunk;
        const std::size_t chunks = (runs.size() - 1 + kPer - 1) / kPer;
        std::vector<TurnFragments::Run> wanted(chunks);
        for (std::size_t i = 0; i < chunks; ++i) {
            const std::size_t from = 1 + i * kPer;
            const std::size_t to = std::min(from + kPer, runs.size());
            TurnFragments::Run& chunk = wanted[i];
            chunk = {runs[from].first, runs[to - 1].second, {}, nullptr, true};
            for (std::size_t r = from; r < to; ++r) {
                append_run_key(chunk.key, prepared, runs[r].first, runs[r].second);
                chunk.kept = chunk.kept && keepable(prepared, runs[r].first, runs[r].second);
            }
        }
        // caching.111: a kept entry covers one chunk or a group of consecutive chunks; it is reused
        // when it starts and ends where chunks of this request do and its key is theirs.
        std::vector<TurnFragments::Run> next;
        std::vector<bool> reused(chunks, false);
        std::vector<std::size_t> reused_end(chunks, 0);  // for a reused entry at chunk i: its end chunk
        std::vector<TurnFragments::Run*> reused_entry(chunks, nullptr);
        {
            std::size_t i = 0;
            for (TurnFragments::Run& old : entry.runs) {
                while (i < chunks && wanted[i].first < old.first) ++i;
                if (i == chunks) break;
                if (!old.kept || wanted[i].first != old.first) continue;
                std::size_t j = i;
                std::string key;
                bool kept = true;
                while (j < chunks && wanted[j].end <= old.end) {
                    key += wanted[j].key;
                    kept = kept && wanted[j].kept;
                    if (wanted[j++].end == old.end) break;
                }
                if (j == i || wanted[j - 1].end != old.end || !kept || key != old.key) continue;
                reused[i] = true;
                reused_end[i] = j;
                reused_entry[i] = &old;
                i = j;
            }
        }
        std::size_t size = frame.open.size() + frame.turns.size() + frame.close.size();
        for (std::size_t i = 0; i < chunks;) {
            if (reused[i]) {
                next.push_back(std::move(*reused_entry[i]));
                size += 1 + next.back().chunk->wire().size();
                i = reused_end[i];
                continue;
            }
            // caching.111: consecutive chunks to encode, kept ones and before the last
            // kVolatileChunks of the request, go to the plugin together (at most kChunksPerGroup):
            // one call instead of one per chunk, each carrying the request's tools and options.
            std::size_t j = i + 1;
            const std::size_t stable = chunks > TurnFragments::kVolatileChunks ? chunks - TurnFragments::kVolatileChunks : 0;
            if (wanted[i].kept && i < stable) {
                while (j < stable && j - i < TurnFragments::kChunksPerGroup && !reused[j] && wanted[j].kept) ++j;
            }
            TurnFragments::Run group{wanted[i].first, wanted[j - 1].end, {}, nullptr, true};
            for (std::size_t k = i; k < j; ++k) {
                group.key += wanted[k].key;
                group.kept = group.kept && wanted[k].kept;
            }
            buffer.Clear();
            write(buffer, PreparedSlice{group.first, group.end, false});
            // caching.113: the chunk's records are read here, once; later requests that carry it
            // are audited over them.
            group.chunk = std::make_shared<const contract::MessageChunk>(
                family, std::move(dialect.encode_split(text_of(buffer)).turns));
            size += 1 + group.chunk->wire().size();
            next.push_back(std::move(group));
            i = j;
        }
        SplitRequest request{std::move(frame.head), reused_body(), std::move(frame.open), std::move(frame.turns),
                             std::move(frame.close), {}};  // limits.134
        request.body.reserve(size + kBodyPadding);         // limits.135
        request.body += request.open;
        request.body += request.turns;
        request.chunks.reserve(next.size());
        for (const TurnFragments::Run& chunk : next) {
            request.body += ',';
            request.body += chunk.chunk->wire();
            request.chunks.push_back(chunk.chunk);
        }
        request.body += request.close;
        entry.runs = std::move(next);
        out = std::move(request);
    } catch (const Error&) {
        // The whole encode gives the plugin's own answer (its error, or its bytes).
        entry.runs.clear();
        entry.context.clear();  // nothing of this request is kept
        out.reset();
    }
    kept.dialects.insert(kept.dialects.begin(), std::move(entry));
    if (kept.dialects.size() > TurnFragments::kMaxDialects) kept.dialects.resize(TurnFragments::kMaxDialects);
    return out;
}

}  // namespace nucleo::internal
