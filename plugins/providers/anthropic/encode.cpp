// encode: the provider request (docs/provider-abi-documents.md) → POST /v1/messages.
//
// What the Messages API gets, and the decisions taken where the contract is silent:
//  - `system`: the prepared system blocks as text blocks, in order (channel.2, channel.3:
//    the objective is the conversation's only system content and a provider with a
//    system channel puts it there). `text` as is, `skill` as its content (the core's own text
//    rendering), `json` as its compact JSON. No system blocks → no `system` field.
//  - `messages`: each prepared turn in order. Consecutive turns of one role are concatenated into
//    one message (channel.6: a dialect that needs strict alternation concatenates
//    adjacent same-role turns in order). In a user message every `tool_result` block leads, in
//    order, followed by the other blocks in order: the API wants the results at the beginning of
//    the message that answers a `tool_use`.
//  - Blank text is never sent: a `text` or `skill` block that is empty or whitespace only is
//    dropped (also inside a tool_result). A turn left with nothing is refused, naming the turn —
//    it is never sent blank. A cache anchor on a dropped block is refused too: dropping or moving
//    that breakpoint would change the core's plan.
//  - `image` and `file` blocks: the media type decides. `image/*` becomes an image block, anything
//    else a document block. Base64 data goes as a base64 source: images only as jpeg, png, gif or
//    webp, documents only as application/pdf; a `text/*` file is decoded and sent as the API's
//    plain-text source (its only text-document form). A URL goes as a url source (the API fetches
//    it and finds the type itself). A file's non-empty `name` is the document's title (cut to 500
//    bytes, the API's limit). Any other media type with data is refused, naming it.
//  - `tool_use` {id, name, input}; `tool_result` {tool_use_id, content, is_error}: `is_error` is
//    written only when true (the API's default is false) and `content` only when something is
//    left in it; `thinking` {thinking, signature}; `redacted_thinking` {data}; a
//    `provider_block` of this wire family as its `block`, unchanged (answers.110; one of another
//    family, or one marked for the cache, is refused: the core never sends either).
//  - `cache_control: {"type": "ephemeral"}` (plus `"ttl": "1h"` when cache_ttl is "1h") on exactly
//    the system block and turn blocks the cache plan names — caching.2:
//    Anthropic allows 4 cache breakpoints per request. The plan is checked (at most 4, in range,
//    no duplicates, not on a thinking block, equal to its own `breakpoints` count) and the rendered
//    count is checked against it: the plugin adds, drops or moves nothing.
//  - `tools`: prepared.tool_definitions as {name, description, input_schema}; a schema without a
//    `type` gets `"type": "object"` (the API requires it), one of another type is refused; no
//    schema is `{"type": "object"}` (a tool without parameters).
//  - `thinking`: the form the core chose from the model's record (catalog.5): `{"type":
//    "enabled", "budget_tokens": N}` (N at least 1024 and below max_tokens; either violation is
//    refused naming both numbers: the core sends max_tokens = output + reasoning, so a failure is
//    the core's bug), `{"type": "adaptive"}`, `{"type": "between_tools"}` or `{"type":
//    "disabled"}`; `output_config: {"effort": E}` when the request names an effort. A request
//    without `thinking.form` (an older core) sends the enabled form when thinking is active.
//  - `max_tokens` as the request says (at least 1); `stream: true` only when asked;
//    `diagnostics: {"previous_message_id": ID or null}` when the request carries `diagnostics`
//    (caching.131: generally available, no beta).
//  - A `tool_definition` block in a user turn (tools.103: a tool declared late, on a model whose
//    record takes tool changes) is left out of the user message and written, with the other
//    definitions of the run in order, as one `role: "system"` message of `tool_addition` blocks
//    (`{"type": "tool_addition", "tool": {"type": "tool_definition", "definition": TOOL}}`, TOOL
//    as a `tools` entry) right after the user message: the API takes a system message after a
//    user turn and before the assistant turn, and `tools` stays as it was, so does the cached
//    prefix. One in an assistant turn, one the cache plan anchors, and a user run of nothing but
//    definitions (its message would be empty) are refused, naming the block.
//  - `thread` (wire.211): the request's `thread` as the body's, `{"type": "create"}` or
//    `{"type": "continue", "previous_message_id": ID}`; anything else is refused, naming the field.
//    A continue leaves `tools` out: the provider's thread holds them (and the core hands a
//    continue no system blocks), as the SDK's thread helper does.
//  - Headers: anthropic-version from options.anthropic_version (default "2023-06-01"),
//    content-type, and anthropic-beta: the flags options.anthropic_beta names (a string or an
//    array of strings, joined by commas), plus `inline-tools-2026-09-15` when a tool addition is
//    written (the beta that takes a definition by value) and `message-threads-2026-08-12` when a
//    thread is, each once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "anthropic.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::anthropic {
namespace {

using nucleo::plugin::Failure;
using rapidjson::Value;
using Writer = providers::JsonWriter;

constexpr std::size_t kMaxBreakpoints = 4;  // caching.2
constexpr std::int64_t kMinThinkingBudget = 1024;
constexpr std::size_t kMaxTitleBytes = 500;
constexpr const char* kDefaultVersion = "2023-06-01";

[[noreturn]] void refuse(const std::string& what) {
    providers::refuse("anthropic", what);
}

using providers::view;

/// A member of an object, or nullptr.
inline const Value* find(const Value& object, std::string_view key) {
    return providers::member(object, key);
}

/// Where a value sits in the provider request. Formatted only when something is refused, so the
/// hot path builds no strings.
struct Where {
    const char* list = "prepared.turns";
    std::size_t index = 0;
    const Value* turn = nullptr;  // the turn object, for its message_id
    std::ptrdiff_t block = -1;
    std::ptrdiff_t inner = -1;  // a block inside a tool_result's content

    [[nodiscard]] Where at_block(std::size_t b) const {
        Where w = *this;
        w.block = static_cast<std::ptrdiff_t>(b);
        return w;
    }
    [[nodiscard]] Where at_inner(std::size_t i) const {
        Where w = *this;
        w.inner = static_cast<std::ptrdiff_t>(i);
        return w;
    }
    [[nodiscard]] std::string str() const {
        std::string s = std::string(list) + "[" + std::to_string(index) + "]";
        if (turn != nullptr) {
            const Value* id = find(*turn, "message_id");
            if (id != nullptr && id->IsString() && id->GetStringLength() > 0) {
                s += " (message \"" + std::string(view(*id)) + "\")";
            }
        }
        if (block >= 0) s += ".blocks[" + std::to_string(block) + "]";
        if (inner >= 0) s += ".content[" + std::to_string(inner) + "]";
        return s;
    }
};

const Value& need_string(const Value& object, std::string_view key, const Where& where) {
    const Value* v = find(object, key);
    if (v == nullptr || !v->IsString()) {
        refuse(where.str() + " lacks the string \"" + std::string(key) + "\"");
    }
    return *v;
}

using Kind = providers::BlockKind;
using providers::is_blank;

/// A block looked at once: its type, and for the text-like kinds the text that is sent.
struct Inspected {
    const Value* block;
    std::string_view type;
    Kind kind;
    const Value* text;  // text and skill blocks: the string sent
    bool dropped;       // blank text: never sent (channel.12)
};

Inspected inspect(const Value& block, const Where& where) {
    if (!block.IsObject()) refuse(where.str() + " is not a block object");
    const std::string_view type = view(need_string(block, "type", where));
    Inspected in{&block, type, providers::block_kind(type), nullptr, false};
    if (in.kind == Kind::kText || in.kind == Kind::kSkill) {
        in.text = &need_string(block, in.kind == Kind::kText ? "text" : "content", where);
        in.dropped = is_blank(view(*in.text));
    }
    return in;
}

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/// Standard or URL-safe base64, padding optional, whitespace ignored; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view in) {
    std::string out;
    out.reserve(in.size() / 4 * 3);
    std::uint32_t acc = 0;
    int bits = 0;
    bool padding = false;
    for (char c : in) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        if (c == '=') {
            padding = true;
            continue;
        }
        const int v = base64_value(c);
        if (v < 0 || padding) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    if (bits >= 6) return std::nullopt;  // a lone trailing character carries no whole byte
    return out;
}

/// Cuts to at most `max` bytes without splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max) {
    if (s.size() <= max) return s;
    std::size_t n = max;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return s.substr(0, n);
}

/// The decided cache plan (caching.1-5), checked before anything is rendered.
using Plan = providers::WirePlan;

Plan read_plan(const Value& prepared) {
    return providers::read_cache_plan(prepared, "anthropic", kMaxBreakpoints, "Messages API");
}

/// Where the parsed strings live and where they came from. A string whose raw JSON form holds no
/// backslash is copied as its original bytes instead of being unescaped and escaped again: the
/// Writer's per-character escaping was most of an encode (bench/encode). The bytes are the ones
/// Writer::String would write: it escapes only '"', '\\' and control characters, and a raw form
/// without a backslash has none of them (the parser refuses raw control characters).
struct Source {
    const char* parsed_begin;  // the in-situ parsed copy
    const char* parsed_end;
    const char* original;  // the request as the host passed it, same offsets
};

/// The block kinds a system block, a turn block and a tool_result's content block may be.
enum class Place { kSystem, kTurn, kToolResult };

class Encoder {
  public:
    Encoder(Writer& w, rapidjson::StringBuffer& out, Source source, bool ttl_1h)
        : w_(w), out_(out), source_(source), ttl_1h_(ttl_1h) {}

    [[nodiscard]] std::size_t breakpoints_written() const { return breakpoints_; }
    /// caching.107: the TTL of the breakpoints written from now on ("1h" when true).
    void set_ttl_1h(bool one_hour) { ttl_1h_ = one_hour; }
    [[nodiscard]] bool ttl_1h() const { return ttl_1h_; }
    /// caching.106: the request-level marker, written as a member of the body.
    void request_cache_control() { cache_control(); }

    void text(const Value& text, bool cache) {
        // The commonest block, and the whole of it is known bytes around one string: when that
        // string needs no escaping, the block is written as one raw value.
        if (const std::string_view raw = quoted(text); !raw.empty()) {
            w_.RawValue(raw.data(), 0, rapidjson::kObjectType);  // the separator only
            append(R"({"type":"text","text":)");
            append(raw);
            if (cache) {
                append(ttl_1h_ ? R"(,"cache_control":{"type":"ephemeral","ttl":"1h"})"
                               : R"(,"cache_control":{"type":"ephemeral"})");
                ++breakpoints_;
            }
            append("}");
            return;
        }
        w_.StartObject();
        w_.Key("type");
        w_.String("text");
        w_.Key("text");
        string(text);
        if (cache) cache_control();
        w_.EndObject();
    }

    /// One block of the conversation document in Messages API form (blank ones were filtered by
    /// the caller). `cache` puts the planned breakpoint on it.
    void block(const Inspected& in, bool cache, Place place, const Where& where) {
        const Value& b = *in.block;
        const bool turn = place == Place::kTurn;
        if (turn && in.type == "provider_block") {
            provider_block(b, cache, where);
            return;
        }
        switch (in.kind) {
            case Kind::kText:
            case Kind::kSkill:
                text(*in.text, cache);
                return;
            case Kind::kJson: {
                const Value* json = find(b, "json");
                if (json == nullptr) refuse(where.str() + " lacks \"json\"");
                rapidjson::StringBuffer buf;
                providers::JsonWriter inner(buf);
                json->Accept(inner);
                text(Value(rapidjson::StringRef(buf.GetString(), buf.GetSize())), cache);
                return;
            }
            case Kind::kImage:
            case Kind::kFile:
                if (place == Place::kSystem) refuse(where.str() + ": the system takes text only");
                media(b, in.type, cache, where);
                return;
            case Kind::kToolUse:
                if (!turn) break;
                tool_use(b, cache, where);
                return;
            case Kind::kToolResult:
                if (!turn) break;
                tool_result(b, cache, where);
                return;
            case Kind::kThinking: {
                if (!turn) break;
                const Value& thinking = need_string(b, "thinking", where);
                const Value* sig = find(b, "signature");
                const std::string_view raw = quoted(thinking);
                const std::string_view raw_sig =
                    sig != nullptr && sig->IsString() ? quoted(*sig) : std::string_view("\"\"");
                if (!raw.empty() && !raw_sig.empty()) {  // as text(): one raw value
                    w_.RawValue(raw.data(), 0, rapidjson::kObjectType);
                    append(R"({"type":"thinking","thinking":)");
                    append(raw);
                    append(R"(,"signature":)");
                    append(raw_sig);
                    append("}");
                    return;
                }
                w_.StartObject();
                w_.Key("type");
                w_.String("thinking");
                w_.Key("thinking");
                string(thinking);
                w_.Key("signature");
                if (sig != nullptr && sig->IsString()) {
                    string(*sig);
                } else {
                    w_.String("");
                }
                w_.EndObject();
                return;
            }
            case Kind::kRedactedThinking:
                if (!turn) break;
                w_.StartObject();
                w_.Key("type");
                w_.String("redacted_thinking");
                w_.Key("data");
                string(need_string(b, "data", where));
                w_.EndObject();
                return;
            case Kind::kOther:
                break;
        }
        refuse(where.str() + ": a \"" + std::string(in.type) + "\" block cannot be sent " +
               (place == Place::kSystem       ? "as system content"
                : place == Place::kToolResult ? "inside a tool_result"
                                              : "in a turn"));
    }

  private:
    /// answers.110: a block of the Messages API this plugin does not model (compaction, server
    /// tools, MCP, a later kind), sent back as the answer held it. One of another wire family
    /// never reaches a plugin (the core leaves it out); a request that has one is refused.
    void provider_block(const Value& b, bool cache, const Where& where) {
        const Value& family = need_string(b, "wire_family", where);
        if (view(family) != kWireFamily)
            refuse(where.str() + ": a provider block of wire family \"" +
                   std::string(view(family)) + "\" cannot be sent to the Messages API (" +
                   std::string(kWireFamily) + ")");
        const Value* inner = find(b, "block");
        if (inner == nullptr || !inner->IsObject() || find(*inner, "type") == nullptr)
            refuse(where.str() + ": a provider block lacks its \"block\" object with a \"type\"");
        if (cache) refuse(where.str() + ": a provider block cannot carry a cache breakpoint");
        inner->Accept(w_);
    }

    /// The original JSON bytes of a parsed string, quotes included, when they hold no escape;
    /// else empty (see Source).
    [[nodiscard]] std::string_view quoted(const Value& v) const {
        const char* p = v.GetString();
        const std::size_t n = v.GetStringLength();
        if (p > source_.parsed_begin && p + n < source_.parsed_end) {
            const char* raw = source_.original + (p - source_.parsed_begin);
            if (raw[-1] == '"' && raw[n] == '"' && std::memchr(raw, '\\', n) == nullptr) {
                return {raw - 1, n + 2};
            }
        }
        return {};
    }

    /// Bytes straight to the writer's buffer: only right after a RawValue() call that wrote the
    /// separator of the value these bytes complete (the writer keeps no other pending state).
    void append(std::string_view bytes) {
        std::memcpy(out_.Push(bytes.size()), bytes.data(), bytes.size());
    }

    void string(const Value& v) {
        if (const std::string_view raw = quoted(v); !raw.empty()) {
            w_.RawValue(raw.data(), 0, rapidjson::kStringType);  // the separator only
            append(raw);
            return;
        }
        w_.String(v.GetString(), v.GetStringLength());
    }

    void cache_control() {
        w_.Key("cache_control");
        w_.StartObject();
        w_.Key("type");
        w_.String("ephemeral");
        if (ttl_1h_) {
            w_.Key("ttl");
            w_.String("1h");
        }
        w_.EndObject();
        ++breakpoints_;
    }

    void media(const Value& b, std::string_view type, bool cache, const Where& where) {
        const std::string_view media_type = view(need_string(b, "media_type", where));
        const Value* data = find(b, "data");
        const Value* url = find(b, "url");
        if ((data != nullptr) == (url != nullptr) || (data != nullptr && !data->IsString()) ||
            (url != nullptr && !url->IsString())) {
            refuse(where.str() + ": an " + std::string(type) +
                   " block needs exactly one of the strings \"data\" and \"url\"");
        }
        const bool image = media_type.starts_with("image/");
        w_.StartObject();
        w_.Key("type");
        w_.String(image ? "image" : "document");
        w_.Key("source");
        w_.StartObject();
        w_.Key("type");
        if (url != nullptr) {
            w_.String("url");
            w_.Key("url");
            string(*url);
        } else if (image) {
            if (media_type != "image/jpeg" && media_type != "image/png" &&
                media_type != "image/gif" && media_type != "image/webp") {
                refuse(where.str() +
                       ": the Messages API takes base64 images as image/jpeg, "
                       "image/png, image/gif or image/webp, not " +
                       std::string(media_type));
            }
            base64_source(media_type, *data);
        } else if (media_type == "application/pdf") {
            base64_source(media_type, *data);
        } else if (media_type.starts_with("text/")) {
            const std::optional<std::string> text = base64_decode(view(*data));
            if (!text) refuse(where.str() + ": \"data\" is not base64");
            w_.String("text");
            w_.Key("media_type");
            w_.String("text/plain");
            w_.Key("data");
            w_.String(text->data(), static_cast<rapidjson::SizeType>(text->size()));
        } else {
            refuse(where.str() +
                   ": the Messages API takes base64 documents as application/pdf "
                   "or text, not " +
                   std::string(media_type) + " (send it by \"url\")");
        }
        w_.EndObject();
        if (!image) {
            const Value* name = find(b, "name");
            if (name != nullptr && name->IsString() && !is_blank(view(*name))) {
                const std::string_view title = utf8_prefix(view(*name), kMaxTitleBytes);
                w_.Key("title");
                w_.String(title.data(), static_cast<rapidjson::SizeType>(title.size()));
            }
        }
        if (cache) cache_control();
        w_.EndObject();
    }

    void base64_source(std::string_view media_type, const Value& data) {
        w_.String("base64");
        w_.Key("media_type");
        w_.String(media_type.data(), static_cast<rapidjson::SizeType>(media_type.size()));
        w_.Key("data");
        string(data);
    }

    void tool_use(const Value& b, bool cache, const Where& where) {
        w_.StartObject();
        w_.Key("type");
        w_.String("tool_use");
        w_.Key("id");
        string(need_string(b, "id", where));
        w_.Key("name");
        string(need_string(b, "name", where));
        w_.Key("input");
        const Value* input = find(b, "input");
        if (input == nullptr || input->IsNull()) {
            w_.StartObject();
            w_.EndObject();
        } else if (input->IsObject()) {
            input->Accept(w_);
        } else {
            refuse(where.str() + ": a tool_use \"input\" must be an object");
        }
        if (cache) cache_control();
        w_.EndObject();
    }

    void tool_result(const Value& b, bool cache, const Where& where) {
        w_.StartObject();
        w_.Key("type");
        w_.String("tool_result");
        w_.Key("tool_use_id");
        string(need_string(b, "tool_use_id", where));
        const Value* content = find(b, "content");
        if (content != nullptr && !content->IsNull()) {
            if (!content->IsArray())
                refuse(where.str() + ": tool_result \"content\" is not an array");
            bool opened = false;
            for (rapidjson::SizeType i = 0; i < content->Size(); ++i) {
                const Where at = where.at_inner(i);
                const Inspected inner = inspect((*content)[i], at);
                if (inner.dropped) continue;
                if (!opened) {
                    w_.Key("content");
                    w_.StartArray();
                    opened = true;
                }
                block(inner, false, Place::kToolResult, at);
            }
            if (opened) w_.EndArray();
        }
        const Value* is_error = find(b, "is_error");
        if (is_error != nullptr && !is_error->IsNull() && !is_error->IsBool()) {
            refuse(where.str() + ": tool_result \"is_error\" is not a boolean");
        }
        if (is_error != nullptr && is_error->IsTrue()) {
            w_.Key("is_error");
            w_.Bool(true);
        }
        if (cache) cache_control();
        w_.EndObject();
    }

    Writer& w_;
    rapidjson::StringBuffer& out_;
    Source source_;
    bool ttl_1h_;
    std::size_t breakpoints_ = 0;
};

struct Turn {
    const Value* value;
    std::size_t first;  // its blocks in Turns::blocks
    std::size_t count;
    bool user;
    std::size_t definitions = 0;  // tools.103: tool_definition blocks, written as tool additions
};

/// Every turn and every block of it, inspected once.
struct Turns {
    std::vector<Turn> turns;
    std::vector<Inspected> blocks;
    bool tool_additions = false;  // some turn holds a tool_definition block
};

/// tools.103: the beta that takes a tool definition by value in a tool_addition block.
constexpr std::string_view kInlineToolsBeta = "inline-tools-2026-09-15";
/// wire.211: the beta of message threads.
constexpr std::string_view kThreadsBeta = "message-threads-2026-08-12";

/// wire.211: the request's `thread`, checked: nullptr when absent or null.
const Value* read_thread(const Value& request) {
    const Value* thread = find(request, "thread");
    if (thread == nullptr || thread->IsNull()) return nullptr;
    if (!thread->IsObject()) refuse("thread is not an object");
    const Value* type = find(*thread, "type");
    const std::string_view kind =
        type != nullptr && type->IsString() ? view(*type) : std::string_view();
    if (kind != "create" && kind != "continue")
        refuse("thread.type is not \"create\" or \"continue\"");
    const Value* previous = find(*thread, "previous_message_id");
    if (kind == "continue" &&
        (previous == nullptr || !previous->IsString() || previous->GetStringLength() == 0))
        refuse(
            "thread.previous_message_id: a continue names the answer it continues (a "
            "non-empty string)");
    if (kind == "create" && previous != nullptr)
        refuse("thread.previous_message_id: a create continues nothing");
    for (const auto& m : thread->GetObject()) {
        const std::string_view name = view(m.name);
        if (name != "type" && name != "previous_message_id")
            refuse("thread." + std::string(name) + " is not a member of a thread");
    }
    return thread;
}

bool is_definition(const Inspected& in) {
    return in.type == "tool_definition";
}

/// Whether the comma-separated `flags` (an anthropic-beta value) hold `flag`.
bool names_flag(std::string_view flags, std::string_view flag) {
    while (!flags.empty()) {
        const std::size_t comma = flags.find(',');
        std::string_view item = flags.substr(0, comma);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        if (item == flag) return true;
        if (comma == std::string_view::npos) break;
        flags.remove_prefix(comma + 1);
    }
    return false;
}

const Value& need_array(const Value& object, const char* key, const char* where) {
    const Value* v = find(object, key);
    if (v == nullptr || !v->IsArray())
        refuse(std::string(where) + " lacks the array \"" + key + "\"");
    return *v;
}

/// Reads and checks every turn before anything is written: roles, blocks, blank text, and that
/// each planned anchor lands on a block that is sent and may carry cache_control.
Turns read_turns(const Value& prepared, const Plan& plan) {
    const Value& turns = need_array(prepared, "turns", "prepared");
    if (turns.Empty()) refuse("prepared.turns is empty: the Messages API needs a message");
    Turns out;
    out.turns.reserve(turns.Size());
    out.blocks.reserve(turns.Size() * 2);
    for (rapidjson::SizeType t = 0; t < turns.Size(); ++t) {
        const Value& turn = turns[t];
        Where where{"prepared.turns", t, turn.IsObject() ? &turn : nullptr};
        if (!turn.IsObject()) refuse(where.str() + " is not an object");
        const std::string_view role = view(need_string(turn, "role", where));
        if (role != "user" && role != "assistant") {
            refuse(where.str() + " has the role \"" + std::string(role) +
                   "\"; a turn is \"user\" or \"assistant\"");
        }
        const Value* blocks = find(turn, "blocks");
        if (blocks == nullptr || !blocks->IsArray()) {
            refuse(where.str() + " lacks the array \"blocks\"");
        }
        std::size_t sent = 0;
        std::size_t definitions = 0;
        for (rapidjson::SizeType b = 0; b < blocks->Size(); ++b) {
            const Where at = where.at_block(b);
            const Inspected in = inspect((*blocks)[b], at);
            if (!in.dropped) ++sent;
            if (is_definition(in)) {
                if (role != "user")
                    refuse(at.str() +
                           ": a tool_definition is a tool added to the conversation; an "
                           "assistant turn cannot declare one");
                ++definitions;
            }
            if (plan.anchored(t, b) && (in.dropped || in.kind == Kind::kThinking ||
                                        in.kind == Kind::kRedactedThinking || is_definition(in))) {
                refuse(at.str() + ": the cache plan anchors a breakpoint on a " +
                       (in.dropped
                            ? "blank text block, which is never sent"
                            : "\"" + std::string(in.type) + "\" block, which cannot carry one"));
            }
            out.blocks.push_back(in);
        }
        if (sent == 0) {
            refuse(where.str() +
                   " has no content to send (every block is blank or there are "
                   "none); a turn is never sent blank");
        }
        out.turns.push_back({&turn, out.blocks.size() - blocks->Size(), blocks->Size(),
                             role == "user", definitions});
        out.tool_additions = out.tool_additions || definitions > 0;
    }
    for (const auto& [t, b] : plan.anchors) {
        if (t >= out.turns.size() || b >= out.turns[t].count) {
            refuse("prepared.cache_plan.turn_anchors names turn " + std::to_string(t) + " block " +
                   std::to_string(b) + ", which does not exist");
        }
    }
    return out;
}

void write_system(Encoder& enc, Writer& w, const Value& prepared, const Plan& plan) {
    const Value* blocks = find(prepared, "system_blocks");
    if (blocks != nullptr && !blocks->IsNull() && !blocks->IsArray()) {
        refuse("prepared.system_blocks is not an array");
    }
    const rapidjson::SizeType n = blocks != nullptr && blocks->IsArray() ? blocks->Size() : 0;
    if (plan.system_block && *plan.system_block >= n) {
        refuse("prepared.cache_plan.system_block is " + std::to_string(*plan.system_block) +
               " but there are " + std::to_string(n) + " system blocks");
    }
    bool opened = false;
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        const Where where{"prepared.system_blocks", i};
        const Inspected in = inspect((*blocks)[i], where);
        const bool cache = plan.system_block == i;
        if (in.dropped) {
            if (cache) {
                refuse(where.str() +
                       ": the cache plan anchors the system breakpoint on a blank "
                       "block, which is never sent");
            }
            continue;
        }
        if (!opened) {
            w.Key("system");
            w.StartArray();
            opened = true;
        }
        // caching.107: a 1-hour head before the tail's TTL (1-hour entries come first).
        const bool ttl = enc.ttl_1h();
        if (cache && plan.system_1h) enc.set_ttl_1h(true);
        enc.block(in, cache, Place::kSystem, where);
        enc.set_ttl_1h(ttl);
    }
    if (opened) w.EndArray();
}

void write_tool(Writer& w, const Value& tool, const Where& where);

/// tools.103: the run's tool_definition blocks, in order, as one system message of tool additions.
void write_tool_additions(Writer& w, const Turns& all, std::size_t first, std::size_t end) {
    w.StartObject();
    w.Key("role");
    w.String("system");
    w.Key("content");
    w.StartArray();
    for (std::size_t t = first; t < end; ++t) {
        const Turn& turn = all.turns[t];
        for (std::size_t b = 0; b < turn.count; ++b) {
            const Inspected& in = all.blocks[turn.first + b];
            if (!is_definition(in)) continue;
            w.StartObject();
            w.Key("type");
            w.String("tool_addition");
            w.Key("tool");
            w.StartObject();
            w.Key("type");
            w.String("tool_definition");
            w.Key("definition");
            write_tool(w, *in.block,
                       Where{"prepared.turns", t, turn.value, static_cast<std::ptrdiff_t>(b)});
            w.EndObject();
            w.EndObject();
        }
    }
    w.EndArray();
    w.EndObject();
}

void write_messages(Encoder& enc, Writer& w, const Turns& all, const Plan& plan,
                    const rapidjson::StringBuffer& out, providers::TurnSpan& span) {
    const std::vector<Turn>& turns = all.turns;
    w.Key("messages");
    w.StartArray();
    span.begin = out.GetSize();  // abi.108: the turns' wire messages start here
    for (std::size_t first = 0; first < turns.size();) {
        std::size_t end = first + 1;
        while (end < turns.size() && turns[end].user == turns[first].user) ++end;
        const bool user = turns[first].user;
        std::size_t definitions = 0;
        std::size_t others = 0;
        for (std::size_t t = first; t < end; ++t) {
            definitions += turns[t].definitions;
            for (std::size_t b = 0; b < turns[t].count; ++b) {
                const Inspected& in = all.blocks[turns[t].first + b];
                others += in.dropped || is_definition(in) ? 0U : 1U;
            }
        }
        if (definitions > 0 && others == 0)
            refuse(Where{"prepared.turns", first, turns[first].value}.str() +
                   ": a user turn of nothing but tool definitions; the message before a tool "
                   "addition cannot be empty");
        w.StartObject();
        w.Key("role");
        w.String(user ? "user" : "assistant");
        w.Key("content");
        w.StartArray();
        // Pass 0 writes a user message's tool results, pass 1 everything else.
        for (int pass = user ? 0 : 1; pass < 2; ++pass) {
            for (std::size_t t = first; t < end; ++t) {
                for (std::size_t b = 0; b < turns[t].count; ++b) {
                    const Inspected& in = all.blocks[turns[t].first + b];
                    const bool result = in.kind == Kind::kToolResult;
                    if ((pass == 0) != (user && result) || in.dropped || is_definition(in))
                        continue;
                    const Where where{"prepared.turns", t, turns[t].value,
                                      static_cast<std::ptrdiff_t>(b)};
                    enc.block(in, plan.anchored(t, b), Place::kTurn, where);
                }
            }
        }
        w.EndArray();
        w.EndObject();
        if (definitions > 0) write_tool_additions(w, all, first, end);
        first = end;
    }
    span.end = out.GetSize();
    w.EndArray();
}

void write_tools(Writer& w, const Value& prepared) {
    const Value* tools = find(prepared, "tool_definitions");
    if (tools == nullptr || tools->IsNull()) return;
    if (!tools->IsArray()) refuse("prepared.tool_definitions is not an array");
    if (tools->Empty()) return;
    w.Key("tools");
    w.StartArray();
    for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
        write_tool(w, (*tools)[i], Where{"prepared.tool_definitions", i});
    }
    w.EndArray();
}

/// One tool as a `tools` entry: {name, description, input_schema}.
void write_tool(Writer& w, const Value& tool, const Where& where) {
    {
        if (!tool.IsObject()) refuse(where.str() + " is not an object");
        const Value& name = need_string(tool, "name", where);
        w.StartObject();
        w.Key("name");
        w.String(name.GetString(), name.GetStringLength());
        const Value* description = find(tool, "description");
        if (description != nullptr && description->IsString() &&
            description->GetStringLength() > 0) {
            w.Key("description");
            w.String(description->GetString(), description->GetStringLength());
        }
        w.Key("input_schema");
        const Value* schema = find(tool, "schema");
        if (schema == nullptr || schema->IsNull()) {
            w.StartObject();
            w.Key("type");
            w.String("object");
            w.EndObject();
        } else if (!schema->IsObject()) {
            refuse(where.str() + " (tool \"" + std::string(view(name)) +
                   "\"): \"schema\" is not an object");
        } else {
            const Value* type = find(*schema, "type");
            if (type != nullptr && !(type->IsString() && view(*type) == "object")) {
                refuse(where.str() + " (tool \"" + std::string(view(name)) +
                       "\"): the Messages API needs an input schema of type \"object\"");
            }
            if (type != nullptr) {
                schema->Accept(w);
            } else {
                w.StartObject();
                w.Key("type");
                w.String("object");
                for (const auto& m : schema->GetObject()) {
                    w.Key(m.name.GetString(), m.name.GetStringLength());
                    m.value.Accept(w);
                }
                w.EndObject();
            }
        }
        w.EndObject();
    }
}

void write_headers(Writer& w, const Value* options, bool tool_additions, bool thread) {
    const bool has_options = options != nullptr;
    w.Key("headers");
    w.StartObject();
    w.Key("anthropic-version");
    const Value* version = has_options ? find(*options, "anthropic_version") : nullptr;
    if (version != nullptr && version->IsString() && version->GetStringLength() > 0) {
        w.String(version->GetString(), version->GetStringLength());
    } else if (version != nullptr && !version->IsNull()) {
        refuse("options.anthropic_version is not a non-empty string");
    } else {
        w.String(kDefaultVersion);
    }
    w.Key("content-type");
    w.String("application/json");
    const Value* beta = has_options ? find(*options, "anthropic_beta") : nullptr;
    std::string flags;
    if (beta != nullptr && !beta->IsNull()) {
        if (beta->IsString()) {
            flags = view(*beta);
        } else if (beta->IsArray()) {
            for (const Value& f : beta->GetArray()) {
                if (!f.IsString())
                    refuse("options.anthropic_beta holds a value that is not a string");
                if (!flags.empty()) flags += ",";
                flags += view(f);
            }
        } else {
            refuse("options.anthropic_beta is neither a string nor an array of strings");
        }
    }
    for (const auto& [wanted, flag] :
         {std::pair{tool_additions, kInlineToolsBeta}, std::pair{thread, kThreadsBeta}}) {
        if (!wanted || names_flag(flags, flag)) continue;
        if (!flags.empty()) flags += ",";
        flags += flag;
    }
    if (!flags.empty()) {
        w.Key("anthropic-beta");
        w.String(flags.data(), static_cast<rapidjson::SizeType>(flags.size()));
    }
    w.EndObject();
}

/// The head into `head_out` and the body into `out`; returns where the turns' wire messages lie
/// in the body (abi.108).
providers::TurnSpan encode_to(std::string_view provider_request_json,
                              rapidjson::StringBuffer& head_out, rapidjson::StringBuffer& out);

}  // namespace

void encode_request(std::string_view provider_request_json, nucleo::plugin::Sink& head_sink,
                    nucleo::plugin::Sink& sink) {
    // limits.134: the output buffers are this thread's scratch, reused from call to call.
    const providers::Scratch<rapidjson::StringBuffer> head_out;
    const providers::Scratch<rapidjson::StringBuffer> out;
    encode_to(provider_request_json, *head_out, *out);
    head_sink.write({head_out->GetString(), head_out->GetSize()});
    sink.write({out->GetString(), out->GetSize()});
}

void encode_split(std::string_view provider_request_json, nucleo::plugin::Sink& head,
                  nucleo::plugin::Sink& open, nucleo::plugin::Sink& turns,
                  nucleo::plugin::Sink& close) {
    const providers::Scratch<rapidjson::StringBuffer> head_out;
    const providers::Scratch<rapidjson::StringBuffer> out;
    const providers::TurnSpan span = encode_to(provider_request_json, *head_out, *out);
    providers::write_split({head_out->GetString(), head_out->GetSize()},
                           {out->GetString(), out->GetSize()}, span, head, open, turns, close);
}

namespace {

providers::TurnSpan encode_to(std::string_view provider_request_json,
                              rapidjson::StringBuffer& head_out, rapidjson::StringBuffer& out) {
    // Parsed in place from a private copy: strings are not copied again, and the writer below
    // reads them straight out of this buffer (the bench/encode budget is 2x a bare Writer). The
    // copy is this thread's scratch (limits.134).
    const providers::Scratch<std::string> scratch;
    std::string& buffer = *scratch;
    rapidjson::Document request;
    providers::parse_request(provider_request_json, buffer, request, "anthropic");
    const providers::RequestHead head = providers::read_request_head(request, "anthropic");
    const std::int64_t max_tokens = head.max_tokens;
    // catalog.5: the form the model's record chose; a request without one is an older core's,
    // whose active thinking is the manual budget.
    const std::string_view form = head.thinking_form;
    std::optional<std::int64_t> thinking_budget;
    if (form == "enabled") {
        thinking_budget = head.thinking_budget;
        if (*thinking_budget < kMinThinkingBudget || *thinking_budget >= max_tokens) {
            refuse("thinking.budget_tokens is " + std::to_string(*thinking_budget) +
                   " and max_tokens is " + std::to_string(max_tokens) +
                   "; the Messages API needs budget_tokens >= 1024 and max_tokens > "
                   "budget_tokens");
        }
    }
    const bool ttl_1h = head.cache_ttl == "1h";
    const Value* prepared = head.prepared;
    const Plan plan = read_plan(*prepared);
    const Turns turns = read_turns(*prepared, plan);
    const Value* thread = read_thread(request);
    const bool continues = thread != nullptr && view((*thread)["type"]) == "continue";

    out.Reserve(provider_request_json.size() + 256);
    Writer w(out);
    Encoder enc(w, out,
                Source{buffer.data(), buffer.data() + buffer.size(), provider_request_json.data()},
                ttl_1h);
    {
        // abi.106: the head (method, path, headers) apart from the body bytes.
        Writer hw(head_out);
        hw.StartObject();
        hw.Key("schema_version");
        hw.Int(1);
        hw.Key("method");
        hw.String("POST");
        hw.Key("path");
        hw.String("/v1/messages");
        // tools.103: the request says when any part of the conversation holds a tool change,
        // so the head of a split request (its turns encoded apart) asks for the beta too.
        const Value* changes = find(request, "tool_changes");
        write_headers(hw, head.options,
                      turns.tool_additions || (changes != nullptr && changes->IsTrue()),
                      thread != nullptr);
        hw.EndObject();
    }
    w.StartObject();
    w.Key("model");
    w.String(head.wire_model.data(), static_cast<rapidjson::SizeType>(head.wire_model.size()));
    w.Key("max_tokens");
    w.Int64(max_tokens);
    write_system(enc, w, *prepared, plan);
    providers::TurnSpan span;
    write_messages(enc, w, turns, plan, out, span);
    if (!continues) write_tools(w, *prepared);  // wire.211: a thread holds its tools
    if (thread != nullptr) {
        w.Key("thread");
        w.StartObject();
        w.Key("type");
        w.String(continues ? "continue" : "create");
        if (continues) {
            const Value& previous = (*thread)["previous_message_id"];
            w.Key("previous_message_id");
            w.String(previous.GetString(), previous.GetStringLength());
        }
        w.EndObject();
    }
    if (plan.automatic) enc.request_cache_control();
    if (!form.empty()) {
        w.Key("thinking");
        w.StartObject();
        w.Key("type");
        w.String(form.data(), static_cast<rapidjson::SizeType>(form.size()));
        if (thinking_budget) {
            w.Key("budget_tokens");
            w.Int64(*thinking_budget);
        }
        w.EndObject();
    }
    if (!head.thinking_effort.empty()) {  // the depth of adaptive thinking, and of the answer
        w.Key("output_config");
        w.StartObject();
        w.Key("effort");
        w.String(head.thinking_effort.data(),
                 static_cast<rapidjson::SizeType>(head.thinking_effort.size()));
        w.EndObject();
    }
    // caching.131: the cache diagnosis against the previous answer, as the core asked it.
    if (const Value* diagnostics = find(request, "diagnostics"); diagnostics != nullptr) {
        const Value* previous =
            diagnostics->IsObject() ? find(*diagnostics, "previous_message_id") : nullptr;
        if (!diagnostics->IsObject() ||
            (previous != nullptr && !previous->IsString() && !previous->IsNull()))
            refuse("diagnostics must be an object whose previous_message_id is a string or null");
        w.Key("diagnostics");
        w.StartObject();
        w.Key("previous_message_id");
        if (previous != nullptr && previous->IsString()) {
            w.String(previous->GetString(), previous->GetStringLength());
        } else {
            w.Null();
        }
        w.EndObject();
    }
    if (head.stream) {
        w.Key("stream");
        w.Bool(true);
    }
    w.EndObject();
    if (enc.breakpoints_written() != plan.total()) {
        throw Failure(NUCLEO_ERR_INTERNAL,
                      "anthropic encode: rendered " + std::to_string(enc.breakpoints_written()) +
                          " cache breakpoints for a plan of " + std::to_string(plan.total()));
    }
    return span;
}

}  // namespace

}  // namespace nucleo::anthropic
