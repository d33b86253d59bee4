// The one guarded way every JSON text from outside is read, in libnucleo and in the in-tree
// provider plugins alike (header-only, so a plugin carries its own copy of the code and still
// loads alone): iterative parsing (no recursion on the call stack however deep the text), a depth
// limit checked while parsing so nothing recursive downstream (Accept, CopyFrom, the readers)
// ever meets a deep value, duplicate object keys refused with their path, and a raw NUL byte
// explained as such. The limits and their values are the rules limits.120 to limits.123.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstddef>
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

/// A SAX handler that forwards every event to `Handler` and stops the parse (returns false) when
/// the nesting passes `max_depth`.
template <typename Handler>
class DepthGuard {
  public:
    using Ch = char;
    DepthGuard(Handler& inner, unsigned max_depth) : inner_(inner), max_depth_(max_depth) {}

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
    bool StartObject() { return open() && inner_.StartObject(); }
    bool EndObject(rapidjson::SizeType n) {
        --depth_;
        return inner_.EndObject(n);
    }
    bool StartArray() { return open() && inner_.StartArray(); }
    bool EndArray(rapidjson::SizeType n) {
        --depth_;
        return inner_.EndArray(n);
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

    Handler& inner_;
    unsigned max_depth_;
    unsigned depth_ = 0;
    bool exceeded_ = false;
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
/// Returns the refusal, or nullopt when the text was whole and valid.
template <unsigned Flags = rapidjson::kParseDefaultFlags, typename Handler>
std::optional<Refusal> sax(std::string_view text, Handler& handler,
                           unsigned max_depth = kMaxDepth) {
    if (auto nul = find_nul(text)) return nul;
    rapidjson::MemoryStream ms(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(ms);
    rapidjson::Reader reader;
    DepthGuard<Handler> guard(handler, max_depth);
    const rapidjson::ParseResult result =
        reader.Parse<Flags | rapidjson::kParseIterativeFlag>(in, guard);
    if (!result.IsError()) return std::nullopt;
    Refusal refusal{"byte offset " + std::to_string(result.Offset()), {}, result.Offset()};
    refusal.reason = guard.exceeded() ? depth_reason(max_depth)
                                      : std::string(rapidjson::GetParseError_En(result.Code()));
    if (guard.exceeded()) refusal.kind = Refusal::Kind::kDepth;
    return refusal;
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
