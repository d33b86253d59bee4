// The facts of a request body the rule book reads (wire.164), gathered in one walk over the body:
// over its bytes (simdjson's parser validates the whole body as JSON into its tape, then one walk
// reads what the rules need: the core's audit after encode) or over a parsed RapidJSON value
// (nucleo-emulator). The rules of the three families and the audit's plan checks run over these
// records, never over the body again.
//
// A string here is a view into the body (or into the parser's buffer when it had escapes): a Shape
// lives no longer than the body it was built from. When an object repeats a key, the last one
// counts, as the providers' JSON readers take it.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "nucleo/wire/contract.hpp"

namespace nucleo::contract::internal {

/// A number member: present (of any JSON type), an integer in int64 range, its value.
struct Num {
    bool present = false;
    bool is_int64 = false;
    std::int64_t value = 0;
};

/// What a value holding text was.
enum class Kind : std::uint8_t { kAbsent, kString, kArray, kOther };

/// One element of a block list: a content block of a message, a system block.
struct Block {
    std::string_view type;         ///< "type" when a string, else ""
    std::string_view text;         ///< "text" when a string, else ""
    std::string_view id;           ///< Anthropic tool_use "id"; Bedrock toolUse/toolResult toolUseId
    std::string_view tool_use_id;  ///< Anthropic tool_result "tool_use_id"
    std::uint32_t inner_begin = 0;  ///< the marked blocks of its "content" array: Shape::inner_1h
    std::uint32_t inner_end = 0;
    std::uint32_t nested_marks = 0;  ///< set marks in nested "content" arrays, at any depth
    bool type_is_string = false;
    bool text_is_string = false;
    bool tool_use = false;         ///< Bedrock: a "toolUse" member
    bool tool_result = false;      ///< Bedrock: a "toolResult" member
    bool reasoning = false;        ///< Bedrock: a "reasoningContent" member
    bool mark_present = false;     ///< the family's cache mark ("cache_control" / "cachePoint")
    bool mark_set = false;         ///< ... present and not null
    bool ttl_1h = false;           ///< cache_control.ttl is "1h" (else the 5-minute default)
};

/// One tool of the family's tool list (Anthropic's `tools`, OpenAI's `tools`, Bedrock's
/// `toolConfig.tools`): a Block (for its cache mark) with what the tool rules read.
struct Tool : Block {
    std::string_view name;          ///< Anthropic "name"
    bool schema = false;            ///< Anthropic "input_schema" present
    std::string_view schema_type;   ///< its "type" when a string, else ""
    bool holder = false;            ///< OpenAI "function" / Bedrock "toolSpec" present
    std::string_view holder_name;   ///< its "name"
    bool holder_schema = false;     ///< function.parameters / toolSpec.inputSchema.json present
    std::string_view holder_schema_type;
};

/// One message of `messages`.
struct Msg {
    std::string_view role;  ///< "role" when a string, else ""
    Kind content = Kind::kAbsent;
    std::string_view content_text;  ///< when content is a string
    bool content_empty = false;     ///< "" or []
    std::uint32_t blocks_begin = 0;  ///< its content blocks: Shape::blocks
    std::uint32_t blocks_end = 0;
    bool tool_call_id_present = false;  ///< OpenAI
    std::string_view tool_call_id;
    std::uint32_t calls_begin = 0;  ///< OpenAI tool_calls ids: Shape::call_ids
    std::uint32_t calls_end = 0;
};

struct Shape {
    WireFamily family = WireFamily::kUnknown;
    Num max_tokens;             ///< Anthropic, OpenAI "max_tokens"
    Num max_completion_tokens;  ///< OpenAI
    bool inference_config = false;
    Num inference_max_tokens;   ///< Bedrock inferenceConfig.maxTokens
    bool thinking_present = false;
    bool thinking_enabled = false;  ///< thinking.type == "enabled"
    bool extra_thinking_enabled = false;  ///< Bedrock additionalModelRequestFields.thinking.type
    Num budget_tokens;
    Block request_mark;  ///< Anthropic: the request-level cache_control (automatic caching)
    bool tools_array = false;  ///< the family's tool list is an array
    bool tool_config = false;  ///< Bedrock: a "toolConfig" member
    std::vector<Tool> tools;
    Kind system = Kind::kAbsent;
    std::string_view system_text;  ///< when a string
    std::vector<Block> system_blocks;
    bool messages_present = false;
    bool messages_array = false;
    std::vector<Msg> messages;
    std::vector<Block> blocks;
    std::vector<std::uint8_t> inner_1h;  ///< per nested mark: its TTL is 1h
    std::vector<std::string_view> call_ids;

    void clear(WireFamily f);
    /// The content blocks of message `m`.
    [[nodiscard]] const Block* begin(const Msg& m) const { return blocks.data() + m.blocks_begin; }
    [[nodiscard]] const Block* end(const Msg& m) const { return blocks.data() + m.blocks_end; }
    [[nodiscard]] std::size_t size(const Msg& m) const { return m.blocks_end - m.blocks_begin; }
};

/// The shape of a parsed body; false when the body is not an object.
bool shape_of(WireFamily family, const rapidjson::Value& body, Shape& out);

/// The outcome of reading body bytes.
enum class BytesRead { kOk, kNotJson, kNotObject };

/// Reads the body bytes, validating every byte of them as JSON (UTF-8 included), and fills `out`.
/// `readable`: how many bytes from body.data() may be read (a std::string's capacity); with
/// kReadPadding of them past the body it is read in place, else from a padded copy. The views in
/// `out` point into a parser buffer kept per thread, valid until the next call on the same thread.
BytesRead shape_of_bytes(WireFamily family, std::string_view body, std::size_t readable, Shape& out);

/// Reads a list of wire messages, the comma-separated elements of a body's `messages` (wire.173),
/// into `out`'s messages, blocks, inner_1h and call_ids, as the walk of a whole body reads them.
/// kNotJson when the list is not JSON values (or a walk refused one), kNotObject when it is
/// empty. The views in `out` point into the per-thread reader's buffers, as shape_of_bytes'.
BytesRead messages_of_bytes(WireFamily family, std::string_view list, Shape& out);

/// wire.210: the core's audit reads an Anthropic mid-conversation system message (a run of tool
/// changes the encoder writes right after a user turn) as part of the message before it, as the
/// API judges the turns around it: its blocks join that message's (they follow them in `blocks`),
/// so its marks count in request order and the turns still alternate. One that opens the list or
/// whose content is not a block array is left as it is, for the rule book to refuse the role.
void fold_system_messages(Shape& shape);

/// The per-thread reader keeps its buffers for the next body up to this size.
constexpr std::size_t kKeepReaderBytes = 8U * 1024U * 1024U;
/// Frees the per-thread reader's buffers when the last body read was over kKeepReaderBytes; the
/// Shape read from it must not be used afterwards.
void release_large_reader();

}  // namespace nucleo::contract::internal
