// UTF-8 checks shared by every place text enters the runtime (conversation.106 to
// conversation.109): the conversation document reader, the host API that adds content to a
// conversation, the store boundary (persistence.104) and the audit's blame (conversation.109).
// The check of valid text, the only case on a hot path, is simdjson's validator (SIMD, several
// GB/s); the position of a fault is looked for only once the text is known to hold one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nucleo::internal {

/// Whether all of `text` is well-formed UTF-8: no overlong form, no surrogate (U+D800 to
/// U+DFFF), nothing above U+10FFFF, no sequence cut short (simdjson::validate_utf8).
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

/// The length (1 to 4) of the well-formed UTF-8 sequence that starts at text[i], or 0 when none
/// does; its code point goes to `code_point` when that is not null.
[[nodiscard]] std::size_t utf8_sequence_at(std::string_view text, std::size_t i,
                                           char32_t* code_point) noexcept;

/// The byte position of the first invalid UTF-8 sequence of `text` (by is_valid_utf8's rules), or
/// npos when all of it is valid.
[[nodiscard]] std::size_t first_invalid_utf8(std::string_view text) noexcept;

/// In a JSON text: the byte position of the first `\u` escape that decodes to a lone surrogate
/// (a low one not preceded by a high one, or a high one not followed by a low one), or npos.
/// RapidJSON 1.1 decodes a lone low surrogate into the three bytes of its code point, which are
/// not UTF-8, so a text can be valid UTF-8 and still read as invalid strings. Exact for a JSON
/// text (a backslash outside a string is not JSON, and a reader refuses it first).
[[nodiscard]] std::size_t first_lone_surrogate_escape(std::string_view json) noexcept;

/// Where a JSON text's strings stop being UTF-8 once read: the smaller of first_invalid_utf8 and
/// first_lone_surrogate_escape, or npos. Cheap for valid text: one SIMD pass and a memchr for
/// backslashes.
[[nodiscard]] std::size_t first_invalid_utf8_in_json(std::string_view json) noexcept;

/// `text` with every byte that starts no valid sequence replaced by U+FFFD, for a message that
/// must never print invalid bytes (conversation.108). Returns `text` unchanged when it is valid.
[[nodiscard]] std::string printable_utf8(std::string_view text);

}  // namespace nucleo::internal
