// The ThinkingResponse answer contract: schema stripping (tools.20-22) and text tool calls
// (tools.13).
//
// The model answers with one JSON envelope {reasoning, tool_calls, answer}; `answer` is a struct
// the application described with nucleo::Describe (schema.hpp). The handler writes the envelope's
// shape into the outgoing message, leaving out what the model should not fill, and parses the
// model's answer back.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/response.hpp"
#include "nucleo/schema.hpp"

namespace nucleo {

/// A tool call the model wrote into its text (text-based tool calling, tools.13: Bedrock
/// Converse): the tool's name and its input object.
struct TextToolCall {
    std::string name;
    schema::JsonObject input;
    bool operator==(const TextToolCall&) const = default;
};

/// The envelope the model writes (the ThinkingResponse schema: reasoning, tool_calls, answer).
/// `answer` is optional because a turn that calls tools has no answer yet.
template <typename Answer>
struct ThinkingResponse {
    std::string reasoning;
    std::vector<TextToolCall> tool_calls;
    std::optional<Answer> answer;
};

template <>
struct Describe<TextToolCall> {
    static constexpr std::string_view name = "ToolCall";
    static auto fields() {
        using schema::field;
        return std::tuple(field("name", &TextToolCall::name)
                              .required()
                              .description("The name of the tool to call, as declared."),
                          field("input", &TextToolCall::input)
                              .required()
                              .description("The tool's arguments, shaped as its input schema."));
    }
};

template <typename Answer>
struct Describe<ThinkingResponse<Answer>> {
    static constexpr std::string_view name = "ThinkingResponse";
    static auto fields() {
        using R = ThinkingResponse<Answer>;
        using schema::field;
        return std::tuple(
            field("reasoning", &R::reasoning)
                .reasoning()
                .description("Your reasoning, step by step, before you act or answer."),
            field("tool_calls", &R::tool_calls)
                .role(schema::FieldRole::kToolCalls)
                .description("The tools to call now, in order. Leave it out or empty when you "
                             "give your answer."),
            field("answer", &R::answer)
                .description("Your final answer. Leave it out while you are still calling "
                             "tools."));
    }
};

/// tools.13: a call parsed out of the text gets an id minted by the runtime from the tool's
/// name and its place in the turn. The id is `call_<name>_<index>` where index is the call's
/// 0-based position among the turn's tool calls; characters of the name outside [A-Za-z0-9_-]
/// become `_` and the name is cut so the id stays within 64 characters (the strictest provider
/// id rule, Bedrock's toolUseId). Deterministic: the same name and place give the same id.
/// Ids repeat across turns: parse(text) of a lone answer uses this form.
[[nodiscard]] std::string mint_tool_call_id(std::string_view tool_name, std::size_t index);

/// tools.101: the id a text-mode call gets when its answer joins a conversation,
/// `call_<name>_<index>_t<turn>` where `turn` is the answer's position among the conversation's
/// messages: unique across the conversation, so a result names exactly one call. The name is cut
/// (never the index or the turn) so the id stays within 64 characters.
[[nodiscard]] std::string mint_tool_call_id(std::string_view tool_name, std::size_t index,
                                            std::size_t turn);

/// The JSON object in a model's answer text: the text itself when it starts with `{`, else the
/// inside of the first ``` fence (```json or bare), else the span from the first `{` to the last
/// `}` (models sometimes say a sentence first). Throws Error(kProtocol) when there is none.
[[nodiscard]] std::string extract_answer_json(std::string_view text);

/// How the handler writes the envelope's shape into the outgoing message.
enum class SchemaStyle {
    kNotation,    ///< the compact @-notation (the conversation then carries the legend)
    kJsonSchema,  ///< standard JSON Schema, for models that follow it better; no legend needed
};

/// What a model's answer held, in the runtime's terms.
template <typename Answer>
struct ParsedThinkingResponse {
    std::optional<Answer> answer;          ///< absent while the model is calling tools
    std::string reasoning;                 ///< resolved: the thinking blocks, else the envelope's
    std::vector<ToolUseBlock> tool_calls;  ///< native calls as sent, text calls with minted ids
};

/// The part of the handler that does not depend on the answer type (built in libnucleo).
class ThinkingResponseHandlerBase : public ResponseHandler {
  public:
    [[nodiscard]] bool uses_schema_notation() const override;
    /// tools.20: the envelope without `tool_calls` when
    /// native_tools_available, and without `reasoning` — and every field of the answer marked
    /// `.reasoning()`, at any depth — when thinking_active.
    [[nodiscard]] std::string response_instructions(bool native_tools_available,
                                                    bool thinking_active) const override;
    [[nodiscard]] SchemaStyle style() const noexcept { return style_; }

  protected:
    ThinkingResponseHandlerBase(schema::NodeFn envelope, SchemaStyle style)
        : envelope_(envelope), style_(style) {}

    /// The parts of an incoming message the typed parse needs: its text (text blocks joined),
    /// its thinking (thinking blocks joined) and its native tool calls.
    struct MessageParts {
        std::string text;
        std::string thinking;
        std::vector<ToolUseBlock> native_calls;
    };
    static MessageParts split(const Message& incoming);
    /// The JSON of the envelope in the message's text; nullopt when the text is blank, or when
    /// the message made native calls and its text holds no JSON object (narration).
    static std::optional<std::string> answer_json(const MessageParts& parts);

  private:
    schema::NodeFn envelope_;
    SchemaStyle style_;
};

/// The ThinkingResponse handler for a typed answer. Share one instance among messages
/// (Message::response_handler holds a shared_ptr<const ResponseHandler>).
template <typename Answer>
class ThinkingResponseHandler : public ThinkingResponseHandlerBase {
  public:
    using Envelope = ThinkingResponse<Answer>;

    explicit ThinkingResponseHandler(SchemaStyle style = SchemaStyle::kNotation)
        : ThinkingResponseHandlerBase(&schema::node_of<Envelope>, style) {}

    /// Parses the model's answer text (JSON, possibly inside a ```json fence). Text tool calls
    /// get ids from mint_tool_call_id(name, place). Throws Error(kProtocol) when the text holds
    /// no JSON object and Error(kInvalidArgument) naming the path of a field that does not fit.
    [[nodiscard]] ParsedThinkingResponse<Answer> parse(std::string_view text) const {
        return parse_json(extract_answer_json(text));
    }

    /// Parses a whole incoming message. The text is parsed as the envelope unless it is blank,
    /// or unless the message made native calls and the text holds no JSON object (models narrate
    /// before a native call: "Let me look that up."). The message's ToolUseBlocks are its calls,
    /// under the ids they carry: native calls under the provider's ids, and text-mode calls under
    /// the ids ProviderClient minted when it parsed the same envelope (tools.101) — the envelope's
    /// tool_calls are then not added a second time. The reasoning resolves to the thinking
    /// blocks when there are any — the envelope's prose reasoning is then discarded (tools.22).
    [[nodiscard]] ParsedThinkingResponse<Answer> parse(const Message& incoming) const {
        MessageParts parts = split(incoming);
        ParsedThinkingResponse<Answer> out;
        if (auto json = answer_json(parts)) out = parse_json(*json);
        if (!parts.thinking.empty()) out.reasoning = std::move(parts.thinking);
        if (!parts.native_calls.empty()) out.tool_calls = std::move(parts.native_calls);
        return out;
    }

  private:
    static ParsedThinkingResponse<Answer> parse_json(const std::string& json) {
        const Envelope envelope = schema::from_json<Envelope>(json);
        ParsedThinkingResponse<Answer> out;
        out.answer = envelope.answer;
        out.reasoning = envelope.reasoning;
        for (std::size_t i = 0; i < envelope.tool_calls.size(); ++i) {
            const TextToolCall& call = envelope.tool_calls[i];
            out.tool_calls.push_back(
                ToolUseBlock{mint_tool_call_id(call.name, i), call.name, call.input.json});
        }
        return out;
    }
};

}  // namespace nucleo
