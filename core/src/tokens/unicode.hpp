// Unicode classes the tiktoken pre-split patterns test, one flag byte per code point.
//
// The tables are generated at configure time by scripts/gen-unicode-tables from the Unicode
// Character Database at the version tiktoken uses (tokens.102), exported from a pinned npm package
// by scripts/fetch-unicode-data (nothing third-party is copied into the tree). The flag values
// must match that script.
#pragma once

#include <cstdint>

namespace nucleo::tokens {

/// \p{L}
inline constexpr std::uint8_t kLetter = 1;
/// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: the head of an o200k word
inline constexpr std::uint8_t kUpperish = 2;
/// [\p{Ll}\p{Lm}\p{Lo}\p{M}]: the tail of an o200k word
inline constexpr std::uint8_t kLowerish = 4;
/// \p{N}
inline constexpr std::uint8_t kNumber = 8;
/// \s: Unicode White_Space, as the Rust regex crate (tiktoken's engine) defines it
inline constexpr std::uint8_t kSpace = 16;
/// [\r\n]
inline constexpr std::uint8_t kCrLf = 32;

extern const char kUnicodeVersion[];
extern const std::uint16_t kUnicodeStage1[];
extern const std::uint8_t kUnicodeStage2[];

/// Flags of a code point (0 for unassigned, punctuation, symbols, controls).
inline std::uint8_t unicode_flags(std::uint32_t cp) noexcept {
    return kUnicodeStage2[(static_cast<std::uint32_t>(kUnicodeStage1[cp >> 8]) << 8) | (cp & 0xFF)];
}

}  // namespace nucleo::tokens
