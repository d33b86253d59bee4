// The channel contract (channel.1): reconciling the derived content
// (framework slots, tool announcements) with what the conversation renders, the freeze, and the
// PreparedConversation.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_set>

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

/// wire.191: what rode a turn when it was sent, appended in the order it rode: the artifact
/// registry, then the answer contract (the last words of the turn).
void append_sent_with(PreparedTurn& turn, const SentWith& sent) {
    if (!sent.registry.empty()) turn.blocks.emplace_back(TextBlock{sent.registry});
    if (!sent.contract.empty()) turn.blocks.emplace_back(TextBlock{sent.contract});
}

std::size_t sent_with_blocks(const SentWith& sent) {
    return (sent.registry.empty() ? 0U : 1U) + (sent.contract.empty() ? 0U : 1U);
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

const internal::StreamScan& ConversationContext::scan_stream() {
    if (!kept_prepare_.value) kept_prepare_.value = std::make_shared<internal::KeptPrepare>();
    internal::StreamScan& scan = kept_prepare_.value->scan;
    const auto& messages = state_.messages;
    if (scan.messages_epoch != epoch_.value() || scan.scanned > messages.size()) {
        scan = internal::StreamScan{};
        scan.messages_epoch = epoch_.value();
    }
    // conversation.102: messages never change in place, so under one epoch only the appended
    // ones are new.
    for (; scan.scanned < messages.size(); ++scan.scanned) {
        const Message& m = messages[scan.scanned];
        for (const ContentBlock& b : m.blocks) {
            if (const auto* def = b.get_if<ToolDefinitionBlock>())
                scan.tool_names.insert(def->name);
        }
        scan.notation = scan.notation || carries_notation(m);
        scan.stream_legend = scan.stream_legend || internal::is_stream_legend(m);
        scan.stream_weights = scan.stream_weights || internal::is_stream_tool_weights(m);
    }
    return scan;
}

void ConversationContext::place_in_head(std::vector<DeclaredTool> pending,
                                        const internal::StreamScan& scan) {
    auto& head = state_.objective;
    auto slot_of = [&head](std::string_view key) {
        return std::find_if(head.begin(), head.end(),
                            [key](const ObjectiveSlot& s) { return s.key == key; });
    };

    // The legend: present iff the answer contract uses the notation, refreshed to the current
    // text ("the framework slots of a restored conversation self-heal to the current constants").
    if (scan.notation) {
        if (auto legend = slot_of(kLegendSlot); legend != head.end()) {
            legend->value = TextBlock{schema::notation_legend()};
        } else if (!scan.stream_legend) {
            head.push_back(
                ObjectiveSlot{std::string(kLegendSlot), TextBlock{schema::notation_legend()}});
        }
    } else if (auto legend = slot_of(kLegendSlot); legend != head.end()) {
        head.erase(legend);  // "a plain-prose conversation never carries it"
    }

    // The tool-weight guidance "appears exactly when tools do", ahead of the palette.
    const bool head_has_tools = std::any_of(head.begin(), head.end(), [](const ObjectiveSlot& s) {
        return s.value.is<ToolDefinitionBlock>();
    });
    const bool tools_in_content = head_has_tools || !scan.tool_names.empty();
    const bool stream_guidance = scan.stream_weights;
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

void ConversationContext::place_in_stream(std::vector<DeclaredTool> pending,
                                          const internal::StreamScan& scan) {
    auto& messages = state_.messages;
    // (position, order among companions at one position, message): legend, guidance, tools.
    std::vector<std::tuple<std::size_t, int, Message>> insertions;

    if (scan.notation && objective_slot(kLegendSlot) == nullptr && !scan.stream_legend) {
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
        if (objective_slot(kToolWeightsSlot) == nullptr && !scan.stream_weights) {
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
    const internal::StreamScan& scan = scan_stream();
    std::unordered_set<std::string_view> in_head;
    for (const ObjectiveSlot& slot : state_.objective) {
        if (const auto* def = slot.value.get_if<ToolDefinitionBlock>()) in_head.insert(def->name);
    }
    // Convert every pending declaration first: a refusal leaves the conversation untouched.
    std::vector<DeclaredTool> pending;
    for (const DeclaredTool& tool : state_.tools) {
        const std::string& name = tool.definition.name;
        if (in_head.count(name) == 0 && scan.tool_names.count(name) == 0) {
            pending.push_back(
                DeclaredTool{render::to_wire_definition(tool.definition), tool.declared_at});
        }
    }
    if (frozen_) {
        place_in_stream(std::move(pending), scan);
    } else {
        place_in_head(std::move(pending), scan);
    }
}

PreparedConversation ConversationContext::prepare_messages_for_llm(
    const ContentFormatter& formatter, bool thinking_active, const CacheOptions& cache) {
    reconcile_derived_content();
    frozen_ = true;  // "The head freezes at the instance's first render"
    // conversation.101: a kept value is extended and copied out; without one the value is
    // prepared straight into what is returned (keeping it would cost a second copy of the turns).
    if (internal::PreparedAccess::extends(*this, *kept_prepare_.value, formatter))
        return internal::PreparedAccess::extend_kept(*this, formatter, thinking_active, cache);
    internal::KeptPrepare fresh;
    prepare_kept(fresh, formatter, thinking_active, cache);
    return std::move(fresh.prepared);
}

bool internal::PreparedAccess::extends(const ConversationContext& c, const KeptPrepare& kept,
                                       const ContentFormatter& formatter) {
    return kept.valid && kept.messages_epoch == c.epoch_.value() &&
           kept.registry_epoch == ArtifactRegistryAccess::epoch(c.state_.artifacts) &&
           kept.native == formatter.supports_native_tool_calling() &&
           kept.tool_changes == formatter.supports_native_tool_changes() &&
           kept.head_slots == c.state_.objective.size() &&
           kept.messages <= c.state_.messages.size();
}

const PreparedConversation& ConversationContext::prepare_in_place(const ContentFormatter& formatter,
                                                                  bool thinking_active,
                                                                  const CacheOptions& cache) {
    reconcile_derived_content();
    frozen_ = true;
    return internal::PreparedAccess::extend_kept(*this, formatter, thinking_active, cache);
}

const PreparedConversation& internal::PreparedAccess::extend_kept(ConversationContext& c,
                                                                  const ContentFormatter& formatter,
                                                                  bool thinking_active,
                                                                  const CacheOptions& cache) {
    // reconcile_derived_content made the slot.
    KeptPrepare& kept = *c.kept_prepare_.value;
    try {
        c.prepare_kept(kept, formatter, thinking_active, cache);
    } catch (...) {
        c.kept_prepare_.value.reset();  // a half-extended value is never read again
        throw;
    }
    return kept.prepared;
}

void ConversationContext::decorate_last_outgoing(internal::KeptPrepare& kept, bool native,
                                                 bool thinking_active) {
    // wire.191: this call's answer contract (tools.20) and the artifact registry, when it
    // changed since it was last sent, ride the last outgoing message's turn and stay there: the
    // next call sends that turn as this one does. Only a turn not yet answered (nothing after
    // it) is decorated anew when what would ride it changed (a retry at another depth); an
    // answered one keeps what the model saw.
    if (!kept.last_outgoing) return;
    const std::size_t last = *kept.last_outgoing;
    const Message& m = state_.messages[last];
    PreparedTurn& turn = kept.prepared.turns[last];
    SentWith now;
    if (m.response_handler)
        now.contract = m.response_handler->response_instructions(native, thinking_active);
    const auto recorded = state_.sent_with.find(m.id);
    const SentWith before = recorded == state_.sent_with.end() ? SentWith{} : recorded->second;
    if (!state_.artifacts.empty()) {
        std::string registry = state_.artifacts.build_artifact_registry_section();
        // The registry last sent before this turn: this turn's own, when it had one, replaces it.
        const std::string& previous =
            before.registry.empty() ? kept.last_sent_registry : before.registry;
        if (!before.registry.empty() || registry != previous) now.registry = std::move(registry);
    }
    // An answered turn (a prefill, or a count after the answer) is never decorated: the model saw
    // it as it was.
    const bool answered = last + 1 < state_.messages.size();
    if (answered) return;
    if (now != before) {
        turn.blocks.resize(turn.blocks.size() - sent_with_blocks(before));
        append_sent_with(turn, now);
        if (!now.registry.empty()) kept.last_sent_registry = now.registry;
        if (sent_with_blocks(now) == 0) {
            state_.sent_with.erase(m.id);
        } else {
            state_.sent_with[m.id] = now;
        }
    }
    // Flagged while it may still be decorated anew (unanswered, something rides it), whether or
    // not this prepare changed it, so a kept prepare and a fresh one agree.
    turn.ends_with_contract = sent_with_blocks(now) > 0;
    if (turn.ends_with_contract) kept.contract_turn = last;
}

void ConversationContext::prepare_kept(internal::KeptPrepare& kept,
                                       const ContentFormatter& formatter, bool thinking_active,
                                       const CacheOptions& cache) {
    const bool native = formatter.supports_native_tool_calling();
    const bool tool_changes = formatter.supports_native_tool_changes();
    const auto& messages = state_.messages;
    const std::uint64_t registry_epoch = ArtifactRegistryAccess::epoch(state_.artifacts);
    PreparedConversation& out = kept.prepared;

    // conversation.101: the turns of a list that only grew since the last prepare are kept; this
    // call's contract and registry turn come off, the new messages' turns are appended. The head
    // is frozen since that prepare (conversation.14), so its system blocks stand.
    const bool extend = internal::PreparedAccess::extends(*this, kept, formatter);
    kept.valid = false;
    if (extend) {
        ++kept.extensions;
        // wire.191: the last call's decorated turn keeps what rode it: it was sent so.
        if (kept.contract_turn) out.turns[*kept.contract_turn].ends_with_contract = false;
    } else {
        out = PreparedConversation{};
        out.native_tools = native;
        // The objective's values, in order, are the ONLY system content; keys never reach the
        // wire.
        for (const ObjectiveSlot& slot : state_.objective) {
            render::transform_block(slot.value, native, state_.artifacts, out.system_blocks,
                                    out.tool_definitions);
        }
        kept.messages = 0;
        kept.last_outgoing.reset();
        kept.marked.clear();
        kept.last_sent_registry.clear();
    }
    kept.contract_turn.reset();
    out.cache_system = state_.cache_main_objective;
    const std::size_t grew_from = kept.messages;

    // Grown geometrically: an exact reserve would move every kept turn on every call. The first
    // prepare leaves room for half as many turns again (conversation.103): a conversation that
    // rendered goes on growing, and its next call should not move every turn (reserved pages
    // cost nothing until a turn lands on them).
    if (out.turns.capacity() < messages.size() + 1)
        out.turns.reserve(
            std::max(messages.size() + 1 + messages.size() / 2, 2 * out.turns.capacity()));
    for (std::size_t i = kept.messages; i < messages.size(); ++i) {
        const Message& m = messages[i];
        PreparedTurn turn{m.outgoing() ? TurnRole::kUser : TurnRole::kAssistant, {}, m.cache, m.id};
        turn.blocks.reserve(m.blocks.size() + 2);
        const bool cacheable = renders_pojos(m);
        if (cacheable && i < rendered_.size() && rendered_[i].messages_epoch == epoch_.value() &&
            rendered_[i].registry_epoch == registry_epoch && rendered_[i].native == native) {
            turn.blocks = rendered_[i].blocks;
        } else {
            for (const ContentBlock& b : m.blocks) {
                render::transform_block(b, native, state_.artifacts, turn.blocks,
                                        out.tool_definitions, tool_changes);
                out.tool_changes = out.tool_changes ||
                                   (tool_changes && native && b.is<ToolDefinitionBlock>());
            }
            if (cacheable) {
                if (rendered_.size() < messages.size()) rendered_.resize(messages.size());
                rendered_[i] = RenderedMessage{epoch_.value(), registry_epoch, native, turn.blocks};
            }
        }
        // wire.191: a turn sent before goes with what rode it then.
        if (m.outgoing()) {
            if (const auto sent = state_.sent_with.find(m.id); sent != state_.sent_with.end()) {
                append_sent_with(turn, sent->second);
                if (!sent->second.registry.empty()) kept.last_sent_registry = sent->second.registry;
            }
            kept.last_outgoing = i;
        }
        if (m.cache) kept.marked.push_back(i);
        out.turns.push_back(std::move(turn));
    }
    kept.messages = messages.size();
    decorate_last_outgoing(kept, native, thinking_active);
    // caching.112: the marked-turns plan visits the marked turns only.
    const CachePolicy policy = cache_policy_ ? *cache_policy_ : cache.policy;
    if (cache_policy_) {
        CacheOptions mine = cache;
        mine.policy = policy;
        out.cache_plan = caching::plan_cache(out, formatter.supports_caching(), mine, &kept.marked);
    } else {
        out.cache_plan =
            caching::plan_cache(out, formatter.supports_caching(), cache, &kept.marked);
    }
    // caching.132: a prepare of the same list as the last one (a count or a render before the
    // call, a second prepare without thinking) keeps the last one's word.
    caching::PlanRecord now{out.cache_plan, policy, formatter.supports_caching(), native,
                            epoch_.value()};
    const bool same_list = extend && grew_from == messages.size();
    if (!(same_list && kept.last_plan && kept.last_plan->plan == now.plan)) {
        kept.plan_moved = kept.last_plan ? caching::plan_moved(*kept.last_plan, now) : "";
    }
    kept.last_plan = std::move(now);
    kept.messages_epoch = epoch_.value();
    kept.registry_epoch = registry_epoch;
    kept.native = native;
    kept.tool_changes = tool_changes;
    kept.head_slots = state_.objective.size();
    kept.valid = true;
}

}  // namespace nucleo
