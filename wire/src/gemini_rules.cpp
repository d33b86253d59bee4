// The Gemini generateContent rule book (docs/spec/gemini.md gemini.20-gemini.27) over a parsed
// body, and the audit's plan checks for the family (gemini.28). Gemini's body has no `messages`,
// so the family is read from the DOM rather than through the Shape of wire.164.
#include <optional>
#include <string>
#include <string_view>

#include "contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

using rapidjson::Value;

const Value* get(const Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string_view str(const Value* v) {
    return v != nullptr && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                                         : std::string_view();
}

struct Counts {
    std::size_t calls = 0;
    std::size_t responses = 0;
    bool other = false;  ///< a part that is neither (text, inlineData, fileData)
};

Counts count_parts(const Value& parts) {
    Counts c;
    for (const auto& p : parts.GetArray()) {
        if (get(p, "functionCall") != nullptr)
            ++c.calls;
        else if (get(p, "functionResponse") != nullptr)
            ++c.responses;
        else
            c.other = true;
    }
    return c;
}

/// gemini.27: Gemini's function names: a letter or '_' first, then letters, digits, '_', '.',
/// ':' or '-', at most 64.
bool valid_function_name(std::string_view n) {
    if (n.empty() || n.size() > 64) return false;
    const auto c0 = static_cast<unsigned char>(n.front());
    if (std::isalpha(c0) == 0 && c0 != '_') return false;
    for (const char ch : n) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) == 0 && c != '_' && c != '.' && c != ':' && c != '-') return false;
    }
    return true;
}

/// gemini.21, gemini.22: the rules that read content i alone.
std::optional<Violation> content_alone(const Value& c, std::size_t i) {
    const std::string_view role = str(get(c, "role"));
    if (role != "user" && role != "model")
        return broken("gemini.21", "contents." + std::to_string(i) + ".role",
                      "Please use a valid role: user, model.");
    const Value* parts = get(c, "parts");
    if (parts == nullptr || !parts->IsArray() || parts->Empty())
        return broken("gemini.22", "contents." + std::to_string(i) + ".parts",
                      "* GenerateContentRequest.contents[" + std::to_string(i) +
                          "].parts: contents.parts must not be empty.");
    return std::nullopt;
}

/// gemini.23-gemini.25: content i (of `role` and `here`'s parts) after the content before it
/// (nullptr for the first), both read alone already.
std::optional<Violation> content_after(std::string_view role, const Counts& here,
                                       const ItemsSummary::End* before, std::size_t i) {
    const std::string at = "contents." + std::to_string(i);
    if (before != nullptr && before->user == (role == "user"))
        return broken("gemini.23", at,
                      "Please ensure that multiturn requests alternate between user and model.");
    const std::size_t before_calls = before != nullptr ? before->calls : 0;
    if (here.responses > 0 && (role != "user" || before_calls == 0))
        return broken("gemini.24", at,
                      "Please ensure that function response turn comes immediately after a "
                      "function call turn.");
    if (here.calls > 0 && before_calls > 0)
        return broken("gemini.25", at,
                      "Please ensure that function call turn comes immediately after a user "
                      "turn or after a function response turn.");
    if (before_calls > 0 && here.responses != before_calls)
        return broken("gemini.24", at,
                      "Please ensure that the number of function response parts is equal to "
                      "the number of function call parts of the function call turn.");
    return std::nullopt;
}

ItemsSummary::End end_of(std::string_view role, const Counts& c) {
    return {role == "user", c.calls, c.responses};
}

/// gemini.26: the index of the first function call part of `parts` when it has no
/// thoughtSignature.
std::optional<rapidjson::SizeType> unsigned_call(const Value& parts) {
    for (rapidjson::SizeType k = 0; k < parts.Size(); ++k) {
        if (get(parts[k], "functionCall") == nullptr) continue;
        if (!str(get(parts[k], "thoughtSignature")).empty()) return std::nullopt;
        return k;
    }
    return std::nullopt;
}

}  // namespace

std::optional<Violation> gemini_head(const Value& body) {
    const Value* tools = get(body, "tools");
    if (tools != nullptr && tools->IsArray()) {
        for (rapidjson::SizeType t = 0; t < tools->Size(); ++t) {
            const Value* decls = get((*tools)[t], "functionDeclarations");
            if (decls == nullptr || !decls->IsArray()) continue;
            for (rapidjson::SizeType d = 0; d < decls->Size(); ++d) {
                if (valid_function_name(str(get((*decls)[d], "name")))) continue;
                return broken(
                    "gemini.27",
                    "tools." + std::to_string(t) + ".functionDeclarations." + std::to_string(d),
                    "* GenerateContentRequest.tools[" + std::to_string(t) +
                        "].function_declarations[" + std::to_string(d) +
                        "].name: Invalid function name. Must start with a letter or an "
                        "underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), "
                        "dots (.), colons (:), or dashes (-), with a maximum length of 64.");
            }
        }
    }
    const Value* contents = get(body, "contents");
    if (contents == nullptr || !contents->IsArray() || contents->Empty())
        return broken("gemini.20", "contents",
                      "* GenerateContentRequest.contents: contents is not specified");
    return std::nullopt;
}

std::optional<Violation> check_gemini(const Value& body) {
    if (auto e = gemini_head(body)) return e;
    const Value& contents = *get(body, "contents");
    // gemini.26: the current turn starts after the last user content that is not only
    // function responses.
    std::size_t current_from = 0;
    ItemsSummary::End before;
    for (rapidjson::SizeType i = 0; i < contents.Size(); ++i) {
        const Value& c = contents[i];
        if (auto e = content_alone(c, i)) return e;
        const std::string_view role = str(get(c, "role"));
        const Counts here = count_parts(*get(c, "parts"));
        if (role == "user" && here.other) current_from = i + 1;
        if (auto e = content_after(role, here, i > 0 ? &before : nullptr, i)) return e;
        before = end_of(role, here);
    }
    // gemini.26: the first function call of each step of the current turn carries its signature.
    for (rapidjson::SizeType i = static_cast<rapidjson::SizeType>(current_from);
         i < contents.Size(); ++i) {
        const Value& c = contents[i];
        if (str(get(c, "role")) != "model") continue;
        const Value& parts = *get(c, "parts");
        const auto k = unsigned_call(parts);
        if (!k) continue;
        const Value& call = *get(parts[*k], "functionCall");
        return broken(
            "gemini.26", "contents." + std::to_string(i) + ".parts." + std::to_string(*k),
            "Function call is missing a thought_signature in functionCall parts. "
            "This is required for tools to work correctly, and missing "
            "thought_signature may lead to degraded model performance. Additional "
            "data, function call `default_api:" +
                std::string(str(get(call, "name"))) + "` , position " + std::to_string(*k + 1) +
                ". Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                "for more details.");
    }
    return std::nullopt;
}

void gemini_summary(const Value& items, bool first_in_request, ItemsSummary& out) {
    out = ItemsSummary{};
    if (!items.IsArray() || items.Empty()) return;
    ItemsSummary::End before;
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
        const Value& c = items[i];
        if (content_alone(c, i)) return;
        const std::string_view role = str(get(c, "role"));
        const Counts here = count_parts(*get(c, "parts"));
        // The first content of a later piece is checked where it meets the piece before.
        if ((i > 0 || first_in_request) && content_after(role, here, i > 0 ? &before : nullptr, i))
            return;
        before = end_of(role, here);
        if (i == 0) out.first = before;
        if (role == "user" && here.other) {
            out.turn_starts = true;
            out.unsigned_after = false;
        } else if (role == "model" && unsigned_call(*get(c, "parts"))) {
            out.unsigned_after = true;
        }
    }
    out.last = before;
    out.ok = true;
}

bool gemini_passes(const Value& head, const std::vector<const ItemsSummary*>& pieces,
                   const CallPlan& plan) {
    if (!head.IsObject() || gemini_plan(head, plan) || gemini_head(head)) return false;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (!pieces[i]->ok) return false;
        // gemini.23-25 where two pieces meet (the index only names a refusal, never made here).
        if (i > 0 &&
            content_after(pieces[i]->first.user ? "user" : "model",
                          Counts{pieces[i]->first.calls, pieces[i]->first.responses, false},
                          &pieces[i - 1]->last, 0))
            return false;
    }
    // gemini.26: from the last piece where a turn starts (or the first) on, no unsigned call.
    for (std::size_t i = pieces.size(); i-- > 0;) {
        if (pieces[i]->unsigned_after) return false;
        if (pieces[i]->turn_starts) break;
    }
    return true;
}

std::optional<Violation> gemini_plan(const Value& body, const CallPlan& plan) {
    // gemini.28 (wire.161 for this family): the system content is systemInstruction's parts.
    std::string channel;
    const Value* sys = get(body, "systemInstruction");
    const Value* sys_parts = sys != nullptr ? get(*sys, "parts") : nullptr;
    if (sys_parts != nullptr && sys_parts->IsArray())
        for (const auto& p : sys_parts->GetArray())
            channel.append(str(get(p, "text"))).append("\n\n");
    for (std::size_t i = 0; i < plan.system_texts.size(); ++i) {
        if (!has_non_whitespace(plan.system_texts[i])) continue;
        if (channel.find(plan.system_texts[i]) == std::string::npos)
            return broken("gemini.28", "systemInstruction",
                          "system block " + std::to_string(i) +
                              " the core prepared is missing from systemInstruction, where this "
                              "wire family carries the system content");
    }
    if (system_joined(plan).empty() && has_non_whitespace(channel))
        return broken(
            "gemini.28", "systemInstruction",
            "systemInstruction carries text although the core prepared no system content");
    // gemini.28 (wire.163): generationConfig.maxOutputTokens is the reserved output budget.
    if (plan.max_tokens > 0) {
        const Value* config = get(body, "generationConfig");
        const Value* max = config != nullptr ? get(*config, "maxOutputTokens") : nullptr;
        if (max == nullptr || !max->IsInt64() || max->GetInt64() != plan.max_tokens)
            return broken("gemini.28", "generationConfig.maxOutputTokens",
                          "generationConfig.maxOutputTokens is " +
                              std::string(max == nullptr   ? "nothing"
                                          : max->IsInt64() ? std::to_string(max->GetInt64())
                                                           : "a non-integer") +
                              " but the core reserved an output budget of " +
                              std::to_string(plan.max_tokens));
    }
    return std::nullopt;
}

}  // namespace nucleo::contract::internal
