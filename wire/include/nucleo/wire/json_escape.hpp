// conversation.104: writing JSON strings, byte for byte as RapidJSON's Writer writes them, but
// with the runs that need no escape found 16 bytes at a time (SSE2, part of every x86-64 CPU;
// 8 bytes at a time elsewhere) and copied in one piece, where RapidJSON's Writer looks up and
// copies each byte alone. Header-only, against RapidJSON alone: libnucleo and each in-tree
// plugin compile their own copy, so every plugin still loads alone.
#pragma once

#include <rapidjson/rapidjson.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nucleo::json_escape {

namespace detail {

/// RapidJSON's Writer escapes (writer.h, `escape`): 'u' for \u00XX, another letter for its
/// two-character escape, '"' and '\\' for themselves, 0 for a byte written as it is.
inline constexpr std::array<char, 256> kEscape = [] {
    std::array<char, 256> table{};
    for (int c = 0; c < 0x20; ++c) table[static_cast<std::size_t>(c)] = 'u';
    table['\b'] = 'b';
    table['\t'] = 't';
    table['\n'] = 'n';
    table['\f'] = 'f';
    table['\r'] = 'r';
    table['"'] = '"';
    table['\\'] = '\\';
    return table;
}();

/// Whether one of the 8 bytes of `word` needs an escape: a byte below 0x20, '"' or '\\'. Exact
/// (the classic has-less-than and has-zero-byte tests, which never miss and, for the question
/// "is there one", never err).
inline bool word_needs_escape(std::uint64_t word) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    auto has_zero = [](std::uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
    const bool below_space = ((word - kOnes * 0x20) & ~word & kHigh) != 0;
    return below_space || has_zero(word ^ (kOnes * '"')) || has_zero(word ^ (kOnes * '\\'));
}

/// The first byte of [p, end) that needs an escape, or `end`. Reads no byte outside the range
/// (unaligned loads of whole 16- and 8-byte blocks only).
inline const char* find_escape(const char* p, const char* const end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i below_space = _mm_set1_epi8(0x1F);
    for (; end - p >= 16; p += 16) {
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        // A byte is at most 0x1F exactly when max(byte, 0x1F) == 0x1F (unsigned).
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(s, below_space), below_space));
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    }
#endif
    for (std::uint64_t word = 0; end - p >= 8; p += 8) {
        std::memcpy(&word, p, sizeof word);
        if (word_needs_escape(word)) break;
    }
    while (p != end && kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    return p;
}

/// `n` bytes at `p` onto `out`: in one piece when the stream can hand out room (a
/// StringBuffer's Push), else byte by byte.
template <typename Stream>
void put_bytes(Stream& out, const char* p, std::size_t n) {
    if constexpr (requires { out.Push(n); }) {
        if (n != 0) std::memcpy(out.Push(n), p, n);
    } else {
        for (std::size_t i = 0; i < n; ++i) out.Put(p[i]);
    }
}

}  // namespace detail

/// Writes the characters of `s` escaped, without the quotes: `\"` `\\` `\b` `\f` `\n` `\r` `\t`,
/// `\u00XX` in upper-case hex for the other bytes below 0x20, every other byte as it is (what
/// RapidJSON's Writer writes from UTF-8 to UTF-8 without validation).
template <typename Stream>
void put_escaped(Stream& out, std::string_view s) {
    const char* p = s.data();
    const char* const end = p + s.size();
    while (true) {
        const char* const run = p;
        p = detail::find_escape(p, end);
        detail::put_bytes(out, run, static_cast<std::size_t>(p - run));
        if (p == end) return;
        const auto c = static_cast<unsigned char>(*p++);
        const char escape = detail::kEscape[c];
        out.Put('\\');
        out.Put(escape);
        if (escape == 'u') {
            constexpr char kHex[] = "0123456789ABCDEF";
            out.Put('0');
            out.Put('0');
            out.Put(kHex[c >> 4]);
            out.Put(kHex[c & 0xF]);
        }
    }
}

namespace detail {

/// The output stream of a RapidJSON Writer or PrettyWriter, its protected `os_`, named through a
/// pointer to member formed in a derived class (the language's way to reach a protected member).
template <typename Writer>
struct WriterOutput : Writer {
    static auto& of(Writer& writer) { return *(writer.*(&WriterOutput::os_)); }
};

/// Writes `"s"` escaped at `out`, which has room for the worst case (6 bytes a byte, plus the
/// quotes), and returns the end of what it wrote. For short strings, where a run finder costs
/// more than it finds.
inline char* put_short_quoted(char* out, const char* s, std::size_t n) {
    constexpr char kHex[] = "0123456789ABCDEF";
    *out++ = '"';
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const char escape = kEscape[c];
        if (escape == 0) {
            *out++ = static_cast<char>(c);
            continue;
        }
        *out++ = '\\';
        *out++ = escape;
        if (escape == 'u') {
            *out++ = '0';
            *out++ = '0';
            *out++ = kHex[c >> 4];
            *out++ = kHex[c & 0xF];
        }
    }
    *out++ = '"';
    return out;
}

}  // namespace detail

/// Writes `s` as a JSON string value or key through any RapidJSON Writer or PrettyWriter, byte
/// for byte what its `String` writes. The prefix (the comma, the colon, a PrettyWriter's indent)
/// is the Writer's own, written by RawValue with the opening quote.
template <typename Writer>
void write_string(Writer& writer, std::string_view s) {
    writer.RawValue("\"", 1, rapidjson::kStringType);
    auto& out = detail::WriterOutput<Writer>::of(writer);
    put_escaped(out, s);
    out.Put('"');
}

/// conversation.104: RapidJSON's compact Writer whose strings and keys (`String`, `Key`, and so
/// every `Accept` and SAX copy through it) are written by put_escaped: the same bytes, found a
/// block at a time, after the comma or colon RapidJSON's Prefix would write (decided inline, see
/// separator). Everything else is RapidJSON's. Use it by its own type: a call through a
/// reference to the base class reaches RapidJSON's slower `String`.
template <typename OutputStream>
class Writer : public rapidjson::Writer<OutputStream> {
    using Base = rapidjson::Writer<OutputStream>;

  public:
    using Base::Base;

    /// Strings up to this length are written through one reserved span (detail::put_short_quoted).
    static constexpr rapidjson::SizeType kShort = 64;

    bool String(const char* s, rapidjson::SizeType length, bool copy = false) {
        (void)copy;
        const char separator = this->separator();
        OutputStream& out = *this->os_;
        if constexpr (requires {
                          out.Push(std::size_t{});
                          out.Pop(std::size_t{});
                      }) {
            if (length <= kShort) {
                // A key or a short value: room for the worst case and its separator taken at
                // once, each byte written through one pointer, the room not used given back.
                const std::size_t room = std::size_t{length} * 6 + 3;
                char* const begin = out.Push(room);
                char* at = begin;
                if (separator != 0) *at++ = separator;
                char* const end = detail::put_short_quoted(at, s, length);
                out.Pop(static_cast<std::size_t>(begin + room - end));
                return this->EndValue(true);
            }
        }
        if (separator != 0) out.Put(separator);
        out.Put('"');
        put_escaped(out, std::string_view(s, length));
        out.Put('"');
        return this->EndValue(true);
    }
    bool String(const char* s) {
        return String(s, static_cast<rapidjson::SizeType>(std::strlen(s)));
    }
    bool String(const std::string& s) {
        return String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }
    bool String(std::string_view s) {
        return String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }

    /// `json`, one JSON value of type `type` that is already in this Writer's form (see
    /// is_canonical), copied in one piece.
    bool RawJson(std::string_view json, rapidjson::Type type) {
        this->Prefix(type);
        detail::put_bytes(*this->os_, json.data(), json.size());
        return this->EndValue(true);
    }

    bool Key(const char* s, rapidjson::SizeType length, bool copy = false) {
        return String(s, length, copy);
    }
    bool Key(const char* s) { return String(s); }
    bool Key(const std::string& s) { return String(s); }
    bool Key(std::string_view s) { return String(s); }

  private:
    /// RapidJSON's Prefix for a string, inline: counts the value in its container and gives the
    /// byte that goes before it (',' or ':'), or 0 for the first value of a container or the root,
    /// so that a short string writes it into the span it reserves anyway.
    char separator() {
        if (RAPIDJSON_LIKELY(this->level_stack_.GetSize() != 0)) {
            auto* level = this->level_stack_.template Top<typename Base::Level>();
            const std::size_t count = level->valueCount++;
            if (count == 0) return 0;
            return level->inArray || count % 2 == 0 ? ',' : ':';
        }
        RAPIDJSON_ASSERT(!this->hasRoot_);  // one root only, as Prefix asserts
        this->hasRoot_ = true;
        return 0;
    }
};

namespace detail {

/// The scan behind is_canonical: recursive descent, at most `depth_left` levels deep (so the
/// recursion is bounded), the keys of the open objects kept in a fixed array.
class CanonicalScan {
  public:
    CanonicalScan(std::string_view json, unsigned max_depth)
        : p_(json.data()), end_(json.data() + json.size()), depth_left_(max_depth) {}

    bool whole_value() { return value() && p_ == end_; }

  private:
    static constexpr std::size_t kMaxOpenKeys = 128;

    bool value() {
        if (p_ == end_) return false;
        switch (*p_) {
            case '{':
                return object();
            case '[':
                return array();
            case '"': {
                std::string_view ignored;
                return string(ignored);
            }
            case 't':
                return literal("true");
            case 'f':
                return literal("false");
            case 'n':
                return literal("null");
            default:
                return integer();
        }
    }

    bool literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) < word.size() ||
            std::memcmp(p_, word.data(), word.size()) != 0) {
            return false;
        }
        p_ += word.size();
        return true;
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }

    /// An integer as RapidJSON's Writer writes it back: no "-0", no leading zero, and at most 18
    /// digits (so it fits every integer type the reader picks); fractions and exponents are
    /// left to the reader.
    bool integer() {
        if (*p_ == '-') {
            ++p_;
            if (p_ == end_ || *p_ == '0') return false;
        }
        if (p_ == end_ || !digit(*p_)) return false;
        if (*p_ == '0') {
            ++p_;
        } else {
            const char* const first = p_;
            while (p_ != end_ && digit(*p_)) ++p_;
            if (p_ - first > 18) return false;
        }
        return p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E' && !digit(*p_));
    }

    /// A string with only the escapes put_escaped writes; `raw` is its text between the quotes.
    bool string(std::string_view& raw) {
        const char* const first = ++p_;
        while (true) {
            p_ = find_escape(p_, end_);
            if (p_ == end_) return false;
            if (*p_ == '"') break;
            if (*p_ != '\\' || end_ - p_ < 2) return false;  // a raw control byte, or cut
            const char e = p_[1];
            if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p_ += 2;
                continue;
            }
            if (e != 'u' || end_ - p_ < 6 || p_[2] != '0' || p_[3] != '0') return false;
            const char high = p_[4];
            const char low = p_[5];
            if (high != '0' && high != '1') return false;
            int value = (high - '0') << 4;
            if (digit(low)) {
                value |= low - '0';
            } else if (low >= 'A' && low <= 'F') {
                value |= low - 'A' + 10;
            } else {
                return false;
            }
            // \u0000 is left to the reader; the others must be the ones without a short escape.
            if (value == 0 || kEscape[static_cast<unsigned char>(value)] != 'u') return false;
            p_ += 6;
        }
        raw = std::string_view(first, static_cast<std::size_t>(p_ - first));
        ++p_;
        return true;
    }

    bool enter() {
        ++p_;
        if (depth_left_ == 0) return false;
        --depth_left_;
        return true;
    }

    bool array() {
        if (!enter()) return false;
        if (p_ != end_ && *p_ == ']') {
            ++p_;
            ++depth_left_;
            return true;
        }
        while (true) {
            if (!value() || p_ == end_) return false;
            if (*p_ == ']') break;
            if (*p_++ != ',') return false;
        }
        ++p_;
        ++depth_left_;
        return true;
    }

    bool object() {
        if (!enter()) return false;
        const std::size_t first_key = open_keys_;
        if (p_ != end_ && *p_ == '}') {
            ++p_;
            ++depth_left_;
            return true;
        }
        while (true) {
            if (p_ == end_ || *p_ != '"' || open_keys_ == kMaxOpenKeys) return false;
            if (!string(keys_[open_keys_++])) return false;
            if (p_ == end_ || *p_++ != ':') return false;
            if (!value() || p_ == end_) return false;
            if (*p_ == '}') break;
            if (*p_++ != ',') return false;
        }
        ++p_;
        // Two keys written alike are the same key: the escapes of this form are one per byte.
        std::string_view* const begin = keys_.data() + first_key;
        std::string_view* const end = keys_.data() + open_keys_;
        std::sort(begin, end);
        if (std::adjacent_find(begin, end) != end) return false;
        open_keys_ = first_key;
        ++depth_left_;
        return true;
    }

    const char* p_;
    const char* const end_;
    unsigned depth_left_;
    std::array<std::string_view, kMaxOpenKeys> keys_{};
    std::size_t open_keys_ = 0;
};

}  // namespace detail

/// conversation.105: whether `json` is one JSON value exactly as a guarded read of it written back
/// by the escaping Writer would be: compact (no whitespace), strings with only the escapes
/// put_escaped writes, `true` `false` `null`, integers of at most 18 digits without "-0" or a
/// leading zero, no key twice in an object, at most min(max_depth, 32) levels and 128 keys open.
/// So a true answer lets a writer copy the text as it is. False says nothing about validity
/// (fractions, exponents, `\u0000`, deep or wide values are all left to the reader).
inline bool is_canonical(std::string_view json, unsigned max_depth) {
    constexpr unsigned kMaxScanDepth = 32;
    return detail::CanonicalScan(json, max_depth < kMaxScanDepth ? max_depth : kMaxScanDepth)
        .whole_value();
}

/// The type of the JSON value `json` begins with (its first byte), for a Writer's prefix.
inline rapidjson::Type value_type(std::string_view json) {
    switch (json.empty() ? '\0' : json.front()) {
        case '{':
            return rapidjson::kObjectType;
        case '[':
            return rapidjson::kArrayType;
        case '"':
            return rapidjson::kStringType;
        case 't':
            return rapidjson::kTrueType;
        case 'f':
            return rapidjson::kFalseType;
        case 'n':
            return rapidjson::kNullType;
        default:
            return rapidjson::kNumberType;
    }
}

/// conversation.104: the compact Writer into a RapidJSON StringBuffer that libnucleo and the
/// in-tree plugins write JSON with.
using StringWriter = Writer<rapidjson::StringBuffer>;

/// write_string through the escaping Writer: its own String, the short path included.
template <typename OutputStream>
void write_string(Writer<OutputStream>& writer, std::string_view s) {
    writer.String(s);
}

}  // namespace nucleo::json_escape
