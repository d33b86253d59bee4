// The JSON reading the OpenAI Responses dialect needs, on RapidJSON alone (responses.14: nothing of
// the core): a guarded parse (iterative, so no recursion on the call stack however deep the text,
// with a depth limit checked while parsing so nothing recursive downstream -- Accept -- ever meets
// a deep value, and UTF-8 validated), member look-ups, and quoting a body's first bytes.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nucleo::responses::json {

using Value = rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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

/// Parses the core's provider request held in `buffer` in place (its strings point into it, which
/// must outlive `d`): the encode path, where the text is the core's own UTF-8, checked before it
/// was stored (bench/encode).
inline bool parse_insitu(std::string& buffer, rapidjson::Document& d, std::string& why) {
    rapidjson::InsituStringStream in(buffer.data());
    return detail::parse_stream<rapidjson::kParseInsituFlag>(in, buffer, d, why);
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
