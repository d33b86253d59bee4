// Private helpers of nucleo-openai shared by the encoder and the decoder: refusals with their
// plugin.h status, typed member lookups that name the path of what is wrong, and the quoting of a
// body's first bytes for protocol errors (docs/provider-abi-documents.md: "quoting the first bytes
// of the body (at most 200)").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "nucleo/plugin.hpp"

namespace nucleo::openai {

using Value = rapidjson::Value;

/// A provider request this dialect cannot express, or one off the documented shape.
[[noreturn]] inline void refuse(const std::string& message) {
    throw plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT, message);
}

/// The first bytes of a body (at most `limit`), quoted, for an error message. Control bytes are
/// shown as '.', so the one-line nucleo_error message stays one line.
inline std::string first_bytes(std::string_view body, std::size_t limit = 200) {
    std::string out = "\"";
    const std::size_t n = body.size() < limit ? body.size() : limit;
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(body[i]);
        out += c < 0x20 ? '.' : static_cast<char>(c);
    }
    out += n < body.size() ? "\"..." : "\"";
    return out;
}

/// The member `key` of object `v`, or nullptr (also when v is not an object).
inline const Value* member(const Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

inline std::string_view view_of(const Value& v) {
    return std::string_view(v.GetString(), v.GetStringLength());
}

}  // namespace nucleo::openai
