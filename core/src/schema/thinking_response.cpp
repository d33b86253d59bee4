// The ThinkingResponse handler's type-independent half (tools.13,
// tools.20-22).
#include "nucleo/thinking_response.hpp"

#include <cctype>

#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

constexpr std::size_t kMaxIdLength = 64;  // Bedrock toolUseId: [a-zA-Z0-9_-]+, at most 64

std::string_view trim(std::string_view text) {
    const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    return text;
}

std::string preview(std::string_view text) {
    constexpr std::size_t kMax = 80;
    return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

std::string mint_tool_call_id(std::string_view tool_name, std::size_t index) {
    const std::string suffix = "_" + std::to_string(index);
    const std::string prefix = "call_";
    const std::size_t room = kMaxIdLength - prefix.size() - suffix.size();
    std::string name(tool_name.substr(0, room));
    for (char& c : name) {
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
        if (!ok) c = '_';
    }
    return prefix + name + suffix;
}

std::string mint_tool_call_id(std::string_view tool_name, std::size_t index, std::size_t turn) {
    const std::string turn_suffix = "_t" + std::to_string(turn);
    const std::string suffix = "_" + std::to_string(index) + turn_suffix;
    const std::size_t room = kMaxIdLength - std::string_view("call_").size() - suffix.size();
    std::string id = mint_tool_call_id(tool_name.substr(0, room), index);
    return id + turn_suffix;
}

std::string extract_answer_json(std::string_view text) {
    const std::string_view trimmed = trim(text);
    if (!trimmed.empty() && trimmed.front() == '{') return std::string(trimmed);
    const std::size_t fence = trimmed.find("```");
    if (fence != std::string_view::npos) {
        // Skip the fence's info string ("json") up to the end of its line.
        const std::size_t body = trimmed.find('\n', fence);
        const std::size_t close = body == std::string_view::npos ? body : trimmed.find("```", body);
        if (close != std::string_view::npos) {
            const std::string_view inside = trim(trimmed.substr(body, close - body));
            if (!inside.empty() && inside.front() == '{') return std::string(inside);
        }
    }
    const std::size_t open = trimmed.find('{');
    const std::size_t last = trimmed.rfind('}');
    if (open != std::string_view::npos && last != std::string_view::npos && last > open) {
        return std::string(trimmed.substr(open, last - open + 1));
    }
    throw Error(ErrorKind::kProtocol,
                "the model's answer holds no JSON object: \"" + preview(trimmed) + "\"");
}

bool ThinkingResponseHandlerBase::uses_schema_notation() const {
    return style_ == SchemaStyle::kNotation;
}

std::string ThinkingResponseHandlerBase::response_instructions(bool native_tools_available,
                                                               bool thinking_active) const {
    schema::RenderOptions options;
    options.drop_tool_calls = native_tools_available;
    options.drop_reasoning = thinking_active;
    if (style_ == SchemaStyle::kNotation) {
        return "Reply with one JSON object, optionally inside a ```json fence, shaped as "
               "follows (written in the schema notation):\n" +
               schema::notation(envelope_(), options);
    }
    return "Reply with one JSON object, optionally inside a ```json fence, that validates "
           "against this JSON Schema:\n" +
           schema::json_schema(envelope_(), options);
}

ThinkingResponseHandlerBase::MessageParts ThinkingResponseHandlerBase::split(
    const Message& incoming) {
    MessageParts parts;
    for (const ContentBlock& block : incoming.blocks) {
        if (const auto* text = block.get_if<TextBlock>()) {
            if (!parts.text.empty()) parts.text += '\n';
            parts.text += text->text;
        } else if (const auto* thinking = block.get_if<ThinkingBlock>()) {
            if (!parts.thinking.empty()) parts.thinking += '\n';
            parts.thinking += thinking->thinking;
        } else if (const auto* call = block.get_if<ToolUseBlock>()) {
            parts.native_calls.push_back(*call);
        }
    }
    return parts;
}

std::optional<std::string> ThinkingResponseHandlerBase::answer_json(const MessageParts& parts) {
    if (trim(parts.text).empty()) return std::nullopt;
    if (parts.native_calls.empty()) return extract_answer_json(parts.text);
    try {
        return extract_answer_json(parts.text);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::kProtocol) throw;
        return std::nullopt;  // narration around native calls
    }
}

}  // namespace nucleo
