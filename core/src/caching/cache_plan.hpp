// Cache breakpoint placement, decided in the core (caching.1-5: the core
// decides, plugins render).
#pragma once

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
                                 bool cache_system);

}  // namespace nucleo::caching
