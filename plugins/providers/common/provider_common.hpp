// The JSON reading and writing the in-tree provider dialects (anthropic, openai, bedrock) share
// (abi.101): looking members up, the provider request's head (docs/provider-abi-documents.md
// "encode ← provider request"), the block kinds of the conversation document, the normalized
// response with its blocks, stop reason and usage ("decode"), and the mapping and quoting of
// error answers.
// Against plugin-api/ and RapidJSON only; linked statically into each plugin with hidden
// visibility, so nothing here is exported and every plugin still loads alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <optional>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/wire/json_escape.hpp"
#include "nucleo/wire/json_guard.hpp"
#include "nucleo/plugin.hpp"

namespace nucleo::providers {

using Value = rapidjson::Value;
/// conversation.104: RapidJSON's Writer with the shared escaper's strings and keys.
using JsonWriter = json_escape::StringWriter;

// ---- per-call scratch (limits.134) ------------------------------------------------------------

/// limits.134: a scratch buffer whose capacity grew above this is freed when its lease ends.
inline constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;
/// limits.134: at most this many buffers of one type rest in the plugin's pool.
inline constexpr std::size_t kScratchPoolSize = 4;

/// limits.134: a lease of one of the plugin's per-call buffers (std::string or
/// rapidjson::StringBuffer): the in-situ copy of a provider request, an encoder's output. It is
/// empty when leased and goes back to the pool cleared, its capacity kept, when the lease ends
/// (freed instead above kScratchKeepBytes), so a long conversation's megabyte buffers are not
/// allocated and faulted in afresh on every call. Nothing written survives a lease: an encode
/// stays a pure function of its input; the pool is the plugin's, under a mutex, and a buffer is
/// leased to one caller at a time.
template <class T>
class Scratch {
  public:
    Scratch();
    ~Scratch();
    Scratch(Scratch&& other) noexcept = default;
    Scratch& operator=(Scratch&&) = delete;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    [[nodiscard]] T& operator*() const noexcept { return *value_; }
    [[nodiscard]] T* operator->() const noexcept { return value_.get(); }

  private:
    std::unique_ptr<T> value_;
};

extern template class Scratch<std::string>;
extern template class Scratch<rapidjson::StringBuffer>;

/// What the plugin's pool of T keeps between leases, for tests.
struct ScratchKept {
    std::size_t buffers = 0;
    std::size_t bytes = 0;  ///< the sum of the resting buffers' capacities
};
template <class T>
[[nodiscard]] ScratchKept scratch_kept() noexcept;
/// For tests: the keep bound of the plugin's pool of T; 0 restores kScratchKeepBytes.
template <class T>
void set_scratch_keep_bytes(std::size_t bytes) noexcept;

// ---- reading ---------------------------------------------------------------------------------

/// The characters of a string value.
inline std::string_view view(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

/// The member `key` of `object`, or nullptr (also when `object` is not an object). Inline, the
/// key's length known at the call: the encoders look members up on every block.
inline const Value* member(const Value& object, std::string_view key) {
    if (!object.IsObject()) return nullptr;
    for (const auto& m : object.GetObject()) {
        // Length, then the last byte ("type" and "text"), before the whole key.
        if (m.name.GetStringLength() == key.size() &&
            (key.empty() || (m.name.GetString()[key.size() - 1] == key.back() &&
                             std::memcmp(m.name.GetString(), key.data(), key.size()) == 0))) {
            return &m.value;
        }
    }
    return nullptr;
}

/// `member` through a pointer, for chains whose links may be absent: nullptr in, nullptr out.
inline const Value* member(const Value* object, std::string_view key) {
    return object != nullptr ? member(*object, key) : nullptr;
}

/// The string `v` holds; "" when `v` is nullptr or not a string.
inline std::string_view text_or_empty(const Value* v) {
    return v != nullptr && v->IsString() ? view(*v) : std::string_view();
}

/// The count (a non-negative integer) `v` holds; 0 when `v` is nullptr or holds anything else.
inline std::int64_t count_or_zero(const Value* v) {
    return v != nullptr && v->IsInt64() && v->GetInt64() >= 0 ? v->GetInt64() : 0;
}

/// The member `key` when it is a string, else nullptr.
const Value* string_member(const Value& object, std::string_view key);

/// Empty or only ASCII whitespace (space, tab, CR, LF, VT, FF): text no dialect sends.
bool is_blank(std::string_view text);

/// Throws plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT) with "<plugin>: <what>": a provider
/// request this dialect cannot express, or one off the documented shape.
[[noreturn]] void refuse(std::string_view plugin, const std::string& what);

/// Parses a JSON document in place from `buffer`, a private copy of `json` padded for RapidJSON's
/// SSE2 scanner (which may read up to 15 bytes past the terminating NUL); strings of the document
/// point into `buffer` at the offsets of their tokens in `json`. A parse error is refused naming
/// the byte offset.
void parse_request(std::string_view json, std::string& buffer, rapidjson::Document& doc,
                   std::string_view plugin);

/// Checks a provider instance's configuration: empty, or a JSON object. Anything else throws
/// Failure(NUCLEO_ERR_CONFIG) naming the plugin, so a typo is refused at create, not ignored.
void check_instance_config(std::string_view config_json, std::string_view plugin);

// ---- the two halves of an HTTP request (abi.106) -----------------------------------------------

/// A plugin::Sink into a std::string of the plugin's own (not movable: the C sink points at it).
class StringSink {
  public:
    StringSink() noexcept;
    StringSink(const StringSink&) = delete;
    StringSink& operator=(const StringSink&) = delete;
    [[nodiscard]] plugin::Sink& sink() noexcept { return wrapped_; }
    [[nodiscard]] const std::string& text() const noexcept { return text_; }

  private:
    std::string text_;
    nucleo_sink c_sink_;
    plugin::Sink wrapped_;
};

/// encode for a dialect written as encode_parts: `parts(request, head, body)` writes the head
/// document and the body bytes, and `out` receives the one document of ABI 1.0-1.2, the head with
/// "body" as its last member. The body must be a JSON text.
void encode_joined(std::string_view request, plugin::Sink& out,
                   const std::function<void(std::string_view, plugin::Sink&, plugin::Sink&)>& parts);

/// abi.108: where the prepared turns' wire messages lie in an encoded body, [begin, end): their
/// elements of the messages array, comma-separated, with no leading or trailing comma.
struct TurnSpan {
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// encode_split (abi.108) for a dialect that knows the span of its body: head as written, open
/// the bytes before the span, turns the span, close the bytes after it. A span outside the body
/// is the plugin's bug (NUCLEO_ERR_INTERNAL).
void write_split(std::string_view head_text, std::string_view body, TurnSpan span, plugin::Sink& head,
                 plugin::Sink& open, plugin::Sink& turns, plugin::Sink& close);

// ---- the provider request --------------------------------------------------------------------

/// The members of a provider request every dialect reads, checked once:
///  - schema_version: absent or 1;
///  - model.wire_model (else model.id): a non-empty string;
///  - max_tokens: a positive integer (the resolved output reserve);
///  - stream: absent, null or a boolean;
///  - cache_ttl: absent, null, "5m" or "1h";
///  - thinking: absent, null or an object; when thinking.active is true, thinking.budget_tokens
///    is a non-negative integer;
///  - options: absent, null or an object;
///  - prepared: an object.
/// Anything else is refused (refuse()) naming the member.
struct RequestHead {
    std::string_view wire_model;
    std::int64_t max_tokens = 0;
    bool stream = false;
    std::string_view cache_ttl;  ///< "", "5m" or "1h"
    bool thinking_active = false;
    std::int64_t thinking_budget = 0;  ///< 0 unless thinking_active
    /// docs/provider-abi-documents.md `thinking.form`: the thinking form the model's record says
    /// this call sends ("enabled", "adaptive", "between_tools", "disabled"), or empty: no form
    /// (an effort alone, or nothing). A request of an older core, which names neither a form nor
    /// an effort, reads as "enabled" when thinking is active.
    std::string_view thinking_form;
    /// `thinking.effort`: the effort level to send (Anthropic `output_config.effort`, OpenAI
    /// `reasoning_effort`, Converse `outputConfig.effort`), or empty: none is sent.
    std::string_view thinking_effort;
    const Value* options = nullptr;    ///< an object, or nullptr
    const Value* prepared = nullptr;   ///< an object
    /// caching.118 `model.caching`: "explicit", "automatic" or "none" (empty from an older core,
    /// which sent no such field: read as the dialect always read it).
    std::string_view caching;
    /// caching.118 `cache_key`: the conversation's id, sent on a model that caches; else empty.
    std::string_view cache_key;
};

RequestHead read_request_head(const Value& request, std::string_view plugin);

/// The decided cache plan of a prepared request (caching.1-5; docs/provider-abi-documents.md
/// `prepared.cache_plan`), read and checked before anything is rendered: indices are
/// non-negative integers, no anchor twice, at most `max` breakpoints in all (else a refusal
/// naming `api`), and `breakpoints`, when given, their count. A refusal is `plugin`'s
/// NUCLEO_ERR_INVALID_ARGUMENT.
struct WirePlan {
    std::optional<std::size_t> system_block;
    std::vector<std::pair<std::size_t, std::size_t>> anchors;  ///< (turn, block)
    bool automatic = false;  ///< caching.106: the request-level marker
    bool system_1h = false;  ///< caching.107: the system breakpoint at the 1-hour TTL

    [[nodiscard]] bool anchored(std::size_t turn, std::size_t block) const;
    [[nodiscard]] std::size_t total() const {
        return anchors.size() + (system_block ? 1 : 0) + (automatic ? 1 : 0);
    }
};

WirePlan read_cache_plan(const Value& prepared, std::string_view plugin, std::size_t max,
                         std::string_view api);

/// The block types of the conversation document (docs/conversation-document.md "Blocks").
enum class BlockKind : std::uint8_t {
    kText,
    kJson,
    kSkill,
    kImage,
    kFile,
    kToolUse,
    kToolResult,
    kThinking,
    kRedactedThinking,
    kOther,
};

/// The kind a block's "type" names; kOther for a type the document does not define.
BlockKind block_kind(std::string_view type);

/// The kind of `block`, which must be an object whose "type" names a block kind of the
/// conversation document; anything else is refused (refuse()) as "<where>...". `where` is
/// called only to refuse.
BlockKind block_kind_of(const Value& block, std::string_view plugin,
                        const std::function<std::string()>& where);

/// text, json and skill: the kinds that render as plain text.
inline bool text_like(BlockKind k) {
    return k == BlockKind::kText || k == BlockKind::kJson || k == BlockKind::kSkill;
}

// ---- answers ---------------------------------------------------------------------------------

/// The first bytes of a body (at most `limit`, never cutting a UTF-8 character in two) as one
/// printable line: quoted, '"' and '\\' escaped, control bytes as \xNN, and "..." when cut.
std::string quote_first_bytes(std::string_view body, std::size_t limit = 200);

/// A refusal of the guarded JSON reader (json_guard.hpp, limits.120 to limits.122), every
/// dialect parsing answers and events through it, in the words of a decode error:
/// "<reason> at byte N", or "<reason> at <path>" for a duplicate key.
std::string refusal_words(const json_guard::Refusal& refusal);

/// Throws plugin::Failure(NUCLEO_ERR_PROTOCOL) with "<plugin>: HTTP <status> answer <what>; first
/// bytes: <quote>", carrying the HTTP status: a 2xx answer off its wire format.
[[noreturn]] void off_format(std::string_view plugin, int32_t http_status, const std::string& what,
                             std::string_view body);

/// The plugin.h status of an error answer by its HTTP status alone: 429 rate limited, 408 and
/// every 5xx (529 included) overloaded, 401/402/403 config, 404 not found, other 4xx invalid
/// argument, anything else protocol (1xx and 3xx are not answers).
int32_t status_for_http(int32_t http_status);

/// Equal but for ASCII case.
bool iequals(std::string_view a, std::string_view b);

/// A header's value from the host's {"name": "value"} document, the name matched without regard
/// to case; "" when absent or when the document is unreadable.
std::string header(std::string_view headers_json, std::string_view name);

/// Calls `on_data` with the data of each server-sent event of `body`, in order: the `data:`
/// lines of one event (one leading space dropped) joined by '\n', dispatched at a blank line and
/// at the end of the body. Other fields (event:, id:, comments) are passed over.
void for_each_sse_data(std::string_view body, const std::function<void(std::string_view)>& on_data);

/// Token counts of one answer in the normalized split: input_tokens without any cached tokens.
struct Usage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    /// caching.108: the part of cache_write at the 1-hour TTL; written only when not 0.
    std::int64_t cache_write_1h = 0;
};

/// Writes the normalized response document: {"schema_version":1, "model"?, "blocks":[...],
/// "stop_reason", "usage":{input_tokens, output_tokens, cache_read_tokens, cache_write_tokens}}.
/// Blocks are written in the order their verbs are called; finish() closes the document.
class ResponseWriter {
  public:
    /// `with_model`: write "model" (a dialect whose answers do not name it leaves it out).
    explicit ResponseWriter(std::string_view model, bool with_model = true);

    void text(std::string_view text);
    void thinking(std::string_view thinking, std::string_view signature);
    void redacted_thinking(std::string_view data);
    /// A tool call whose input is `input` (an object), or {} when nullptr.
    void tool_use(std::string_view id, std::string_view name, const Value* input);
    /// A tool call whose input is `input_json`, the compact JSON text of an object.
    void tool_use_raw(std::string_view id, std::string_view name, std::string_view input_json);
    /// answers.110: a block of the provider's own that the document does not model, kept as
    /// `block_json` (the JSON text of an object with a "type"), of `wire_family`.
    void provider_block(std::string_view wire_family, std::string_view block_json);

    /// caching.131: the answer's own id at its provider, written by finish() ("response_id").
    void response_id(std::string_view id) { response_id_ = id; }
    /// caching.131: the provider's diagnosis of a cache miss, written by finish() ("cache_miss"):
    /// `reason` its word ("pending" when not ready), `missed_input_tokens` -1 when not given.
    void cache_miss(std::string_view reason, std::int64_t missed_input_tokens) {
        cache_miss_reason_ = reason;
        cache_missed_ = missed_input_tokens;
    }

    /// Closes the blocks, writes the stop reason and the usage, and returns the document.
    [[nodiscard]] std::string finish(std::string_view stop_reason, const Usage& usage);

  private:
    void open_tool_use(std::string_view id, std::string_view name);
    void string(std::string_view s);

    rapidjson::StringBuffer out_;
    JsonWriter w_;
    std::string response_id_;
    std::string cache_miss_reason_;
    std::int64_t cache_missed_ = -1;
};

}  // namespace nucleo::providers
