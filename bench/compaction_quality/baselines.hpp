// The simplest ways to bring a conversation down to a token budget, to hold compaction against at
// the same budget. Each works on a copy, touches only compactable messages, keeps every tool_use
// with its tool_result, and counts with the model's counter (TokenCounter::for_model), as
// ensure_fits does.
#pragma once

#include <cstdint>
#include <string>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo::quality {

struct Baseline {
    ConversationContext conversation;
    std::int64_t tokens = 0;  ///< its total by the model's counter
    bool reached = false;     ///< tokens <= the budget asked for
};

/// (a) Every tool result keeps its first and last lines, the same token cap for each (the
/// largest cap that brings the whole conversation to the budget), the middle replaced by one
/// line "[... N lines omitted ...]".
Baseline head_tail_results(const ConversationContext& conversation, const ModelSpec& model,
                           std::int64_t budget);

/// (b) The oldest tool results are replaced by "[tool result cleared: N tokens]", oldest first,
/// until the conversation is at the budget; the newest stay as they were.
Baseline clear_old_results(const ConversationContext& conversation, const ModelSpec& model,
                           std::int64_t budget);

/// (c) The first message and the newest messages that fit, the middle dropped (a kept tail never
/// starts with results whose calls were dropped).
Baseline head_tail_conversation(const ConversationContext& conversation, const ModelSpec& model,
                                std::int64_t budget);

}  // namespace nucleo::quality
