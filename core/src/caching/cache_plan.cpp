#include "caching/cache_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nucleo {

bool CachePlan::marks(std::size_t turn, std::size_t block) const noexcept {
    return std::find(turn_anchors.begin(), turn_anchors.end(), CacheAnchor{turn, block}) !=
           turn_anchors.end();
}

const char* to_string(CachePolicy policy) noexcept {
    switch (policy) {
        case CachePolicy::kMarkedTurns:
            return "seed";
        case CachePolicy::kSliding:
            return "sliding";
        case CachePolicy::kAutomatic:
            return "automatic";
    }
    return "seed";
}

std::optional<CachePolicy> parse_cache_policy(std::string_view name) noexcept {
    for (const CachePolicy p :
         {CachePolicy::kMarkedTurns, CachePolicy::kSliding, CachePolicy::kAutomatic}) {
        if (name == to_string(p)) return p;
    }
    return std::nullopt;
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

/// caching.105: the blocks a kSliding breakpoint may sit on (never a blank one: caching.102).
bool anchorable(const ContentBlock& b, bool tool_use) {
    return sent_text(b) || b.is<JsonBlock>() || (tool_use && b.is<ToolUseBlock>()) ||
           b.is<ToolResultBlock>();
}

/// caching.133: where the anchor of assistant turn `t` goes on a dialect that marks no assistant
/// output: the last anchorable block of the nearest user turn before it (walking back over
/// assistant turns only, and no farther than `floor`, the turn of the plan's last anchor);
/// nullopt when that turn has none, is no message (the registry) or there is no such turn.
std::optional<CacheAnchor> before_assistant(const std::vector<PreparedTurn>& turns, std::size_t t,
                                            std::size_t floor, const CacheOptions& options) {
    while (t-- > floor) {
        const PreparedTurn& turn = turns[t];
        if (turn.role == TurnRole::kAssistant) continue;
        if (turn.message_id.empty()) return std::nullopt;
        for (std::size_t b = turn.blocks.size(); b-- > 0;)
            if (anchorable(turn.blocks[b], options.anchor_tool_use)) return CacheAnchor{t, b};
        return std::nullopt;
    }
    return std::nullopt;
}

/// Whether anchor `a` comes after anchor `b` in the request.
bool after(const CacheAnchor& a, const CacheAnchor& b) {
    return a.turn > b.turn || (a.turn == b.turn && a.block > b.block);
}

/// caching.3-5 under `options` (caching.133: an assistant turn's anchor moved where the dialect
/// takes none there).
CachePlan plan_marked(const std::vector<ContentBlock>& system_blocks,
                      const std::vector<PreparedTurn>& turns, bool supports_caching,
                      bool cache_system, const std::vector<std::size_t>* marked_turns,
                      const CacheOptions& options) {
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
    const auto consider = [&](std::size_t t) {
        if (!turns[t].cache) return;
        const auto& blocks = turns[t].blocks;
        // "Image, tool and thinking blocks never anchor a breakpoint."
        // caching.102: a blank one is never sent, so the anchor is the first one that is.
        const auto anchor = std::find_if(blocks.begin(), blocks.end(), sent_text);
        if (anchor == blocks.end()) return;
        CacheAnchor at{t, static_cast<std::size_t>(anchor - blocks.begin())};
        if (!options.anchor_assistant && turns[t].role == TurnRole::kAssistant) {
            // caching.133: moved back to the user turn before it; where that is no place after
            // the plan's last anchor (none, or the same block), the turn spends nothing.
            const auto& done = plan.turn_anchors;
            const auto moved =
                before_assistant(turns, t, done.empty() ? 0 : done.back().turn, options);
            if (!moved || (!done.empty() && !after(*moved, done.back()))) return;
            at = *moved;
        }
        plan.turn_anchors.push_back(at);
        ++used;
    };
    if (marked_turns != nullptr) {  // caching.112: the marked turns only
        for (std::size_t i = 0; i < marked_turns->size() && used < CachePlan::kMaxBreakpoints; ++i)
            consider((*marked_turns)[i]);
    } else {
        for (std::size_t t = 0; t < turns.size() && used < CachePlan::kMaxBreakpoints; ++t)
            consider(t);
    }
    return plan;
}

}  // namespace

CachePlan plan_cache_breakpoints(const std::vector<ContentBlock>& system_blocks,
                                 const std::vector<PreparedTurn>& turns, bool supports_caching,
                                 bool cache_system, const std::vector<std::size_t>* marked_turns) {
    return plan_marked(system_blocks, turns, supports_caching, cache_system, marked_turns,
                       CacheOptions{});
}

CachePlan plan_cache(const PreparedConversation& prepared, bool supports_caching,
                     const CacheOptions& options, const std::vector<std::size_t>* marked_turns) {
    if (options.policy == CachePolicy::kMarkedTurns) {
        CachePlan plan = plan_marked(prepared.system_blocks, prepared.turns, supports_caching,
                                     prepared.cache_system, marked_turns, options);
        plan.system_ttl_1h = plan.system_block.has_value() && options.head_ttl_1h;
        return plan;
    }
    CachePlan plan;
    if (!supports_caching) return plan;

    // caching.105: "no mark under the minimum": the prefix is counted block by block from the
    // head until it reaches the minimum; every position before that point carries nothing.
    const bool check_min = options.min_cacheable_tokens > 0 && options.count_block;
    std::int64_t prefix = 0;
    if (check_min) {
        for (const auto& d : prepared.tool_definitions)
            prefix += options.count_tool ? options.count_tool(d) : 0;
        for (const auto& b : prepared.system_blocks) prefix += options.count_block(b);
    }
    const auto reaches_min = [&] { return !check_min || prefix >= options.min_cacheable_tokens; };
    // caching.102: on the last system block that is sent.
    const auto& system = prepared.system_blocks;
    const auto sent = std::find_if_not(system.rbegin(), system.rend(), blank_text);
    if (sent != system.rend() && prepared.cache_system && reaches_min()) {
        plan.system_block = static_cast<std::size_t>(system.rend() - sent) - 1;
        plan.system_ttl_1h = options.head_ttl_1h;
    }

    // The blocks the next call repeats, in order: every turn of a message, with what rides it
    // (wire.191: the answer contract and the registry stay on the turn they were sent with).
    const auto& turns = prepared.turns;
    const auto eligible = [&turns, &options](std::size_t t, std::size_t b) {
        const PreparedTurn& turn = turns[t];
        // caching.133: where the dialect marks no assistant output, the newest mark falls back to
        // the last anchorable block of the latest user turn (the older ones are on user turns).
        return !turn.message_id.empty() &&
               (options.anchor_assistant || turn.role != TurnRole::kAssistant) &&
               anchorable(turn.blocks[b], options.anchor_tool_use);
    };
    // caching.112: the first eligible block whose prefix reaches the minimum, read from the head
    // only as far as that block.
    std::optional<CacheAnchor> first_ok;
    for (std::size_t t = 0; t < turns.size() && !first_ok; ++t) {
        if (turns[t].message_id.empty()) continue;
        for (std::size_t b = 0; b < turns[t].blocks.size(); ++b) {
            if (check_min) prefix += options.count_block(turns[t].blocks[b]);
            if (eligible(t, b) && reaches_min()) {
                first_ok = CacheAnchor{t, b};
                break;
            }
        }
    }
    const std::size_t used = plan.breakpoints();
    if (options.policy == CachePolicy::kAutomatic && options.automatic_offered) {
        // caching.106: one request-level marker; under the minimum it is not sent.
        plan.automatic = first_ok.has_value();
        return plan;
    }
    if (!first_ok) return plan;

    // Newest first: the last eligible block, then the last eligible block of each earlier
    // outgoing turn: where the earlier calls put their newest breakpoint, read back exactly.
    // caching.112: read from the tail, only as far as the breakpoints last.
    std::vector<CacheAnchor> chosen;
    for (std::size_t t = turns.size(); t-- > first_ok->turn;) {
        if (!chosen.empty() && used + chosen.size() >= CachePlan::kMaxBreakpoints) break;
        if (!chosen.empty() && turns[t].role != TurnRole::kUser) continue;
        for (std::size_t b = turns[t].blocks.size(); b-- > 0;) {
            if (t == first_ok->turn && b < first_ok->block) break;
            if (!eligible(t, b)) continue;
            chosen.push_back(CacheAnchor{t, b});  // the last eligible block of its turn
            break;
        }
    }
    plan.turn_anchors.assign(chosen.rbegin(), chosen.rend());
    return plan;
}

std::string_view plan_moved(const PlanRecord& before, const PlanRecord& now) {
    const CachePlan& was = before.plan;
    if (was.breakpoints() == 0) return "";
    // The causes in the order a reader would look for them: the first that holds is named.
    if (!now.caching) return "caching_off";
    if (now.policy != before.policy) return "policy";
    const CachePlan& is = now.plan;
    if (now.native != before.native || was.system_block != is.system_block ||
        was.system_ttl_1h != is.system_ttl_1h)
        return "head";
    if (now.history_epoch != before.history_epoch) return "rewritten";
    // The last mark of the previous plan reaches farthest: the prefix it wrote covers every
    // earlier mark's, so dropping those is no move, and a request-level marker moves with the
    // tail by design (caching.106).
    if (was.turn_anchors.empty()) return "";
    const CacheAnchor farthest = was.turn_anchors.back();
    if (std::find(is.turn_anchors.begin(), is.turn_anchors.end(), farthest) ==
        is.turn_anchors.end())
        return "tail";
    return "";
}

}  // namespace caching
}  // namespace nucleo
