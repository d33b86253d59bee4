// conversation.107: every text that enters a conversation through the host API is UTF-8, checked
// once where it enters (add_message, from_parts, replace_messages, put_main_objective, add_tool),
// never again at a render. conversation.109: the same walk over a prepared conversation tells the
// request audit whether a plugin's input was valid before the plugin is blamed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/prepared.hpp"

namespace nucleo::internal {

/// Where a text stops being UTF-8: the field as the conversation document spells its path
/// (`blocks[0].content[1].text`) and the byte offset within that field's text (within its JSON
/// text for a JSON-valued field: `input`, `schema`, `json`, `value`, `block`).
struct Utf8Fault {
    std::string where;
    std::size_t at = 0;
};

/// The first text of the message (its id, provider_message_id and every field of every block,
/// tool results' blocks included) that is not UTF-8, or nullopt.
[[nodiscard]] std::optional<Utf8Fault> find_invalid_utf8(const Message& message);
/// The same for one block; `where` names it (`value` of an objective slot).
[[nodiscard]] std::optional<Utf8Fault> find_invalid_utf8(const ContentBlock& block,
                                                         std::string_view where);
/// The same for a tool declaration (name, description, schema).
[[nodiscard]] std::optional<Utf8Fault> find_invalid_utf8(const ToolDefinitionBlock& tool,
                                                         std::string_view where);
/// The same for everything a prepared conversation hands a plugin (system_blocks,
/// tool_definitions, turns with their message ids).
[[nodiscard]] std::optional<Utf8Fault> find_invalid_utf8(const PreparedConversation& prepared);

/// conversation.107: refuses (kInvalidArgument) a message arriving at `position` of a conversation
/// when find_invalid_utf8 finds a fault: "message 3 (id 'm4'): blocks[0].text: not valid UTF-8
/// at byte 2; ..." (the id left out when it is the fault).
void check_message_utf8(const Message& message, std::size_t position);

/// conversation.107: refuses (kInvalidArgument), naming `who`, an objective slot whose key or
/// value is not UTF-8 ("objective[1].value.text: ...").
void check_objective_utf8(const std::vector<ObjectiveSlot>& objective, std::string_view who);

/// Throws Error(kInvalidArgument) "<who>: <where>: not valid UTF-8 at byte N; ..." when `fault`
/// holds one. The message never quotes the text itself.
void refuse_invalid_utf8(std::string_view who, const std::optional<Utf8Fault>& fault);

}  // namespace nucleo::internal
