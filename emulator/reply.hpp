// Deterministic replies (docs/emulator.md): the same request always gets the same answer, so tests
// and the offline demo can assert on it. The three dialects reduce their request to ReplyInput and
// render the Reply in their own wire format, streamed or not, from the same value: a streamed
// reply assembles to exactly the non-streamed one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "faults.hpp"
#include "json.hpp"

namespace nucleo::emulator {

struct ToolDecl {
    std::string name;
    const json::Value* schema = nullptr;  ///< the input JSON schema, borrowed from the request
};

/// What the reply depends on, extracted from a validated request.
struct ReplyInput {
    std::vector<ToolDecl> tools;    ///< in declaration order
    bool tool_choice_none = false;  ///< tools declared but calling them forbidden
    std::string forced_tool;        ///< tool_choice naming one tool
    bool last_is_question = false;  ///< the last turn is the user's text, not a tool result
    std::string question;           ///< the text of the last user turn
    bool has_tool_result = false;   ///< the last user turn carries a tool result
    std::string tool_result_name;   ///< the tool that produced it, when known
    std::string tool_result_text;   ///< its text
    bool tool_result_error = false;
    long long max_tokens = 4096;
    bool thinking = false;  ///< extended thinking requested (Anthropic)
    /// wire.190: the tokens adaptive thinking spends before the answer (0: none), out of
    /// max_tokens; its text is a short summary only when `thinking_summarized`, else empty.
    long long adaptive_thinking_tokens = 0;
    bool thinking_summarized = false;
    bool force_truncate = false;  ///< the `truncate` fault
    int tool_rounds = 0;          ///< `always-tool` (-1) / `tool-rounds=N` (Faults::tool_rounds)
    bool tool_cycle = false;      ///< `tool-cycle`: call the declared tools in turn
    std::string id_prefix;        ///< "toolu_emu_", "call_emu_", "tooluse_emu_"
    std::string conversation_digest;  ///< hash of the conversation: the ids derive from it
    /// wire.193: the digest of the prefix the answer's thinking block follows (PrefixBinding),
    /// carried in its signature; "" for none.
    std::string thinking_binding;
    int assistant_turns = 0;  ///< counter part of the tool-call id
    /// Anthropic `stop_sequences`, OpenAI `stop`, Converse `inferenceConfig.stopSequences`.
    std::vector<std::string> stop_sequences;
};

/// The faults that shape the answer rather than the HTTP exchange (truncate, tool-rounds,
/// tool-cycle), the same for the three dialects.
inline void apply_reply_faults(const Faults& faults, ReplyInput& in) {
    in.force_truncate = faults.truncate;
    in.tool_rounds = faults.tool_rounds;
    in.tool_cycle = faults.tool_cycle;
}

/// The answer, before any wire format.
struct Reply {
    std::string thinking;  ///< empty unless thinking was requested (or its display is omitted)
    std::string thinking_signature;
    bool has_thinking = false;             ///< a thinking block is answered (its text may be empty)
    long long hidden_thinking_tokens = 0;  ///< adaptive thinking spent beyond its shown text
    std::string text;
    bool tool_call = false;
    std::string tool_id;
    std::string tool_name;
    std::string tool_input;  ///< JSON text; an incomplete prefix when truncated
    bool truncated = false;  ///< stopped at the output limit (stop_reason max_tokens)
    /// The stop sequence that ended the text (which stops just before it); "" when none did.
    std::string stop_sequence;
    long long output_tokens = 0;
};

/// Decides the reply: when tools are declared (and not forbidden) and the last turn is a user
/// question — or, scripted by tool_rounds, a tool result while tool_rounds is -1 or the request
/// holds fewer than tool_rounds assistant turns — a call of the first declared tool (or the one
/// tool_choice names; with tool_cycle, the declared tool at assistant_turns modulo their number)
/// with arguments valid for its schema; otherwise a short text answer that quotes the first line of
/// the last tool result, so agent loops end. A text answer ends just before the earliest of the
/// request's stop sequences found in it (channel.101). Output is cut at max_tokens x 4 bytes; an
/// answer cut there reached the limit before any stop sequence.
Reply make_reply(const ReplyInput& in);

/// wire.190: the tokens the emulator's adaptive thinking spends at an effort: low 1,000,
/// medium 2,000, high 4,000, xhigh 8,000, max 16,000 (the emulator's own figures, not a
/// provider's; an unknown effort is refused before this by the model's rules).
long long adaptive_thinking_tokens(std::string_view effort);

/// Arguments valid for `schema`: required properties filled by type (string: `word`, integer
/// and number: 1 within minimum/maximum, boolean: true, enum: first value, const: itself,
/// arrays: max(1, minItems) items, nested objects recursively, local $ref resolved).
std::string arguments_for_schema(const json::Value& schema, const std::string& word);

/// A request's stop sequences: a string or an array of strings (anything else, and empty
/// strings, are no stop sequence).
std::vector<std::string> stop_sequences_from(const json::Value* value);

/// The last word of the user's question: the string argument a tool call gets.
std::string question_word(std::string_view question);

/// Pieces of at most `piece` bytes, split on UTF-8 boundaries: the deltas of a stream.
std::vector<std::string> split_for_stream(std::string_view text, std::size_t piece = 24);

}  // namespace nucleo::emulator
