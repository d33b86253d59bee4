// Helpers shared by the family modules of the rule book.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "contract/contract.hpp"

namespace nucleo::contract::internal {

using Value = rapidjson::Value;

/// The member `name` of `v`, or nullptr when `v` is not an object or lacks it.
inline const Value* member(const Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

/// The member as a string view, or `fallback` when absent or not a string.
inline std::string_view str(const Value& v, const char* name, std::string_view fallback = {}) {
    const Value* m = member(v, name);
    return m != nullptr && m->IsString() ? std::string_view(m->GetString(), m->GetStringLength())
                                         : fallback;
}

/// The member when it is an array, else nullptr.
inline const Value* array(const Value& v, const char* name) {
    const Value* m = member(v, name);
    return m != nullptr && m->IsArray() ? m : nullptr;
}

/// True when `text` has a character other than ASCII whitespace.
inline bool has_non_whitespace(std::string_view text) {
    return text.find_first_not_of(" \t\r\n\f\v") != std::string_view::npos;
}

inline std::optional<Violation> broken(const char* rule, std::string where, std::string message) {
    return Violation{rule, std::move(where), std::move(message)};
}

/// The type the schema declares ("" when none or not a string).
inline std::string_view schema_type(const Value* schema) {
    return schema == nullptr ? std::string_view{} : str(*schema, "type");
}

std::optional<Violation> check_anthropic(const Value& body);
std::optional<Violation> check_openai(const Value& body, Scope scope);
std::optional<Violation> check_bedrock(const Value& body);

/// The text Anthropic models answer when thinking is on and the assistant turn of the tool loop
/// does not begin with a thinking block; `at` is "messages.N.content.0", `found` the block type.
std::string thinking_first_text(const std::string& at, std::string_view found);

}  // namespace nucleo::contract::internal
