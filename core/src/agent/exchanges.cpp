// The agent loop's exchange policy and its rollback of a failed turn (exchanges.hpp).
#include "agent/exchanges.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace nucleo::agent_internal {

bool is_user_message(const Message& m) noexcept {
    if (!m.outgoing() || m.app_authored) return false;
    return std::none_of(m.blocks.begin(), m.blocks.end(),
                        [](const ContentBlock& b) { return b.is<ToolResultBlock>(); });
}

bool is_final_answer(const Message& m) noexcept {
    if (!m.incoming()) return false;
    return std::none_of(m.blocks.begin(), m.blocks.end(),
                        [](const ContentBlock& b) { return b.is<ToolUseBlock>(); });
}

void pin_recent_exchanges(ConversationContext& conversation, std::optional<std::size_t> pinned) {
    const std::vector<Message>& messages = conversation.messages();
    // The first message of the oldest pinned exchange: the pinned-th user message from the end.
    std::size_t first_pinned = 0;
    if (pinned) {
        std::size_t seen = 0;
        first_pinned = messages.size();
        for (std::size_t i = messages.size(); i-- > 0 && seen < *pinned;) {
            if (is_user_message(messages[i])) {
                ++seen;
                first_pinned = i;
            }
        }
        if (seen < *pinned) first_pinned = 0;
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const Message& m = messages[i];
        if (!is_user_message(m) && !is_final_answer(m)) continue;
        const bool compactable = i < first_pinned;
        if (m.compactable != compactable) conversation.set_message_compactable(m.id, compactable);
    }
}

TurnRollback::TurnRollback(const ConversationContext& conversation)
    : messages_(conversation.messages()),
      epoch_(conversation.messages_epoch()),
      flag_changes_(conversation.message_flag_changes()) {}

void TurnRollback::restore(ConversationContext& conversation) const {
    const std::vector<Message>& now = conversation.messages();
    if (conversation.messages_epoch() == epoch_ && now.size() == messages_.size() &&
        conversation.message_flag_changes() == flag_changes_)
        return;
    // Each restored message stands where it stands now; one compaction removed stands where the
    // message before it does (a tool declared beside it moves with it).
    std::unordered_map<std::string, std::size_t> position;
    position.reserve(now.size());
    for (std::size_t i = 0; i < now.size(); ++i) position.emplace(now[i].id, i);
    std::vector<std::size_t> origins;
    origins.reserve(messages_.size());
    std::size_t last = 0;
    for (const Message& m : messages_) {
        if (const auto it = position.find(m.id); it != position.end() && it->second >= last)
            last = it->second;
        origins.push_back(last);
    }
    conversation.replace_messages(messages_, origins);
}

}  // namespace nucleo::agent_internal
