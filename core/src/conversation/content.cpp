#include "nucleo/content.hpp"

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

}  // namespace nucleo
