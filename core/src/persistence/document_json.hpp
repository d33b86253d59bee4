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

#include "nucleo/wire/json_escape.hpp"
#include "nucleo/wire/json_guard.hpp"
#include "nucleo/content.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {

/// conversation.104: the core's JSON strings are written by the shared escaper.
using json_escape::write_string;

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

/// conversation.105: write_json_text through the escaping Writer: a text already in the form the
/// events would write (json_escape::is_canonical; what the core itself writes, so nearly every
/// tool input and schema) is copied as it is, anything else goes through the events. The bytes
/// are the same either way.
template <typename OutputStream>
void write_json_text(json_escape::Writer<OutputStream>& writer, std::string_view json,
                     const JsonPath& path) {
    if (json_escape::is_canonical(json, json_guard::kDocumentMaxDepth)) {
        writer.RawJson(json, json_escape::value_type(json));
        return;
    }
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
        json_escape::StringWriter writer(buffer);
        write(writer);
    }
    return std::string(buffer.GetString(), buffer.GetSize());
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
        void operator()(const ProviderBlock& b) const {
            str("wire_family", b.wire_family);
            json("block", b.json);
        }
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

/// conversation.106: refuses a read document (kInvalidArgument, as every malformed document)
/// whose strings or keys are not UTF-8 once read, naming the JSON path of the first such string
/// and the byte offset within it (`messages[3].blocks[0].text: not valid UTF-8 at byte 0 of the
/// string ...`; a key by the object holding it). `json` is the text `value` was parsed from: when
/// it is valid UTF-8 and holds no escape of a lone surrogate (one SIMD pass and a memchr, the only
/// cost of a valid document), nothing is walked.
void check_utf8(const rapidjson::Value& value, std::string_view json, const JsonPath& path);

/// Parses a whole JSON text into `doc`; refuses with "byte offset N: <reason>" (prefixed by
/// `where` when not empty).
void parse_json(rapidjson::Document& doc, std::string_view json, std::string_view where = {});

}  // namespace nucleo::internal
