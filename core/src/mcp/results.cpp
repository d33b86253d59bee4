#include "mcp/results.hpp"

#include <string>
#include <string_view>

#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::mcp_internal {
namespace {

std::string_view string_member(const rapidjson::Value& v, const char* key) {
    if (!v.IsObject()) return {};
    const auto m = v.FindMember(key);
    if (m == v.MemberEnd() || !m->value.IsString()) return {};
    return {m->value.GetString(), m->value.GetStringLength()};
}

bool is_image(std::string_view media_type) {
    return media_type.rfind("image/", 0) == 0;
}

/// mcp.31: an embedded resource: its text in words, an image blob as an image, another blob
/// named with its size (the model cannot read base64 of an unknown type).
ContentBlock resource_block(const rapidjson::Value& resource) {
    const std::string uri(string_member(resource, "uri"));
    const std::string_view mime = string_member(resource, "mimeType");
    if (resource.IsObject() && resource.HasMember("text")) {
        return TextBlock{"Resource " + uri + ":\n" + std::string(string_member(resource, "text"))};
    }
    const std::string_view blob = string_member(resource, "blob");
    if (is_image(mime) && !blob.empty())
        return ImageBlock{std::string(mime), std::string(blob), {}};
    return TextBlock{"[resource " + uri + " (" + (mime.empty() ? "no type" : std::string(mime)) +
                     "), " + std::to_string(blob.size() / 4 * 3) + " bytes, not shown]"};
}

ContentBlock content_block(const rapidjson::Value& item) {
    const std::string_view type = string_member(item, "type");
    if (type == "text") return TextBlock{std::string(string_member(item, "text"))};
    if (type == "image") {
        // mcp.30: an image goes to the model as an image block.
        return ImageBlock{std::string(string_member(item, "mimeType")),
                          std::string(string_member(item, "data")),
                          {}};
    }
    if (type == "resource") {
        const auto r = item.FindMember("resource");
        if (r != item.MemberEnd()) return resource_block(r->value);
    }
    if (type == "resource_link") {
        return TextBlock{"Resource link: " + std::string(string_member(item, "name")) + " " +
                         std::string(string_member(item, "uri"))};
    }
    if (type == "audio") {
        return TextBlock{"[audio (" + std::string(string_member(item, "mimeType")) +
                         "), not shown]"};
    }
    return TextBlock{"[content of type '" + std::string(type) + "', not shown]"};
}

}  // namespace

mcp::CallResult read_call_result(const rapidjson::Value& result) {
    if (!result.IsObject())
        throw Error(ErrorKind::kProtocol, "a tools/call result that is not an object");
    mcp::CallResult out;
    const auto content = result.FindMember("content");
    if (content != result.MemberEnd()) {
        if (!content->value.IsArray())
            throw Error(ErrorKind::kProtocol, "a tools/call result whose content is not an array");
        for (const auto& item : content->value.GetArray())
            out.content.push_back(content_block(item));
    }
    // mcp.32: structuredContent is the result's data; a server SHOULD also give it as text, and
    // when it gave no content at all, the data itself is what the model reads.
    const auto structured = result.FindMember("structuredContent");
    if (structured != result.MemberEnd() && out.content.empty())
        out.content.emplace_back(JsonBlock{internal::json_compact(structured->value)});
    if (content == result.MemberEnd() && structured == result.MemberEnd())
        throw Error(ErrorKind::kProtocol, "a tools/call result with no content");
    // mcp.33: isError is the tool's own failure, for the model to read.
    const auto is_error = result.FindMember("isError");
    out.is_error =
        is_error != result.MemberEnd() && is_error->value.IsBool() && is_error->value.GetBool();
    return out;
}

void read_tools(const rapidjson::Value& result, std::string_view server,
                std::vector<mcp::Tool>& out) {
    if (!result.IsObject())
        throw Error(ErrorKind::kProtocol, "a tools/list result that is not an object");
    const auto tools = result.FindMember("tools");
    if (tools == result.MemberEnd() || !tools->value.IsArray())
        throw Error(ErrorKind::kProtocol, "a tools/list result without a tools array");
    for (const auto& t : tools->value.GetArray()) {
        const std::string_view name = string_member(t, "name");
        const auto schema = t.IsObject() ? t.FindMember("inputSchema") : t.MemberEnd();
        if (name.empty() || schema == t.MemberEnd() || !schema->value.IsObject()) {
            NUCLEO_LOG_WARN(
                "MCP server '{}': a listed tool without a name or an object "
                "inputSchema is left out",
                server);
            continue;
        }
        mcp::Tool tool;
        tool.name = name;
        tool.title = string_member(t, "title");
        tool.description = string_member(t, "description");
        tool.input_schema_json = internal::json_compact(schema->value);
        const auto output = t.FindMember("outputSchema");
        if (output != t.MemberEnd() && output->value.IsObject())
            tool.output_schema_json = internal::json_compact(output->value);
        out.push_back(std::move(tool));
    }
}

}  // namespace nucleo::mcp_internal
