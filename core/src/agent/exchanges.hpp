// What the agent loop keeps of a conversation's exchanges: the most recent ones pinned word for
// word (compaction.109) and, when a turn fails, the conversation as it was before the turn
// (ownership.105).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo::agent_internal {

/// True for a message the user said: ours, not app-authored (a summary, a preamble) and holding
/// no tool result.
[[nodiscard]] bool is_user_message(const Message& m) noexcept;
/// True for a final answer: the model's, asking for no tool.
[[nodiscard]] bool is_final_answer(const Message& m) noexcept;

/// compaction.109: the user messages and final answers of the `pinned` most recent exchanges
/// (an exchange begins at a user message) are marked non-compactable and those of older
/// exchanges compactable, so the ladder may summarize them. nullopt pins every one of them
/// (compaction.31 alone). Only flags that differ are set.
void pin_recent_exchanges(ConversationContext& conversation, std::optional<std::size_t> pinned);

/// ownership.105: the message list of a conversation at the start of a turn, to put back when
/// the turn fails. The list is copied: compaction may rewrite it during the turn.
class TurnRollback {
  public:
    explicit TurnRollback(const ConversationContext& conversation);

    /// Puts the message list (and every message's flags) back as it was; a conversation whose
    /// list is still the one taken is left alone. The objective, the declared tools and the
    /// artifact registry are not touched (each only ever grows, idempotently).
    void restore(ConversationContext& conversation) const;

  private:
    std::vector<Message> messages_;
    std::uint64_t epoch_;
    std::uint64_t flag_changes_;
};

}  // namespace nucleo::agent_internal
