// Anthropic's mid-conversation tool changes (docs/emulator.md "Mid-conversation system messages
// and tool changes"): the `tool_addition` and `tool_removal` blocks of a system message offer a
// tool to the model, or withdraw it, from that point of the conversation on, without changing
// `tools` (so the cached prefix stays). The shapes are the SDK's (@anthropic-ai/sdk 1.17.0:
// BetaRequestToolAdditionBlock, BetaRequestToolRemovalBlock, BetaToolChangeToolReference,
// BetaToolChangeMCPToolReference, BetaToolChangeMCPToolsetReference,
// BetaToolChangeToolDefinitionParam).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "json.hpp"
#include "mid_conversation.hpp"

namespace nucleo::emulator {

/// A tool offered to the model: its name and its definition (a `tools` entry, or the
/// `definition` of a tool_addition), borrowed from the request.
struct OfferedTool {
    std::string name;
    const json::Value* definition = nullptr;
};

/// The tool changes of a body whose system messages passed their own checks
/// (check_mid_conversation): per block, in request order, the model's `tool_changes`, the beta
/// (a reference: `mid-conversation-tool-changes-2026-07-01` or `inline-tools-2026-09-15`; a
/// definition: `inline-tools-2026-09-15`, an `mcp_toolset` one `mcp-client-2026-09-15` too), no
/// change right after a paused assistant turn, the shape of the reference or definition, and what
/// it names: an addition by reference a tool of `tools` or one defined earlier in `messages`, a
/// removal a tool offered at that point (error_code `tool_reference_unresolved`); a definition a
/// valid tool whose name no tool of another type holds (`tool_name_conflict`).
std::optional<Refusal> check_tool_changes(const json::Value& doc,
                                          const ModelCatalog::MidConversation& model,
                                          const Betas& betas);

/// The tools offered at the end of the conversation, in order: `tools` first, then each tool an
/// addition offered, in order; a removal takes its tool out, a later addition puts it back at the
/// end, and a new definition of an offered tool replaces it where it stands. MCP tools are not
/// among them (the emulator never calls one).
std::vector<OfferedTool> offered_tools(const json::Value& doc);

/// The cache mark of a tool_addition's definition (the page: "`cache_control` goes on the block or
/// in the definition, not both"), or nullptr.
const json::Value* definition_mark(const json::Value& block);

/// The block's compact JSON without its own `cache_control` nor its definition's: the bytes a mark
/// does not change, wherever of the two it stands.
std::string without_change_marks(const json::Value& block);

}  // namespace nucleo::emulator
