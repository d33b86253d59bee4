// Internal: the JSON codec of content blocks shared by the conversation document
// (document_read.cpp, document_write.cpp) and the JSON form of a PreparedConversation
// (render/prepared_json.cpp). RapidJSON stays inside libnucleo: this header is private.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <variant>

#include "common/json_guard/json_guard.hpp"
#include "nucleo/content.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {

/// A position inside a JSON document ("messages[3].blocks[1].type"), built as a chain of stack
/// frames so the happy path never formats a string: only an error renders it.
class JsonPath {
  public:
    /// The root; `name` may be empty (then child keys print without a leading dot).
    explicit JsonPath(std::string_view name = {}) : name_(name) {}
    JsonPath(const JsonPath* parent, std::string_view key) : parent_(parent), name_(key) {}
    JsonPath(const JsonPath* parent, std::size_t index) : parent_(parent), index_(index) {}

    [[nodiscard]] JsonPath key(std::string_view k) const { return JsonPath(this, k); }
    [[nodiscard]] JsonPath at(std::size_t i) const { return JsonPath(this, i); }
    [[nodiscard]] std::string str() const;

  private:
    const JsonPath* parent_ = nullptr;
    std::string_view name_;
    std::size_t index_ = kNoIndex;
    static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
};

/// Throws Error(kInvalidArgument) "<path>: <what>".
[[noreturn]] void refuse(const JsonPath& path, const std::string& what);

/// Writes the JSON text `json` through `writer` event by event (SAX), so the text is validated,
/// re-emitted canonically and indented like its surroundings. Refuses invalid text at `path`.
template <typename Writer>
void write_json_text(Writer& writer, std::string_view json, const JsonPath& path) {
    // limits.120: iterative and depth-bounded like every other read of a document.
    auto refusal = json_guard::sax<rapidjson::kParseFullPrecisionFlag>(
        json, writer, json_guard::kDocumentMaxDepth);
    if (refusal) refuse(path, "not valid JSON at " + refusal->text());
}

/// Runs `write(writer)` on a compact Writer, or on a PrettyWriter indented by two spaces, and
/// returns the text. `write` is a generic callable (it is instantiated for both writers).
template <typename Fn>
std::string write_json(bool pretty, Fn&& write) {
    rapidjson::StringBuffer buffer;
    if (pretty) {
        rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
        writer.SetIndent(' ', 2);
        write(writer);
    } else {
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        write(writer);
    }
    return std::string(buffer.GetString(), buffer.GetSize());
}

namespace string_detail {

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

/// The output stream of a RapidJSON Writer or PrettyWriter, its protected `os_`, named through a
/// pointer to member formed in a derived class (the language's way to reach a protected member).
template <typename Writer>
struct WriterOutput : Writer {
    static auto& of(Writer& writer) { return *(writer.*(&WriterOutput::os_)); }
};

}  // namespace string_detail

/// conversation.104: writes `s` as a JSON string, byte for byte what RapidJSON's
/// `Writer::String` writes (`\"` `\\` `\b` `\f` `\n` `\r` `\t`, `\u00XX` in upper-case hex
/// for the other bytes below 0x20, every other byte as it is), but each run of bytes that needs no
/// escape is found eight bytes at a time and copied in one piece, where RapidJSON's Writer
/// without SSE2 looks up and copies each byte alone. The prefix (the comma, the colon, a
/// PrettyWriter's indent) is the Writer's own, written by RawValue with the opening quote.
template <typename Writer>
void write_string(Writer& writer, std::string_view s) {
    writer.RawValue("\"", 1, rapidjson::kStringType);
    auto& out = string_detail::WriterOutput<Writer>::of(writer);
    const char* p = s.data();
    const char* const end = p + s.size();
    while (true) {
        const char* run = p;
        for (std::uint64_t word = 0; end - p >= 8; p += 8) {
            std::memcpy(&word, p, sizeof word);
            if (string_detail::word_needs_escape(word)) break;
        }
        while (p != end && string_detail::kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
        if (p != run) std::memcpy(out.Push(static_cast<std::size_t>(p - run)), run, p - run);
        if (p == end) break;
        const auto c = static_cast<unsigned char>(*p++);
        const char escape = string_detail::kEscape[c];
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
    out.Put('"');
}

/// Writes the fields of a tool definition — name, description, schema — inside an open object:
/// the one shape a tool has in the document's tools list, in a tool_definition block and in a
/// prepared conversation's tool_definitions.
template <typename Writer>
void write_tool_fields(Writer& w, const ToolDefinitionBlock& tool, const JsonPath& path) {
    w.Key("name");
    write_string(w, tool.name);
    w.Key("description");
    write_string(w, tool.description);
    w.Key("schema");
    write_json_text(w, tool.schema_json, path.key("schema"));
}

/// Writes a block as the document spells it (docs/conversation-document.md: Anthropic field names).
/// `path` names the block in errors (a JSON-valued field whose text is not JSON).
template <typename Writer>
void write_block(Writer& w, const ContentBlock& block, const JsonPath& path) {
    w.StartObject();
    w.Key("type");
    w.String(block_type_name(block));
    struct Fields {
        Writer& w;
        const JsonPath& path;
        void str(const char* key, const std::string& value) const {
            w.Key(key);
            write_string(w, value);
        }
        void json(const char* key, const std::string& value) const {
            w.Key(key);
            write_json_text(w, value, path.key(key));
        }
        void operator()(const TextBlock& b) const { str("text", b.text); }
        void operator()(const JsonBlock& b) const { json("json", b.json); }
        void operator()(const PojoBlock& b) const {
            str("type_name", b.type_name);
            json("value", b.value_json);
        }
        void operator()(const ImageBlock& b) const {
            str("media_type", b.media_type);
            if (!b.url.empty())
                str("url", b.url);
            else
                str("data", b.data);
        }
        void operator()(const FileBlock& b) const {
            str("media_type", b.media_type);
            str("name", b.name);
            if (!b.url.empty())
                str("url", b.url);
            else
                str("data", b.data);
        }
        void operator()(const ToolUseBlock& b) const {
            str("id", b.id);
            str("name", b.name);
            json("input", b.input_json);
        }
        void operator()(const ToolResultBlock& b) const {
            str("tool_use_id", b.tool_use_id);
            w.Key("is_error");
            w.Bool(b.is_error);
            w.Key("content");
            w.StartArray();
            const JsonPath content = path.key("content");
            for (std::size_t i = 0; i < b.content.size(); ++i) {
                write_block(w, b.content[i], content.at(i));
            }
            w.EndArray();
        }
        void operator()(const ThinkingBlock& b) const {
            str("thinking", b.thinking);
            str("signature", b.signature);
        }
        void operator()(const RedactedThinkingBlock& b) const { str("data", b.data); }
        void operator()(const SkillBlock& b) const {
            str("name", b.name);
            str("content", b.content);
        }
        void operator()(const ToolDefinitionBlock& b) const { write_tool_fields(w, b, path); }
    };
    std::visit(Fields{w, path}, block.value);
    w.EndObject();
}

/// Reads a block at `path`. `inside_tool_result` restricts the kinds to what a tool result may
/// hold (text, json, image, file). Unknown fields are ignored; an unknown type is refused.
ContentBlock read_block(const rapidjson::Value& value, const JsonPath& path,
                        bool inside_tool_result = false);

/// Member lookup helpers: each refuses a wrong type naming `path.key(name)`.
const rapidjson::Value* find_member(const rapidjson::Value& object, const char* name);
std::string required_string(const rapidjson::Value& object, const char* name, const JsonPath& path);
std::string optional_string(const rapidjson::Value& object, const char* name, const JsonPath& path,
                            std::string fallback = {});
bool optional_bool(const rapidjson::Value& object, const char* name, const JsonPath& path,
                   bool fallback);
/// A JSON-valued member as compact canonical text; `fallback` when absent.
std::string optional_json_text(const rapidjson::Value& object, const char* name,
                               std::string fallback);
/// Refuses unless `value` is an object / array.
void expect_object(const rapidjson::Value& value, const JsonPath& path);
void expect_array(const rapidjson::Value& value, const JsonPath& path);

/// Compact canonical text of a JSON value.
std::string to_json_text(const rapidjson::Value& value);

/// Parses a whole JSON text into `doc`; refuses with "byte offset N: <reason>" (prefixed by
/// `where` when not empty).
void parse_json(rapidjson::Document& doc, std::string_view json, std::string_view where = {});

}  // namespace nucleo::internal
