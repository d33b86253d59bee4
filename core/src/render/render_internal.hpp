// Internals of the render concern: how blocks become what the model sees (channel.7). Shared by the
// conversation's prepare step and, later, the token counter, so every count measures the same text
// the wire carries.
#pragma once

#include <string>
#include <vector>

#include "nucleo/artifacts.hpp"
#include "nucleo/content.hpp"

namespace nucleo::render {

/// artifacts.6: a PojoBlock becomes a JsonBlock, its
/// artifacts replaced by {"@ref": ...} and its long summarizable fields summarized
/// (ArtifactRegistry::write_summarized_with_refs); the only place a PojoBlock is turned into JSON.
JsonBlock write_summarized_with_refs(const PojoBlock& pojo, ArtifactRegistry& registry);

/// The text a block puts in front of the model, used to decide whether two objective values
/// "render identically" (conversation.14). Text, JSON, skill content, a tool definition's
/// render_tool_definition_text; attachments and tool traffic render as their kind and payload.
std::string rendered_text(const ContentBlock& block);

/// The conversion of a tool definition to its wire form, done once at the first render after
/// declaration (tools.2: never eagerly): the schema is parsed and re-emitted compact. Throws
/// Error(kInvalidArgument) naming the tool when the schema is not a JSON object.
ToolDefinitionBlock to_wire_definition(const ToolDefinitionBlock& definition);

/// Transforms one block for a prepared turn or the system content and appends the result to
/// `out`: PojoBlock -> JsonBlock (also inside tool results); a ToolDefinitionBlock is swept into
/// `swept` when `native_tools` (nothing inline) or rendered inline as a TextBlock of
/// render_tool_definition_text otherwise; every other block passes through. tools.103:
/// `keep_definitions` (a turn's own blocks, where the dialect writes tool changes) keeps a
/// ToolDefinitionBlock of the turn in `out`, at its point; one inside a tool result is swept.
void transform_block(const ContentBlock& block, bool native_tools, ArtifactRegistry& registry,
                     std::vector<ContentBlock>& out, std::vector<ToolDefinitionBlock>& swept,
                     bool keep_definitions = false);

}  // namespace nucleo::render
