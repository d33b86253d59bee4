// The regex pre-split of tiktoken's o200k_base and cl100k_base, hand-written as state machines.
//
// tiktoken splits text with one regex per encoding before BPE (tiktoken_ext/openai_public.py):
//
// cl100k_base:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//   |\s*[\r\n]+|\s+(?!\S)|\s+
// o200k_base:
//   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...|'d)?
//   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...|'d)?
//   |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Each next_piece_* function returns where the leftmost-first (backtracking) match starting at
// `i` ends; the comments at each branch say which alternative it is and how its backtracking
// resolves. \s is Unicode White_Space (Rust regex, the engine of tiktoken and of its WASM npm
// build); (?i:'s) also matches 'ſ (U+017F folds to s), as in Rust's simple case folding.
//
// Invalid UTF-8 (tiktoken's own input is always a valid str): the input is cut into maximal
// valid runs and single invalid bytes. Each invalid byte is its own piece (its byte token), and
// each valid run is split as if it were a whole text of its own ($ and (?!\S) see its end).
// So encode() is lossless: decode(encode(bytes)) == bytes for any bytes, and on valid UTF-8 the
// result is exactly tiktoken's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tokens/unicode.hpp"

namespace nucleo::tokens {

/// Which encoding's pre-split regex to follow.
enum class Pattern { kCl100k, kO200k };

namespace detail {

/// Flags of ASCII code points (same values as the generated table; ASCII is the hot path).
struct AsciiFlags {
    std::uint8_t v[128] = {};
    constexpr AsciiFlags() {
        for (int c = 'a'; c <= 'z'; ++c) v[c] = kLetter | kLowerish;
        for (int c = 'A'; c <= 'Z'; ++c) v[c] = kLetter | kUpperish;
        for (int c = '0'; c <= '9'; ++c) v[c] = kNumber;
        for (int c = '\t'; c <= '\r'; ++c) v[c] = kSpace;
        v[' '] = kSpace;
        v['\n'] |= kCrLf;
        v['\r'] |= kCrLf;
    }
};
inline constexpr AsciiFlags kAscii{};

/// Byte length of the valid UTF-8 sequence at s[0] (1..4), or 0 when s[0] starts none
/// (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF, no truncation).
inline std::size_t valid_sequence(const std::uint8_t* s, std::size_t avail) noexcept {
    const std::uint8_t b = s[0];
    if (b < 0x80) return 1;
    auto cont = [&](std::size_t k, std::uint8_t lo = 0x80, std::uint8_t hi = 0xBF) {
        return k < avail && s[k] >= lo && s[k] <= hi;
    };
    if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        const std::uint8_t lo = b == 0xE0 ? 0xA0 : 0x80;
        const std::uint8_t hi = b == 0xED ? 0x9F : 0xBF;
        return cont(1, lo, hi) && cont(2) ? 3 : 0;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        const std::uint8_t lo = b == 0xF0 ? 0x90 : 0x80;
        const std::uint8_t hi = b == 0xF4 ? 0x8F : 0xBF;
        return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

/// Length of the longest valid UTF-8 prefix of s[0..n).
inline std::size_t valid_prefix(const std::uint8_t* s, std::size_t n) noexcept {
    std::size_t i = 0;
    while (i < n) {
        // Eight ASCII bytes at a time: most text is mostly ASCII.
        while (i + 8 <= n) {
            std::uint64_t w = 0;
            for (int k = 0; k < 8; ++k) w |= static_cast<std::uint64_t>(s[i + k]) << (8 * k);
            if (w & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        const std::size_t len = valid_sequence(s + i, n - i);
        if (len == 0) return i;
        i += len;
    }
    return n;
}

/// A valid UTF-8 run being split. All positions are byte offsets into it.
struct Segment {
    const std::uint8_t* s;
    std::size_t n;

    /// Flags of the code point at i (< n); its byte length goes to len.
    [[gnu::always_inline]] std::uint8_t at(std::size_t i, std::size_t& len) const noexcept {
        const std::uint8_t b = s[i];
        if (b < 0x80) {
            len = 1;
            return kAscii.v[b];
        }
        std::uint32_t cp;
        if (b < 0xE0) {
            len = 2;
            cp = ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
        } else if (b < 0xF0) {
            len = 3;
            cp = ((b & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
        } else {
            len = 4;
            cp = ((b & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) |
                 (s[i + 3] & 0x3Fu);
        }
        return unicode_flags(cp);
    }

    /// End of the run of code points from i whose flags intersect `mask`.
    std::size_t run(std::size_t i, std::uint8_t mask) const noexcept {
        std::size_t len = 0;
        while (i < n && (at(i, len) & mask)) i += len;
        return i;
    }

    /// End of the run from i of code points with none of the flags in `mask`.
    std::size_t run_without(std::size_t i, std::uint8_t mask) const noexcept {
        std::size_t len = 0;
        while (i < n && !(at(i, len) & mask)) i += len;
        return i;
    }

    /// \p{N}{1,3} at i, where \p{N} matches.
    std::size_t digits(std::size_t i) const noexcept {
        std::size_t len = 0;
        std::size_t j = i;
        for (int k = 0; k < 3 && j < n && (at(j, len) & kNumber); ++k) j += len;
        return j;
    }

    /// Length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, 0 when none matches.
    std::size_t contraction(std::size_t i) const noexcept {
        if (i + 1 >= n || s[i] != '\'') return 0;
        const std::uint8_t c = s[i + 1] | 0x20;  // ASCII lower case (only letters compare below)
        if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;
        if (s[i + 1] == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) return 3;  // 'ſ (U+017F ~ s)
        if (i + 2 < n) {
            const std::uint8_t d = s[i + 2] | 0x20;
            if ((c == 'r' && d == 'e') || (c == 'v' && d == 'e') || (c == 'l' && d == 'l')) {
                return 3;
            }
        }
        return 0;
    }

    /// The whitespace alternatives shared by both patterns, at i where \s matches:
    /// \s*[\r\n]+ | \s+(?!\S) | \s+
    std::size_t whitespace(std::size_t i) const noexcept {
        std::size_t len = 0;
        std::size_t j = i;
        std::size_t last_start = i;        // start of the run's last code point
        std::size_t after_newline = 0;     // end of the run's last \r or \n, 0 if none
        std::uint8_t f;
        while (j < n && ((f = at(j, len)) & kSpace)) {
            last_start = j;
            j += len;
            if (f & kCrLf) after_newline = j;
        }
        // \s*[\r\n]+: greedy \s* backs off to the last newline of the run.
        if (after_newline) return after_newline;
        // \s+(?!\S): the whole run at the end of the text; else all but its last code point.
        if (j == n) return j;
        if (last_start > i) return last_start;
        // \s+: a single whitespace code point before a non-space.
        return j;
    }

    /// " ?[^\s\p{L}\p{N}]+" followed by the tail run (`tail` flags plus optional '/'), at i.
    /// Returns 0 when the alternative does not match.
    std::size_t punctuation(std::size_t i, bool slash_in_tail) const noexcept {
        std::size_t len = 0;
        std::size_t j = i;
        if (s[j] == ' ' && j + 1 < n) ++j;
        if (j >= n || (at(j, len) & (kSpace | kLetter | kNumber))) return 0;
        j = run_without(j, kSpace | kLetter | kNumber);
        while (j < n && (s[j] == '\r' || s[j] == '\n' || (slash_in_tail && s[j] == '/'))) ++j;
        return j;
    }
};

/// cl100k_base: end of the piece that starts at i (< seg.n).
inline std::size_t next_piece_cl100k(const Segment& seg, std::size_t i) noexcept {
    // (?i:'s|'t|'re|'ve|'m|'ll|'d) comes first: "'sx" splits as "'s" + "x".
    if (const std::size_t c = seg.contraction(i)) return i + c;
    std::size_t len = 0;
    const std::uint8_t f = seg.at(i, len);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (f & kLetter) return seg.run(i, kLetter);
    if (!(f & (kCrLf | kNumber)) && i + len < seg.n) {
        std::size_t len2 = 0;
        if (seg.at(i + len, len2) & kLetter) return seg.run(i + len, kLetter);
    }
    // \p{N}{1,3}
    if (f & kNumber) return seg.digits(i);
    // " ?[^\s\p{L}\p{N}]+[\r\n]*"
    if (const std::size_t e = seg.punctuation(i, false)) return e;
    return seg.whitespace(i);
}

/// o200k_base: [^\r\n\p{L}\p{N}]?[Upperish]*[Lowerish]+(?i:contraction)? at a (after the
/// optional prefix). Returns 0 when it does not match.
inline std::size_t o200k_word_lower(const Segment& seg, std::size_t a) noexcept {
    std::size_t len = 0;
    std::size_t j = a;
    std::size_t last_lowerish_end = 0;  // end of the last Lowerish code point inside the run
    std::uint8_t f = 0;
    while (j < seg.n && ((f = seg.at(j, len)) & kUpperish)) {
        j += len;
        if (f & kLowerish) last_lowerish_end = j;
    }
    std::size_t e;
    if (j < seg.n && (seg.at(j, len) & kLowerish)) {
        e = seg.run(j, kLowerish);  // [Upperish]* took the whole run, [Lowerish]+ follows
    } else if (last_lowerish_end) {
        // [Upperish]* backs off to the run's last Lm/Lo/M code point, which [Lowerish]+ takes
        // alone (what follows it in the run is Lu/Lt, not Lowerish).
        e = last_lowerish_end;
    } else {
        return 0;
    }
    return e + seg.contraction(e);
}

/// o200k_base: [Upperish]+[Lowerish]*(?i:contraction)? at a; 0 when it does not match.
inline std::size_t o200k_word_upper(const Segment& seg, std::size_t a) noexcept {
    std::size_t len = 0;
    if (a >= seg.n || !(seg.at(a, len) & kUpperish)) return 0;
    const std::size_t e = seg.run(seg.run(a, kUpperish), kLowerish);
    return e + seg.contraction(e);
}

/// o200k_base: end of the piece that starts at i (< seg.n).
inline std::size_t next_piece_o200k(const Segment& seg, std::size_t i) noexcept {
    std::size_t len = 0;
    const std::uint8_t f = seg.at(i, len);
    // The optional prefix [^\r\n\p{L}\p{N}] is tried first (greedy ?), then without it; the
    // first word alternative is tried in full before the second.
    const bool can_prefix = !(f & (kLetter | kNumber | kCrLf)) && i + len < seg.n;
    if (can_prefix) {
        if (const std::size_t e = o200k_word_lower(seg, i + len)) return e;
    }
    if (f & (kUpperish | kLowerish)) {
        if (const std::size_t e = o200k_word_lower(seg, i)) return e;
    }
    if (can_prefix) {
        if (const std::size_t e = o200k_word_upper(seg, i + len)) return e;
    }
    if (const std::size_t e = o200k_word_upper(seg, i)) return e;
    // \p{N}{1,3}
    if (f & kNumber) return seg.digits(i);
    // " ?[^\s\p{L}\p{N}]+[\r\n/]*"
    if (const std::size_t e = seg.punctuation(i, true)) return e;
    return seg.whitespace(i);
}

}  // namespace detail

/// Calls on_piece(std::string_view piece, bool invalid_byte) for each piece of `text` in order.
/// invalid_byte marks a single byte that starts no valid UTF-8 sequence.
template <class OnPiece>
void pretokenize(Pattern pattern, std::string_view text, OnPiece&& on_piece) {
    const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
    const std::size_t n = text.size();
    std::size_t pos = 0;
    while (pos < n) {
        const std::size_t valid = detail::valid_prefix(s + pos, n - pos);
        const detail::Segment seg{s + pos, valid};
        std::size_t i = 0;
        while (i < valid) {
            const std::size_t e = pattern == Pattern::kO200k ? detail::next_piece_o200k(seg, i)
                                                             : detail::next_piece_cl100k(seg, i);
            on_piece(text.substr(pos + i, e - i), false);
            i = e;
        }
        pos += valid;
        if (pos < n) {
            on_piece(text.substr(pos, 1), true);
            ++pos;
        }
    }
}

}  // namespace nucleo::tokens
