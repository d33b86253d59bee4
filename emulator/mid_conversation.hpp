// Anthropic's mid-conversation system messages (docs/emulator.md "Mid-conversation system
// messages and tool changes"): a `role: "system"` message inside `messages`, its placement, its
// turn-scoped form (`clear_at`) and its per-message `output_config`, on the models whose catalog
// record lists `system_messages` under `mid_conversation:`. The shapes are the SDK's
// (@anthropic-ai/sdk 1.17.0, BetaSystemMessageParam); the rules are Anthropic's page
// "Mid-conversation system messages and tool changes". Its tool_addition and tool_removal blocks
// are tool_changes.hpp's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog.hpp"
#include "json.hpp"

namespace nucleo::emulator {

/// A 400 of the Anthropic route: the message, and the `error.details.error_code` the API sets
/// for some refusals ("" for none), which the SDK turns into its own error class
/// (`ToolReferenceUnresolvedError`, `ToolNameConflictError`).
struct Refusal {
    std::string message;
    std::string error_code;
};

/// The betas a request names: its `anthropic-beta` header, a comma-separated list.
class Betas {
  public:
    explicit Betas(std::string_view header);
    bool has(std::string_view beta) const;

  private:
    std::vector<std::string> items_;
};

/// The betas of the page: tool changes by reference; definitions by value (which also covers
/// references); an `mcp_toolset` definition; `clear_at`; a system message's `output_config`.
inline constexpr std::string_view kToolChangesBeta = "mid-conversation-tool-changes-2026-07-01";
inline constexpr std::string_view kInlineToolsBeta = "inline-tools-2026-09-15";
inline constexpr std::string_view kMcpClientBeta = "mcp-client-2026-09-15";
inline constexpr std::string_view kClearAtBeta = "mid-conversation-system-clear-at-2026-08-21";
inline constexpr std::string_view kOutputConfigBeta = "mid-conversation-output-config-2026-07-01";

/// A `role: "system"` message of `messages`.
bool is_system_message(const json::Value& m);

/// A system message with no content (absent, null, "" or []) that sets `output_config`: it renders
/// nothing and may stand anywhere (the page's "directive-only" form).
bool directive_only(const json::Value& m);

/// A system message whose `clear_at` is "next_user_message": it renders only while no user message
/// follows it.
bool turn_scoped(const json::Value& m);

/// Per message of `messages`, whether it renders in the prompt: not a directive-only system
/// message, nor a turn-scoped one with a `role: "user"` message after it (it is "cleared": it
/// stays in the array, adds no tokens and is never part of a cache key).
std::vector<bool> rendered_messages(const json::Value& messages);

/// The checks of the page over a validated body (model, messages and their contents present): for
/// a model the catalog names, a system message where its record lacks `system_messages`, then the
/// members and blocks of each system message, the turn-scoped rules, the placement of each run of
/// system messages, then the tool changes (tool_changes.hpp). A model the catalog does not name
/// keeps the rule book's answers alone (wire.106 refuses the role). The first refusal, or nullopt.
std::optional<Refusal> check_mid_conversation(const json::Value& doc,
                                              const ModelCatalog::MidConversation& model,
                                              const Betas& betas);

}  // namespace nucleo::emulator
