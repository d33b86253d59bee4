// conversation.107, conversation.109: the UTF-8 walk over what the host hands a conversation and
// over what a conversation hands a plugin (utf8_check.hpp).
#include "conversation/utf8_check.hpp"

#include <variant>

#include "common/utf8.hpp"
#include "nucleo/errors.hpp"
#include "persistence/document_json.hpp"

namespace nucleo::internal {

namespace {

/// Walks the texts of blocks, stopping at the first that is not UTF-8. The path is a chain of
/// stack frames (JsonPath) and is rendered only for a fault, so a valid message costs one
/// validation per field and no allocation.
class Walk {
  public:
    std::optional<Utf8Fault> fault;

    bool text(std::string_view value, const JsonPath& path) {
        return note(first_invalid_utf8(value), path);
    }
    /// A JSON-valued field: its bytes, and the \u escapes that would read as lone surrogates.
    bool json(std::string_view value, const JsonPath& path) {
        return note(first_invalid_utf8_in_json(value), path);
    }

    bool block(const ContentBlock& block, const JsonPath& path) {
        return std::visit([&](const auto& b) { return fields(b, path); }, block.value);
    }

    bool tool(const ToolDefinitionBlock& b, const JsonPath& path) { return fields(b, path); }

  private:
    bool note(std::size_t at, const JsonPath& path) {
        if (at == std::string_view::npos) return true;
        fault = Utf8Fault{path.str(), at};
        return false;
    }

    bool fields(const TextBlock& b, const JsonPath& p) { return text(b.text, p.key("text")); }
    bool fields(const JsonBlock& b, const JsonPath& p) { return json(b.json, p.key("json")); }
    bool fields(const PojoBlock& b, const JsonPath& p) {
        return text(b.type_name, p.key("type_name")) && json(b.value_json, p.key("value"));
    }
    bool fields(const ImageBlock& b, const JsonPath& p) {
        return text(b.media_type, p.key("media_type")) && text(b.data, p.key("data")) &&
               text(b.url, p.key("url"));
    }
    bool fields(const FileBlock& b, const JsonPath& p) {
        return text(b.media_type, p.key("media_type")) && text(b.name, p.key("name")) &&
               text(b.data, p.key("data")) && text(b.url, p.key("url"));
    }
    bool fields(const ToolUseBlock& b, const JsonPath& p) {
        return text(b.id, p.key("id")) && text(b.name, p.key("name")) &&
               json(b.input_json, p.key("input"));
    }
    bool fields(const ToolResultBlock& b, const JsonPath& p) {
        if (!text(b.tool_use_id, p.key("tool_use_id"))) return false;
        const JsonPath content = p.key("content");
        for (std::size_t i = 0; i < b.content.size(); ++i) {
            if (!block(b.content[i], content.at(i))) return false;
        }
        return true;
    }
    bool fields(const ThinkingBlock& b, const JsonPath& p) {
        return text(b.thinking, p.key("thinking")) && text(b.signature, p.key("signature"));
    }
    bool fields(const RedactedThinkingBlock& b, const JsonPath& p) {
        return text(b.data, p.key("data"));
    }
    bool fields(const SkillBlock& b, const JsonPath& p) {
        return text(b.name, p.key("name")) && text(b.content, p.key("content"));
    }
    bool fields(const ToolDefinitionBlock& b, const JsonPath& p) {
        return text(b.name, p.key("name")) && text(b.description, p.key("description")) &&
               json(b.schema_json, p.key("schema"));
    }
    bool fields(const ProviderBlock& b, const JsonPath& p) {
        return text(b.wire_family, p.key("wire_family")) && text(b.type, p.key("block.type")) &&
               json(b.json, p.key("block"));
    }
};

bool blocks(Walk& walk, const std::vector<ContentBlock>& list, const JsonPath& path) {
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (!walk.block(list[i], path.at(i))) return false;
    }
    return true;
}

}  // namespace

std::optional<Utf8Fault> find_invalid_utf8(const Message& message) {
    Walk walk;
    const JsonPath root;
    (void)(walk.text(message.id, root.key("id")) &&
           walk.text(message.provider_message_id, root.key("provider_message_id")) &&
           walk.text(message.thread_digest, root.key("thread_digest")) &&
           blocks(walk, message.blocks, root.key("blocks")));
    return walk.fault;
}

std::optional<Utf8Fault> find_invalid_utf8(const ContentBlock& block, std::string_view where) {
    Walk walk;
    walk.block(block, JsonPath(where));
    return walk.fault;
}

std::optional<Utf8Fault> find_invalid_utf8(const ToolDefinitionBlock& tool,
                                           std::string_view where) {
    Walk walk;
    walk.tool(tool, JsonPath(where));
    return walk.fault;
}

std::optional<Utf8Fault> find_invalid_utf8(const PreparedConversation& prepared) {
    Walk walk;
    const JsonPath root;
    if (!blocks(walk, prepared.system_blocks, root.key("system_blocks"))) return walk.fault;
    const JsonPath tools = root.key("tool_definitions");
    for (std::size_t i = 0; i < prepared.tool_definitions.size(); ++i) {
        if (!walk.tool(prepared.tool_definitions[i], tools.at(i))) return walk.fault;
    }
    const JsonPath turns = root.key("turns");
    for (std::size_t i = 0; i < prepared.turns.size(); ++i) {
        const JsonPath turn = turns.at(i);
        if (!walk.text(prepared.turns[i].message_id, turn.key("message_id")) ||
            !blocks(walk, prepared.turns[i].blocks, turn.key("blocks")))
            return walk.fault;
    }
    return std::nullopt;
}

void check_message_utf8(const Message& message, std::size_t position) {
    const std::optional<Utf8Fault> fault = find_invalid_utf8(message);
    if (!fault) return;
    std::string who = "message " + std::to_string(position);
    if (fault->where != "id") who += " (id '" + message.id + "')";
    refuse_invalid_utf8(who, fault);
}

void check_objective_utf8(const std::vector<ObjectiveSlot>& objective, std::string_view who) {
    Walk walk;
    const JsonPath root;  // a path's parents must outlive it
    const JsonPath slots = root.key("objective");
    for (std::size_t i = 0; i < objective.size(); ++i) {
        const JsonPath slot = slots.at(i);
        if (!walk.text(objective[i].key, slot.key("key")) ||
            !walk.block(objective[i].value, slot.key("value")))
            break;
    }
    refuse_invalid_utf8(who, walk.fault);
}

void refuse_invalid_utf8(std::string_view who, const std::optional<Utf8Fault>& fault) {
    if (!fault) return;
    throw Error(ErrorKind::kInvalidArgument,
                std::string(who) + ": " + fault->where + ": not valid UTF-8 at byte " +
                    std::to_string(fault->at) + "; text given to a conversation must be UTF-8");
}

}  // namespace nucleo::internal
