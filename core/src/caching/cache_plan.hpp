// Cache breakpoint placement, decided in the core (caching.1-5: the core
// decides, plugins render; caching.105-107: the policies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "nucleo/prepared.hpp"

namespace nucleo::caching {

/// The breakpoint loop over the already-prepared request (caching.3, caching.4): the system
/// breakpoint is counted first (when there are system blocks, the backend supports caching and
/// cache_system is set) and applied to the last system block; then, in turn order, the first
/// TextBlock or SkillBlock of each cache-marked turn anchors one breakpoint while fewer than
/// CachePlan::kMaxBreakpoints are spent. A marked turn without such a block spends nothing.
CachePlan plan_cache_breakpoints(const std::vector<ContentBlock>& system_blocks,
                                 const std::vector<PreparedTurn>& turns, bool supports_caching,
                                 bool cache_system,
                                 const std::vector<std::size_t>* marked_turns = nullptr);

/// The plan of `options.policy` over a prepared request (caching.105-107). kMarkedTurns is
/// plan_cache_breakpoints exactly (plus the 1-hour head when asked). kSliding and kAutomatic
/// spend the system breakpoint as kMarkedTurns does, then:
///  - kSliding: the remaining breakpoints go to the tail, ignoring the messages' `cache` marks:
///    the newest on the last block that the next call repeats (wire.191: the answer contract and
///    the registry riding a turn stay, so they count), the older ones on the last such block of
///    each earlier USER turn, newest first. Those are where the previous calls put their newest
///    breakpoint, so the prefix each call wrote is read back exactly by the next, however many
///    blocks the calls in between added (no reliance on the 20-block lookback).
///  - kAutomatic (when offered): one request-level breakpoint; otherwise planned as kSliding.
/// Anchorable blocks: non-blank text, skill, JSON, tool use and tool result (the Messages API and
/// Converse accept a breakpoint after them; tool use only where options.anchor_tool_use);
/// never image, file, thinking or a definition. No
/// breakpoint goes on a prefix shorter than options.min_cacheable_tokens when a counter is given.
///
/// caching.133: without options.anchor_assistant no mark sits in an assistant turn: kSliding's
/// newest goes on the last anchorable block of the latest user turn instead, and a marked
/// assistant turn's kMarkedTurns anchor moves to the last anchorable block of the user turn
/// before it, or is dropped (spending nothing) where that turn has none or the plan already
/// marks it or anything after it.
///
/// caching.111: the cost does not grow with the history: `marked_turns`, when given, lists the
/// turns whose `cache` is set in order (the kept prepare's), so kMarkedTurns visits those only;
/// kSliding reads the head only up to its first eligible block past the minimum and the tail back
/// only as far as its breakpoints reach.
CachePlan plan_cache(const PreparedConversation& prepared, bool supports_caching,
                     const CacheOptions& options,
                     const std::vector<std::size_t>* marked_turns = nullptr);

/// caching.132: what one prepare planned, kept so the next can say why it moved a mark.
struct PlanRecord {
    CachePlan plan;
    CachePolicy policy = CachePolicy::kMarkedTurns;
    bool caching = false;             ///< the dialect took marks
    bool native = false;              ///< the dialect's tool form (the head's shape)
    std::uint64_t history_epoch = 0;  ///< the message list's epoch it planned over
};

/// caching.132: why `now` does not place the mark of `before` that reached farthest (the system
/// mark, or its last turn mark), in the words of CacheMiss::plan_moved: "caching_off",
/// "policy", "head", "rewritten" or "tail"; "" when it is still placed (or `before` placed none).
std::string_view plan_moved(const PlanRecord& before, const PlanRecord& now);

}  // namespace nucleo::caching
