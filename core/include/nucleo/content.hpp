// Content blocks and messages: what a conversation is made of.
//
// conversation.2: a message is a list of typed blocks drawn from a closed set of twelve
// kinds (TextBlock, PojoBlock, JsonBlock, ToolDefinitionBlock, ImageBlock, FileBlock, ToolUseBlock,
// ToolResultBlock, ThinkingBlock, RedactedThinkingBlock, SkillBlock, ProviderBlock). In C++ the sealed interface
// is a std::variant, so a visitor that forgets a kind does not compile. JSON-valued fields hold
// JSON text (valid, compact or not): no JSON library type reaches the public API.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nucleo {

class ResponseHandler;
struct ContentBlock;

/// Plain text, said by either side.
struct TextBlock {
    std::string text;
    bool operator==(const TextBlock&) const = default;
};

/// Structured data as JSON text (what a PojoBlock becomes on the way to the model).
struct JsonBlock {
    std::string json;
    bool operator==(const JsonBlock&) const = default;
};

/// A typed object: its type's name and its value as JSON. At render (channel.7)
/// it passes through write_summarized_with_refs and becomes a JsonBlock.
struct PojoBlock {
    std::string type_name;
    std::string value_json;
    bool operator==(const PojoBlock&) const = default;
};

/// An image attachment, carried as base64 `data` or as a `url` (exactly one is set).
struct ImageBlock {
    std::string media_type;
    std::string data;
    std::string url;
    bool operator==(const ImageBlock&) const = default;
};

/// A document attachment (PDF, text), carried as base64 `data` or as a `url`.
struct FileBlock {
    std::string media_type;
    std::string name;
    std::string data;
    std::string url;
    bool operator==(const FileBlock&) const = default;
};

/// A call the model made, under the id its provider minted (or the runtime minted, for
/// text-based tool calling: tools.13).
struct ToolUseBlock {
    std::string id;
    std::string name;
    std::string input_json = "{}";
    bool operator==(const ToolUseBlock&) const = default;
};

/// The model's own reasoning; never shown in a transcript.
struct ThinkingBlock {
    std::string thinking;
    std::string signature;
    bool operator==(const ThinkingBlock&) const = default;
};

/// Reasoning the provider returned encrypted; passed back verbatim.
struct RedactedThinkingBlock {
    std::string data;
    bool operator==(const RedactedThinkingBlock&) const = default;
};

/// An admitted skill: named instructions the model reads as content.
struct SkillBlock {
    std::string name;
    std::string content;
    bool operator==(const SkillBlock&) const = default;
};

/// A declared tool (tools.1: a definition is its own declared tool). `schema_json`
/// is standard JSON Schema of the tool's input.
struct ToolDefinitionBlock {
    std::string name;
    std::string description;
    std::string schema_json = R"({"type":"object","properties":{}})";
    bool operator==(const ToolDefinitionBlock&) const = default;
};

/// What a tool returned for one call; `content` holds text, json, image or file blocks.
struct ToolResultBlock {
    std::string tool_use_id;
    std::vector<ContentBlock> content;
    bool is_error = false;
    bool operator==(const ToolResultBlock&) const;
};

/// An answer block of a kind Nucleo does not model (a provider's compaction, server tool or MCP
/// blocks, a kind added after this release), kept verbatim (answers.110): `json` is the block
/// as the provider sent it (compact JSON text), `type` its own "type", `wire_family` the wire
/// format that produced it (the plugin's capabilities `wire_family`, "anthropic-messages"). It is
/// sent back in place to a provider of the same wire family and dropped, counted and logged, for
/// any other.
struct ProviderBlock {
    std::string wire_family;
    std::string type;
    std::string json;
    bool operator==(const ProviderBlock&) const = default;
};

/// One block of any of the twelve kinds.
struct ContentBlock {
    using Variant = std::variant<TextBlock, JsonBlock, PojoBlock, ImageBlock, FileBlock, ToolUseBlock,
                                 ToolResultBlock, ThinkingBlock, RedactedThinkingBlock, SkillBlock,
                                 ToolDefinitionBlock, ProviderBlock>;
    Variant value;

    ContentBlock() = default;
    template <typename Block,
              typename = std::enable_if_t<std::is_constructible_v<Variant, Block&&> &&
                                          !std::is_same_v<std::decay_t<Block>, ContentBlock>>>
    ContentBlock(Block&& block) : value(std::forward<Block>(block)) {}  // NOLINT: implicit by design

    template <typename Block>
    [[nodiscard]] bool is() const noexcept { return std::holds_alternative<Block>(value); }
    template <typename Block>
    [[nodiscard]] const Block* get_if() const noexcept { return std::get_if<Block>(&value); }
    template <typename Block>
    [[nodiscard]] Block* get_if() noexcept { return std::get_if<Block>(&value); }

    bool operator==(const ContentBlock&) const = default;
};

/// The wire name of a block's kind, as the conversation document spells it ("text", "tool_use",
/// ...; conversation.30).
const char* block_type_name(const ContentBlock& block) noexcept;

/// Which side said a message: OutgoingMessage (ours: a question, tool results) or
/// IncomingMessage (the model's answer), conversation.3.
enum class Direction { kOutgoing, kIncoming };

/// One message of a conversation (conversation.3, compaction.31, caching.8).
///
/// `compactable` is true by default (tool results compact; the chat thinkers mark user messages
/// and final answers false). `cache` asks for a breakpoint at this message. `app_authored` marks a
/// message the application composed on the user channel (first_user_utterance skips it).
/// `requested_output_tokens` is the per-call output override, layer 1 of the budget chain.
/// `response_handler` is the answer contract an outgoing message carries (never persisted; the
/// resuming thinker supplies it).
struct Message {
    std::string id;
    Direction direction = Direction::kOutgoing;
    std::vector<ContentBlock> blocks;
    bool compactable = true;
    bool cache = false;
    bool app_authored = false;
    std::optional<std::int64_t> requested_output_tokens;
    std::shared_ptr<const ResponseHandler> response_handler;
    /// An answer's own id at its provider (Anthropic `msg_...`), empty when the provider gave none
    /// or the message is ours: the next call names it for the provider's cache diagnostics
    /// (caching.131). Persisted.
    std::string provider_message_id;
    /// wire.211: on an answer of a call that created or continued the provider's thread, the
    /// digest of everything that call sent (its head and turns): the next call continues the
    /// thread when the turns before this answer still digest the same. Persisted.
    std::string thread_digest;

    [[nodiscard]] bool outgoing() const noexcept { return direction == Direction::kOutgoing; }
    [[nodiscard]] bool incoming() const noexcept { return direction == Direction::kIncoming; }

    /// A text message from our side.
    static Message outgoing_text(std::string text);
    /// A text answer from the model.
    static Message incoming_text(std::string text);
};

}  // namespace nucleo
