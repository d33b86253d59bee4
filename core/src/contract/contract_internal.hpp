// Helpers shared by the family modules of the rule book.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "contract/contract.hpp"
#include "contract/shape.hpp"

namespace nucleo::contract::internal {

/// True when `text` has a character other than ASCII whitespace.
inline bool has_non_whitespace(std::string_view text) {
    // A plain loop: find_first_not_of calls memchr over the set for every character it tests,
    // and this runs for every text block of every audited request.
    for (const char c : text) {
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return true;
    }
    return false;
}

inline std::optional<Violation> broken(const char* rule, std::string where, std::string message) {
    return Violation{rule, std::move(where), std::move(message)};
}

/// The family rule books, over the body's Shape (wire.164).
std::optional<Violation> check_anthropic(const Shape& body);
std::optional<Violation> check_openai(const Shape& body, Scope scope);
std::optional<Violation> check_bedrock(const Shape& body);
/// The family's rule book over a Shape (nullopt for kUnknown).
std::optional<Violation> check_shape(const Shape& body, Scope scope);

/// The audit's checks before any byte of the body is read: path, headers, the body cap
/// (wire.150, wire.151, wire.153).
std::optional<Violation> generic_checks(const OutgoingRequest& request, const CallPlan& plan);
/// The audit's checks over the body's records: the size limit, the plan checks and the family's
/// rule book (wire.115, wire.160-wire.163, Scope::kCore); none for kUnknown.
std::optional<Violation> body_checks(WireFamily family, std::size_t body_bytes, const Shape& shape,
                                     const CallPlan& plan);
/// wire.152's refusal of a body that is not a JSON object.
std::optional<Violation> not_an_object();

/// The text Anthropic models answer when thinking is on and the assistant turn of the tool loop
/// does not begin with a thinking block; `at` is "messages.N.content.0", `found` the block type.
std::string thinking_first_text(const std::string& at, std::string_view found);

}  // namespace nucleo::contract::internal
