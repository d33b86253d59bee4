// The audit of a request a provider plugin encoded, before any byte of it is sent (wire.150).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::contract {
struct SplitBody;
}  // namespace nucleo::contract

namespace nucleo::internal {

/// What the core decided for the call, which the encoded request must carry.
struct AuditedCall {
    const PreparedConversation* prepared = nullptr;
    std::int64_t max_tokens = 0;       ///< the reserved output budget
    std::size_t body_limit = 0;        ///< wire.153's cap in bytes
    /// The body already parsed (the value `http.body` was written from), or nullptr: the audit
    /// then parses the bytes itself.
    const rapidjson::Value* parsed_body = nullptr;
    /// wire.173: the pieces `http.body` was joined from (SplitBody::join) when the per-turn encode
    /// cache built it, or nullptr: the audit then reads the head and takes the kept chunks'
    /// records instead of reading their bytes again, with the whole audit's verdict.
    const contract::SplitBody* split = nullptr;
};

/// wire.149-wire.163: audits `http` (as the plugin encoded it, headers included) against the rule
/// book of the plugin's declared wire family (the generic checks only for an unknown family).
/// `path` is the path the plugin returned, before the base URL. Throws Error(kPlugin), one line
/// naming the provider, the plugin, its family, the rule and where; nothing has been sent.
void audit_encoded_request(const ProviderConfig& config, const ProviderCapabilities& caps,
                           std::string_view path, const HttpRequest& http, const AuditedCall& call);

/// For tests: whether this thread's last audit_encoded_request read the whole body (false: it read
/// only the head of a split body and took its chunks' records, caching.113).
[[nodiscard]] bool last_audit_read_whole() noexcept;

/// wire.170: a family whose first turn must be the user's (Anthropic Messages, Bedrock Converse)
/// gets no conversation whose first message is the model's: Error(kInvalidArgument) naming the
/// rule, the message and its block, before anything is prepared or sent.
void check_first_turn(const ProviderConfig& config, const ProviderCapabilities& caps,
                      const ConversationContext& conversation);

/// wire.171: whether this call keeps thinking on. A family that requires the tool loop's
/// assistant turn to begin with a thinking block (wire.113, wire.142) gets the call without
/// thinking when that turn has none (a round taken at a lower depth or by another provider);
/// logged once per conversation with the reason.
bool thinking_for_call(const ProviderConfig& config, const ProviderCapabilities& caps,
                       const ConversationContext& conversation, bool thinking);

/// catalog.6: whether this call must go with the effort `none` because it carries function tools
/// (`tool_definitions`) to a model whose record refuses tools with reasoning and its depth asks for
/// an effort that reasons; logged once per provider and model. A model without a `none` effort is
/// refused instead: Error(kInvalidArgument) naming the model, the depth and the way out.
bool reasoning_off_for_tools(const ProviderConfig& config, const ModelSpec& model, Depth depth,
                             std::size_t tool_definitions);

/// answers.110: the wire family whose provider blocks this plugin's requests carry: its own when
/// its capabilities say it takes them (`provider_blocks`), else none ("").
[[nodiscard]] std::string_view provider_blocks_kept(const ProviderCapabilities& caps);

/// answers.110: how many provider blocks of the conversation a request to this plugin leaves out
/// (another wire family's, or any when the plugin takes none); logged at warn once per
/// conversation, provider and family, naming the blocks' kinds.
std::size_t provider_blocks_left_out(const ProviderConfig& config, const ProviderCapabilities& caps,
                                     const ConversationContext& conversation);

/// caching.131: for a model whose record takes cache diagnostics, the provider id of the
/// conversation's latest answer that has one ("" when none: the diagnosis starts from this call);
/// nullopt for a model without diagnostics (nothing is asked).
[[nodiscard]] std::optional<std::string> diagnosed_previous_answer(
    const ModelSpec& model, const ConversationContext& conversation);

}  // namespace nucleo::internal
