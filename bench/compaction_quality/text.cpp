// The searchable text of a conversation: see text.hpp.
#include "text.hpp"

#include "nucleo/content.hpp"

namespace nucleo::quality {

namespace {

void append(std::string& out, const ContentBlock& block) {
    if (const auto* t = block.get_if<TextBlock>()) {
        out += t->text;
    } else if (const auto* j = block.get_if<JsonBlock>()) {
        out += j->json;
    } else if (const auto* p = block.get_if<PojoBlock>()) {
        out += p->value_json;
    } else if (const auto* u = block.get_if<ToolUseBlock>()) {
        out += u->input_json;
    } else if (const auto* r = block.get_if<ToolResultBlock>()) {
        for (const ContentBlock& c : r->content) append(out, c);
    }
    out += '\n';
}

}  // namespace

std::string text_of(const Message& message) {
    std::string out;
    for (const ContentBlock& b : message.blocks) append(out, b);
    return out;
}

std::string text_of(const ConversationContext& conversation) {
    std::string out;
    for (const Message& m : conversation.messages()) out += text_of(m);
    return out;
}

}  // namespace nucleo::quality
