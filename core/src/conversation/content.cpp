#include "nucleo/content.hpp"

#include <algorithm>

#include "conversation/context_internal.hpp"

namespace nucleo {

bool ToolResultBlock::operator==(const ToolResultBlock& other) const {
    return tool_use_id == other.tool_use_id && is_error == other.is_error &&
           content == other.content;
}

const char* block_type_name(const ContentBlock& block) noexcept {
    struct Namer {
        const char* operator()(const TextBlock&) const { return "text"; }
        const char* operator()(const JsonBlock&) const { return "json"; }
        const char* operator()(const PojoBlock&) const { return "pojo"; }
        const char* operator()(const ImageBlock&) const { return "image"; }
        const char* operator()(const FileBlock&) const { return "file"; }
        const char* operator()(const ToolUseBlock&) const { return "tool_use"; }
        const char* operator()(const ToolResultBlock&) const { return "tool_result"; }
        const char* operator()(const ThinkingBlock&) const { return "thinking"; }
        const char* operator()(const RedactedThinkingBlock&) const { return "redacted_thinking"; }
        const char* operator()(const SkillBlock&) const { return "skill"; }
        const char* operator()(const ToolDefinitionBlock&) const { return "tool_definition"; }
        const char* operator()(const ProviderBlock&) const { return "provider_block"; }
    };
    return std::visit(Namer{}, block.value);
}

Message Message::outgoing_text(std::string text) {
    Message m;
    m.direction = Direction::kOutgoing;
    m.blocks.emplace_back(TextBlock{std::move(text)});
    return m;
}

Message Message::incoming_text(std::string text) {
    Message m;
    m.direction = Direction::kIncoming;
    m.blocks.emplace_back(TextBlock{std::move(text)});
    return m;
}

namespace internal {

std::int64_t drop_thinking_from(std::vector<Message>& messages, std::size_t first) {
    std::int64_t dropped = 0;
    const auto thinking = [](const ContentBlock& b) {
        return b.is<ThinkingBlock>() || b.is<RedactedThinkingBlock>();
    };
    for (std::size_t i = first; i < messages.size(); ++i) {
        Message& m = messages[i];
        if (!m.incoming() || std::all_of(m.blocks.begin(), m.blocks.end(), thinking)) continue;
        const auto before = m.blocks.size();
        std::erase_if(m.blocks, thinking);
        dropped += static_cast<std::int64_t>(before - m.blocks.size());
    }
    return dropped;
}

}  // namespace internal

}  // namespace nucleo
