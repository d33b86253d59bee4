// What one call sends, decided once in the core: the channel contract's output.
//
// The channel contract (channel.1): prepare_messages_for_llm returns a PreparedConversation — the
// system content and the turns, separately — and clients render what they are handed and decide
// nothing about routing. Everything a provider plugin needs is decided here: which blocks are
// system content, which turns exist and their roles, where tool definitions land (native tools
// parameter or inline text), the response instructions, and the cache breakpoints
// (caching.1-5). A plugin turns this value into its wire format; it adds, drops or moves
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/content.hpp"

namespace nucleo {

struct ModelSpec;

/// The role of a prepared turn (channel.4): turns are USER or ASSISTANT, nothing else. The enum
/// has no system member, so system content is structurally incapable of being a turn. A class
/// wrapping a two-member enum so that `TurnRole::kUser` reads like an enum and `TurnRole::of`
/// sits beside it; it converts to its Value for switch statements.
class TurnRole {
  public:
    enum Value : std::uint8_t { kUser, kAssistant };

    constexpr TurnRole(Value value) noexcept : value_(value) {}  // NOLINT: implicit by design

    /// channel.5: a message carrying any other role string is refused at the mapping, never
    /// silently relabelled. Accepts exactly "user" and "assistant"
    /// (case-sensitive, as every wire format spells them); anything else — "system" included —
    /// throws Error(kInvalidArgument) naming the string.
    static TurnRole of(std::string_view role);

    constexpr operator Value() const noexcept { return value_; }  // NOLINT: implicit by design
    /// "user" or "assistant".
    [[nodiscard]] const char* name() const noexcept;

  private:
    Value value_;
};

/// How the core learns the provider's dialect (channel.11: how tools reach the model depends
/// on whether the provider supports native tool calling). The core
/// asks; the answer decides the rendering, so the plugin never has to.
class ContentFormatter {
  public:
    virtual ~ContentFormatter() = default;

    /// True for a provider with a tools parameter of its own (Anthropic, OpenAI): tool definitions
    /// are swept into PreparedConversation::tool_definitions and left out of the text. False
    /// (Bedrock Converse text dialect): definitions render inline as render_tool_definition_text.
    [[nodiscard]] virtual bool supports_native_tool_calling() const = 0;

    /// True for a backend with explicit cache control (Anthropic, direct or on Bedrock): the
    /// cache plan may place breakpoints. False: the plan stays empty.
    [[nodiscard]] virtual bool supports_caching() const = 0;

    /// tools.103: true where a tool declared after the first render may go out at its point in
    /// the stream in the provider's own form (Anthropic's `tool_addition`) instead of joining the
    /// tools parameter: its ToolDefinitionBlock then stays in its turn. Only with native tools.
    [[nodiscard]] virtual bool supports_native_tool_changes() const { return false; }
};

/// A ContentFormatter that answers with fixed values: what tests, the CLI and the provider
/// registry use when the dialect is known from configuration rather than from code.
class FixedContentFormatter final : public ContentFormatter {
  public:
    constexpr FixedContentFormatter(bool native_tools, bool caching,
                                    bool tool_changes = false) noexcept
        : native_tools_(native_tools),
          caching_(caching),
          tool_changes_(native_tools && tool_changes) {}

    /// The dialect a catalog entry declares (ModelSpec::native_tools, ::supports_caching).
    static FixedContentFormatter for_model(const ModelSpec& model) noexcept;

    [[nodiscard]] bool supports_native_tool_calling() const override { return native_tools_; }
    [[nodiscard]] bool supports_caching() const override { return caching_; }
    [[nodiscard]] bool supports_native_tool_changes() const override { return tool_changes_; }

  private:
    bool native_tools_;
    bool caching_;
    bool tool_changes_;
};

/// Where a conversation's cache breakpoints go (caching.105). kMarkedTurns (`seed` in YAML and
/// the API) is the default marked-turns policy of caching.3-5: the system prefix, then the oldest
/// marked turns. kSliding keeps the system breakpoint and gives the rest to the tail of the
/// conversation, so the turns re-sent by the next call are the ones covered. kAutomatic asks a
/// provider that offers it (Anthropic's request-level cache_control) to cache through the last
/// block; where it is not offered it plans as kSliding.
enum class CachePolicy { kMarkedTurns, kSliding, kAutomatic };

/// caching.130: the policy of every call that does not name one (a provider instance without
/// `options.cache_policy`, and so `nucleo chat`, `nucleo ask`, the Agent and a host's
/// ProviderClient): kSliding, which reads ~95% of a growing conversation's input from the cache
/// where kMarkedTurns reads ~14% (bench/economy). kMarkedTurns stays selectable as `seed`, and
/// is what prepare_messages_for_llm plans when called with default CacheOptions.
inline constexpr CachePolicy kDefaultCachePolicy = CachePolicy::kSliding;

/// "seed", "sliding", "automatic".
const char* to_string(CachePolicy policy) noexcept;
/// The names of to_string; nullopt for anything else.
std::optional<CachePolicy> parse_cache_policy(std::string_view name) noexcept;

/// What the plan may use beyond the prepared request (caching.105-107): the policy, whether the
/// provider offers a request-level marker, the model's minimum cacheable prefix and a counter of
/// a block's tokens (without one the minimum is not checked), and whether the head (tools and
/// system) is written with the 1-hour TTL.
struct CacheOptions {
    CachePolicy policy = CachePolicy::kMarkedTurns;
    bool automatic_offered = false;
    std::int64_t min_cacheable_tokens = 0;
    std::function<std::int64_t(const ContentBlock&)> count_block;
    std::function<std::int64_t(const ToolDefinitionBlock&)> count_tool;
    bool head_ttl_1h = false;
    /// caching.119: whether a kSliding breakpoint may sit on a tool_use block (false where the
    /// dialect cannot mark one).
    bool anchor_tool_use = true;
    /// caching.133: whether a breakpoint may sit on a block of an assistant turn (false where the
    /// dialect takes no mark on assistant output: the plan moves such an anchor to the last
    /// anchorable block of the user turn before it, or drops it).
    bool anchor_assistant = true;
};

/// Where one cache breakpoint sits among the turns: the block `block` of turn `turn`.
struct CacheAnchor {
    std::size_t turn = 0;
    std::size_t block = 0;
    bool operator==(const CacheAnchor&) const = default;
};

/// The cache breakpoints of one call, decided in the core (caching.1-5). At most
/// kMaxBreakpoints in all: one on the system prefix when there are system blocks, the backend
/// supports caching and cache_system is set — applied to the LAST system block, "which covers the
/// whole stable prefix" — then, in turn order, the first TextBlock or SkillBlock of each turn whose
/// message is marked cache, while breakpoints remain. "Image, tool and thinking blocks never anchor
/// a breakpoint." A plugin only renders the plan (Anthropic: cache_control ephemeral on exactly
/// these blocks).
struct CachePlan {
    /// Anthropic's limit: "Anthropic allows 4 cache breakpoints per request."
    static constexpr std::size_t kMaxBreakpoints = 4;

    /// Index into PreparedConversation::system_blocks of the block carrying the system
    /// breakpoint (always the last one), or nullopt when the system prefix is not cached.
    std::optional<std::size_t> system_block;
    /// Turn anchors in turn order (at most one per turn under kMarkedTurns but for an anchor
    /// caching.133 moved there; kSliding may anchor several blocks of one long turn).
    std::vector<CacheAnchor> turn_anchors;
    /// caching.106: the request-level marker (Anthropic's top-level cache_control), one
    /// breakpoint on the last block of the request.
    bool automatic = false;
    /// caching.107: the system breakpoint is written with the 1-hour TTL (the tail keeps the
    /// provider's default), so the stable head outlives pauses between turns.
    bool system_ttl_1h = false;

    /// Breakpoints spent: the system one, the turn anchors and the request-level one. Never
    /// above 4.
    [[nodiscard]] std::size_t breakpoints() const noexcept {
        return (system_block ? 1U : 0U) + turn_anchors.size() + (automatic ? 1U : 0U);
    }
    /// True when block `block` of turn `turn` carries a breakpoint.
    [[nodiscard]] bool marks(std::size_t turn, std::size_t block) const noexcept;

    bool operator==(const CachePlan&) const = default;
};

/// One prepared turn: a message of the conversation with its
/// blocks transformed for the model (channel.7: PojoBlock -> JsonBlock,
/// tool definitions native or inline, other blocks pass through; what rode an outgoing turn when
/// it was sent, the registry and the answer contract, appended: wire.191). An outgoing message is a USER turn, an incoming one an
/// ASSISTANT turn. Each message stays its own turn, so the cache plan can point at it; a dialect
/// that demands strict alternation (Bedrock Converse) concatenates the blocks of adjacent
/// same-role turns in order when it encodes — a matter of wire layout, not of routing.
struct PreparedTurn {
    TurnRole role = TurnRole::kUser;
    std::vector<ContentBlock> blocks;
    /// The message's `cache` mark. The plan, not this flag, says
    /// where breakpoints are; the flag is kept for readers and the JSON form.
    bool cache = false;
    /// The id of the message this turn renders (empty only in a PreparedConversation built by
    /// hand).
    std::string message_id;
    /// wire.191: this prepare decorated the turn anew (its last blocks are this call's registry
    /// and answer contract, recorded to stay), so the per-turn encode cache encodes it again.
    bool ends_with_contract = false;
};

/// The output of ConversationContext::prepare_messages_for_llm (channel.1).
struct PreparedConversation {
    /// The main objective's values in slot order, transformed — "the conversation's ONLY system
    /// content". Text, JSON (from PojoBlocks), skill, and (text dialect) rendered tool definitions
    /// as text. Keys never reach the wire.
    std::vector<ContentBlock> system_blocks;
    /// Tool definitions for the provider's tools parameter, in announcement order (head first,
    /// then stream). Filled only when the formatter supports native tool calling; in the text
    /// dialect the same definitions are already inline (in system_blocks or in turns) and this is
    /// empty, so a plugin sends exactly what it is handed.
    std::vector<ToolDefinitionBlock> tool_definitions;
    /// USER/ASSISTANT turns in conversation order; the artifact registry, when it changed since
    /// last sent, rides the last USER turn ("data, not instruction"; wire.191).
    std::vector<PreparedTurn> turns;
    /// channel.10: cache_main_objective rides the prepared conversation as cache_system.
    bool cache_system = true;
    /// What the formatter answered, recorded so a reader of the prepared value knows which
    /// dialect it was prepared for.
    bool native_tools = false;
    /// The breakpoints, already decided.
    CachePlan cache_plan;
    /// tools.103: some turn holds a ToolDefinitionBlock, a late tool the dialect writes as a
    /// mid-conversation tool change (only where the formatter supports them).
    bool tool_changes = false;

    /// The system blocks as one text, joined by a blank line ("\n\n"): what a provider without a
    /// block-structured system channel (OpenAI's leading system message) sends (channel.2).
    [[nodiscard]] std::string system_text() const;
};

/// The text form of a tool definition (tools.11, tools.12), used inline by the text dialect and
/// as the single thing every token count of a definition measures, so the estimate and the
/// text-fallback wire cannot diverge. Layout:
///
///     Tool: <name>
///     Description: <description>
///     Input schema: <schema_json as the definition holds it>
///
/// The description carries the tool's weight annotation, if any, as its leading tag (see
/// tool_weight_guidance()). The schema text is not re-parsed here (this is the token counter's hot
/// path): a definition that reached the conversation through a render holds its compact wire form
/// already, since the conversion at render re-emits it compact.
std::string render_tool_definition_text(const ToolDefinitionBlock& definition);

/// The tool-weight guidance the `toolWeights` framework slot holds (conversation.13,
/// tools.6): a short guide to the cost annotation each tool definition carries. Decision (the
/// format is ours): a tool's weight is a leading tag of its description, one of
/// "[weight: light]", "[weight: medium]" or "[weight: heavy]"; a definition without a tag is
/// medium. The guidance never says "Available tools:" on its own — it only appears with tools.
std::string_view tool_weight_guidance() noexcept;

/// The text a post-freeze tool announcement starts with (tools.4). The announcement message's first
/// block is this header followed by the new tools' names; the definitions follow as
/// ToolDefinitionBlocks.
inline constexpr std::string_view kAdditionalToolsHeader = "Additional tools now available:";

}  // namespace nucleo
