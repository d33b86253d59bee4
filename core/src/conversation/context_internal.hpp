// Internals of the conversation concern shared by its .cpp files: what the conversation's content
// already announces (tools.5: the announced set derives from the conversation content itself,
// never a side field).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "nucleo/conversation.hpp"

namespace nucleo::internal {

/// announced_in() answer for a tool whose definition sits in the objective.
inline constexpr std::string_view kAnnouncedInHead = "head";

/// The first line of a post-freeze legend stream message (the legend text follows).
inline constexpr std::string_view kLegendStreamHeader =
    "Notation legend for the answer formats that follow:";

/// Names of every ToolDefinitionBlock in the objective's values and in the messages.
std::unordered_set<std::string> announced_tool_names(const ConversationParts& state);

/// "head", the id of the first message carrying the tool's definition, or nullopt.
std::optional<std::string> find_announcement(const ConversationParts& state,
                                             std::string_view tool_name);

/// A stream companion is an app-authored outgoing message whose first block is a TextBlock
/// starting with the companion's header; recognised by content so a restored conversation knows
/// its companions without a side field.
bool is_stream_legend(const Message& message);
bool is_stream_tool_weights(const Message& message);

}  // namespace nucleo::internal
