#include "caching/cache_plan.hpp"

#include <algorithm>

namespace nucleo {

bool CachePlan::marks(std::size_t turn, std::size_t block) const noexcept {
    return std::find(turn_anchors.begin(), turn_anchors.end(), CacheAnchor{turn, block}) !=
           turn_anchors.end();
}

namespace caching {
namespace {

/// caching.102: a text or skill block whose text is blank, which no dialect sends.
bool blank_text(const ContentBlock& b) {
    const std::string* text = nullptr;
    if (const auto* t = b.get_if<TextBlock>()) text = &t->text;
    if (const auto* s = b.get_if<SkillBlock>()) text = &s->content;
    return text != nullptr && text->find_first_not_of(" \t\n\r\v\f") == std::string::npos;
}

/// A turn anchor: a text or skill block that is sent.
bool sent_text(const ContentBlock& b) {
    return (b.is<TextBlock>() || b.is<SkillBlock>()) && !blank_text(b);
}

}  // namespace

CachePlan plan_cache_breakpoints(const std::vector<ContentBlock>& system_blocks,
                                 const std::vector<PreparedTurn>& turns, bool supports_caching,
                                 bool cache_system) {
    CachePlan plan;
    if (!supports_caching) return plan;
    std::size_t used = 0;
    // Counted before the turn loop, "so turn anchors cannot take it".
    // caching.102: on the last block that is sent, falling back past blank ones.
    const auto sent = std::find_if_not(system_blocks.rbegin(), system_blocks.rend(), blank_text);
    if (sent != system_blocks.rend() && cache_system) {
        plan.system_block = static_cast<std::size_t>(system_blocks.rend() - sent) - 1;
        ++used;
    }
    for (std::size_t t = 0; t < turns.size() && used < CachePlan::kMaxBreakpoints; ++t) {
        if (!turns[t].cache) continue;
        const auto& blocks = turns[t].blocks;
        // "Image, tool and thinking blocks never anchor a breakpoint."
        // caching.102: a blank one is never sent, so the anchor is the first one that is.
        const auto anchor = std::find_if(blocks.begin(), blocks.end(), sent_text);
        if (anchor == blocks.end()) continue;
        plan.turn_anchors.push_back(
            CacheAnchor{t, static_cast<std::size_t>(anchor - blocks.begin())});
        ++used;
    }
    return plan;
}

}  // namespace caching
}  // namespace nucleo
