#include "rule_book_view.hpp"

#include <cctype>
#include <optional>

#include "mid_conversation.hpp"
#include "tool_changes.hpp"

namespace nucleo::emulator {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

/// The decimal number at `pos` of `s` and the position after it; nullopt when none is there.
std::optional<std::pair<std::size_t, std::size_t>> number_at(const std::string& s,
                                                             std::size_t pos) {
    std::size_t end = pos;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) != 0) ++end;
    if (end == pos || end - pos > 9) return std::nullopt;
    return std::make_pair(static_cast<std::size_t>(std::stoul(s.substr(pos, end - pos))), end);
}

/// `{"type":"text","text":s}`: a string content is its one text block, as the API reads it.
json::Value text_block(const json::Value& s, Allocator& a) {
    json::Value b(rapidjson::kObjectType);
    b.AddMember("type", "text", a);
    b.AddMember("text", json::Value(s, a), a);
    return b;
}

/// Makes `message`'s content a list (a string becomes its one text block) and returns it.
json::Value& content_list(json::Value& message, Allocator& a) {
    auto it = message.FindMember("content");
    if (it == message.MemberEnd()) {
        message.AddMember("content", json::Value(rapidjson::kArrayType), a);
        it = message.FindMember("content");
    }
    if (it->value.IsString()) {
        json::Value list(rapidjson::kArrayType);
        list.PushBack(text_block(it->value, a), a);
        it->value = list;
    } else if (!it->value.IsArray()) {
        it->value.SetArray();
    }
    return it->value;
}

/// Appends the blocks of `from` to `to`. A tool_addition whose mark is in its definition gets it
/// on the block: the rule book counts the marks of blocks (wire.103), and the page counts this one
/// toward the limit.
void append_blocks(json::Value& to, const json::Value& from, Allocator& a) {
    json::Value& list = content_list(to, a);
    const json::Value* content = json::member(from, "content");
    if (content == nullptr) return;
    if (content->IsString()) {
        list.PushBack(text_block(*content, a), a);
        return;
    }
    if (!content->IsArray()) return;
    for (const auto& b : content->GetArray()) {
        json::Value copy(b, a);
        const json::Value* mark = definition_mark(b);
        const json::Value* own = json::member(b, "cache_control");
        if (mark != nullptr && (own == nullptr || own->IsNull())) {
            copy.RemoveMember("cache_control");
            copy.AddMember("cache_control", json::Value(*mark, a), a);
        }
        list.PushBack(copy, a);
    }
}

std::size_t block_count(const json::Value& message) {
    const json::Value* c = json::member(message, "content");
    return c != nullptr && c->IsArray() ? c->Size() : 0;
}

}  // namespace

RuleBookView::RuleBookView(const json::Value& doc, bool fold) : original_(doc) {
    const json::Value* messages = json::member(doc, "messages");
    if (!fold || messages == nullptr || !messages->IsArray()) return;
    bool any = false;
    for (const auto& m : messages->GetArray()) any = any || is_system_message(m);
    if (!any) return;
    folded_ = true;
    Allocator& a = view_.GetAllocator();
    view_.SetObject();
    for (const auto& m : doc.GetObject()) {
        if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == "messages") continue;
        view_.AddMember(json::Value(m.name, a), json::Value(m.value, a), a);
    }
    json::Value out(rapidjson::kArrayType);
    // A system message with content stands between the last turn and the next: an assistant turn
    // after one continues the paused turn before it.
    bool after_system = false;
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const json::Value& m = (*messages)[i];
        const bool system = is_system_message(m);
        if (system && directive_only(m)) continue;  // renders nothing at its position
        const bool joins =
            !out.Empty() &&
            (system || (after_system && json::string_member(out[out.Size() - 1], "role") ==
                                            json::string_member(m, "role")));
        if (joins) {
            json::Value& last = out[out.Size() - 1];
            // A string content becomes its block before the first block is appended.
            content_list(last, a);
            const std::size_t first = block_count(last);
            append_blocks(last, m, a);
            parts_.back().push_back({i, first, system});
        } else {
            out.PushBack(json::Value(m, a), a);
            parts_.push_back({{i, 0, system}});
        }
        after_system = system;
    }
    view_.AddMember("messages", out, a);
}

std::string RuleBookView::in_request(const std::string& message) const {
    constexpr std::string_view kMessages = "messages.";
    constexpr std::string_view kContent = ".content.";
    if (!folded_ || !message.starts_with(kMessages)) return message;
    const auto v = number_at(message, kMessages.size());
    if (!v || v->first >= parts_.size()) return message;
    const std::vector<Part>& parts = parts_[v->first];
    std::size_t rest = v->second;
    if (message.compare(rest, kContent.size(), kContent) == 0) {
        if (const auto k = number_at(message, rest + kContent.size())) {
            const Part* in = &parts.front();
            for (const Part& p : parts) {
                if (p.first_block <= k->first) in = &p;
            }
            return std::string(kMessages) + std::to_string(in->message) + std::string(kContent) +
                   std::to_string(k->first - in->first_block) + message.substr(k->second);
        }
    }
    const Part* turn = &parts.front();
    for (const Part& p : parts) {
        if (!p.system) turn = &p;
    }
    return std::string(kMessages) + std::to_string(turn->message) + message.substr(rest);
}

}  // namespace nucleo::emulator
