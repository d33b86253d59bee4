// The text a fact is looked for in: every message's text, tool inputs and tool results
// (summaries included, since they are text blocks), nothing else.
#pragma once

#include <string>

#include "nucleo/conversation.hpp"

namespace nucleo::quality {

std::string text_of(const Message& message);
std::string text_of(const ConversationContext& conversation);

}  // namespace nucleo::quality
