// ConversationContext: identity, messages, declarations, tools (tools.1-5, conversation.20,
// conversation.1). The objective map lives in
// objective.cpp, the channel contract in prepare.cpp.
#include <algorithm>
#include <atomic>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "conversation/context_internal.hpp"
#include "conversation/tool_check.hpp"
#include "conversation/utf8_check.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/wire/contract.hpp"

namespace nucleo {

namespace {

std::string position_name(std::size_t position, std::string_view id) {
    return "message " + std::to_string(position) + " (id '" + std::string(id) + "')";
}

}  // namespace

ConversationContext::ConversationContext(std::string conversation_id, std::string user_id) {
    state_.conversation_id = std::move(conversation_id);
    state_.user_id = std::move(user_id);
}

ConversationContext ConversationContext::from_parts(ConversationParts parts) {
    internal::check_objective_utf8(parts.objective, "from_parts");  // conversation.107
    ConversationContext ctx;
    std::vector<Message> messages = std::move(parts.messages);
    std::vector<DeclaredTool> tools = std::move(parts.tools);
    ctx.state_ = std::move(parts);
    ctx.state_.messages.clear();
    ctx.state_.tools.clear();
    ctx.state_.messages.reserve(messages.size());
    for (Message& m : messages) ctx.append_message(std::move(m));
    for (DeclaredTool& t : tools) {
        if (t.declared_at > ctx.state_.messages.size()) {
            throw Error(ErrorKind::kInvalidArgument,
                        "tool '" + t.definition.name + "': declared_at " +
                            std::to_string(t.declared_at) + " lies beyond the " +
                            std::to_string(ctx.state_.messages.size()) + " messages");
        }
        if (ctx.add_tool(std::move(t.definition))) {
            ctx.state_.tools.back().declared_at = t.declared_at;
        }
    }
    ctx.declare_artifact_tools();
    return ctx;  // never frozen: conversation.15
}

ConversationParts ConversationContext::parts() const {
    return state_;
}

ConversationContext ConversationContext::single_turn(const ModelSpec& model, std::string prompt,
                                                     std::int64_t backstop_tokens) {
    ConversationContext ctx;
    ctx.set_model(model);
    ctx.set_depth(Depth::kImmediate);
    Message message = Message::outgoing_text(std::move(prompt));
    message.requested_output_tokens = backstop_tokens;
    ctx.add_message(std::move(message));
    return ctx;
}

const ModelSpec& ConversationContext::model() const {
    if (!model_) {
        throw UncorrectableLLMException("conversation '" + state_.conversation_id +
                                        "' has no model bound: the next turn resolves one first");
    }
    return *model_;
}

void ConversationContext::set_model(ModelSpec model) {
    model_ = std::move(model);
}

std::string ConversationContext::mint_message_id() {
    std::string id;
    do {
        id = "m" + std::to_string(next_message_number_++);
    } while (message_ids_.count(id) != 0);
    return id;
}

void ConversationContext::check_message(const Message& message, std::size_t position) const {
    internal::check_message_utf8(message, position);  // conversation.107
    if (message_ids_.count(message.id) != 0) {
        const auto held = std::find_if(state_.messages.begin(), state_.messages.end(),
                                       [&](const Message& m) { return m.id == message.id; });
        throw Error(ErrorKind::kInvalidArgument,
                    "duplicate message id '" + message.id + "' at position " +
                        std::to_string(position) + ": already held by the message at position " +
                        std::to_string(held - state_.messages.begin()));
    }
    for (std::size_t b = 0; b < message.blocks.size(); ++b) {
        const auto* result = message.blocks[b].get_if<ToolResultBlock>();
        if (result != nullptr && tool_use_ids_.count(result->tool_use_id) == 0) {
            throw Error(ErrorKind::kInvalidArgument,
                        position_name(position, message.id) + " block " + std::to_string(b) +
                            ": tool_result for tool_use_id '" + result->tool_use_id +
                            "' which no earlier tool_use carries");
        }
    }
}

std::string ConversationContext::add_message(Message message) {
    std::string id = append_message(std::move(message));
    declare_artifact_tools();
    return id;
}

void ConversationContext::declare_artifact_tools() {
    // tools.14: the registry turn points the model at two tools; a conversation that has
    // artifacts declares them (add-only: a second declaration is a no-op).
    if (!state_.artifacts.empty()) add_tools(artifact_tool_definitions());
}

std::string ConversationContext::append_message(Message message) {
    if (message.id.empty()) message.id = mint_message_id();
    check_message(message, state_.messages.size());
    for (const ContentBlock& block : message.blocks) {
        if (const auto* use = block.get_if<ToolUseBlock>()) tool_use_ids_.insert(use->id);
    }
    // artifacts.4: artifacts are discovered and registered as the message
    // arrives, so the registry (and its count) is complete before anything is rendered.
    for (const ContentBlock& block : message.blocks) {
        if (const auto* pojo = block.get_if<PojoBlock>()) {
            state_.artifacts.register_artifacts_in(*pojo);
        } else if (const auto* result = block.get_if<ToolResultBlock>()) {
            for (const ContentBlock& inner : result->content) {
                if (const auto* p = inner.get_if<PojoBlock>()) {
                    state_.artifacts.register_artifacts_in(*p);
                }
            }
        }
    }
    message_ids_.insert(message.id);
    state_.messages.push_back(std::move(message));
    return state_.messages.back().id;
}

std::uint64_t ConversationContext::Epoch::next() noexcept {
    // Process-unique, never 0; relaxed is enough: only uniqueness matters.
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

void ConversationContext::replace_messages(std::vector<Message> messages,
                                           const std::vector<std::size_t>& origins) {
    if (origins.size() != messages.size()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "replace_messages: " + std::to_string(messages.size()) + " messages but " +
                        std::to_string(origins.size()) + " origins");
    }
    for (std::size_t i = 0; i < origins.size(); ++i) {
        if (origins[i] >= state_.messages.size() || (i > 0 && origins[i] < origins[i - 1])) {
            throw Error(ErrorKind::kInvalidArgument,
                        "replace_messages: origin " + std::to_string(origins[i]) + " of message " +
                            std::to_string(i) + " is outside the " +
                            std::to_string(state_.messages.size()) +
                            " messages or before the previous origin");
        }
    }
    // Validate on a scratch context so a refusal leaves this one unchanged; ids are minted
    // against the union of old and new ids so a minted id never repeats a live one.
    ConversationContext scratch;
    scratch.next_message_number_ = next_message_number_;
    for (Message& m : messages) {
        if (m.id.empty()) {
            do {
                m.id = "m" + std::to_string(scratch.next_message_number_++);
            } while (message_ids_.count(m.id) != 0);
        }
    }
    scratch.state_.messages.reserve(messages.size());
    for (Message& m : messages) scratch.append_message(std::move(m));

    // A tool declared at position p (before the message then at p) now sits before the first new
    // message whose origin is at or after p.
    for (DeclaredTool& tool : state_.tools) {
        tool.declared_at = static_cast<std::size_t>(
            std::lower_bound(origins.begin(), origins.end(), tool.declared_at) - origins.begin());
    }
    state_.messages = std::move(scratch.state_.messages);
    message_ids_ = std::move(scratch.message_ids_);
    tool_use_ids_ = std::move(scratch.tool_use_ids_);
    next_message_number_ = std::max(next_message_number_, scratch.next_message_number_);
    // wire.191: what rode a message that is gone rides nothing any more.
    std::erase_if(state_.sent_with,
                  [this](const auto& entry) { return message_ids_.count(entry.first) == 0; });
    epoch_.renew();
    turn_fragments_.value.reset();  // caching.110: compaction drops the encoded turns
    // conversation.101: and the prepared ones; caching.132: the last plan stays, so the next
    // prepare can say it placed its marks anew.
    std::optional<caching::PlanRecord> last_plan;
    if (kept_prepare_.value) last_plan = std::move(kept_prepare_.value->last_plan);
    kept_prepare_.value.reset();
    if (last_plan) {
        kept_prepare_.value = std::make_shared<internal::KeptPrepare>();
        kept_prepare_.value->last_plan = std::move(last_plan);
    }
}

const Message* ConversationContext::find_message(std::string_view id) const noexcept {
    for (const Message& m : state_.messages) {
        if (m.id == id) return &m;
    }
    return nullptr;
}

Message& ConversationContext::stored_message(std::string_view message_id) {
    for (Message& m : state_.messages) {
        if (m.id == message_id) return m;
    }
    throw Error(ErrorKind::kNotFound, "conversation '" + state_.conversation_id +
                                          "' has no message with id '" + std::string(message_id) +
                                          "'");
}

void ConversationContext::set_message_compactable(std::string_view message_id, bool compactable) {
    stored_message(message_id).compactable = compactable;
    ++flag_changes_;  // persistence.110
}

void ConversationContext::set_requested_output_tokens(std::string_view message_id,
                                                      std::optional<std::int64_t> tokens) {
    stored_message(message_id).requested_output_tokens = tokens;
    ++flag_changes_;  // persistence.110
}

std::vector<Input> ConversationContext::carried_inputs() const {
    bool images = false;
    bool documents = false;
    std::vector<const ContentBlock*> stack;
    for (const Message& m : state_.messages) {
        if (!m.outgoing()) continue;
        for (const ContentBlock& b : m.blocks) stack.push_back(&b);
    }
    while (!stack.empty()) {
        const ContentBlock* b = stack.back();
        stack.pop_back();
        images = images || b->is<ImageBlock>();
        documents = documents || b->is<FileBlock>();
        if (const auto* result = b->get_if<ToolResultBlock>()) {
            for (const ContentBlock& inner : result->content) stack.push_back(&inner);
        }
    }
    std::vector<Input> out;
    if (images) out.push_back(Input::kImages);
    if (documents) out.push_back(Input::kDocuments);
    return out;
}

std::optional<std::string> ConversationContext::first_user_utterance() const {
    for (const Message& m : state_.messages) {
        if (!m.outgoing() || m.app_authored) continue;
        const bool tool_result = std::any_of(m.blocks.begin(), m.blocks.end(), [](const auto& b) {
            return b.template is<ToolResultBlock>();
        });
        if (tool_result) continue;
        std::string text;
        bool any = false;
        for (const ContentBlock& b : m.blocks) {
            if (const auto* t = b.get_if<TextBlock>()) {
                if (any) text.append("\n");
                text.append(t->text);
                any = true;
            }
        }
        if (any) return text;
    }
    return std::nullopt;
}

namespace internal {

/// tools.102: what every provider refuses, refused at declaration: a name outside
/// ^[a-zA-Z0-9_-]{1,64}$ (wire.101, wire.120, wire.130) and an input schema that is not a JSON
/// object of type "object" (wire.102, wire.121, wire.131).
void check_tool_declaration(const ToolDefinitionBlock& d, std::string_view who) {
    // conversation.107: the name is quoted below only once it is known to be UTF-8.
    refuse_invalid_utf8(who, find_invalid_utf8(d, "tool"));
    const std::string at = std::string(who) + ": tool '" + d.name + "'";
    if (!contract::valid_tool_name(d.name)) {
        throw Error(ErrorKind::kInvalidArgument,
                    at + ": the name must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and "
                         "'-', at most 64), which every provider requires (wire.101); rename it");
    }
    rapidjson::Document schema;
    schema.Parse(d.schema_json.data(), d.schema_json.size());
    const bool object = !schema.HasParseError() && schema.IsObject() && schema.HasMember("type") &&
                        schema["type"].IsString() &&
                        std::string_view(schema["type"].GetString()) == "object";
    if (!object) {
        throw Error(ErrorKind::kInvalidArgument,
                    at + ": the input schema must be a JSON object with \"type\": \"object\" "
                         "(wire.102), the arguments' shape every provider requires; wrap other "
                         "values in an object's property");
    }
}

}  // namespace internal

bool ConversationContext::add_tool(ToolDefinitionBlock definition) {
    internal::check_tool_declaration(definition, "add_tool");
    const bool known = std::any_of(state_.tools.begin(), state_.tools.end(), [&](const auto& t) {
        return t.definition.name == definition.name;
    });
    // tools.1: a name already declared is a no-op, whatever the new declaration would produce.
    if (known) return false;
    state_.tools.push_back(DeclaredTool{std::move(definition), state_.messages.size()});
    return true;
}

std::size_t ConversationContext::add_tools(std::vector<ToolDefinitionBlock> definitions) {
    std::size_t added = 0;
    for (ToolDefinitionBlock& d : definitions) added += add_tool(std::move(d)) ? 1 : 0;
    return added;
}

std::optional<std::string> ConversationContext::announced_in(std::string_view tool_name) const {
    return internal::find_announcement(state_, tool_name);
}

std::vector<std::string> ConversationContext::pending_tools() const {
    const auto announced = internal::announced_tool_names(state_);
    std::vector<std::string> out;
    for (const DeclaredTool& t : state_.tools) {
        if (announced.count(t.definition.name) == 0) out.push_back(t.definition.name);
    }
    return out;
}

}  // namespace nucleo
