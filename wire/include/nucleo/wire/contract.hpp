// The request contract: the documented request rules of each wire family (wire.101-wire.163),
// each with the provider's own error text, checked over a request body. One rule book, linked by
// the core (the audit after a plugin's encode, wire.150) and by nucleo-emulator (which refuses
// with the same texts), so the two cannot drift. RapidJSON and the standard library only.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nucleo::contract {

/// The wire family a provider plugin declares in its capabilities ("wire_family", wire.149).
enum class WireFamily {
    kUnknown,
    kAnthropicMessages,
    kOpenAIChat,
    kBedrockConverse,
    kGeminiGenerate,
    kOpenAIResponses
};

/// "anthropic-messages", "openai-chat", "bedrock-converse", "gemini-generate",
/// "openai-responses"; anything else is kUnknown.
WireFamily wire_family_from_name(std::string_view name) noexcept;
/// The name wire_family_from_name reads ("unknown" for kUnknown).
std::string_view wire_family_name(WireFamily family) noexcept;

/// One broken rule.
struct Violation {
    std::string rule;     ///< the rule id, "wire.108"
    std::string where;    ///< where in the request ("messages.2.content.0", "path", "header x")
    std::string message;  ///< the provider's own error text (or the rule's, wire.123, wire.150+)
    /// "wire.108 at messages.2: <message>" (one line).
    [[nodiscard]] std::string line() const;
};

/// Which rules run: those the provider itself enforces (what nucleo-emulator refuses), or those
/// plus the core's own contract that the provider would accept (wire.123).
enum class Scope { kProvider, kCore };

/// The family's request rules over a parsed body, in the order the provider reports them: the
/// first one broken, or nullopt. A kUnknown family has no family rules (nullopt). The body's
/// required fields (model, messages, max_tokens) are not rules of the book: a body without them
/// is checked as far as it goes.
std::optional<Violation> check_request(WireFamily family, const rapidjson::Value& body,
                                       Scope scope = Scope::kCore);

/// wire.115: the request size limit a family's provider publishes (0 = none published).
std::size_t published_size_limit(WireFamily family) noexcept;
/// wire.115: a body of `bytes` over the family's published limit, or nullopt.
std::optional<Violation> check_size(WireFamily family, std::size_t bytes);

/// wire.101/120/130: the tool name pattern ^[a-zA-Z0-9_-]{1,64}$ every family accepts.
bool valid_tool_name(std::string_view name) noexcept;

/// wire.172: the bytes past a body's end the audit's reader may read. A body whose buffer has
/// them (a std::string with this much capacity over its size, as the core's producers of a body
/// reserve it) is read in place, else copied.
constexpr std::size_t kReadPadding = 64;

/// The outgoing request a plugin's encode produced, as the audit reads it. The audit is a
/// function over these values so it serves any way the body crosses the plugin boundary.
struct OutgoingRequest {
    std::string_view method;
    std::string_view path;  ///< as the plugin returned it, before the base URL is prepended
    const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
    std::string_view body;                     ///< the body bytes as they would be sent
    /// caching.115: the body is in pieces and `body` is empty; its bytes are the SplitBody that
    /// audit_split_request is given (audit_request needs them in one piece).
    bool body_in_pieces = false;
    /// How many bytes from body.data() may be read: the capacity of the std::string holding the
    /// body (wire.172); body.size() when unknown.
    std::size_t readable = 0;
    const rapidjson::Value* parsed = nullptr;  ///< the parsed body when the caller has it
};

/// What the core decided for this call, which the body must carry (wire.160-wire.163).
struct CallPlan {
    static constexpr std::size_t kDefaultMaxBodyBytes = 32U * 1024U * 1024U;
    std::size_t breakpoints = 0;           ///< the cache plan's breakpoints
    std::vector<std::string> system_texts;  ///< the prepared system blocks, as text
    std::int64_t max_tokens = 0;            ///< the reserved output budget
    std::size_t max_body_bytes = kDefaultMaxBodyBytes;  ///< wire.153's cap
};

/// The audit after encode: the generic checks (wire.150-wire.153) for every family, then for a
/// known family its size limit, the plan checks (system wire.161, breakpoints wire.160,
/// max_tokens wire.163) and its rule book
/// (check_request, Scope::kCore). The first violation, or nullopt.
std::optional<Violation> audit_request(WireFamily family, const OutgoingRequest& request,
                                       const CallPlan& plan);

struct SplitBody;

/// wire.173: one chunk of a request's wire messages, as the per-turn encode cache keeps it (the
/// comma-separated elements of `messages` that encode_split's "turns" gives for a run of turns),
/// with its records read once. It owns its bytes, so the records can never describe other
/// bytes: a request that carries the chunk again is audited without reading them again.
class MessageChunk {
  public:
    /// Reads `wire` (validating it as JSON) into the records `family`'s rules read.
    MessageChunk(WireFamily family, std::string wire);
    ~MessageChunk();
    MessageChunk(MessageChunk&&) noexcept;
    MessageChunk& operator=(MessageChunk&&) noexcept;
    MessageChunk(const MessageChunk&) = delete;
    MessageChunk& operator=(const MessageChunk&) = delete;

    /// The chunk's bytes (empty for a moved-from chunk, which is not readable).
    [[nodiscard]] const std::string& wire() const noexcept;
    [[nodiscard]] WireFamily family() const noexcept;
    /// False when the bytes are not one or more JSON values: a request carrying the chunk is
    /// then audited whole, which decides.
    [[nodiscard]] bool readable() const noexcept;

  private:
    struct Records;
    std::unique_ptr<Records> records_;
    friend std::optional<Violation> audit_split_request(WireFamily, const OutgoingRequest&,
                                                        const SplitBody&, const CallPlan&, bool*,
                                                        bool*);
};

/// wire.173: a body as the per-turn encode cache builds it: open + turns + ("," + chunk)... + close
/// (encode_split's "open", the first run's "turns", the kept or new chunks, its "close").
struct SplitBody {
    std::string_view open;
    std::string_view turns;
    std::string_view close;
    std::vector<const MessageChunk*> chunks;

    /// The body's size in bytes.
    [[nodiscard]] std::size_t size() const noexcept;
    /// The body bytes, with kReadPadding reserved past them (wire.172).
    [[nodiscard]] std::string join() const;
};

/// wire.173: the audit of a body built as `split` (request.body holds split.join()'s bytes; a
/// body of another size is audited whole): the same verdict as audit_request, reading only the
/// head (open, turns, close) and taking the chunks' kept records. The joins are checked to place
/// every chunk's messages inside the root's one "messages" array right after the first run's;
/// when they do not, or a chunk is not readable, the body is audited whole (then `*read_whole`,
/// when given, is set true; false when only the head was read). A request that passes is decided
/// from the head's records, each chunk's summary and the messages where two pieces meet, so it
/// costs the head and the new chunks; one that may not is checked over all the records, which
/// give the verdict's text (`*checked_all`, when given, says which: true for all the records, or
/// for a whole audit or a generic check's refusal). Gemini's `contents` and the Responses API's
/// `input` items have no records: a request of theirs that passes is decided from the parsed
/// head and the chunks' summaries, and one that may not is audited whole (wire.214).
std::optional<Violation> audit_split_request(WireFamily family, const OutgoingRequest& request,
                                             const SplitBody& split, const CallPlan& plan,
                                             bool* read_whole = nullptr,
                                             bool* checked_all = nullptr);

}  // namespace nucleo::contract
