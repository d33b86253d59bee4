#include "mid_conversation.hpp"

#include <cstddef>

#include "tool_changes.hpp"

namespace nucleo::emulator {
namespace {

// The API's texts, as returned by the Messages API and recorded in public client code (the page
// gives none): the role on a model without the feature, the first entry, and the two halves of
// the placement rule (which one comes back depends on which half fails).
constexpr std::string_view kDirectiveNote =
    "; the directive-only form (content: [] with output_config) is accepted at any position";

std::string at(std::size_t i) {
    return "messages." + std::to_string(i);
}

const json::Value* non_null(const json::Value& v, const char* name) {
    const json::Value* m = json::member(v, name);
    return m != nullptr && !m->IsNull() ? m : nullptr;
}

/// No content: absent, null, "" or [].
bool empty_content(const json::Value& m) {
    const json::Value* c = non_null(m, "content");
    if (c == nullptr) return true;
    if (c->IsString()) return c->GetStringLength() == 0;
    return c->IsArray() && c->Empty();
}

bool is_tool_change(std::string_view type) {
    return type == "tool_addition" || type == "tool_removal";
}

/// An assistant turn ending in a server tool result (a `*_tool_result` block: web search, code
/// execution, MCP...): a paused turn, which a system message may follow.
bool paused_assistant(const json::Value& m) {
    if (json::string_member(m, "role") != "assistant") return false;
    const json::Value* c = json::member(m, "content");
    if (c == nullptr || !c->IsArray() || c->Empty()) return false;
    return json::string_member((*c)[c->Size() - 1], "type").ends_with("_tool_result");
}

// The member checks of BetaSystemMessageParam (`clear_at`, `output_config`): without its beta a
// member is an extra input, as the page says of `clear_at`.
std::optional<Refusal> clear_at_member(const json::Value& m, std::size_t i, const Betas& betas) {
    const json::Value* clear = json::member(m, "clear_at");
    if (clear == nullptr) return std::nullopt;
    const std::string where = at(i) + ".clear_at: ";
    if (!betas.has(kClearAtBeta)) return Refusal{where + "Extra inputs are not permitted", ""};
    if (!is_system_message(m))
        return Refusal{where + "clear_at is only permitted on role 'system' messages", ""};
    if (clear->IsNull()) return std::nullopt;
    const std::string value = clear->IsString() ? clear->GetString() : "";
    if (value != "next_user_message" && value != "never")
        return Refusal{where + "Input should be 'next_user_message' or 'never'", ""};
    return std::nullopt;
}

std::optional<Refusal> output_config_member(const json::Value& m, std::size_t i,
                                            const Betas& betas) {
    const json::Value* oc = json::member(m, "output_config");
    if (oc == nullptr) return std::nullopt;
    const std::string where = at(i) + ".output_config";
    if (!betas.has(kOutputConfigBeta))
        return Refusal{where + ": Extra inputs are not permitted", ""};
    if (oc->IsNull()) return std::nullopt;
    if (!oc->IsObject()) return Refusal{where + ": Input should be a valid dictionary", ""};
    // BetaSystemMessageOutputConfig: `effort` only; `format` stays top-level.
    for (const auto& member : oc->GetObject()) {
        const std::string name(member.name.GetString(), member.name.GetStringLength());
        if (name != "effort")
            return Refusal{where + "." + name + ": Extra inputs are not permitted", ""};
        if (member.value.IsNull()) continue;
        const std::string effort = member.value.IsString() ? member.value.GetString() : "";
        if (effort != "low" && effort != "medium" && effort != "high" && effort != "xhigh" &&
            effort != "max") {
            return Refusal{
                where + ".effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'", ""};
        }
    }
    return std::nullopt;
}

/// A system message's content: some content, or none with `output_config`; only text,
/// tool_addition and tool_removal blocks.
std::optional<Refusal> system_content(const json::Value& m, std::size_t i) {
    if (empty_content(m)) {
        if (non_null(m, "output_config") != nullptr) return std::nullopt;
        return Refusal{at(i) + ": system content must contain at least one block", ""};
    }
    const json::Value* c = json::member(m, "content");
    if (!c->IsArray()) return std::nullopt;
    for (const auto& b : c->GetArray()) {
        const std::string type = json::string_member(b, "type");
        if (type != "text" && !is_tool_change(type)) {
            return Refusal{
                at(i) +
                    ": role 'system' supports text, tool_addition, and tool_removal blocks only",
                ""};
        }
    }
    return std::nullopt;
}

/// The page's decision where its SDK types are wider: a tool change is a block of a system
/// message, never of a user or assistant turn.
std::optional<Refusal> tool_change_outside_system(const json::Value& m, std::size_t i) {
    const json::Value* c = json::member(m, "content");
    if (c == nullptr || !c->IsArray()) return std::nullopt;
    for (rapidjson::SizeType j = 0; j < c->Size(); ++j) {
        const std::string type = json::string_member((*c)[j], "type");
        if (is_tool_change(type)) {
            return Refusal{at(i) + ".content." + std::to_string(j) + ": " + type +
                               " blocks are only accepted in role 'system' messages",
                           ""};
        }
    }
    return std::nullopt;
}

// The turn-scoped rules, with the page's texts: text only, no output_config, no cache mark.
std::optional<Refusal> turn_scoped_rules(const json::Value& m, std::size_t i) {
    if (!turn_scoped(m)) return std::nullopt;
    constexpr std::string_view kScope = " (clear_at: 'next_user_message')";
    if (non_null(m, "output_config") != nullptr) {
        return Refusal{at(i) + ": output_config is not permitted on a turn-scoped system message" +
                           std::string(kScope),
                       ""};
    }
    const json::Value* c = json::member(m, "content");
    if (c == nullptr || !c->IsArray()) return std::nullopt;
    for (const auto& b : c->GetArray()) {
        if (json::string_member(b, "type") != "text") {
            return Refusal{at(i) + ": a turn-scoped system message supports text blocks only" +
                               std::string(kScope),
                           ""};
        }
    }
    for (rapidjson::SizeType j = 0; j < c->Size(); ++j) {
        if (non_null((*c)[j], "cache_control") != nullptr) {
            return Refusal{at(i) + ".content." + std::to_string(j) +
                               ": cache_control is not permitted on a turn-scoped system message" +
                               std::string(kScope),
                           ""};
        }
    }
    return std::nullopt;
}

/// The placement of the run of system messages [first, last]: judged together (the page:
/// "Consecutive system messages are judged together"), unless every one is directive-only. It
/// follows a user turn or a paused assistant turn, and precedes an assistant turn or ends the
/// array; a run at the start is the top-level system's place.
std::optional<Refusal> placement(const json::Value& messages, std::size_t first, std::size_t last) {
    bool content = false;
    for (std::size_t k = first; k <= last; ++k)
        content = content || !directive_only(messages[static_cast<rapidjson::SizeType>(k)]);
    if (!content) return std::nullopt;
    if (first == 0) {
        return Refusal{at(0) +
                           ": use the top-level 'system' parameter for the initial system prompt" +
                           std::string(kDirectiveNote),
                       ""};
    }
    const json::Value& before = messages[static_cast<rapidjson::SizeType>(first - 1)];
    if (json::string_member(before, "role") != "user" && !paused_assistant(before)) {
        return Refusal{at(first) +
                           ": role 'system' must follow a 'user' message or an 'assistant' "
                           "message ending in a server tool result" +
                           std::string(kDirectiveNote),
                       ""};
    }
    if (last + 1 < messages.Size()) {
        const json::Value& after = messages[static_cast<rapidjson::SizeType>(last + 1)];
        if (json::string_member(after, "role") != "assistant") {
            return Refusal{at(last) +
                               ": role 'system' must precede an 'assistant' message or end the "
                               "array" +
                               std::string(kDirectiveNote),
                           ""};
        }
    }
    return std::nullopt;
}

}  // namespace

Betas::Betas(std::string_view header) {
    std::size_t start = 0;
    while (start <= header.size()) {
        std::size_t end = header.find(',', start);
        if (end == std::string_view::npos) end = header.size();
        std::string_view item = header.substr(start, end - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (!item.empty()) items_.emplace_back(item);
        start = end + 1;
    }
}

bool Betas::has(std::string_view beta) const {
    for (const auto& item : items_) {
        if (item == beta) return true;
    }
    return false;
}

bool is_system_message(const json::Value& m) {
    return json::string_member(m, "role") == "system";
}

bool directive_only(const json::Value& m) {
    return is_system_message(m) && empty_content(m) && non_null(m, "output_config") != nullptr;
}

bool turn_scoped(const json::Value& m) {
    return is_system_message(m) && json::string_member(m, "clear_at") == "next_user_message";
}

std::vector<bool> rendered_messages(const json::Value& messages) {
    std::vector<bool> out(messages.IsArray() ? messages.Size() : 0, true);
    bool user_after = false;
    for (std::size_t i = out.size(); i-- > 0;) {
        const json::Value& m = messages[static_cast<rapidjson::SizeType>(i)];
        if (directive_only(m) || (user_after && turn_scoped(m))) out[i] = false;
        user_after = user_after || json::string_member(m, "role") == "user";
    }
    return out;
}

std::optional<Refusal> check_mid_conversation(const json::Value& doc,
                                              const ModelCatalog::MidConversation& model,
                                              const Betas& betas) {
    if (!model.named) return std::nullopt;
    const json::Value& messages = *json::member(doc, "messages");
    const rapidjson::SizeType n = messages.Size();
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        const std::string role = json::string_member(messages[i], "role");
        // Another role is the rule book's (wire.106), as the API validates roles first.
        if (role != "user" && role != "assistant" && role != "system") return std::nullopt;
        if (role == "system" && !model.system_messages)
            return Refusal{at(i) + ": role 'system' is not supported on this model", ""};
    }
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        const json::Value& m = messages[i];
        if (auto r = clear_at_member(m, i, betas)) return r;
        if (!is_system_message(m)) {
            if (auto r = tool_change_outside_system(m, i)) return r;
            continue;
        }
        if (auto r = output_config_member(m, i, betas)) return r;
        if (auto r = system_content(m, i)) return r;
    }
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        if (auto r = turn_scoped_rules(messages[i], i)) return r;
    }
    for (std::size_t i = 0; i < n;) {
        if (!is_system_message(messages[static_cast<rapidjson::SizeType>(i)])) {
            ++i;
            continue;
        }
        std::size_t last = i;
        while (last + 1 < n &&
               is_system_message(messages[static_cast<rapidjson::SizeType>(last + 1)]))
            ++last;
        if (auto r = placement(messages, i, last)) return r;
        i = last + 1;
    }
    return check_tool_changes(doc, model, betas);
}

}  // namespace nucleo::emulator
