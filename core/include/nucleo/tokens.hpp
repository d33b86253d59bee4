// Token accounting of a conversation: getTotalTokens and the per-part breakdown.
//
// docs/spec/tokens.md: a conversation's tokens are always estimated from scratch with the
// tokenizer (tokens.10); the objective and the artifact registry are counted on the strings
// prepare_messages_for_llm would send (tokens.11); messages are counted by the model's counter from
// their raw content plus per-image/file arithmetic (tokens.13); tool definitions are counted on
// render_tool_definition_text, so the estimate and the text-fallback wire cannot diverge
// (tokens.12). Fresh every time, yet not quadratic (tokens.14).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo {

class Tokenizer;

/// The arithmetic for what a tokenizer cannot read (tokens.13).
/// Decisions, since we have no pixel dimensions or page counts without decoding the payload:
///  - an image costs kImageTokens = 1,600, Anthropic's figure for an image at its ~1.15 megapixel
///    resize ceiling ((width × height) / 750 at 1092×1092), the most an image costs there, and
///    above OpenAI's 765 for a high-detail 1024×1024 image: over-counting is the safe side of a
///    context window;
///  - a file costs kFileTokensPerPage = 2,000 per page (Anthropic: 1,500–3,000 text tokens per
///    PDF page, plus the page image), a page being estimated as every kFileBytesPerPage = 50 KiB of
///    decoded payload, at least one page (a file given by URL counts one page); a text file
///    (media type text/* or application/json) is counted as its decoded bytes / 4 instead;
///  - every message adds kMessageOverheadTokens = 4 for its role framing (OpenAI's published
///    per-message overhead is 3–4), every tool_use and tool_result block kToolBlockOverheadTokens
///    = 8 for its wrapper (ids, names, type tags), as the wire adds them around the raw content.
struct TokenArithmetic {
    static constexpr std::int64_t kImageTokens = 1600;
    static constexpr std::int64_t kFileTokensPerPage = 2000;
    static constexpr std::int64_t kFileBytesPerPage = 50 * 1024;
    static constexpr std::int64_t kMessageOverheadTokens = 4;
    static constexpr std::int64_t kToolBlockOverheadTokens = 8;
};

/// getTotalTokens broken down by part (what `nucleo tokens` prints for a conversation).
struct TokenBreakdown {
    /// Objective values other than tool definitions (system content), counted on their rendered
    /// strings, framework slots (legend, tool-weight guidance) included.
    std::int64_t objective = 0;
    /// Tool definitions in the head plus those declared but not yet announced, each on
    /// render_tool_definition_text. (A definition announced mid-stream is inside its message.)
    std::int64_t tools = 0;
    /// Every message, overhead and attachments included.
    std::int64_t messages = 0;
    /// What rides the turns besides their messages (wire.191): every answer contract and registry
    /// a sent turn carries, plus the registry section (build_artifact_registry_section()) when
    /// the next call will add it (it differs from the latest one sent).
    std::int64_t artifacts = 0;
    /// One count per message, in order.
    std::vector<std::int64_t> per_message;

    [[nodiscard]] std::int64_t total() const noexcept {
        return objective + tools + messages + artifacts;
    }
};

/// Cache counters of a TokenCounter, for tests and diagnostics. A message "hit" is a message
/// whose count came from the memo (by content hash); a "miss" ran the tokenizer over it. A
/// "prefix hit" is a total that reused the running sum of an unchanged message prefix.
struct TokenCacheStats {
    std::uint64_t message_hits = 0;
    std::uint64_t message_misses = 0;
    std::uint64_t prefix_hits = 0;
};

/// The model's token counter: counts text with one named Tokenizer and conversations as
/// docs/spec/tokens.md says. Thread-safe: one counter serves any number of threads at once.
///
/// Memoization (tokens.14: per-message counts memoized by content, so appending one message
/// to a 10,000-message conversation and asking again costs about the new message alone):
///  - each message's count is memoized under a 64-bit hash of its blocks (their kinds and every
///    field the count reads), so an identical message is tokenized once per process;
///  - the sum over a conversation's messages is remembered per messages_epoch() with the number
///    of messages it covers: while the epoch is unchanged the list only grew by appends, so the
///    next total adds the new messages alone (no walk over the old ones).
/// Both memos are bounded (cleared when they pass kMaxMemoEntries / kMaxPrefixEntries): a cache,
/// never a leak. The objective, tools and registry are re-rendered on every call (they are small
/// and may change freely before the freeze) and their strings memoized by hash too.
class TokenCounter {
  public:
    static constexpr std::size_t kMaxMemoEntries = 1 << 20;
    static constexpr std::size_t kMaxPrefixEntries = 4096;

    /// A counter over `tokenizer` (which outlives it; Tokenizer::get's are process-lived). Every
    /// text count is multiplied by `calibration` and rounded up (tokens.103: the model's tokens per
    /// token of its counter).
    explicit TokenCounter(const Tokenizer& tokenizer, double calibration = 1.0);
    ~TokenCounter();
    TokenCounter(const TokenCounter&) = delete;
    TokenCounter& operator=(const TokenCounter&) = delete;

    /// The process-wide counter of the model's catalog counter (ModelSpec::token_counter) at its
    /// calibration (ModelSpec::token_calibration), made on first use; its memo is shared by every
    /// caller of the same counter and calibration. Throws what Tokenizer::get throws.
    static TokenCounter& for_model(const ModelSpec& model);

    [[nodiscard]] const Tokenizer& tokenizer() const noexcept;

    /// Tokens of a text.
    [[nodiscard]] std::int64_t count_text(std::string_view text) const;
    /// Tokens of one block (raw content plus the arithmetic above; not memoized). tokens.101:
    /// with the conversation's `registry`, a PojoBlock counts as the string
    /// write_summarized_with_refs sends (each artifact the registry holds as its reference);
    /// without one, as its raw JSON.
    [[nodiscard]] std::int64_t count_block(const ContentBlock& block,
                                           const ArtifactRegistry* registry = nullptr) const;
    /// Tokens of a message: its blocks plus kMessageOverheadTokens; memoized by content (a
    /// PojoBlock by the string it is sent as). Conversation totals pass the conversation's
    /// registry.
    [[nodiscard]] std::int64_t count_message(const Message& message,
                                             const ArtifactRegistry* registry = nullptr) const;
    /// Tokens of a tool definition, on render_tool_definition_text.
    [[nodiscard]] std::int64_t count_tool_definition(const ToolDefinitionBlock& definition) const;

    /// tokens.10: objective + tools + messages + artifact registry, counted on
    /// what prepare would send, WITHOUT rendering (counting never freezes the objective).
    [[nodiscard]] std::int64_t total_tokens(const ConversationContext& conversation) const;
    /// The same, by part and per message (walks every message; memo hits keep it cheap).
    [[nodiscard]] TokenBreakdown breakdown(const ConversationContext& conversation) const;
    /// The fixed part of a conversation's count: objective + tools + artifact registry.
    [[nodiscard]] std::int64_t fixed_tokens(const ConversationContext& conversation) const;

    [[nodiscard]] TokenCacheStats stats() const;
    /// Empties both memos (tests; a process that wants its memory back).
    void clear_cache();

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

/// tokens.10: the conversation's only token number, by `model`'s counter.
std::int64_t get_total_tokens(const ConversationContext& conversation, const ModelSpec& model);

}  // namespace nucleo
