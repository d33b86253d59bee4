// The render concern: turn roles, the fixed formatter, tool definition text and the block
// transformation of channel.7.
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/json_text.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/prepared.hpp"
#include "render/render_internal.hpp"

namespace nucleo {

TurnRole TurnRole::of(std::string_view role) {
    if (role == "user") return kUser;
    if (role == "assistant") return kAssistant;
    // channel.5: a message carrying any other role string is refused at the mapping
    // (TurnRole::of), never silently relabelled.
    throw Error(ErrorKind::kInvalidArgument,
                "unknown turn role \"" + std::string(role) +
                    "\": a turn is \"user\" or \"assistant\"; system content goes through "
                    "put_main_objective");
}

const char* TurnRole::name() const noexcept {
    return value_ == kUser ? "user" : "assistant";
}

FixedContentFormatter FixedContentFormatter::for_model(const ModelSpec& model) noexcept {
    // caching.118: breakpoints only for a model whose provider takes them.
    return FixedContentFormatter(model.native_tools,
                                 model.supports_caching && model.cache_breakpoints == "explicit",
                                 model.tool_changes);
}

std::string PreparedConversation::system_text() const {
    std::string out;
    for (const ContentBlock& block : system_blocks) {
        if (!out.empty()) out.append("\n\n");
        out.append(render::rendered_text(block));
    }
    return out;
}

std::string render_tool_definition_text(const ToolDefinitionBlock& definition) {
    std::string out;
    out.reserve(32 + definition.name.size() + definition.description.size() +
                definition.schema_json.size());
    out.append("Tool: ").append(definition.name);
    out.append("\nDescription: ").append(definition.description);
    out.append("\nInput schema: ").append(definition.schema_json);
    return out;
}

std::string_view tool_weight_guidance() noexcept {
    return "Tool weight guidance: each tool's description may begin with a weight tag. "
           "[weight: light] marks a cheap, fast tool: use it freely. "
           "[weight: medium] (also any tool without a tag) costs noticeable time or money: call it "
           "when its result helps the answer. "
           "[weight: heavy] marks a slow or costly tool: call it only when lighter tools cannot "
           "answer. Prefer the lightest tool that does the job, and do not repeat a call whose "
           "result you already have.";
}

namespace render {

JsonBlock write_summarized_with_refs(const PojoBlock& pojo, ArtifactRegistry& registry) {
    return registry.write_summarized_with_refs(pojo);
}

std::string rendered_text(const ContentBlock& block) {
    struct Renderer {
        std::string operator()(const TextBlock& b) const { return b.text; }
        std::string operator()(const JsonBlock& b) const { return b.json; }
        std::string operator()(const PojoBlock& b) const { return b.value_json; }
        std::string operator()(const SkillBlock& b) const { return b.content; }
        std::string operator()(const ToolDefinitionBlock& b) const {
            return render_tool_definition_text(b);
        }
        std::string operator()(const ImageBlock& b) const {
            return "[image " + b.media_type + " " + (b.url.empty() ? b.data : b.url) + "]";
        }
        std::string operator()(const FileBlock& b) const {
            return "[file " + b.media_type + " " + b.name + " " + (b.url.empty() ? b.data : b.url) +
                   "]";
        }
        std::string operator()(const ToolUseBlock& b) const {
            return "[tool_use " + b.id + " " + b.name + " " + b.input_json + "]";
        }
        std::string operator()(const ToolResultBlock& b) const {
            std::string out = "[tool_result " + b.tool_use_id + (b.is_error ? " error" : "");
            for (const ContentBlock& c : b.content) out.append(" ").append(rendered_text(c));
            return out + "]";
        }
        std::string operator()(const ThinkingBlock& b) const { return b.thinking; }
        std::string operator()(const RedactedThinkingBlock& b) const { return b.data; }
        std::string operator()(const ProviderBlock& b) const { return b.json; }
    };
    return std::visit(Renderer{}, block.value);
}

ToolDefinitionBlock to_wire_definition(const ToolDefinitionBlock& definition) {
    rapidjson::Document doc;
    // limits.120 to limits.122: depth-bounded, no duplicate key, no raw NUL.
    if (auto refusal = json_guard::parse(doc, definition.schema_json)) {
        throw Error(
            ErrorKind::kInvalidArgument,
            "tool '" + definition.name + "': input schema is not JSON (" + refusal->text() + ")");
    }
    if (!doc.IsObject()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "tool '" + definition.name + "': input schema must be a JSON object");
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc.Accept(writer);
    ToolDefinitionBlock wire = definition;
    wire.schema_json.assign(buffer.GetString(), buffer.GetSize());
    return wire;
}

void transform_block(const ContentBlock& block, bool native_tools, ArtifactRegistry& registry,
                     std::vector<ContentBlock>& out, std::vector<ToolDefinitionBlock>& swept,
                     bool keep_definitions) {
    if (const auto* pojo = block.get_if<PojoBlock>()) {
        out.emplace_back(write_summarized_with_refs(*pojo, registry));
    } else if (const auto* def = block.get_if<ToolDefinitionBlock>()) {
        if (native_tools && keep_definitions) {
            out.push_back(block);  // tools.103: the dialect writes it as a tool change here
        } else if (native_tools) {
            swept.push_back(*def);
        } else {
            out.emplace_back(TextBlock{render_tool_definition_text(*def)});
        }
    } else if (const auto* result = block.get_if<ToolResultBlock>()) {
        ToolResultBlock copy{result->tool_use_id, {}, result->is_error};
        copy.content.reserve(result->content.size());
        for (const ContentBlock& inner : result->content) {
            transform_block(inner, native_tools, registry, copy.content, swept);
        }
        out.emplace_back(std::move(copy));
    } else {
        out.push_back(block);
    }
}

}  // namespace render
}  // namespace nucleo
