// encode: the provider request (docs/provider-abi-documents.md) -> the HTTP request document for
// Bedrock Converse. Every wire decision of the dialect is written down here, beside its code.
//
// Request: POST /model/{modelId}/converse (/converse-stream when `stream`), where modelId is
// `model.wire_model` percent-encoded as the AWS SDKs encode a URI label: every byte outside
// A-Z a-z 0-9 - . _ ~ becomes %XX, so "anthropic.claude-sonnet-4-5-20250929-v1:0" travels as
// "anthropic.claude-sonnet-4-5-20250929-v1%3A0" and an ARN's '/' as %2F. Headers: content-type
// and accept only; the core adds x-amz-date and the SigV4 Authorization.
//
// Body, member order: messages, system, inferenceConfig, toolConfig, additionalModelRequestFields.
//  - system: one {"text"} block per system block (text, json as its compact JSON, skill as its
//    content -- the same text the core counts, render::rendered_text). Other kinds cannot be
//    Converse system content and are refused.
//  - messages: turns in order; adjacent same-role turns are concatenated into one message
//    (Converse demands strict user/assistant alternation). In every user message the tool
//    results lead, in their order, then the other blocks in theirs (Converse and the Anthropic
//    models behind it want results first); an assistant message keeps its order.
//  - blocks: text {"text"}; json {"text": compact JSON}; skill {"text": content}; image
//    {"image":{"format","source":{"bytes": base64}}}; file {"document":{"format","name",
//    "source":{"bytes"}}}; thinking {"reasoningContent":{"reasoningText":{"text","signature"}}}
//    (signature left out when empty); redacted_thinking {"reasoningContent":{"redactedContent"}}.
//    An image or file given by URL cannot be expressed (Converse takes bytes or S3 only) and is
//    refused naming the turn and block; so is a media type Converse has no format for.
//  - document names: Converse allows only alphanumerics, single whitespace, hyphens, parentheses
//    and square brackets (1..200 chars). The name loses a trailing ".ext" (the format carries
//    it), whitespace runs become one space, every other character becomes '-', the ends are
//    trimmed, the rest is cut at 200; an empty result becomes "document-T-B" (turn and block).
//  - tools, native (prepared.native_tools, the catalog's choice): toolConfig.tools[].toolSpec
//    {name, description (left out when empty: Converse wants it non-empty), inputSchema.json};
//    tool_use -> {"toolUse":{"toolUseId","name","input"}}; tool_result -> {"toolResult":
//    {"toolUseId","content":[{"text"}|{"json"}|{"image"}|{"document"}],"status":"error"?}}
//    (status only on errors: the field is honoured by Nova and Claude, refused by none when
//    absent). Tool blocks without definitions are refused: Converse rejects toolUse/toolResult
//    without toolConfig.
//  - tools, text (tools.11: the default for Converse; the definitions are
//    already inline text in the turns, prepared.tool_definitions is empty, and no toolConfig is
//    sent). A tool_use renders as the envelope the model writes, one text block per run of
//    adjacent calls: {"tool_calls":[{"name":N,"input":I},...]} -- unless the turn's own text
//    already holds a "tool_calls" envelope (the core keeps the model's answer text and appends
//    the calls it parsed from it), in which case the calls are not written twice. A tool_result
//    renders as a user text block "Result of <tool_use_id>:\n<content>" ("Result of <id>
//    (error):" when is_error), its text parts joined by newlines (json as compact JSON,
//    "(empty)" when there is no text), and any image or file parts as their own blocks right
//    after it. Results still lead their user message.
//  - blank text: a text, json or skill block that is empty or whitespace only is dropped
//    (Converse refuses blank text). A turn left with no block at all is refused naming the turn,
//    never sent blank.
//  - cache breakpoints: the plan is rendered exactly -- a {"cachePoint":{"type":"default"}}
//    block right after the system block prepared.cache_plan.system_block names and right after
//    each anchored turn block (after the last wire block that block produced, wherever merging
//    placed it). cache_ttl "1h" adds "ttl":"1h"; "5m" is Converse's default and is not written.
//    When an anchored block was dropped as blank, the cachePoint stays where the block was (the
//    cached prefix is byte-identical); when nothing precedes it in its system list or message,
//    the request is refused rather than the breakpoint moved. A plan with more than 4 marks,
//    duplicate marks or marks outside the turns is refused: the plugin never adds, drops or
//    moves one.
//  - inferenceConfig.maxTokens = max_tokens (the resolved output reserve).
//  - Thinking, in the form the core chose from the model's record (catalog.5). Anthropic models
//    on Bedrock (wire model containing "anthropic.", or options.thinking_format "anthropic" for an
//    ARN that does not say so) get additionalModelRequestFields {"thinking":{"type":FORM}} (with
//    "budget_tokens":N for the enabled form) and the effort as Converse's own
//    outputConfig {"effort":E}. Amazon Nova models ("amazon.nova", or thinking_format "nova")
//    reason through additionalModelRequestFields {"reasoningConfig":{"type":"enabled",
//    "maxReasoningEffort":E}} (or {"type":"disabled"} for the disabled form). Another model asked
//    to think is refused: this dialect knows no other thinking switch. A request of an older core
//    (no thinking.form) with thinking active is the enabled form.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "converse.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::bedrock {
namespace {

using nucleo::plugin::Failure;
using rapidjson::SizeType;
using rapidjson::Value;

/// The plugins' Writer (conversation.104) plus two verbs: a string value copied as the request
/// spelled it, escapes included (RawValue would copy it byte by byte through the transcoder).
class Writer : public providers::JsonWriter {
  public:
    using providers::JsonWriter::JsonWriter;
    /// `quoted` is a whole JSON string token, quotes included, valid as JSON already.
    void QuotedString(const char* quoted, std::size_t size) {
        Prefix(rapidjson::kStringType);
        std::memcpy(os_->Push(size), quoted, size);
        EndValue(true);
    }
    /// An object key spelled without escapes (the literal names of the wire format): copied, not
    /// scanned for characters to escape.
    void LitKey(std::string_view name) {
        Prefix(rapidjson::kStringType);
        char* p = os_->Push(name.size() + 2);
        p[0] = '"';
        std::memcpy(p + 1, name.data(), name.size());
        p[name.size() + 1] = '"';
        EndValue(true);
    }
};

constexpr std::size_t kMaxCachePoints = 4;
constexpr std::size_t kMaxDocumentName = 200;

[[noreturn]] void refuse(const std::string& what) {
    providers::refuse("bedrock", what);
}

/// Where a block sits in the provider request, for error messages.
struct Where {
    bool system = false;
    std::size_t turn = 0;
    std::size_t block = 0;

    [[nodiscard]] std::string str() const {
        if (system) return "prepared.system_blocks[" + std::to_string(block) + "]";
        return "prepared.turns[" + std::to_string(turn) + "].blocks[" + std::to_string(block) + "]";
    }
};

std::string turn_where(std::size_t turn) {
    return "prepared.turns[" + std::to_string(turn) + "]";
}

using Kind = providers::BlockKind;
using providers::is_blank;
using providers::member;
using providers::view;

std::string_view required_string(const Value& obj, std::string_view key, const Where& where) {
    const Value* v = member(obj, key);
    if (v == nullptr || !v->IsString()) {
        refuse(where.str() + "." + std::string(key) + ": missing (a string is required)");
    }
    return view(*v);
}

std::string_view optional_string(const Value& obj, std::string_view key) {
    const Value* v = member(obj, key);
    return v != nullptr && v->IsString() ? view(*v) : std::string_view();
}

bool optional_bool(const Value& obj, std::string_view key) {
    const Value* v = member(obj, key);
    return v != nullptr && v->IsBool() && v->GetBool();
}

Kind kind_of(const Value& block, const Where& where) {
    return providers::block_kind_of(block, "bedrock", [&] { return where.str(); });
}

/// Converse's ImageFormat for a MIME type; empty when there is none.
std::string_view image_format(std::string_view media_type) {
    if (media_type == "image/png") return "png";
    if (media_type == "image/jpeg" || media_type == "image/jpg") return "jpeg";
    if (media_type == "image/gif") return "gif";
    if (media_type == "image/webp") return "webp";
    return {};
}

/// Converse's DocumentFormat for a MIME type; empty when there is none.
std::string_view document_format(std::string_view media_type) {
    if (media_type == "application/pdf") return "pdf";
    if (media_type == "text/plain") return "txt";
    if (media_type == "text/markdown" || media_type == "text/x-markdown") return "md";
    if (media_type == "text/html") return "html";
    if (media_type == "text/csv") return "csv";
    if (media_type == "application/msword") return "doc";
    if (media_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
        return "docx";
    if (media_type == "application/vnd.ms-excel") return "xls";
    if (media_type == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
        return "xlsx";
    return {};
}

bool is_ascii_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// Converse's document name rule (see the file comment).
std::string document_name(std::string_view name, const Where& where) {
    // Drop a trailing extension: the format field carries it.
    if (const auto dot = name.rfind('.'); dot != std::string_view::npos && dot > 0) {
        const std::string_view ext = name.substr(dot + 1);
        if (!ext.empty() && ext.size() <= 5 && std::all_of(ext.begin(), ext.end(), is_ascii_alnum))
            name = name.substr(0, dot);
    }
    std::string out;
    out.reserve(name.size());
    bool after_space = true;  // also trims leading whitespace
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (is_ascii_alnum(c) || c == '-' || c == '(' || c == ')' || c == '[' || c == ']') {
            out.push_back(c);
            after_space = false;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            if (!after_space) out.push_back(' ');
            after_space = true;
        } else if ((u & 0xC0U) != 0x80U) {  // one '-' per character, not per UTF-8 byte
            out.push_back('-');
            after_space = false;
        }
    }
    if (out.size() > kMaxDocumentName) out.resize(kMaxDocumentName);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.empty()) {
        out = where.system
                  ? "document-system-" + std::to_string(where.block)
                  : "document-" + std::to_string(where.turn) + "-" + std::to_string(where.block);
    }
    return out;
}

/// One prepared block placed in a wire message.
struct Item {
    const Value* block;
    Kind kind;
    std::uint32_t turn;
    std::uint32_t index;
    bool anchored;
};

/// One wire message: a run of same-role turns, items [begin, end) of the flat item list.
struct WireMessage {
    bool user;
    std::size_t begin;
    std::size_t end;
};

/// A breakpoint of the plan among the turns.
struct Anchor {
    std::size_t turn;
    std::size_t block;
};

class Encoder {
  public:
    /// `raw` is the request as the caller sent it; `parsed` the private copy the document was
    /// parsed from in place (its strings point into it, at the offsets of their raw tokens).
    Encoder(const Value& request, std::string_view raw, const char* parsed,
            rapidjson::StringBuffer& out)
        : request_(request), raw_(raw), parsed_(parsed), out_(out) {}

    /// abi.106: the head (method, path, headers) into `head_out`, the body into `out`.
    void run(rapidjson::StringBuffer& head_out) {
        read_request();
        Writer h(head_out);
        h.StartObject();
        h.LitKey("schema_version");
        h.Int(1);
        h.LitKey("method");
        h.String("POST");
        h.LitKey("path");
        const std::string path =
            "/model/" + encode_label(model_) + (stream_ ? "/converse-stream" : "/converse");
        h.String(path.data(), static_cast<SizeType>(path.size()));
        h.LitKey("headers");
        h.StartObject();
        h.LitKey("content-type");
        h.String("application/json");
        h.LitKey("accept");
        h.String(stream_ ? "application/vnd.amazon.eventstream" : "application/json");
        h.EndObject();
        h.EndObject();
        Writer w(out_);
        write_body(w);
    }

    [[nodiscard]] providers::TurnSpan span() const { return span_; }

  private:
    // ---- reading and checking the provider request ----------------------------------------

    /// catalog.5: the thinking the core chose, in the model family's own fields (file comment).
    void write_thinking(Writer& w) const {
        if (nova_) {
            if (thinking_effort_.empty() && thinking_form_ != "disabled") return;
            w.LitKey("additionalModelRequestFields");
            w.StartObject();
            w.LitKey("reasoningConfig");
            w.StartObject();
            w.LitKey("type");
            if (thinking_form_ == "disabled") {
                w.String("disabled");
            } else {
                w.String("enabled");
                w.LitKey("maxReasoningEffort");
                w.String(thinking_effort_.data(), static_cast<rapidjson::SizeType>(thinking_effort_.size()));
            }
            w.EndObject();
            w.EndObject();
            return;
        }
        if (!thinking_form_.empty()) {
            w.LitKey("additionalModelRequestFields");
            w.StartObject();
            w.LitKey("thinking");
            w.StartObject();
            w.LitKey("type");
            w.String(thinking_form_.data(), static_cast<rapidjson::SizeType>(thinking_form_.size()));
            if (thinking_form_ == "enabled") {
                w.LitKey("budget_tokens");
                w.Int64(thinking_budget_);
            }
            w.EndObject();
            w.EndObject();
        }
        if (!thinking_effort_.empty()) {
            w.LitKey("outputConfig");
            w.StartObject();
            w.LitKey("effort");
            w.String(thinking_effort_.data(), static_cast<rapidjson::SizeType>(thinking_effort_.size()));
            w.EndObject();
        }
    }

    void read_request() {
        const providers::RequestHead head = providers::read_request_head(request_, "bedrock");
        model_ = head.wire_model;
        max_tokens_ = head.max_tokens;
        stream_ = head.stream;
        if (head.cache_ttl == "1h") cache_point_ = R"({"type":"default","ttl":"1h"})";

        std::string_view thinking_format;
        if (head.options != nullptr) thinking_format = optional_string(*head.options, "thinking_format");
        thinking_form_ = head.thinking_form;
        thinking_effort_ = head.thinking_effort;
        if (thinking_form_ == "enabled") {
            thinking_budget_ = head.thinking_budget;
            if (thinking_budget_ <= 0) {
                refuse("thinking.budget_tokens: missing (a positive integer is required)");
            }
        }
        if (!thinking_form_.empty() || !thinking_effort_.empty()) {
            nova_ = model_.find("amazon.nova") != std::string_view::npos || thinking_format == "nova";
            const bool anthropic = model_.find("anthropic.") != std::string_view::npos ||
                                   thinking_format == "anthropic";
            if (!anthropic && !nova_) {
                refuse("thinking: model \"" + std::string(model_) +
                       "\" is neither an Anthropic nor an Amazon Nova model, and Converse has no "
                       "common thinking switch (set options.thinking_format: anthropic or nova "
                       "for an ARN that does not say which)");
            }
            if (nova_ && (thinking_form_ == "enabled" || thinking_form_ == "adaptive" ||
                          thinking_form_ == "between_tools")) {
                refuse("thinking.form: Amazon Nova takes a reasoning effort, not the \"" +
                       std::string(thinking_form_) + "\" form");
            }
        }

        const Value& prepared = *head.prepared;
        prepared_ = &prepared;
        native_ = optional_bool(prepared, "native_tools");
        const Value* system = member(prepared, "system_blocks");
        if (system != nullptr && !system->IsArray()) refuse("prepared.system_blocks: not an array");
        system_ = system;
        const Value* defs = member(prepared, "tool_definitions");
        if (defs != nullptr && !defs->IsArray()) refuse("prepared.tool_definitions: not an array");
        if (defs != nullptr && !defs->Empty()) {
            if (!native_) {
                refuse(
                    "prepared.tool_definitions: must be empty when prepared.native_tools is "
                    "false (the definitions are inline text in the text dialect)");
            }
            tools_ = defs;
        }
        const Value* turns = member(prepared, "turns");
        if (turns == nullptr || !turns->IsArray()) refuse("prepared.turns: missing (an array)");
        if (turns->Empty()) refuse("prepared.turns: empty (Converse needs at least one message)");
        turns_ = turns;
        if (const Value* offset = member(request_, "turn_offset"); offset != nullptr && !offset->IsNull()) {
            if (!offset->IsUint64()) refuse("turn_offset: not a non-negative integer");
            turn_offset_ = static_cast<std::size_t>(offset->GetUint64());
        }
        read_plan();
        plan_messages();
    }

    void read_plan() {
        const Value* plan = member(*prepared_, "cache_plan");
        if (plan == nullptr || plan->IsNull()) return;
        if (!plan->IsObject()) refuse("prepared.cache_plan: not an object");
        if (const Value* sb = member(*plan, "system_block"); sb != nullptr && !sb->IsNull()) {
            const std::size_t count = system_ != nullptr ? system_->Size() : 0;
            if (!sb->IsUint() || sb->GetUint() >= count) {
                refuse(
                    "prepared.cache_plan.system_block: not the index of a system block (there "
                    "are " +
                    std::to_string(count) + ")");
            }
            system_anchor_ = sb->GetUint();
        }
        if (const Value* anchors = member(*plan, "turn_anchors"); anchors != nullptr) {
            if (!anchors->IsArray()) refuse("prepared.cache_plan.turn_anchors: not an array");
            for (SizeType i = 0; i < anchors->Size(); ++i) {
                const Value& a = (*anchors)[i];
                const std::string where =
                    "prepared.cache_plan.turn_anchors[" + std::to_string(i) + "]";
                const Value* t = a.IsObject() ? member(a, "turn") : nullptr;
                const Value* b = a.IsObject() ? member(a, "block") : nullptr;
                if (t == nullptr || b == nullptr || !t->IsUint() || !b->IsUint()) {
                    refuse(where + ": needs unsigned \"turn\" and \"block\"");
                }
                const Anchor anchor{t->GetUint(), b->GetUint()};
                if (anchor.turn >= turns_->Size()) refuse(where + ": no such turn");
                const Value& turn = (*turns_)[static_cast<SizeType>(anchor.turn)];
                const Value* blocks = turn.IsObject() ? member(turn, "blocks") : nullptr;
                if (blocks == nullptr || !blocks->IsArray() || anchor.block >= blocks->Size()) {
                    refuse(where + ": no such block in " + turn_where(anchor.turn));
                }
                for (const Anchor& seen : anchors_) {
                    if (seen.turn == anchor.turn && seen.block == anchor.block) {
                        refuse(where + ": marks the same block twice");
                    }
                }
                anchors_.push_back(anchor);
            }
        }
        if (const Value* a = member(*plan, "automatic"); a != nullptr && a->IsTrue()) {
            refuse("prepared.cache_plan.automatic: Converse has no request-level cache marker");
        }
        if (const Value* t = member(*plan, "system_ttl"); t != nullptr && !t->IsNull()) {
            if (!t->IsString() || (view(*t) != "1h" && view(*t) != "5m"))
                refuse("prepared.cache_plan.system_ttl: not \"5m\" or \"1h\"");
            system_1h_ = view(*t) == "1h";
        }
        const std::size_t marks = anchors_.size() + (system_anchor_ != kNone ? 1 : 0);
        if (marks > kMaxCachePoints) {
            refuse("prepared.cache_plan: " + std::to_string(marks) +
                   " breakpoints, Converse takes at most 4");
        }
    }

    bool anchored(std::size_t turn, std::size_t block) const {
        return std::any_of(anchors_.begin(), anchors_.end(),
                           [&](const Anchor& a) { return a.turn == turn && a.block == block; });
    }

    /// Groups the turns into alternating wire messages and orders each user message's blocks
    /// (tool results first).
    void plan_messages() {
        turn_emitted_.assign(turns_->Size(), 0);
        for (SizeType t = 0; t < turns_->Size(); ++t) {
            const Value& turn = (*turns_)[t];
            if (!turn.IsObject()) refuse(turn_where(t) + ": a turn must be a JSON object");
            const Value* role = member(turn, "role");
            const std::string_view r =
                role != nullptr && role->IsString() ? view(*role) : std::string_view();
            if (r != "user" && r != "assistant") {
                refuse(turn_where(t) + ".role: \"" + std::string(r) +
                       "\" is not a Converse role (user or assistant)");
            }
            const bool user = r == "user";
            const Value* blocks = member(turn, "blocks");
            if (blocks == nullptr || !blocks->IsArray()) {
                refuse(turn_where(t) + ".blocks: missing (an array)");
            }
            if (messages_.empty() || messages_.back().user != user) {
                messages_.push_back({user, items_.size(), items_.size()});
            }
            for (SizeType b = 0; b < blocks->Size(); ++b) {
                const Value& block = (*blocks)[b];
                const Kind kind = kind_of(block, Where{false, t, b});
                items_.push_back({&block, kind, t, b, anchored(t, b)});
            }
            messages_.back().end = items_.size();
        }
        // abi.108: a later run of a split request (turn_offset > 0) does not start the conversation.
        if (!messages_.front().user && turn_offset_ == 0) {
            refuse(turn_where(0) +
                   ": the first turn is an assistant turn; a Converse "
                   "conversation must start with a user message");
        }
        for (const WireMessage& m : messages_) {
            if (!m.user) continue;
            const auto begin = items_.begin() + static_cast<std::ptrdiff_t>(m.begin);
            const auto end = items_.begin() + static_cast<std::ptrdiff_t>(m.end);
            const auto is_result = [](const Item& i) { return i.kind == Kind::kToolResult; };
            // Cheap check first: most user messages hold no result, or hold them up front.
            const auto first_other = std::find_if_not(begin, end, is_result);
            if (std::find_if(first_other, end, is_result) != end) {
                std::stable_partition(begin, end, is_result);
            }
        }
    }

    // ---- writing ---------------------------------------------------------------------------

    /// Writes a string value of the request. The request was valid JSON, so the token it was
    /// parsed from is valid JSON too: it is copied as is (escapes and all) instead of being
    /// unescaped by the parser and escaped again by the Writer -- most of encode's bytes are
    /// such strings (texts, base64 data). Any other string goes through the Writer.
    void write_str(Writer& w, std::string_view s) const {
        const std::size_t size = raw_.size();
        if (s.data() >= parsed_ && s.data() <= parsed_ + size) {
            const auto at = static_cast<std::size_t>(s.data() - parsed_);
            const char* raw = raw_.data();
            if (at > 0 && at + s.size() < size && raw[at - 1] == '"') {
                // No escape among the first s.size() raw bytes: the token is exactly s.
                if (std::memchr(raw + at, '\\', s.size()) == nullptr && raw[at + s.size()] == '"') {
                    w.QuotedString(raw + at - 1, s.size() + 2);
                    return;
                }
                // Escaped: the closing quote is the first one after an even run of backslashes.
                const char* q = raw + at;
                const char* end = raw + size;
                while ((q = static_cast<const char*>(std::memchr(q, '"', end - q))) != nullptr) {
                    std::size_t slashes = 0;
                    while (q - slashes > raw + at &&
                           q[-1 - static_cast<std::ptrdiff_t>(slashes)] == '\\')
                        ++slashes;
                    if (slashes % 2 == 0) break;
                    ++q;
                }
                if (q != nullptr) {
                    w.QuotedString(raw + at - 1, static_cast<std::size_t>(q - (raw + at)) + 2);
                    return;
                }
            }
        }
        w.String(s.data(), static_cast<SizeType>(s.size()));
    }

    void write_body(Writer& w) {
        w.StartObject();
        w.LitKey("messages");
        w.StartArray();
        span_.begin = out_.GetSize();  // abi.108: the turns' wire messages start here
        for (const WireMessage& m : messages_) write_message(w, m);
        span_.end = out_.GetSize();
        w.EndArray();
        for (SizeType t = 0; t < turns_->Size(); ++t) {
            if (turn_emitted_[t] == 0) {
                refuse(turn_where(t) +
                       ": renders no content (every block is blank or empty); "
                       "Converse refuses a blank message");
            }
        }
        write_system(w);
        w.LitKey("inferenceConfig");
        w.StartObject();
        w.LitKey("maxTokens");
        w.Int64(max_tokens_);
        w.EndObject();
        if (native_ && tools_ != nullptr) {
            write_tool_config(w);
        } else if (native_ && uses_tool_blocks_) {
            refuse(
                "prepared.tool_definitions: empty, but the turns hold tool_use/tool_result "
                "blocks; Converse needs toolConfig whenever toolUse or toolResult blocks are "
                "sent");
        }
        write_thinking(w);
        w.EndObject();
    }

    void write_cache_point(Writer& w) {
        w.StartObject();
        w.LitKey("cachePoint");
        w.RawValue(cache_point_.data(), cache_point_.size(), rapidjson::kObjectType);
        w.EndObject();
    }

    void write_system(Writer& w) {
        if (system_ == nullptr || system_->Empty()) return;
        bool open = false;
        std::size_t emitted = 0;
        for (SizeType b = 0; b < system_->Size(); ++b) {
            const Value& block = (*system_)[b];
            const Where where{true, 0, b};
            const Kind kind = kind_of(block, where);
            std::string_view text;
            if (kind == Kind::kText) {
                text = required_string(block, "text", where);
            } else if (kind == Kind::kSkill) {
                text = required_string(block, "content", where);
            } else if (kind == Kind::kJson) {
                text = json_text(block, where);
            } else {
                refuse(where.str() + ": a " + std::string(optional_string(block, "type")) +
                       " block cannot be Converse system content (text only)");
            }
            const bool mark = system_anchor_ == b;
            const bool keep = !is_blank(text);
            if ((keep || mark) && !open) {
                w.LitKey("system");
                w.StartArray();
                open = true;
            }
            if (keep) {
                w.StartObject();
                w.LitKey("text");
                write_str(w, text);
                w.EndObject();
                ++emitted;
            }
            if (mark) {
                if (emitted == 0) {
                    refuse(where.str() +
                           ": the system breakpoint sits on a blank block with "
                           "nothing before it; it cannot be rendered without moving it");
                }
                if (system_1h_) {  // caching.107: the head at the 1-hour TTL
                    w.StartObject();
                    w.LitKey("cachePoint");
                    w.RawValue(R"({"type":"default","ttl":"1h"})", 29, rapidjson::kObjectType);
                    w.EndObject();
                } else {
                    write_cache_point(w);
                }
            }
        }
        if (open) w.EndArray();
    }

    void write_tool_config(Writer& w) {
        w.LitKey("toolConfig");
        w.StartObject();
        w.LitKey("tools");
        w.StartArray();
        for (SizeType i = 0; i < tools_->Size(); ++i) {
            const Value& def = (*tools_)[i];
            const std::string where = "prepared.tool_definitions[" + std::to_string(i) + "]";
            if (!def.IsObject()) refuse(where + ": not an object");
            const Value* name = member(def, "name");
            if (name == nullptr || !name->IsString() || name->GetStringLength() == 0) {
                refuse(where + ".name: missing (a string is required)");
            }
            w.StartObject();
            w.LitKey("toolSpec");
            w.StartObject();
            w.LitKey("name");
            write_str(w, view(*name));
            const std::string_view description = optional_string(def, "description");
            if (!is_blank(description)) {
                w.LitKey("description");
                write_str(w, description);
            }
            w.LitKey("inputSchema");
            w.StartObject();
            w.LitKey("json");
            const Value* schema = member(def, "schema");
            if (schema != nullptr && schema->IsObject()) {
                schema->Accept(w);
            } else {
                w.RawValue(R"({"type":"object","properties":{}})", 33, rapidjson::kObjectType);
            }
            w.EndObject();
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }

    void write_message(Writer& w, const WireMessage& m) {
        w.StartObject();
        w.LitKey("role");
        w.String(m.user ? "user" : "assistant");
        w.LitKey("content");
        w.StartArray();
        std::size_t emitted_in_message = 0;
        for (std::size_t i = m.begin; i < m.end;) {
            const Item& item = items_[i];
            std::size_t next = i + 1;
            bool mark = item.anchored;
            std::size_t emitted = 0;
            if (item.kind == Kind::kToolUse && !native_) {
                // A run of adjacent calls of one turn is one envelope.
                while (next < m.end && items_[next].kind == Kind::kToolUse &&
                       items_[next].turn == item.turn) {
                    mark = mark || items_[next].anchored;
                    ++next;
                }
                if (!turn_has_envelope(item.turn)) emitted = write_call_envelope(w, i, next);
            } else {
                emitted = write_block(w, item);
            }
            turn_emitted_[item.turn] += emitted;
            emitted_in_message += emitted;
            if (mark) {
                if (emitted_in_message == 0) {
                    refuse(Where{false, item.turn, item.index}.str() +
                           ": the cache breakpoint sits on a blank block with nothing before it "
                           "in its message; it cannot be rendered without moving it");
                }
                write_cache_point(w);
            }
            i = next;
        }
        w.EndArray();
        w.EndObject();
    }

    /// Writes one prepared block; returns how many wire blocks it produced (0 when dropped).
    std::size_t write_block(Writer& w, const Item& item) {
        const Value& block = *item.block;
        const Where where{false, item.turn, item.index};
        switch (item.kind) {
            case Kind::kText:
                return write_text(w, required_string(block, "text", where));
            case Kind::kSkill:
                return write_text(w, required_string(block, "content", where));
            case Kind::kJson:
                return write_text(w, json_text(block, where));
            case Kind::kImage:
                write_image(w, block, where);
                return 1;
            case Kind::kFile:
                write_document(w, block, where);
                return 1;
            case Kind::kToolUse:
                write_tool_use(w, block, where);
                return 1;
            case Kind::kToolResult:
                return native_ ? write_tool_result(w, block, where)
                               : write_result_as_text(w, block, where);
            case Kind::kThinking: {
                const std::string_view text = required_string(block, "thinking", where);
                const std::string_view signature = optional_string(block, "signature");
                w.StartObject();
                w.LitKey("reasoningContent");
                w.StartObject();
                w.LitKey("reasoningText");
                w.StartObject();
                w.LitKey("text");
                write_str(w, text);
                if (!signature.empty()) {
                    w.LitKey("signature");
                    write_str(w, signature);
                }
                w.EndObject();
                w.EndObject();
                w.EndObject();
                return 1;
            }
            case Kind::kRedactedThinking: {
                const std::string_view data = required_string(block, "data", where);
                w.StartObject();
                w.LitKey("reasoningContent");
                w.StartObject();
                w.LitKey("redactedContent");
                write_str(w, data);
                w.EndObject();
                w.EndObject();
                return 1;
            }
            case Kind::kOther:  // never: kind_of refuses a type the document does not define
                break;
        }
        return 0;
    }

    std::size_t write_text(Writer& w, std::string_view text) {
        if (is_blank(text)) return 0;
        w.StartObject();
        w.LitKey("text");
        write_str(w, text);
        w.EndObject();
        return 1;
    }

    /// A json block's value as compact JSON text (kept in scratch_ until the next call).
    std::string_view json_text(const Value& block, const Where& where) {
        const Value* json = member(block, "json");
        if (json == nullptr) refuse(where.str() + ".json: missing");
        scratch_.Clear();
        Writer sw(scratch_);
        json->Accept(sw);
        return {scratch_.GetString(), scratch_.GetSize()};
    }

    /// The base64 data of an image or file block; a URL source is refused.
    static std::string_view attachment_data(const Value& block, const Where& where,
                                            const char* what) {
        const Value* data = member(block, "data");
        if (data == nullptr || !data->IsString()) {
            if (member(block, "url") != nullptr) {
                refuse(where.str() + ": an " + std::string(what) +
                       " given by URL cannot be expressed in Converse (it takes the bytes, "
                       "base64, or an S3 location); fetch it and send its data");
            }
            refuse(where.str() + ".data: missing (base64 bytes are required)");
        }
        return view(*data);
    }

    void write_bytes_source(Writer& w, std::string_view data) {
        w.LitKey("source");
        w.StartObject();
        w.LitKey("bytes");
        write_str(w, data);
        w.EndObject();
    }

    void write_image(Writer& w, const Value& block, const Where& where) {
        const std::string_view media = required_string(block, "media_type", where);
        const std::string_view format = image_format(media);
        if (format.empty()) {
            refuse(where.str() + ".media_type: \"" + std::string(media) +
                   "\" has no Converse image format (png, jpeg, gif, webp)");
        }
        const std::string_view data = attachment_data(block, where, "image");
        w.StartObject();
        w.LitKey("image");
        w.StartObject();
        w.LitKey("format");
        w.String(format.data(), static_cast<SizeType>(format.size()));
        write_bytes_source(w, data);
        w.EndObject();
        w.EndObject();
    }

    void write_document(Writer& w, const Value& block, const Where& where) {
        const std::string_view media = required_string(block, "media_type", where);
        const std::string_view format = document_format(media);
        if (format.empty()) {
            refuse(where.str() + ".media_type: \"" + std::string(media) +
                   "\" has no Converse document format (pdf, txt, md, html, csv, doc, docx, xls, "
                   "xlsx)");
        }
        const std::string_view data = attachment_data(block, where, "file");
        // abi.108: the fallback name counts turns from the whole request's first turn.
        Where named = where;
        named.turn += turn_offset_;
        const std::string name = document_name(optional_string(block, "name"), named);
        w.StartObject();
        w.LitKey("document");
        w.StartObject();
        w.LitKey("format");
        w.String(format.data(), static_cast<SizeType>(format.size()));
        w.LitKey("name");
        write_str(w, name);
        write_bytes_source(w, data);
        w.EndObject();
        w.EndObject();
    }

    void write_tool_use(Writer& w, const Value& block, const Where& where) {
        uses_tool_blocks_ = true;
        const std::string_view id = required_string(block, "id", where);
        const std::string_view name = required_string(block, "name", where);
        w.StartObject();
        w.LitKey("toolUse");
        w.StartObject();
        w.LitKey("toolUseId");
        write_str(w, id);
        w.LitKey("name");
        write_str(w, name);
        w.LitKey("input");
        write_input(w, block);
        w.EndObject();
        w.EndObject();
    }

    static void write_input(Writer& w, const Value& block) {
        const Value* input = member(block, "input");
        if (input != nullptr && !input->IsNull()) {
            input->Accept(w);
        } else {
            w.StartObject();
            w.EndObject();
        }
    }

    static const Value* result_content(const Value& block, const Where& where) {
        const Value* content = member(block, "content");
        if (content != nullptr && !content->IsArray()) {
            refuse(where.str() + ".content: not an array");
        }
        return content;
    }

    std::size_t write_tool_result(Writer& w, const Value& block, const Where& where) {
        uses_tool_blocks_ = true;
        const std::string_view id = required_string(block, "tool_use_id", where);
        const Value* content = result_content(block, where);
        w.StartObject();
        w.LitKey("toolResult");
        w.StartObject();
        w.LitKey("toolUseId");
        write_str(w, id);
        w.LitKey("content");
        w.StartArray();
        if (content != nullptr) {
            for (SizeType k = 0; k < content->Size(); ++k) {
                const Value& part = (*content)[k];
                const Where at{false, where.turn, where.block};
                switch (kind_of(part, at)) {
                    case Kind::kText:
                        write_text(w, required_string(part, "text", at));
                        break;
                    case Kind::kJson: {
                        const Value* json = member(part, "json");
                        if (json == nullptr)
                            refuse(at.str() + ".content[" + std::to_string(k) + "].json: missing");
                        w.StartObject();
                        w.LitKey("json");
                        json->Accept(w);
                        w.EndObject();
                        break;
                    }
                    case Kind::kImage:
                        write_image(w, part, at);
                        break;
                    case Kind::kFile:
                        write_document(w, part, at);
                        break;
                    default:
                        refuse(where.str() + ".content[" + std::to_string(k) +
                               "]: a tool result holds text, json, image or file blocks only");
                }
            }
        }
        w.EndArray();
        if (optional_bool(block, "is_error")) {
            w.LitKey("status");
            w.String("error");
        }
        w.EndObject();
        w.EndObject();
        return 1;
    }

    /// Text dialect: "Result of <id>:\n<content>" plus the result's attachments.
    std::size_t write_result_as_text(Writer& w, const Value& block, const Where& where) {
        const std::string_view id = required_string(block, "tool_use_id", where);
        const Value* content = result_content(block, where);
        text_.assign("Result of ").append(id);
        if (optional_bool(block, "is_error")) text_.append(" (error)");
        text_.append(":\n");
        const std::size_t head = text_.size();
        if (content != nullptr) {
            for (SizeType k = 0; k < content->Size(); ++k) {
                const Value& part = (*content)[k];
                const Kind kind = kind_of(part, where);
                if (kind != Kind::kText && kind != Kind::kJson) continue;
                const std::string_view piece = kind == Kind::kText
                                                   ? required_string(part, "text", where)
                                                   : json_text(part, where);
                if (is_blank(piece)) continue;
                if (text_.size() > head) text_.push_back('\n');
                text_.append(piece);
            }
        }
        if (text_.size() == head) text_.append("(empty)");
        write_text(w, text_);
        std::size_t emitted = 1;
        if (content != nullptr) {
            for (SizeType k = 0; k < content->Size(); ++k) {
                const Value& part = (*content)[k];
                const Kind kind = kind_of(part, where);
                if (kind == Kind::kImage) {
                    write_image(w, part, where);
                    ++emitted;
                } else if (kind == Kind::kFile) {
                    write_document(w, part, where);
                    ++emitted;
                } else if (kind != Kind::kText && kind != Kind::kJson) {
                    refuse(where.str() + ".content[" + std::to_string(k) +
                           "]: a tool result holds text, json, image or file blocks only");
                }
            }
        }
        return emitted;
    }

    /// Text dialect: the calls items_[begin, end) as the envelope the model writes.
    std::size_t write_call_envelope(Writer& w, std::size_t begin, std::size_t end) {
        scratch_.Clear();
        Writer sw(scratch_);
        sw.StartObject();
        sw.LitKey("tool_calls");
        sw.StartArray();
        for (std::size_t i = begin; i < end; ++i) {
            const Value& block = *items_[i].block;
            const std::string_view name =
                required_string(block, "name", Where{false, items_[i].turn, items_[i].index});
            sw.StartObject();
            sw.LitKey("name");
            write_str(sw, name);
            sw.LitKey("input");
            write_input(sw, block);
            sw.EndObject();
        }
        sw.EndArray();
        sw.EndObject();
        return write_text(w, {scratch_.GetString(), scratch_.GetSize()});
    }

    /// Text dialect: whether the turn's own text already holds a "tool_calls" envelope.
    bool turn_has_envelope(std::size_t turn) const {
        const Value& blocks = (*turns_)[static_cast<SizeType>(turn)]["blocks"];
        for (SizeType b = 0; b < blocks.Size(); ++b) {
            const Value* text = member(blocks[b], "text");
            if (text != nullptr && text->IsString() &&
                view(*text).find("\"tool_calls\"") != std::string_view::npos) {
                return true;
            }
        }
        return false;
    }

    /// A URI label encoded as the AWS SDKs do (RFC 3986 unreserved characters kept).
    static std::string encode_label(std::string_view label) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        std::string out;
        out.reserve(label.size() + 8);
        for (const char c : label) {
            const auto u = static_cast<unsigned char>(c);
            if (is_ascii_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
                out.push_back(c);
            } else {
                out.push_back('%');
                out.push_back(kHex[u >> 4U]);
                out.push_back(kHex[u & 0xFU]);
            }
        }
        return out;
    }

    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

    const Value& request_;
    std::string_view raw_;
    const char* parsed_;
    const Value* prepared_ = nullptr;
    const Value* system_ = nullptr;
    const Value* tools_ = nullptr;
    const Value* turns_ = nullptr;
    std::size_t turn_offset_ = 0;
    providers::TurnSpan span_;
    std::string_view model_;
    std::int64_t max_tokens_ = 0;
    std::int64_t thinking_budget_ = 0;
    std::string_view thinking_form_;    // "", or the form the core chose (catalog.5)
    std::string_view thinking_effort_;  // "", or the effort level to send
    bool nova_ = false;                 // Amazon Nova's reasoningConfig instead of Anthropic's

    bool stream_ = false;
    bool native_ = false;
    bool uses_tool_blocks_ = false;
    std::string_view cache_point_ = R"({"type":"default"})";
    std::size_t system_anchor_ = kNone;
    bool system_1h_ = false;
    std::vector<Anchor> anchors_;
    std::vector<Item> items_;
    std::vector<WireMessage> messages_;
    std::vector<std::size_t> turn_emitted_;
    rapidjson::StringBuffer& out_;
    rapidjson::StringBuffer scratch_;
    std::string text_;
};

}  // namespace

EncodedRequest encode_request(std::string_view provider_request_json) {
    // Speed (bench/encode: within 2x of a plain Writer pass over the output): the request is
    // parsed in place from a private copy, so strings are not copied node by node, and the copy
    // and the output buffers are this thread's scratch reused from call to call (limits.134) --
    // a 2,000-message request is ~1 MB, and fresh buffers of that size cost page faults on every
    // call. A lease is empty when taken, so encode stays a pure function of its input.
    const providers::Scratch<std::string> input;
    EncodedRequest out;
    out.body_buffer->Reserve(provider_request_json.size() + provider_request_json.size() / 4 + 256);
    rapidjson::Document doc;
    providers::parse_request(provider_request_json, *input, doc, "bedrock");
    Encoder encoder(doc, provider_request_json, input->data(), *out.body_buffer);
    encoder.run(*out.head_buffer);
    out.head = {out.head_buffer->GetString(), out.head_buffer->GetSize()};
    out.body = {out.body_buffer->GetString(), out.body_buffer->GetSize()};
    out.turns = encoder.span();
    return out;
}

}  // namespace nucleo::bedrock
