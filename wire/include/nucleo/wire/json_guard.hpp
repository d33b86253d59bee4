// The one guarded way every JSON text from outside is read, in libnucleo and in the in-tree
// provider plugins alike (header-only, so a plugin carries its own copy of the code and still
// loads alone): iterative parsing (no recursion on the call stack however deep the text), a depth
// limit checked while parsing so nothing recursive downstream (Accept, CopyFrom, the readers)
// ever meets a deep value, duplicate object keys refused with their path, and a raw NUL byte
// explained as such. The limits and their values are the rules limits.120 to limits.123; how a
// full-precision double is read is limits.137.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::json_guard {

/// limits.120: the deepest nesting (open objects and arrays) of JSON that comes from outside the
/// process: provider answers, stream events, tool arguments, schemas, store answers.
inline constexpr unsigned kMaxDepth = 512;

/// limits.120: the deepest nesting of what the runtime keeps and reads back — conversation
/// documents, snapshots and session entries, and the normalized output of a provider plugin.
/// Larger than kMaxDepth by the room a document's own structure takes around an accepted value
/// (a tool input of kMaxDepth levels sits a few levels down in a message block).
inline constexpr unsigned kDocumentMaxDepth = 640;

/// Why a text was refused: where (a byte offset, or a JSON path for a duplicate key) and what.
struct Refusal {
    enum class Kind { kSyntax, kDepth, kDuplicateKey, kNul };
    std::string where;   // "byte offset 17" or "messages[2].id"
    std::string reason;  // "nesting deeper than 512 levels (the JSON depth limit)"
    std::size_t offset = kNoOffset;  // the byte offset, or kNoOffset for a duplicate key
    Kind kind = Kind::kSyntax;
    static constexpr std::size_t kNoOffset = static_cast<std::size_t>(-1);

    /// "<where>: <reason>", the form every caller words its error with.
    [[nodiscard]] std::string text() const { return where + ": " + reason; }
};

/// A SAX handler that forwards every event to `Handler`; the guards below derive from it and hide
/// the events they look at (RapidJSON calls a handler's events by name, not virtually).
template <typename Handler>
class Forward {
  public:
    using Ch = char;
    explicit Forward(Handler& inner) : inner_(inner) {}

    bool Null() { return inner_.Null(); }
    bool Bool(bool b) { return inner_.Bool(b); }
    bool Int(int i) { return inner_.Int(i); }
    bool Uint(unsigned u) { return inner_.Uint(u); }
    bool Int64(int64_t i) { return inner_.Int64(i); }
    bool Uint64(uint64_t u) { return inner_.Uint64(u); }
    bool Double(double d) { return inner_.Double(d); }
    bool RawNumber(const Ch* s, rapidjson::SizeType n, bool copy) {
        return inner_.RawNumber(s, n, copy);
    }
    bool String(const Ch* s, rapidjson::SizeType n, bool copy) { return inner_.String(s, n, copy); }
    bool Key(const Ch* s, rapidjson::SizeType n, bool copy) { return inner_.Key(s, n, copy); }
    bool StartObject() { return inner_.StartObject(); }
    bool EndObject(rapidjson::SizeType n) { return inner_.EndObject(n); }
    bool StartArray() { return inner_.StartArray(); }
    bool EndArray(rapidjson::SizeType n) { return inner_.EndArray(n); }

  protected:
    Handler& inner_;
};

/// A SAX handler that forwards every event to `Handler` and stops the parse (returns false) when
/// the nesting passes `max_depth`.
template <typename Handler>
class DepthGuard : public Forward<Handler> {
  public:
    DepthGuard(Handler& inner, unsigned max_depth)
        : Forward<Handler>(inner), max_depth_(max_depth) {}

    bool StartObject() { return open() && this->inner_.StartObject(); }
    bool EndObject(rapidjson::SizeType n) {
        --depth_;
        return this->inner_.EndObject(n);
    }
    bool StartArray() { return open() && this->inner_.StartArray(); }
    bool EndArray(rapidjson::SizeType n) {
        --depth_;
        return this->inner_.EndArray(n);
    }

    [[nodiscard]] bool exceeded() const { return exceeded_; }

  private:
    bool open() {
        if (++depth_ > max_depth_) {
            exceeded_ = true;
            return false;
        }
        return true;
    }

    unsigned max_depth_;
    unsigned depth_ = 0;
    bool exceeded_ = false;
};

namespace detail {

/// Whether two keys are equal, the cheap tests first: most keys of one object differ in length, in
/// their first byte or in their last ("type" and "text").
inline bool same_key(const char* a, std::size_t a_size, const char* b, std::size_t b_size) {
    return a_size == b_size && (a_size == 0 || (a[0] == b[0] && a[a_size - 1] == b[a_size - 1] &&
                                                std::memcmp(a, b, a_size) == 0));
}

/// limits.121: whether two of the keys in [begin, end) (each read by `key`, as a string_view) are
/// equal: pairwise for up to 8 (nothing allocated), sorted beyond.
template <typename It, typename KeyOf>
bool repeats(It begin, It end, KeyOf key) {
    if (end - begin <= 8) {
        for (auto a = begin; a != end; ++a) {
            const std::string_view ka = key(*a);
            for (auto b = a + 1; b != end; ++b) {
                const std::string_view kb = key(*b);
                if (same_key(ka.data(), ka.size(), kb.data(), kb.size())) return true;
            }
        }
        return false;
    }
    std::vector<std::string_view> sorted;
    sorted.reserve(static_cast<std::size_t>(end - begin));
    for (auto m = begin; m != end; ++m) sorted.push_back(key(*m));
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

}  // namespace detail

/// limits.121: a SAX handler that forwards every event to `Handler` and notes whether an object
/// closed with the same key twice, while the keys are hot, so that a text without one (the common
/// case) needs no second walk of its document. Only for a parse in place (kParseInsituFlag), where
/// a key's bytes stay where the event pointed; it only detects: the refusal, with its path, is
/// still find_duplicate_key's once the parse is done.
template <typename Handler>
class KeyWatch : public Forward<Handler> {
  public:
    explicit KeyWatch(Handler& inner) : Forward<Handler>(inner) {}

    bool StartObject() {
        opened_.push_back(keys_.size());
        return this->inner_.StartObject();
    }
    bool Key(const typename Forward<Handler>::Ch* s, rapidjson::SizeType n, bool copy) {
        keys_.emplace_back(s, n);
        return this->inner_.Key(s, n, copy);
    }
    bool EndObject(rapidjson::SizeType n) {
        const std::size_t first = opened_.back();
        opened_.pop_back();
        if (!duplicate_) duplicate_ = repeats(first);
        keys_.resize(first);
        return this->inner_.EndObject(n);
    }

    [[nodiscard]] bool duplicate_seen() const { return duplicate_; }

  private:
    [[nodiscard]] bool repeats(std::size_t first) const {
        return detail::repeats(keys_.begin() + static_cast<std::ptrdiff_t>(first), keys_.end(),
                               [](std::string_view k) { return k; });
    }

    std::vector<std::string_view> keys_;  ///< the keys of the objects still open, outermost first
    std::vector<std::size_t> opened_;     ///< where each open object's keys start in keys_
    bool duplicate_ = false;
};

/// limits.137: the doubles of a full-precision parse, read without RapidJSON 1.1's own
/// full-precision reader, which has undefined behaviour on valid JSON: a number whose digits are
/// all zero, with an exponent outside its fast path's range (`0e40`), normalizes a zero significand
/// with clz(0) and reads as garbage; a significand whose decimal exponent falls below its table of
/// cached powers of ten (`-57234331.27256170654E-341`) reads before the table and can crash. So
/// the parse runs at RapidJSON's default precision, whose reader has neither flaw: its integer
/// events (Int, Uint, Int64, Uint64) pass through as they are, and each Double it sends is read
/// again from the number's own text, which ends where the input stream stands, by
/// `std::from_chars`: correctly rounded, as RapidJSON's full precision means to be. A number too
/// small for a double reads as zero of its sign (as strtod reads it); one too large for a double
/// is refused as RapidJSON refuses a larger exponent, "Number too big to be stored in double.", at
/// the byte where it starts (RapidJSON would keep an infinity no writer can write).
template <typename Handler>
class ExactDoubles : public Forward<Handler> {
  public:
    /// `input` is the text being parsed and `stream` the stream reading it.
    ExactDoubles(Handler& inner, std::string_view input, const rapidjson::MemoryStream& stream)
        : Forward<Handler>(inner), input_(input), stream_(stream) {}

    bool Double(double approximate) {
        // RapidJSON sends the event once the number is consumed: its text ends at the stream's
        // position and starts after the last byte that cannot be part of a number (`[`, `,`, `:`,
        // white space or the start of the text).
        const std::size_t end = stream_.Tell();
        std::size_t start = end;
        while (start > 0 && number_byte(input_[start - 1])) --start;
        const char* first = input_.data() + start;
        const char* last = input_.data() + end;
        double d = 0;
        const auto ec = std::from_chars(first, last, d).ec;
        if (ec == std::errc::result_out_of_range) {
            if (power_of_ten(std::string_view(first, end - start)) > 0) {
                too_big_ = true;
                return false;
            }
            d = *first == '-' ? -0.0 : 0.0;
        } else if (ec != std::errc()) {
            d = approximate;  // not a number's text (NaN or Infinity under kParseNanAndInfFlag)
        }
        return this->inner_.Double(d);
    }

    /// Whether the parse stopped at a number too large for a double.
    [[nodiscard]] bool too_big() const { return too_big_; }

  private:
    static bool number_byte(char c) {
        return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
    }

    // The power of ten of the first non-zero digit of a number that has one (a number out of a
    // double's range does): above zero it overflowed, below it underflowed.
    static long power_of_ten(std::string_view text) {
        const auto e = static_cast<std::size_t>(
            std::find_if(text.begin(), text.end(), [](char c) { return c == 'e' || c == 'E'; }) -
            text.begin());
        const std::string_view mantissa = text.substr(0, e);
        const auto first = mantissa.find_first_of("123456789");
        const auto point = std::min(mantissa.find('.'), mantissa.size());
        long power = first < point ? static_cast<long>(point - first) - 1
                                   : -static_cast<long>(first - point);
        if (e < text.size()) {
            std::string_view exponent = text.substr(e + 1);
            if (exponent.front() == '+') exponent.remove_prefix(1);
            long value = 0;
            if (std::from_chars(exponent.data(), exponent.data() + exponent.size(), value).ec ==
                std::errc::result_out_of_range)
                value = exponent.front() == '-' ? -kFar : kFar;
            power += std::clamp(value, -kFar, kFar);
        }
        return power;
    }
    static constexpr long kFar = 1'000'000'000;  // past any double's exponent, either way

    std::string_view input_;
    const rapidjson::MemoryStream& stream_;
    bool too_big_ = false;
};

/// The reason for a depth refusal, naming the limit and its value.
inline std::string depth_reason(unsigned max_depth) {
    return "nesting deeper than " + std::to_string(max_depth) +
           " levels (the JSON depth limit)";
}

/// limits.122: a raw NUL byte anywhere in the text, refused as such (RapidJSON would call it a
/// missing closing quotation mark).
inline std::optional<Refusal> find_nul(std::string_view text) {
    const void* nul = text.empty() ? nullptr : std::memchr(text.data(), '\0', text.size());
    if (!nul) return std::nullopt;
    const auto at = static_cast<std::size_t>(static_cast<const char*>(nul) - text.data());
    return Refusal{"byte offset " + std::to_string(at),
                   "a raw NUL byte (JSON allows none; inside a string write \\u0000)", at,
                   Refusal::Kind::kNul};
}

/// Runs the text through `handler` as SAX events: iterative, depth-bounded, NUL explained.
/// Returns the refusal, or nullopt when the text was whole and valid. With
/// kParseFullPrecisionFlag the doubles are read as limits.137 says.
template <unsigned Flags = rapidjson::kParseDefaultFlags, typename Handler>
std::optional<Refusal> sax(std::string_view text, Handler& handler,
                           unsigned max_depth = kMaxDepth) {
    if (auto nul = find_nul(text)) return nul;
    rapidjson::MemoryStream ms(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(ms);
    rapidjson::Reader reader;
    auto refusal_of = [&](const rapidjson::ParseResult& result, bool deep,
                          bool too_big) -> std::optional<Refusal> {
        if (!result.IsError()) return std::nullopt;
        Refusal refusal{"byte offset " + std::to_string(result.Offset()), {}, result.Offset()};
        if (deep) {
            refusal.reason = depth_reason(max_depth);
            refusal.kind = Refusal::Kind::kDepth;
        } else {
            refusal.reason = rapidjson::GetParseError_En(
                too_big ? rapidjson::kParseErrorNumberTooBig : result.Code());
        }
        return refusal;
    };
    constexpr unsigned kIterative = Flags | rapidjson::kParseIterativeFlag;
    if constexpr ((Flags & rapidjson::kParseFullPrecisionFlag) != 0) {
        ExactDoubles<Handler> doubles(handler, text, ms);
        DepthGuard<ExactDoubles<Handler>> guard(doubles, max_depth);
        const auto result =
            reader.Parse<kIterative & ~unsigned{rapidjson::kParseFullPrecisionFlag}>(in, guard);
        return refusal_of(result, guard.exceeded(), doubles.too_big());
    } else {
        DepthGuard<Handler> guard(handler, max_depth);
        const auto result = reader.Parse<kIterative>(in, guard);
        return refusal_of(result, guard.exceeded(), false);
    }
}

namespace detail {

inline void append_path(std::string& out, const std::vector<std::string_view>& keys,
                        const std::vector<std::size_t>& indexes) {
    // keys[i] is empty for an array step, whose index is indexes[i].
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].data() == nullptr) {
            out += "[" + std::to_string(indexes[i]) + "]";
        } else {
            if (!out.empty()) out += '.';
            out.append(keys[i].substr(0, 80));
        }
    }
}

/// limits.121: whether any object under `value` has the same key twice. Builds no path: a
/// document without a duplicate, the common case, is walked once and nothing is allocated for
/// objects of up to 8 members.
template <typename Value>
bool any_duplicate(const Value& value) {
    if (value.IsObject()) {
        const auto begin = value.MemberBegin();
        const auto end = value.MemberEnd();
        if (repeats(begin, end, [](const auto& m) {
                return std::string_view(m.name.GetString(), m.name.GetStringLength());
            }))
            return true;
        for (auto m = begin; m != end; ++m) {
            if (any_duplicate(m->value)) return true;
        }
    } else if (value.IsArray()) {
        for (const auto& element : value.GetArray()) {
            if (any_duplicate(element)) return true;
        }
    }
    return false;
}

/// limits.121: the first duplicate key of any object under `value`, as its path. Depth is
/// already bounded by the parse, so this recursion is too.
template <typename Value>
bool find_duplicate(const Value& value, std::vector<std::string_view>& keys,
                    std::vector<std::size_t>& indexes) {
    if (value.IsObject()) {
        const auto n = value.MemberCount();
        auto name = [](const auto& m) {
            return std::string_view(m.name.GetString(), m.name.GetStringLength());
        };
        std::optional<std::string_view> duplicate;
        if (n <= 8) {
            for (auto a = value.MemberBegin(); a != value.MemberEnd() && !duplicate; ++a) {
                for (auto b = a + 1; b != value.MemberEnd(); ++b) {
                    if (name(*a) == name(*b)) {
                        duplicate = name(*a);
                        break;
                    }
                }
            }
        } else {
            std::vector<std::string_view> sorted;
            sorted.reserve(n);
            for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) sorted.push_back(name(*m));
            std::sort(sorted.begin(), sorted.end());
            auto it = std::adjacent_find(sorted.begin(), sorted.end());
            if (it != sorted.end()) duplicate = *it;
        }
        if (duplicate) {
            keys.push_back(*duplicate);
            indexes.push_back(0);
            return true;
        }
        for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) {
            keys.emplace_back(m->name.GetString(), m->name.GetStringLength());
            indexes.push_back(0);
            if (find_duplicate(m->value, keys, indexes)) return true;
            keys.pop_back();
            indexes.pop_back();
        }
    } else if (value.IsArray()) {
        for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
            keys.emplace_back();
            indexes.push_back(i);
            if (find_duplicate(value[i], keys, indexes)) return true;
            keys.pop_back();
            indexes.pop_back();
        }
    }
    return false;
}

}  // namespace detail

/// limits.121: refuses a value holding an object with the same key twice, naming its path
/// ("messages[2].id"; a top-level key is its bare name).
template <typename Value>
std::optional<Refusal> find_duplicate_key(const Value& value) {
    if (!detail::any_duplicate(value)) return std::nullopt;
    std::vector<std::string_view> keys;
    std::vector<std::size_t> indexes;
    if (!detail::find_duplicate(value, keys, indexes)) return std::nullopt;
    std::string path;
    detail::append_path(path, keys, indexes);
    return Refusal{path, "duplicate key \"" + std::string(keys.back().substr(0, 80)) +
                             "\" (a key may appear once in an object)",
                   Refusal::kNoOffset, Refusal::Kind::kDuplicateKey};
}

/// Parses `text` into `doc` under limits.120 to limits.122: iterative, at most `max_depth`
/// levels, no duplicate key, no raw NUL. On a refusal `doc` is left null.
template <unsigned Flags = rapidjson::kParseDefaultFlags, typename Document>
std::optional<Refusal> parse(Document& doc, std::string_view text,
                             unsigned max_depth = kMaxDepth) {
    std::optional<Refusal> refusal;
    auto generate = [&](Document& target) {
        refusal = sax<Flags>(text, target, max_depth);
        return !refusal.has_value();
    };
    doc.SetNull();
    doc.Populate(generate);
    if (!refusal) refusal = find_duplicate_key(static_cast<const typename Document::ValueType&>(doc));
    if (refusal) doc.SetNull();
    return refusal;
}

}  // namespace nucleo::json_guard
