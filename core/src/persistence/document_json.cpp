// The block half of the conversation document codec (conversation.30,
// docs/conversation-document.md): positioned errors, member helpers and read_block. Writing is a
// template in document_json.hpp.
#include "persistence/document_json.hpp"

#include "common/json_text.hpp"
#include "common/utf8.hpp"

#include <rapidjson/error/en.h>

#include <string>

namespace nucleo::internal {

std::string JsonPath::str() const {
    std::string prefix = parent_ ? parent_->str() : std::string();
    if (index_ != kNoIndex) return prefix + "[" + std::to_string(index_) + "]";
    if (prefix.empty()) return std::string(name_);
    if (name_.empty()) return prefix;
    return prefix + "." + std::string(name_);
}

void refuse(const JsonPath& path, const std::string& what) {
    const std::string where = path.str();
    throw Error(ErrorKind::kInvalidArgument, where.empty() ? what : where + ": " + what);
}

namespace {

[[noreturn]] void refuse_type(const rapidjson::Value& v, const JsonPath& path,
                              const char* expected) {
    refuse(path, std::string("expected ") + expected + ", found " + json_type_word(v));
}

std::string string_of(const rapidjson::Value& v) {
    return std::string(v.GetString(), v.GetStringLength());
}

}  // namespace

const rapidjson::Value* find_member(const rapidjson::Value& object, const char* name) {
    auto it = object.FindMember(name);
    return it == object.MemberEnd() ? nullptr : &it->value;
}

void expect_object(const rapidjson::Value& value, const JsonPath& path) {
    if (!value.IsObject()) refuse_type(value, path, "an object");
}

void expect_array(const rapidjson::Value& value, const JsonPath& path) {
    if (!value.IsArray()) refuse_type(value, path, "an array");
}

std::string required_string(const rapidjson::Value& object, const char* name,
                            const JsonPath& path) {
    const rapidjson::Value* v = find_member(object, name);
    if (!v) refuse(path.key(name), "missing (a string is required)");
    if (!v->IsString()) refuse_type(*v, path.key(name), "a string");
    return string_of(*v);
}

std::string optional_string(const rapidjson::Value& object, const char* name, const JsonPath& path,
                            std::string fallback) {
    const rapidjson::Value* v = find_member(object, name);
    if (!v) return fallback;
    if (!v->IsString()) refuse_type(*v, path.key(name), "a string");
    return string_of(*v);
}

bool optional_bool(const rapidjson::Value& object, const char* name, const JsonPath& path,
                   bool fallback) {
    const rapidjson::Value* v = find_member(object, name);
    if (!v) return fallback;
    if (!v->IsBool()) refuse_type(*v, path.key(name), "a boolean");
    return v->GetBool();
}

std::string to_json_text(const rapidjson::Value& value) {
    return json_compact(value);
}

std::string optional_json_text(const rapidjson::Value& object, const char* name,
                               std::string fallback) {
    const rapidjson::Value* v = find_member(object, name);
    if (!v) return fallback;
    return to_json_text(*v);
}

// limits.120: a document or snapshot is read under kDocumentMaxDepth, so nothing recursive that
// follows (the readers, Accept, CopyFrom) can meet a deeper value.
void parse_json(rapidjson::Document& doc, std::string_view json, std::string_view where) {
    parse_json_guarded(doc, json, where);
}

namespace {

/// The walk behind check_utf8: the first string or key, in document order, that is not UTF-8.
/// Recursive like the readers that follow it: the parse bounded the depth (limits.120).
void refuse_invalid_utf8(const rapidjson::Value& v, const JsonPath& path) {
    if (v.IsString()) {
        const std::size_t at = first_invalid_utf8({v.GetString(), v.GetStringLength()});
        if (at != std::string_view::npos)
            refuse(path, "not valid UTF-8 at byte " + std::to_string(at) +
                             " of the string; a conversation document is UTF-8 text");
    } else if (v.IsObject()) {
        std::size_t index = 0;
        for (const auto& m : v.GetObject()) {
            const std::string_view key(m.name.GetString(), m.name.GetStringLength());
            if (const std::size_t at = first_invalid_utf8(key); at != std::string_view::npos)
                refuse(path, (path.str().empty() ? "the key of top-level member "
                                                 : "the key of member ") +
                                 std::to_string(index) + " is not valid UTF-8 at byte " +
                                 std::to_string(at) + "; a conversation document is UTF-8 text");
            refuse_invalid_utf8(m.value, path.key(key));
            ++index;
        }
    } else if (v.IsArray()) {
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) refuse_invalid_utf8(v[i], path.at(i));
    }
}

}  // namespace

void check_utf8(const rapidjson::Value& value, std::string_view json, const JsonPath& path) {
    if (first_invalid_utf8_in_json(json) == std::string_view::npos) return;
    refuse_invalid_utf8(value, path);
    // Not reached for a text the guarded reader accepted: its invalid bytes are in its strings.
    refuse(path, "not valid UTF-8 at byte " + std::to_string(first_invalid_utf8_in_json(json)));
}

namespace {

/// Image and file attachments carry exactly one of `data` and `url`.
void read_source(const rapidjson::Value& v, const JsonPath& path, std::string& data,
                 std::string& url) {
    data = optional_string(v, "data", path);
    url = optional_string(v, "url", path);
    const bool has_data = find_member(v, "data") != nullptr;
    const bool has_url = find_member(v, "url") != nullptr;
    if (has_data == has_url) {
        refuse(path, has_data ? "carries both \"data\" and \"url\" (exactly one is allowed)"
                              : "carries neither \"data\" nor \"url\" (exactly one is required)");
    }
}

/// A JSON-valued field that must be an object (tool input, tool schema).
std::string object_json(const rapidjson::Value& v, const char* name, const JsonPath& path,
                        std::string fallback) {
    const rapidjson::Value* member = find_member(v, name);
    if (member && !member->IsObject()) refuse_type(*member, path.key(name), "an object");
    return optional_json_text(v, name, std::move(fallback));
}

}  // namespace

ContentBlock read_block(const rapidjson::Value& v, const JsonPath& path, bool inside_tool_result) {
    expect_object(v, path);
    const std::string type = required_string(v, "type", path);
    const JsonPath type_path = path.key("type");
    // A tool's result may carry a pojo (artifacts.4: its artifacts are registered from there, as
    // an MCP tool's large text is, mcp.34); it is read back as it was written.
    if (inside_tool_result && type != "text" && type != "json" && type != "image" &&
        type != "file" && type != "pojo") {
        if (type == "tool_use" || type == "tool_result" || type == "thinking" ||
            type == "redacted_thinking" || type == "skill" || type == "tool_definition" ||
            type == "provider_block") {
            refuse(type_path, "block type \"" + type +
                                  "\" is not allowed inside a tool_result (text, json, image, "
                                  "file, pojo)");
        }
        refuse(type_path, "unknown block type \"" + type + "\"");
    }
    if (type == "text") return TextBlock{required_string(v, "text", path)};
    if (type == "json") {
        const rapidjson::Value* json = find_member(v, "json");
        if (!json) refuse(path.key("json"), "missing (a JSON value is required)");
        return JsonBlock{to_json_text(*json)};
    }
    if (type == "pojo") {
        PojoBlock b;
        b.type_name = required_string(v, "type_name", path);
        const rapidjson::Value* value = find_member(v, "value");
        if (!value) refuse(path.key("value"), "missing (a JSON value is required)");
        b.value_json = to_json_text(*value);
        return b;
    }
    if (type == "image") {
        ImageBlock b;
        b.media_type = required_string(v, "media_type", path);
        read_source(v, path, b.data, b.url);
        return b;
    }
    if (type == "file") {
        FileBlock b;
        b.media_type = required_string(v, "media_type", path);
        b.name = optional_string(v, "name", path);
        read_source(v, path, b.data, b.url);
        return b;
    }
    if (type == "tool_use") {
        ToolUseBlock b;
        b.id = required_string(v, "id", path);
        b.name = required_string(v, "name", path);
        b.input_json = object_json(v, "input", path, "{}");
        return b;
    }
    if (type == "tool_result") {
        ToolResultBlock b;
        b.tool_use_id = required_string(v, "tool_use_id", path);
        b.is_error = optional_bool(v, "is_error", path, false);
        if (const rapidjson::Value* content = find_member(v, "content")) {
            const JsonPath content_path = path.key("content");
            expect_array(*content, content_path);
            b.content.reserve(content->Size());
            for (rapidjson::SizeType i = 0; i < content->Size(); ++i) {
                b.content.push_back(read_block((*content)[i], content_path.at(i), true));
            }
        }
        return b;
    }
    if (type == "thinking") {
        return ThinkingBlock{required_string(v, "thinking", path),
                             optional_string(v, "signature", path)};
    }
    if (type == "redacted_thinking") return RedactedThinkingBlock{required_string(v, "data", path)};
    if (type == "skill") {
        return SkillBlock{required_string(v, "name", path), required_string(v, "content", path)};
    }
    if (type == "tool_definition") {
        ToolDefinitionBlock b;
        b.name = required_string(v, "name", path);
        b.description = optional_string(v, "description", path);
        b.schema_json = object_json(v, "schema", path, b.schema_json);
        return b;
    }
    if (type == "provider_block") {
        // answers.110: a provider's own block, kept verbatim; its "type" names it in transcripts.
        ProviderBlock b;
        b.wire_family = required_string(v, "wire_family", path);
        const rapidjson::Value* block = find_member(v, "block");
        if (!block) refuse(path.key("block"), "missing (the provider's block, an object)");
        expect_object(*block, path.key("block"));
        b.type = required_string(*block, "type", path.key("block"));
        b.json = to_json_text(*block);
        return b;
    }
    refuse(type_path, "unknown block type \"" + type + "\"");
}

}  // namespace nucleo::internal
