// OpenAI Chat Completions encoder. Streams the body straight into one rapidjson Writer (no DOM of
// the output), so encoding costs one parse of the input plus one write (bench/encode).
#include "encode.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include "wire.hpp"

namespace nucleo::openai {
namespace {

using rapidjson::SizeType;
using Writer = providers::JsonWriter;

constexpr std::string_view kDefaultPath = "/chat/completions";
/// caching.2: "Each request can write up to four breakpoints" (the SDK's PromptCacheOptions).
constexpr std::size_t kMaxBreakpoints = 4;

using Kind = providers::BlockKind;
using providers::is_blank;
using providers::text_like;

/// Options of the provider instance (nucleo.yaml `providers.<name>.options`), read per request.
struct Options {
    std::string_view path = kDefaultPath;
    std::string_view system_role = "system";
    std::string_view max_tokens_field = "max_completion_tokens";
    std::string_view reasoning_effort;  ///< empty: mapped from thinking.budget_tokens
};

/// Maps a thinking budget onto OpenAI's reasoning_effort. The thresholds follow the budgets the
/// catalog gives per depth: up to 4,096 tokens is a light look (low), up to 16,384 a considered
/// one (medium), beyond that deep work (high). Only low/medium/high: every reasoning model accepts
/// them (minimal, xhigh, ... exist only on some; options.reasoning_effort can ask for those).
const char* effort_for(int64_t budget_tokens) {
    if (budget_tokens <= 4096) return "low";
    if (budget_tokens <= 16384) return "medium";
    return "high";
}

class Encoder {
  public:
    explicit Encoder(rapidjson::StringBuffer& out) : out_(out), w_(out) {}

    /// abi.108: where the turns' wire messages lie in the body written by encode().
    [[nodiscard]] providers::TurnSpan span() const { return span_; }

    /// abi.106: the head (method, path, headers) into `head_out`, the body into this encoder's
    /// buffer.
    void encode(const Value& req, rapidjson::StringBuffer& head_out) {
        const providers::RequestHead head = providers::read_request_head(req, "openai");
        const Options opt = read_options(head.options);
        const Value& prepared = *head.prepared;
        const std::string_view model = head.wire_model;
        const bool stream = head.stream;
        // caching.118: the core's plan is written only to a model that takes explicit
        // breakpoints; to any other a plan changes no byte (caching.6).
        explicit_ = head.caching == "explicit";
        if (explicit_)
            plan_ = providers::read_cache_plan(prepared, "openai", kMaxBreakpoints,
                                               "Chat Completions API");
        rendered_.assign(plan_.anchors.size(), false);

        providers::JsonWriter hw(head_out);
        hw.StartObject();
        hw.Key("schema_version");
        hw.Int(1);
        hw.Key("method");
        hw.String("POST");
        hw.Key("path");
        hw.String(opt.path.data(), static_cast<SizeType>(opt.path.size()));
        hw.Key("headers");
        hw.StartObject();
        hw.Key("content-type");
        hw.String("application/json");
        if (stream) {
            hw.Key("accept");
            hw.String("text/event-stream");
        }
        hw.EndObject();
        hw.EndObject();

        w_.StartObject();
        w_.Key("model");
        write_string(model);
        w_.Key("messages");
        w_.StartArray();
        const std::size_t before_system = out_.GetSize();
        write_system(prepared, opt);
        // abi.108: the system message leads the array; the comma the first turn's message is
        // written after belongs before the span.
        span_.begin = out_.GetSize() + (out_.GetSize() > before_system ? 1 : 0);
        write_turns(prepared);
        span_.end = out_.GetSize();
        w_.EndArray();
        check_anchors_rendered();
        write_tools(prepared);
        w_.Key(opt.max_tokens_field.data(), static_cast<SizeType>(opt.max_tokens_field.size()));
        w_.Int64(head.max_tokens);
        write_reasoning(head, opt);
        write_cache_fields(head);
        if (stream) {
            w_.Key("stream");
            w_.Bool(true);
            w_.Key("stream_options");
            w_.StartObject();
            w_.Key("include_usage");
            w_.Bool(true);
            w_.EndObject();
        }
        w_.EndObject();
    }

  private:
    // ---- the request's own fields ----------------------------------------------------------

    static std::string_view string_option(const Value& options, const char* key) {
        const Value* v = member(options, key);
        if (v == nullptr) return {};
        if (!v->IsString()) refuse(std::string("options.") + key + ": expected a string");
        return view_of(*v);
    }

    static Options read_options(const Value* options) {
        Options o;
        if (options == nullptr) return o;
        if (auto p = string_option(*options, "path"); !p.empty()) {
            if (p.front() != '/') {
                refuse("options.path: \"" + std::string(p) + "\" must start with '/'");
            }
            o.path = p;
        }
        if (auto r = string_option(*options, "system_role"); !r.empty()) {
            if (r != "system" && r != "developer") {
                refuse("options.system_role: \"" + std::string(r) +
                       "\" is not a role for the objective (expected \"system\" or "
                       "\"developer\")");
            }
            o.system_role = r;
        }
        if (auto f = string_option(*options, "max_tokens_field"); !f.empty()) {
            if (f != "max_completion_tokens" && f != "max_tokens") {
                refuse("options.max_tokens_field: \"" + std::string(f) +
                       "\" (expected \"max_completion_tokens\" or \"max_tokens\")");
            }
            o.max_tokens_field = f;
        }
        o.reasoning_effort = string_option(*options, "reasoning_effort");
        return o;
    }

    /// catalog.5: the effort the core chose from the model's record is sent at every depth that
    /// names one (IMMEDIATE too: a current model reasons at its default when nothing is sent);
    /// options.reasoning_effort overrides it. A request of an older core (no thinking.effort)
    /// maps an active thinking budget onto low/medium/high.
    void write_reasoning(const providers::RequestHead& head, const Options& opt) {
        if (!head.thinking_effort.empty()) {
            w_.Key("reasoning_effort");
            write_string(opt.reasoning_effort.empty() ? head.thinking_effort
                                                      : opt.reasoning_effort);
            return;
        }
        if (!head.thinking_active) return;
        if (!opt.reasoning_effort.empty()) {
            w_.Key("reasoning_effort");
            write_string(opt.reasoning_effort);
            return;
        }
        if (head.thinking_budget <= 0) return;
        w_.Key("reasoning_effort");
        w_.String(effort_for(head.thinking_budget));
    }

    /// caching.118: the conversation's id as prompt_cache_key on a model that caches; on a model
    /// with explicit breakpoints, prompt_cache_options mode explicit, so the plan's marks are the
    /// only ones written (OpenAI adds no implicit breakpoint of its own) and its TTL is the
    /// default.
    void write_cache_fields(const providers::RequestHead& head) {
        if (!head.cache_key.empty() &&
            (head.caching == "explicit" || head.caching == "automatic")) {
            w_.Key("prompt_cache_key");
            write_string(head.cache_key);
        }
        if (!explicit_) return;
        w_.Key("prompt_cache_options");
        w_.StartObject();
        w_.Key("mode");
        w_.String("explicit");
        w_.EndObject();
    }

    /// caching.119: every planned anchor lands on a part that carries it; one that cannot (a tool
    /// call, an image, a dropped blank block) is refused, never moved or dropped.
    void check_anchors_rendered() const {
        for (std::size_t i = 0; i < plan_.anchors.size(); ++i) {
            if (rendered_[i]) continue;
            const auto [t, b] = plan_.anchors[i];
            refuse("prepared.cache_plan.turn_anchors: turn " + std::to_string(t) + " block " +
                   std::to_string(b) +
                   " cannot carry a breakpoint in Chat Completions (only a text, json or skill "
                   "part or a tool result that is sent can)");
        }
    }

    /// The prompt_cache_breakpoint of the part written for block `k` of turn `t`, when the plan
    /// anchors one there.
    void write_mark_if_anchored(std::size_t t, std::size_t k) {
        if (!explicit_) return;
        for (std::size_t i = 0; i < plan_.anchors.size(); ++i) {
            if (plan_.anchors[i] != std::make_pair(t, k)) continue;
            rendered_[i] = true;
            write_mark();
        }
    }

    void write_mark() {
        w_.Key("prompt_cache_breakpoint");
        w_.StartObject();
        w_.Key("mode");
        w_.String("explicit");
        w_.EndObject();
    }

    void write_tools(const Value& prepared) {
        const Value* defs = member(prepared, "tool_definitions");
        if (defs == nullptr || defs->IsNull()) return;
        if (!defs->IsArray()) refuse("prepared.tool_definitions: expected an array");
        if (defs->Empty()) return;
        w_.Key("tools");
        w_.StartArray();
        for (SizeType i = 0; i < defs->Size(); ++i) {
            const Value& d = (*defs)[i];
            const std::string at = "prepared.tool_definitions[" + std::to_string(i) + "]";
            const Value* name = member(d, "name");
            if (name == nullptr || !name->IsString() || name->GetStringLength() == 0) {
                refuse(at + ".name: a non-empty string is required");
            }
            w_.StartObject();
            w_.Key("type");
            w_.String("function");
            w_.Key("function");
            w_.StartObject();
            w_.Key("name");
            write_string(view_of(*name));
            if (const Value* desc = member(d, "description");
                desc != nullptr && desc->IsString() && desc->GetStringLength() > 0) {
                w_.Key("description");
                write_string(view_of(*desc));
            }
            w_.Key("parameters");
            const Value* schema = member(d, "schema");
            if (schema == nullptr || schema->IsNull()) {
                w_.StartObject();
                w_.Key("type");
                w_.String("object");
                w_.Key("properties");
                w_.StartObject();
                w_.EndObject();
                w_.EndObject();
            } else if (schema->IsObject()) {
                // The API wants a schema of type "object" (wire.121): one without a type gets it,
                // as the Anthropic dialect does; one of another type cannot be a function's.
                const Value* type = member(*schema, "type");
                if (type != nullptr && !(type->IsString() && view_of(*type) == "object"))
                    refuse(at +
                           ".schema: a function's parameters must be a JSON Schema of type "
                           "\"object\"");
                w_.StartObject();
                if (type == nullptr) {
                    w_.Key("type");
                    w_.String("object");
                }
                for (const auto& m : schema->GetObject()) {
                    w_.Key(m.name.GetString(), m.name.GetStringLength());
                    m.value.Accept(w_);
                }
                w_.EndObject();
            } else {
                refuse(at + ".schema: expected a JSON Schema object");
            }
            w_.EndObject();
            w_.EndObject();
        }
        w_.EndArray();
    }

    // ---- system -------------------------------------------------------------------------------

    /// channel.3: OpenAI has no system channel, so the objective is one
    /// leading system (or developer) message, the blocks' texts joined by a blank line.
    void write_system(const Value& prepared, const Options& opt) {
        const Value* blocks = member(prepared, "system_blocks");
        if (blocks == nullptr || blocks->IsNull()) return;
        if (!blocks->IsArray()) refuse("prepared.system_blocks: expected an array");
        joined_.clear();
        std::optional<SizeType> last_sent;
        for (SizeType i = 0; i < blocks->Size(); ++i) {
            const Value& b = (*blocks)[i];
            const Kind k =
                kind_of(b, [&] { return "prepared.system_blocks[" + std::to_string(i) + "]"; });
            if (!text_like(k)) {
                refuse("prepared.system_blocks[" + std::to_string(i) +
                       "]: a system block must be text, json or skill, not " +
                       std::string(view_of(b["type"])));
            }
            const std::string_view t =
                text_of(b, k, [&] { return "prepared.system_blocks[" + std::to_string(i) + "]"; });
            if (is_blank(t)) continue;
            if (!joined_.empty()) joined_ += "\n\n";
            joined_.append(t);
            last_sent = i;
        }
        // caching.119: the system breakpoint marks the end of the one system message, which is
        // where the last block sent ends.
        if (plan_.system_block && plan_.system_block != last_sent) {
            refuse("prepared.cache_plan.system_block: " + std::to_string(*plan_.system_block) +
                   " is not the last system block sent (the system message ends with block " +
                   (last_sent ? std::to_string(*last_sent) : std::string("none")) + ")");
        }
        if (joined_.empty()) return;
        w_.StartObject();
        w_.Key("role");
        write_string(opt.system_role);
        w_.Key("content");
        if (explicit_) {
            // caching.119: with explicit caching every content is an array of parts, so a
            // breakpoint moving on or off a message changes only the mark, never the form.
            w_.StartArray();
            write_text_part(joined_, plan_.system_block.has_value());
            w_.EndArray();
        } else {
            write_string(joined_);
        }
        w_.EndObject();
    }

    // ---- turns --------------------------------------------------------------------------------

    std::string turn_where(const Value& turns, SizeType t) const {
        std::string s = "prepared.turns[" + std::to_string(t) + "]";
        const Value* id = member(turns[t], "message_id");
        if (id != nullptr && id->IsString() && id->GetStringLength() > 0) {
            s += " (message \"" + std::string(view_of(*id)) + "\")";
        }
        return s;
    }

    std::string block_where(const Value& turns, SizeType t, SizeType k) const {
        return turn_where(turns, t) + ".blocks[" + std::to_string(k) + "]";
    }

    /// True for a user turn, false for an assistant turn; anything else is refused (channel.4:
    /// turns are USER or ASSISTANT, nothing else).
    bool is_user(const Value& turns, SizeType t) const {
        const Value& turn = turns[t];
        if (!turn.IsObject()) refuse(turn_where(turns, t) + ": expected an object");
        const Value* role = member(turn, "role");
        if (role != nullptr && role->IsString()) {
            const std::string_view r = view_of(*role);
            if (r == "user") return true;
            if (r == "assistant") return false;
            refuse(turn_where(turns, t) + ".role: \"" + std::string(r) +
                   "\" is not a turn role (expected \"user\" or \"assistant\")");
        }
        refuse(turn_where(turns, t) + ".role: a string is required");
    }

    const Value& blocks_of(const Value& turns, SizeType t) const {
        const Value* b = member(turns[t], "blocks");
        if (b == nullptr || !b->IsArray())
            refuse(turn_where(turns, t) + ".blocks: an array is required");
        return *b;
    }

    /// Consecutive turns of one role are one OpenAI message group (docs: "a dialect that needs
    /// strict alternation concatenates adjacent same-role turns in order"). OpenAI itself accepts
    /// repeated roles, but tool messages must follow the assistant message holding every call
    /// they answer, and OpenAI-compatible servers with strict chat templates need alternation.
    void write_turns(const Value& prepared) {
        const Value* turns = member(prepared, "turns");
        if (turns == nullptr || !turns->IsArray()) refuse("prepared.turns: an array is required");
        const SizeType n = turns->Size();
        SizeType i = 0;
        while (i < n) {
            const bool user = is_user(*turns, i);
            SizeType j = i + 1;
            while (j < n && is_user(*turns, j) == user) ++j;
            if (user) {
                write_user_group(*turns, i, j);
            } else {
                write_assistant_group(*turns, i, j);
            }
            i = j;
        }
    }

    [[noreturn]] void refuse_empty(const Value& turns, SizeType t) const {
        refuse(turn_where(turns, t) +
               ": nothing left to send (its blocks are empty or blank text, or thinking that "
               "OpenAI takes no input of); a blank turn is never sent");
    }

    /// User turns: every tool_result becomes a `role: tool` message, and those lead (an OpenAI
    /// tool message must directly follow the assistant message with the call); the rest of the
    /// group is one `role: user` message.
    void write_user_group(const Value& turns, SizeType b, SizeType e) {
        items_.clear();
        std::size_t parts = 0;
        for (SizeType t = b; t < e; ++t) {
            const Value& blocks = blocks_of(turns, t);
            std::size_t contributed = 0;
            for (SizeType k = 0; k < blocks.Size(); ++k) {
                const Value& block = blocks[k];
                const auto where = [&] { return block_where(turns, t, k); };
                const Kind kind = kind_of(block, where);
                switch (kind) {
                    case Kind::kToolResult: {
                        const std::size_t attached = write_tool_message(turns, t, k);
                        if (attached > 0) {
                            parts += attached + 1;  // + the label part
                            items_.push_back({&block, kind, {}, t, k});
                        }
                        ++contributed;
                        break;
                    }
                    case Kind::kImage:
                    case Kind::kFile:
                        check_attachment(block, kind, where);
                        [[fallthrough]];
                    case Kind::kText:
                    case Kind::kJson:
                    case Kind::kSkill: {
                        const Item item = item_of(block, kind, where, t, k);
                        if (text_like(kind) && kind != Kind::kJson && is_blank(item.text)) break;
                        items_.push_back(item);
                        ++parts;
                        ++contributed;
                        break;
                    }
                    case Kind::kThinking:
                    case Kind::kRedactedThinking:
                        break;          // OpenAI takes no thinking input
                    case Kind::kOther:  // never: kind_of refuses a type the document lacks
                        break;
                    case Kind::kToolUse:
                        refuse(where() +
                               ": a tool_use block in a user turn (calls are the assistant's)");
                }
            }
            if (contributed == 0) refuse_empty(turns, t);
        }
        if (parts == 0) return;

        w_.StartObject();
        w_.Key("role");
        w_.String("user");
        w_.Key("content");
        if (parts == 1 && text_like(items_.front().kind) && !explicit_) {
            // One text part: the plain string form, which every OpenAI-compatible server reads.
            write_string(text_of(items_.front()));
        } else {
            w_.StartArray();
            // Attachments of tool results first: the results lead the turn.
            for (const Item& item : items_) {
                if (item.kind == Kind::kToolResult) write_result_attachments(*item.block);
            }
            for (const Item& item : items_) {
                if (text_like(item.kind)) {
                    write_text_part(text_of(item), item.turn, item.block_index);
                } else if (item.kind == Kind::kImage || item.kind == Kind::kFile) {
                    write_attachment(*item.block, item.kind);
                }
            }
            w_.EndArray();
        }
        w_.EndObject();
    }

    /// Assistant turns: one `role: assistant` message with the text as content and every
    /// tool_use as a tool call whose `function.arguments` is the input as a JSON string.
    void write_assistant_group(const Value& turns, SizeType b, SizeType e) {
        items_.clear();
        std::size_t parts = 0;
        std::size_t calls = 0;
        for (SizeType t = b; t < e; ++t) {
            const Value& blocks = blocks_of(turns, t);
            const std::size_t before = items_.size();
            for (SizeType k = 0; k < blocks.Size(); ++k) {
                const Value& block = blocks[k];
                const auto where = [&] { return block_where(turns, t, k); };
                const Kind kind = kind_of(block, where);
                switch (kind) {
                    case Kind::kText:
                    case Kind::kJson:
                    case Kind::kSkill: {
                        const Item item = item_of(block, kind, where, t, k);
                        if (kind != Kind::kJson && is_blank(item.text)) break;
                        items_.push_back(item);
                        ++parts;
                        break;
                    }
                    case Kind::kToolUse:
                        check_tool_use(block, where);
                        items_.push_back({&block, kind, {}, t, k});
                        ++calls;
                        break;
                    case Kind::kThinking:
                    case Kind::kRedactedThinking:
                        break;          // OpenAI takes no thinking input
                    case Kind::kOther:  // never: kind_of refuses a type the document lacks
                        break;
                    case Kind::kImage:
                    case Kind::kFile:
                        refuse(where() +
                               ": an assistant message cannot carry an image or a file in OpenAI "
                               "Chat Completions (assistant content is text only)");
                    case Kind::kToolResult:
                        refuse(where() +
                               ": a tool_result block in an assistant turn (results "
                               "are the user's)");
                }
            }
            if (items_.size() == before) refuse_empty(turns, t);
        }

        w_.StartObject();
        w_.Key("role");
        w_.String("assistant");
        if (parts > 0) {
            w_.Key("content");
            const bool array = parts > 1 || explicit_;  // caching.119: parts, to carry a mark
            if (array) w_.StartArray();
            for (const Item& item : items_) {
                if (!text_like(item.kind)) continue;
                if (array) {
                    write_text_part(text_of(item), item.turn, item.block_index);
                } else {
                    write_string(text_of(item));
                }
            }
            if (array) w_.EndArray();
        }
        if (calls > 0) {
            w_.Key("tool_calls");
            w_.StartArray();
            for (const Item& item : items_) {
                if (item.kind == Kind::kToolUse) write_tool_call(*item.block);
            }
            w_.EndArray();
        }
        w_.EndObject();
    }

    /// A block kept for the group's message, validated, with its text when it is text or skill
    /// (a json block's text is written when needed: compact JSON is never blank).
    struct Item {
        const Value* block;
        Kind kind;
        std::string_view text;
        std::size_t turn = 0;  ///< where the block is, for its cache mark
        std::size_t block_index = 0;
    };

    template <class Where>
    Item item_of(const Value& block, Kind kind, const Where& where, std::size_t t, std::size_t k) {
        if (kind == Kind::kText || kind == Kind::kSkill) {
            return {&block, kind, text_of(block, kind, where), t, k};
        }
        if (kind == Kind::kJson && member(block, "json") == nullptr) {
            refuse(where() + ".json: a JSON value is required");
        }
        return {&block, kind, {}, t, k};
    }

    std::string_view text_of(const Item& item) {
        return item.kind == Kind::kJson
                   ? text_of(*item.block, item.kind, [] { return std::string(); })
                   : item.text;
    }

    // ---- blocks -------------------------------------------------------------------------------

    template <class Where>
    static Kind kind_of(const Value& block, const Where& where) {
        return providers::block_kind_of(block, "openai", where);
    }

    template <class Where>
    static std::string_view required_string(const Value& block, const char* key,
                                            const Where& where) {
        const Value* v = member(block, key);
        if (v == nullptr || !v->IsString()) refuse(where() + "." + key + ": a string is required");
        return view_of(*v);
    }

    /// The text a text-like block renders as: text, a skill's content, a json block's compact
    /// JSON (docs: "A json block renders as text holding the JSON. A skill block renders as
    /// text"). A json view lives in json_text_ until the next json block.
    template <class Where>
    std::string_view text_of(const Value& block, Kind kind, const Where& where) {
        if (kind == Kind::kText) return required_string(block, "text", where);
        if (kind == Kind::kSkill) return required_string(block, "content", where);
        const Value* json = member(block, "json");
        if (json == nullptr) refuse(where() + ".json: a JSON value is required");
        json_text_.Clear();
        providers::JsonWriter jw(json_text_);
        json->Accept(jw);
        return std::string_view(json_text_.GetString(), json_text_.GetSize());
    }

    template <class Where>
    static void check_attachment(const Value& block, Kind kind, const Where& where) {
        required_string(block, "media_type", where);
        const Value* data = member(block, "data");
        const Value* url = member(block, "url");
        const bool has_data = data != nullptr && data->IsString();
        const bool has_url = url != nullptr && url->IsString();
        if (has_data == has_url) {
            refuse(where() + ": exactly one of \"data\" and \"url\" is required");
        }
        if (kind == Kind::kFile && has_url) {
            refuse(where() +
                   ": a file by URL cannot be sent to OpenAI Chat Completions (a file part takes "
                   "base64 data or an uploaded file id); attach its data instead");
        }
    }

    template <class Where>
    static void check_tool_use(const Value& block, const Where& where) {
        if (required_string(block, "id", where).empty()) refuse(where() + ".id: empty");
        if (required_string(block, "name", where).empty()) refuse(where() + ".name: empty");
        const Value* input = member(block, "input");
        if (input != nullptr && !input->IsObject() && !input->IsNull()) {
            refuse(where() + ".input: expected an object");
        }
    }

    void write_text_part(std::string_view text, bool marked = false) {
        w_.StartObject();
        w_.Key("type");
        w_.String("text");
        w_.Key("text");
        write_string(text);
        if (marked) write_mark();
        w_.EndObject();
    }

    /// A text part for block `k` of turn `t`, with its breakpoint when the plan anchors one there.
    void write_text_part(std::string_view text, std::size_t t, std::size_t k) {
        w_.StartObject();
        w_.Key("type");
        w_.String("text");
        w_.Key("text");
        write_string(text);
        write_mark_if_anchored(t, k);
        w_.EndObject();
    }

    /// An image as an image_url part (a data URL for base64); a file as a file part with its
    /// data as a data URL (OpenAI's documented form of file_data) and its name.
    void write_attachment(const Value& block, Kind kind) {
        const std::string_view media = view_of(block["media_type"]);
        const Value* data = member(block, "data");
        scratch_.clear();
        if (data != nullptr && data->IsString()) {
            scratch_.append("data:").append(media).append(";base64,").append(view_of(*data));
        } else {
            scratch_.append(view_of(block["url"]));
        }
        w_.StartObject();
        w_.Key("type");
        if (kind == Kind::kImage) {
            w_.String("image_url");
            w_.Key("image_url");
            w_.StartObject();
            w_.Key("url");
            write_string(scratch_);
            w_.EndObject();
        } else {
            w_.String("file");
            w_.Key("file");
            w_.StartObject();
            w_.Key("filename");
            const Value* name = member(block, "name");
            if (name != nullptr && name->IsString() && name->GetStringLength() > 0) {
                write_string(view_of(*name));
            } else {
                // The API wants a name with file_data; derive one from the media type.
                const auto slash = media.find('/');
                const std::string fallback = "file." + std::string(slash == std::string_view::npos
                                                                       ? std::string_view("bin")
                                                                       : media.substr(slash + 1));
                write_string(fallback);
            }
            w_.Key("file_data");
            write_string(scratch_);
            w_.EndObject();
        }
        w_.EndObject();
    }

    void write_tool_call(const Value& block) {
        w_.StartObject();
        w_.Key("id");
        write_string(view_of(block["id"]));
        w_.Key("type");
        w_.String("function");
        w_.Key("function");
        w_.StartObject();
        w_.Key("name");
        write_string(view_of(block["name"]));
        w_.Key("arguments");
        const Value* input = member(block, "input");
        if (input == nullptr || input->IsNull()) {
            w_.String("{}");
        } else {
            json_text_.Clear();
            providers::JsonWriter jw(json_text_);
            input->Accept(jw);
            w_.String(json_text_.GetString(), static_cast<SizeType>(json_text_.GetSize()));
        }
        w_.EndObject();
        w_.EndObject();
    }

    const Value* result_content(const Value& turns, SizeType t, SizeType k) const {
        const Value* content = member(turns[t]["blocks"][k], "content");
        if (content == nullptr || content->IsNull() || content->IsString() || content->IsArray()) {
            return content;
        }
        refuse(block_where(turns, t, k) + ".content: expected an array of blocks");
    }

    /// A `role: tool` message answering the call. Its content is the result's text parts joined
    /// by a line break (json parts as their JSON); an is_error result is prefixed "Error: " so the
    /// model knows the call failed (Chat Completions has no error flag); a result with no text
    /// says "(empty result)" rather than being blank. Images and files cannot ride a tool
    /// message: they go to the user message that follows (write_result_attachments). Returns the
    /// number of such attachments.
    std::size_t write_tool_message(const Value& turns, SizeType t, SizeType k) {
        const Value& block = turns[t]["blocks"][k];
        const auto where = [&] { return block_where(turns, t, k); };
        const std::string_view id = required_string(block, "tool_use_id", where);
        if (id.empty()) refuse(where() + ".tool_use_id: empty");
        bool is_error = false;
        if (const Value* e = member(block, "is_error"); e != nullptr && !e->IsNull()) {
            if (!e->IsBool()) refuse(where() + ".is_error: expected a boolean");
            is_error = e->GetBool();
        }
        joined_.clear();
        std::size_t attachments = 0;
        const Value* content = result_content(turns, t, k);
        if (content != nullptr && content->IsString()) {
            if (!is_blank(view_of(*content))) joined_.append(view_of(*content));
        } else if (content != nullptr && content->IsArray()) {
            for (SizeType i = 0; i < content->Size(); ++i) {
                const Value& part = (*content)[i];
                const auto part_where = [&] {
                    return where() + ".content[" + std::to_string(i) + "]";
                };
                const Kind kind = kind_of(part, part_where);
                if (kind == Kind::kText || kind == Kind::kJson) {
                    const std::string_view text = text_of(part, kind, part_where);
                    if (is_blank(text)) continue;
                    if (!joined_.empty()) joined_ += '\n';
                    joined_.append(text);
                } else if (kind == Kind::kImage || kind == Kind::kFile) {
                    check_attachment(part, kind, part_where);
                    ++attachments;
                } else {
                    refuse(part_where() +
                           ": a tool_result holds text, json, image or file blocks only");
                }
            }
        }
        if (joined_.empty()) {
            joined_ = attachments > 0 ? "(the result's attachments follow in the next user message)"
                                      : "(empty result)";
        }
        if (is_error) joined_.insert(0, "Error: ");
        w_.StartObject();
        w_.Key("role");
        w_.String("tool");
        w_.Key("tool_call_id");
        write_string(id);
        w_.Key("content");
        if (explicit_) {
            w_.StartArray();
            write_text_part(joined_, t, k);
            w_.EndArray();
        } else {
            write_string(joined_);
        }
        w_.EndObject();
        return attachments;
    }

    void write_result_attachments(const Value& block) {
        const Value* content = member(block, "content");
        if (content == nullptr || !content->IsArray()) return;
        bool labelled = false;
        for (const Value& part : content->GetArray()) {
            const Kind kind = kind_of(part, [] { return std::string(); });
            if (kind != Kind::kImage && kind != Kind::kFile) continue;
            if (!labelled) {
                scratch_ = "Attachments of the result of tool call ";
                scratch_.append(view_of(block["tool_use_id"])).append(":");
                write_text_part(scratch_);
                labelled = true;
            }
            write_attachment(part, kind);
        }
    }

    void write_string(std::string_view s) { w_.String(s.data(), static_cast<SizeType>(s.size())); }

    rapidjson::StringBuffer& out_;
    Writer w_;
    providers::TurnSpan span_;
    rapidjson::StringBuffer json_text_;  ///< a json block's text or a tool call's arguments
    std::string joined_;                 ///< the system text or a tool message's text
    std::string scratch_;                ///< data URLs and labels
    std::vector<Item> items_;            ///< the blocks of the group being written
    bool explicit_ = false;              ///< caching.118: the model takes explicit breakpoints
    providers::WirePlan plan_;           ///< the core's plan, read only when explicit_
    std::vector<bool> rendered_;         ///< which of plan_.anchors have been written
};

}  // namespace

providers::TurnSpan encode_request(std::string_view provider_request_json,
                                   rapidjson::StringBuffer& head, rapidjson::StringBuffer& body) {
    // In-situ parsing: strings stay in this copy instead of being allocated one by one; the copy
    // is this thread's scratch (limits.134).
    const providers::Scratch<std::string> buffer;
    rapidjson::Document doc;
    providers::parse_request(provider_request_json, *buffer, doc, "openai");
    Encoder encoder(body);
    encoder.encode(doc, head);
    return encoder.span();
}

}  // namespace nucleo::openai
