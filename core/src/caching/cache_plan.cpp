#include "caching/cache_plan.hpp"

#include <algorithm>

namespace nucleo {

bool CachePlan::marks(std::size_t turn, std::size_t block) const noexcept {
    return std::find(turn_anchors.begin(), turn_anchors.end(), CacheAnchor{turn, block}) !=
           turn_anchors.end();
}

namespace caching {

CachePlan plan_cache_breakpoints(const std::vector<ContentBlock>& system_blocks,
                                 const std::vector<PreparedTurn>& turns, bool supports_caching,
                                 bool cache_system) {
    CachePlan plan;
    if (!supports_caching) return plan;
    std::size_t used = 0;
    // Counted before the turn loop, "so turn anchors cannot take it".
    if (!system_blocks.empty() && cache_system) {
        plan.system_block = system_blocks.size() - 1;
        ++used;
    }
    for (std::size_t t = 0; t < turns.size() && used < CachePlan::kMaxBreakpoints; ++t) {
        if (!turns[t].cache) continue;
        const auto& blocks = turns[t].blocks;
        // "Image, tool and thinking blocks never anchor a breakpoint."
        const auto anchor = std::find_if(blocks.begin(), blocks.end(), [](const ContentBlock& b) {
            return b.is<TextBlock>() || b.is<SkillBlock>();
        });
        if (anchor == blocks.end()) continue;
        plan.turn_anchors.push_back(
            CacheAnchor{t, static_cast<std::size_t>(anchor - blocks.begin())});
        ++used;
    }
    return plan;
}

}  // namespace caching
}  // namespace nucleo
