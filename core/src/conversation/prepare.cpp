// The channel contract (channel.1): reconciling the derived content
// (framework slots, tool announcements) with what the conversation renders, the freeze, and the
// PreparedConversation.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "artifacts/artifacts_internal.hpp"
#include "caching/cache_plan.hpp"
#include "conversation/context_internal.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/response.hpp"
#include "nucleo/schema.hpp"
#include "render/render_internal.hpp"

namespace nucleo {

namespace internal {

std::unordered_set<std::string> announced_tool_names(const ConversationParts& state) {
    std::unordered_set<std::string> names;
    for (const ObjectiveSlot& slot : state.objective) {
        if (const auto* def = slot.value.get_if<ToolDefinitionBlock>()) names.insert(def->name);
    }
    for (const Message& m : state.messages) {
        for (const ContentBlock& b : m.blocks) {
            if (const auto* def = b.get_if<ToolDefinitionBlock>()) names.insert(def->name);
        }
    }
    return names;
}

std::optional<std::string> find_announcement(const ConversationParts& state,
                                             std::string_view tool_name) {
    for (const ObjectiveSlot& slot : state.objective) {
        const auto* def = slot.value.get_if<ToolDefinitionBlock>();
        if (def != nullptr && def->name == tool_name) return std::string(kAnnouncedInHead);
    }
    for (const Message& m : state.messages) {
        for (const ContentBlock& b : m.blocks) {
            const auto* def = b.get_if<ToolDefinitionBlock>();
            if (def != nullptr && def->name == tool_name) return m.id;
        }
    }
    return std::nullopt;
}

namespace {
bool is_companion(const Message& message, std::string_view header) {
    if (!message.outgoing() || !message.app_authored || message.blocks.empty()) return false;
    const auto* text = message.blocks.front().get_if<TextBlock>();
    return text != nullptr && std::string_view(text->text).substr(0, header.size()) == header;
}
}  // namespace

bool is_stream_legend(const Message& message) {
    return is_companion(message, kLegendStreamHeader);
}

bool is_stream_tool_weights(const Message& message) {
    const std::string_view guidance = tool_weight_guidance();
    return is_companion(message, guidance.substr(0, guidance.find(':') + 1));
}

}  // namespace internal

namespace {

bool carries_notation(const Message& m) {
    return m.outgoing() && m.response_handler && m.response_handler->uses_schema_notation();
}

/// An app-authored stream message: composed by the framework, kept verbatim by compaction (a
/// definition or its guidance summarized away would be re-announced, moving the prefix).
/// A message whose rendering walks JSON (a PojoBlock, also inside a tool result) and sweeps
/// nothing (no tool definition): the ones worth keeping rendered between calls.
bool renders_pojos(const Message& m) {
    bool pojo = false;
    for (const ContentBlock& b : m.blocks) {
        if (b.is<ToolDefinitionBlock>()) return false;
        if (b.is<PojoBlock>()) pojo = true;
        if (const auto* r = b.get_if<ToolResultBlock>()) {
            for (const ContentBlock& inner : r->content) pojo = pojo || inner.is<PojoBlock>();
        }
    }
    return pojo;
}

Message stream_message(std::vector<ContentBlock> blocks) {
    Message m;
    m.direction = Direction::kOutgoing;
    m.blocks = std::move(blocks);
    m.compactable = false;
    m.app_authored = true;
    return m;
}

}  // namespace

void ConversationContext::place_in_head(std::vector<DeclaredTool> pending, bool need_legend) {
    auto& head = state_.objective;
    auto slot_of = [&head](std::string_view key) {
        return std::find_if(head.begin(), head.end(),
                            [key](const ObjectiveSlot& s) { return s.key == key; });
    };
    const auto& messages = state_.messages;

    // The legend: present iff the answer contract uses the notation, refreshed to the current
    // text ("the framework slots of a restored conversation self-heal to the current constants").
    if (need_legend) {
        const bool in_stream =
            std::any_of(messages.begin(), messages.end(), internal::is_stream_legend);
        if (auto legend = slot_of(kLegendSlot); legend != head.end()) {
            legend->value = TextBlock{schema::notation_legend()};
        } else if (!in_stream) {
            head.push_back(
                ObjectiveSlot{std::string(kLegendSlot), TextBlock{schema::notation_legend()}});
        }
    } else if (auto legend = slot_of(kLegendSlot); legend != head.end()) {
        head.erase(legend);  // "a plain-prose conversation never carries it"
    }

    // The tool-weight guidance "appears exactly when tools do", ahead of the palette.
    const bool tools_in_content = !internal::announced_tool_names(state_).empty();
    const bool head_has_tools = std::any_of(head.begin(), head.end(), [](const ObjectiveSlot& s) {
        return s.value.is<ToolDefinitionBlock>();
    });
    const bool stream_guidance =
        std::any_of(messages.begin(), messages.end(), internal::is_stream_tool_weights);
    const bool want_guidance =
        head_has_tools || !pending.empty() || (tools_in_content && !stream_guidance);
    const TextBlock guidance{std::string(tool_weight_guidance())};
    if (auto weights = slot_of(kToolWeightsSlot); weights != head.end()) {
        if (want_guidance || (tools_in_content && stream_guidance)) {
            weights->value = guidance;
        } else {
            head.erase(weights);  // "never for a tool-less conversation"
        }
    } else if (want_guidance) {
        auto first_tool = std::find_if(head.begin(), head.end(), [](const ObjectiveSlot& s) {
            return s.value.is<ToolDefinitionBlock>();
        });
        head.insert(first_tool, ObjectiveSlot{std::string(kToolWeightsSlot), guidance});
    }

    // The palette joins the head under tool: keys, after the guidance.
    for (DeclaredTool& tool : pending) {
        std::string key = std::string(kToolSlotPrefix) + tool.definition.name;
        if (auto existing = slot_of(key); existing != head.end()) {
            existing->value = std::move(tool.definition);
        } else {
            head.push_back(ObjectiveSlot{std::move(key), std::move(tool.definition)});
        }
    }
}

void ConversationContext::place_in_stream(std::vector<DeclaredTool> pending, bool need_legend) {
    auto& messages = state_.messages;
    // (position, order among companions at one position, message): legend, guidance, tools.
    std::vector<std::tuple<std::size_t, int, Message>> insertions;

    if (need_legend && objective_slot(kLegendSlot) == nullptr &&
        std::none_of(messages.begin(), messages.end(), internal::is_stream_legend)) {
        const auto first = std::find_if(messages.begin(), messages.end(), carries_notation);
        std::string text =
            std::string(internal::kLegendStreamHeader) + "\n\n" + schema::notation_legend();
        insertions.emplace_back(static_cast<std::size_t>(first - messages.begin()), 0,
                                stream_message({TextBlock{std::move(text)}}));
    }

    if (!pending.empty()) {
        // One announcement per point of declaration, tools in declaration order.
        std::map<std::size_t, std::vector<ToolDefinitionBlock>> by_point;
        for (DeclaredTool& tool : pending) {
            by_point[std::min(tool.declared_at, messages.size())].push_back(
                std::move(tool.definition));
        }
        if (objective_slot(kToolWeightsSlot) == nullptr &&
            std::none_of(messages.begin(), messages.end(), internal::is_stream_tool_weights)) {
            insertions.emplace_back(
                by_point.begin()->first, 1,
                stream_message({TextBlock{std::string(tool_weight_guidance())}}));
        }
        for (auto& [point, definitions] : by_point) {
            std::string header(kAdditionalToolsHeader);
            std::vector<ContentBlock> blocks;
            blocks.reserve(definitions.size() + 1);
            blocks.emplace_back(TextBlock{});
            for (std::size_t i = 0; i < definitions.size(); ++i) {
                header.append(i == 0 ? " " : ", ").append(definitions[i].name);
                blocks.emplace_back(std::move(definitions[i]));
            }
            blocks.front() = TextBlock{std::move(header)};
            insertions.emplace_back(point, 2, stream_message(std::move(blocks)));
        }
    }

    // Insert from the back so every position still means "before the message that was there".
    std::sort(insertions.begin(), insertions.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(b), std::get<1>(b)) < std::tie(std::get<0>(a), std::get<1>(a));
    });
    if (!insertions.empty()) epoch_.renew();  // the list changed other than by an append
    for (auto& [position, order, message] : insertions) {
        message.id = mint_message_id();
        message_ids_.insert(message.id);
        messages.insert(messages.begin() + static_cast<std::ptrdiff_t>(position),
                        std::move(message));
    }
}

void ConversationContext::reconcile_derived_content() {
    declare_artifact_tools();
    // Convert every pending declaration first: a refusal leaves the conversation untouched.
    const auto announced = internal::announced_tool_names(state_);
    std::vector<DeclaredTool> pending;
    for (const DeclaredTool& tool : state_.tools) {
        if (announced.count(tool.definition.name) == 0) {
            pending.push_back(
                DeclaredTool{render::to_wire_definition(tool.definition), tool.declared_at});
        }
    }
    const bool need_legend =
        std::any_of(state_.messages.begin(), state_.messages.end(), carries_notation);
    if (frozen_) {
        place_in_stream(std::move(pending), need_legend);
    } else {
        place_in_head(std::move(pending), need_legend);
    }
}

PreparedConversation ConversationContext::prepare_messages_for_llm(
    const ContentFormatter& formatter, bool thinking_active, const CacheOptions& cache) {
    reconcile_derived_content();
    frozen_ = true;  // "The head freezes at the instance's first render"

    const bool native = formatter.supports_native_tool_calling();
    PreparedConversation out;
    out.native_tools = native;
    out.cache_system = state_.cache_main_objective;

    // The objective's values, in order, are the ONLY system content; keys never reach the wire.
    for (const ObjectiveSlot& slot : state_.objective) {
        render::transform_block(slot.value, native, state_.artifacts, out.system_blocks,
                                out.tool_definitions);
    }

    const auto& messages = state_.messages;
    out.turns.reserve(messages.size() + 1);
    std::optional<std::size_t> last_outgoing;
    const std::uint64_t registry_epoch = ArtifactRegistryAccess::epoch(state_.artifacts);
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const Message& m = messages[i];
        PreparedTurn turn{m.outgoing() ? TurnRole::kUser : TurnRole::kAssistant, {}, m.cache, m.id};
        turn.blocks.reserve(m.blocks.size() + 1);
        const bool cacheable = renders_pojos(m);
        if (cacheable && i < rendered_.size() && rendered_[i].messages_epoch == epoch_.value() &&
            rendered_[i].registry_epoch == registry_epoch && rendered_[i].native == native) {
            turn.blocks = rendered_[i].blocks;
        } else {
            for (const ContentBlock& b : m.blocks) {
                render::transform_block(b, native, state_.artifacts, turn.blocks,
                                        out.tool_definitions);
            }
            if (cacheable) {
                if (rendered_.size() < messages.size()) rendered_.resize(messages.size());
                rendered_[i] = RenderedMessage{epoch_.value(), registry_epoch, native, turn.blocks};
            }
        }
        if (m.outgoing()) last_outgoing = i;
        out.turns.push_back(std::move(turn));
    }

    // The answer contract of the last outgoing message, stripped for this call (tools.20), rides
    // that message's turn.
    if (last_outgoing && messages[*last_outgoing].response_handler) {
        std::string instructions = messages[*last_outgoing].response_handler->response_instructions(
            native, thinking_active);
        if (!instructions.empty()) {
            out.turns[*last_outgoing].blocks.emplace_back(TextBlock{std::move(instructions)});
            out.turns[*last_outgoing].ends_with_contract = true;
        }
    }

    // "The artifact registry is data, not instruction ... so it rides a trailing user turn": last,
    // after every message, so it never sits inside the cached prefix of the history.
    if (!state_.artifacts.empty()) {
        PreparedTurn registry{TurnRole::kUser, {}, false, {}};
        registry.blocks.emplace_back(TextBlock{state_.artifacts.build_artifact_registry_section()});
        out.turns.push_back(std::move(registry));
    }

    if (cache_policy_) {
        CacheOptions mine = cache;
        mine.policy = *cache_policy_;
        out.cache_plan = caching::plan_cache(out, formatter.supports_caching(), mine);
    } else {
        out.cache_plan = caching::plan_cache(out, formatter.supports_caching(), cache);
    }
    return out;
}

}  // namespace nucleo
