// The JSON reading the OpenAI Responses dialect needs, on RapidJSON alone (responses.14: nothing of
// the core): a guarded parse (iterative, so no recursion on the call stack however deep the text,
// with a depth limit checked while parsing so nothing recursive downstream -- Accept -- ever meets
// a deep value, and UTF-8 validated), member look-ups, quoting a body's first bytes, and the
// Writer every JSON text of the plugin is written with (its strings escaped by its own scan).
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nucleo::responses::json {

using Value = rapidjson::Value;

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

/// The first byte of [p, end) that needs an escape (below 0x20, '"' or '\\'), or `end`; 16 bytes
/// at a time with SSE2 (part of every x86-64 CPU, the plugin's own intrinsics, not RapidJSON's
/// SSE2 paths: responses.13), 8 at a time elsewhere. Reads no byte outside the range.
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
#else
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    auto has_zero = [](std::uint64_t v) { return ((v - kOnes) & ~v & kHigh) != 0; };
    for (std::uint64_t word = 0; end - p >= 8; p += 8) {
        std::memcpy(&word, p, sizeof word);
        const bool below_space = ((word - kOnes * 0x20) & ~word & kHigh) != 0;
        if (below_space || has_zero(word ^ (kOnes * '"')) || has_zero(word ^ (kOnes * '\\'))) break;
    }
#endif
    while (p != end && kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    return p;
}

/// The bytes of padding after an in-situ text's end (parse_insitu): a 16-byte load that starts at
/// or before the text's NUL terminator stays inside the buffer.
inline constexpr std::size_t kInsituPadding = 15;

/// The first byte at or after `p` that ends a run of a JSON string (below 0x20, '"' or '\\') in a
/// text padded by kInsituPadding NULs, which always has one (its terminator). For the in-situ
/// parse of the core's request (below).
inline char* find_run_end(char* p) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i below_space = _mm_set1_epi8(0x1F);
    for (;; p += 16) {
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)),
                         _mm_cmpeq_epi8(_mm_max_epu8(s, below_space), below_space));
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    }
#else
    while (kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    return p;
#endif
}

/// Writes `"s"` escaped at `out`, which has room for the worst case (6 bytes a byte, plus the
/// quotes), and returns the end of what it wrote. For short strings: a key, a type, an id.
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
            *out++ = kHex[c >> 4U];
            *out++ = kHex[c & 0xFU];
        }
    }
    *out++ = '"';
    return out;
}

/// Writes the characters of `s` escaped, without the quotes, onto `out`: the runs that need no
/// escape copied in one piece each.
inline void put_escaped(rapidjson::StringBuffer& out, const char* p, const char* const end) {
    constexpr char kHex[] = "0123456789ABCDEF";
    while (true) {
        const char* const run = p;
        p = find_escape(p, end);
        if (p != run) {
            const auto n = static_cast<std::size_t>(p - run);
            std::memcpy(out.Push(n), run, n);
        }
        if (p == end) return;
        const auto c = static_cast<unsigned char>(*p++);
        const char escape = kEscape[c];
        out.Put('\\');
        out.Put(escape);
        if (escape == 'u') {
            out.Put('0');
            out.Put('0');
            out.Put(kHex[c >> 4U]);
            out.Put(kHex[c & 0xFU]);
        }
    }
}

}  // namespace detail
}  // namespace nucleo::responses::json

namespace rapidjson {

/// responses.13: the run of a string that needs no unescaping, found by the plugin's own scan
/// (16 bytes at a time) and moved in one piece, where RapidJSON without its SSE2 paths reads and
/// writes back each byte alone (bench/encode: that loop was a fifth of the encode). RapidJSON's
/// reader calls this hook before each character of a string; the generic one does nothing, this
/// one is the reader's for the in-situ stream of parse_insitu, whose text is padded
/// (kInsituPadding). It stops at the bytes the reader's loop must see ('"', '\\', below 0x20),
/// so the parse and its errors are the loop's.
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ScanCopyUnescapedString<
    InsituStringStream, InsituStringStream>(InsituStringStream& is, InsituStringStream& /*os*/) {
    char* const run = is.src_;
    char* const end = nucleo::responses::json::detail::find_run_end(run);
    const auto n = static_cast<std::size_t>(end - run);
    // Behind an escape the string is written back short of where it is read: move the run down.
    if (is.dst_ != run) std::memmove(is.dst_, run, n);
    is.src_ = end;
    is.dst_ += n;
}

}  // namespace rapidjson

namespace nucleo::responses::json {

/// responses.13: RapidJSON's compact Writer whose strings and keys (`String`, `Key`, and so every
/// `Accept` through it) are written by the plugin's own escaper: byte for byte what RapidJSON's
/// Writer writes from UTF-8 to UTF-8 (`\"` `\\` `\b` `\f` `\n` `\r` `\t`, `\u00XX` in upper-case
/// hex for the other bytes below 0x20), but the runs that need no escape found a block at a time
/// and copied in one piece where RapidJSON's Writer looks up and copies each byte alone
/// (bench/encode). Everything else (numbers, brackets, the separators' bookkeeping) is RapidJSON's.
/// Used by its own type everywhere: a call through the base class would reach RapidJSON's slower
/// `String`.
class Writer : public rapidjson::Writer<rapidjson::StringBuffer> {
    using Base = rapidjson::Writer<rapidjson::StringBuffer>;

  public:
    using Base::Base;

    /// Strings up to this length are written through one reserved span (put_short_quoted).
    static constexpr rapidjson::SizeType kShort = 64;

    bool String(const char* s, rapidjson::SizeType length, bool /*copy*/ = false) {
        this->Prefix(rapidjson::kStringType);
        rapidjson::StringBuffer& out = *this->os_;
        if (length <= kShort) {
            // Room for the worst case taken at once, the room not used given back.
            const std::size_t room = std::size_t{length} * 6 + 2;
            char* const begin = out.Push(room);
            char* const end = detail::put_short_quoted(begin, s, length);
            out.Pop(static_cast<std::size_t>(begin + room - end));
        } else {
            out.Put('"');
            detail::put_escaped(out, s, s + length);
            out.Put('"');
        }
        return this->EndValue(true);
    }
    bool String(const char* s) {
        return String(s, static_cast<rapidjson::SizeType>(std::strlen(s)));
    }
    bool Key(const char* s, rapidjson::SizeType length, bool copy = false) {
        return String(s, length, copy);
    }
    bool Key(const char* s) { return String(s); }
};

/// responses.13: the deepest nesting read from outside (limits.120's figure for provider answers).
inline constexpr unsigned kMaxDepth = 512;

namespace detail {

/// Forwards SAX events to a Document and stops the parse past kMaxDepth open containers.
class DepthGuard {
  public:
    using Ch = char;
    explicit DepthGuard(rapidjson::Document& d) : d_(d) {}
    bool Null() { return d_.Null(); }
    bool Bool(bool b) { return d_.Bool(b); }
    bool Int(int i) { return d_.Int(i); }
    bool Uint(unsigned u) { return d_.Uint(u); }
    bool Int64(int64_t i) { return d_.Int64(i); }
    bool Uint64(uint64_t u) { return d_.Uint64(u); }
    bool Double(double x) { return d_.Double(x); }
    bool RawNumber(const Ch* s, rapidjson::SizeType n, bool copy) {
        return d_.RawNumber(s, n, copy);
    }
    bool String(const Ch* s, rapidjson::SizeType n, bool copy) { return d_.String(s, n, copy); }
    bool Key(const Ch* s, rapidjson::SizeType n, bool copy) { return d_.Key(s, n, copy); }
    bool StartObject() { return ++depth_ <= kMaxDepth && d_.StartObject(); }
    bool EndObject(rapidjson::SizeType n) {
        --depth_;
        return d_.EndObject(n);
    }
    bool StartArray() { return ++depth_ <= kMaxDepth && d_.StartArray(); }
    bool EndArray(rapidjson::SizeType n) {
        --depth_;
        return d_.EndArray(n);
    }
    [[nodiscard]] bool too_deep() const { return depth_ > kMaxDepth; }

  private:
    rapidjson::Document& d_;
    unsigned depth_ = 0;
};

/// Runs the guarded parse of `in` (whose first `size` bytes are the text) into `d`.
template <unsigned Flags, class Stream>
bool parse_stream(Stream& in, std::string_view text, rapidjson::Document& d, std::string& why) {
    constexpr unsigned kFlags =
        Flags | rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;
    rapidjson::Reader reader;
    bool too_deep = false;
    auto generate = [&](rapidjson::Document& doc) {
        detail::DepthGuard guard(doc);
        reader.Parse<kFlags>(in, guard);
        too_deep = guard.too_deep();
        return !reader.HasParseError();
    };
    d.Populate(generate);
    if (!reader.HasParseError()) {
        // Only whitespace may follow the value (a NUL byte ends an in-situ text early: caught
        // here).
        std::size_t pos = in.Tell();
        while (pos < text.size() &&
               (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' || text[pos] == '\n'))
            ++pos;
        if (pos == text.size()) return true;
        why = "text after the JSON value at byte " + std::to_string(pos);
        return false;
    }
    why = too_deep ? "nesting deeper than " + std::to_string(kMaxDepth) + " levels at byte " +
                         std::to_string(reader.GetErrorOffset())
                   : std::string(rapidjson::GetParseError_En(reader.GetParseErrorCode())) +
                         " at byte " + std::to_string(reader.GetErrorOffset());
    return false;
}

}  // namespace detail

/// Parses `text` (a provider's answer or event) into `d`, its strings copied and UTF-8 validated;
/// false with `why` (where and what) when it is not one JSON value, is nested deeper than
/// kMaxDepth or holds invalid UTF-8.
inline bool parse(std::string_view text, rapidjson::Document& d, std::string& why) {
    rapidjson::MemoryStream in(text.data(), text.size());
    return detail::parse_stream<rapidjson::kParseValidateEncodingFlag>(in, text, d, why);
}

/// Parses the core's provider request `text` in place in `buffer`, its copy padded with NULs
/// (detail::kInsituPadding; its strings point into it, which must outlive `d`): the encode path,
/// where the text is the core's own UTF-8, checked before it was stored (bench/encode).
inline bool parse_insitu(std::string_view text, std::string& buffer, rapidjson::Document& d,
                         std::string& why) {
    buffer.reserve(text.size() + detail::kInsituPadding);
    buffer.assign(text);
    buffer.append(detail::kInsituPadding, '\0');
    rapidjson::InsituStringStream in(buffer.data());
    return detail::parse_stream<rapidjson::kParseInsituFlag>(
        in, std::string_view(buffer.data(), text.size()), d, why);
}

inline std::string_view view(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

/// The member `key` of `v`, or nullptr (also when `v` is nullptr or not an object).
inline const Value* member(const Value* v, std::string_view key) {
    if (v == nullptr || !v->IsObject()) return nullptr;
    for (const auto& m : v->GetObject())
        if (view(m.name) == key) return &m.value;
    return nullptr;
}
inline const Value* member(const Value& v, std::string_view key) {
    return member(&v, key);
}

/// The string `v` holds, or "" when it is absent or not a string.
inline std::string_view text(const Value* v) {
    return v != nullptr && v->IsString() ? view(*v) : std::string_view();
}

/// A count: a non-negative integer, else 0 (responses.9: a wrong type or a negative count reads 0).
inline std::int64_t count(const Value* v) {
    return v != nullptr && v->IsInt64() && v->GetInt64() >= 0 ? v->GetInt64() : 0;
}

/// Writes `s` as a JSON string.
inline void string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
inline void key(Writer& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

/// The compact JSON text of `v`.
inline std::string compact(const Value& v) {
    rapidjson::StringBuffer b;
    Writer w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

/// The compact JSON text of `v` written into `b` (cleared first, its capacity kept): a view of
/// `b`'s bytes, valid until `b` changes.
inline std::string_view compact_into(const Value& v, rapidjson::StringBuffer& b) {
    b.Clear();
    Writer w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

/// The first bytes of a body (at most 200, cut on a UTF-8 boundary) quoted for an error message,
/// control bytes as \xNN.
inline std::string quote_first_bytes(std::string_view body) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::size_t n = body.size() < 200 ? body.size() : 200;
    while (n < body.size() && n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0U) == 0x80U) --n;
    std::string out = "\"";
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(body[i]);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20 || c >= 0x7F) {
            out.append("\\x");
            out.push_back(kHex[c >> 4U]);
            out.push_back(kHex[c & 0xFU]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    out.push_back('"');
    if (n < body.size()) out.append("...");
    return out;
}

}  // namespace nucleo::responses::json
