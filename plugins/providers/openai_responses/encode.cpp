// encode: the core's provider request → POST /responses (docs/spec/openai-responses.md
// responses.1-responses.8).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json.hpp"
#include "responses.hpp"
#include "strict.hpp"

namespace nucleo::responses {
namespace {

using json::member;
using json::text;
using json::Value;
using json::Writer;

/// caching.2: "Each request can write up to four breakpoints" (the SDK's PromptCacheOptions).
constexpr std::size_t kMaxBreakpoints = 4;

/// limits.134's bound on the buffers a thread keeps from call to call.
constexpr std::size_t kKeepBytes = std::size_t{64} << 20;

[[noreturn]] void refuse(const std::string& what) {
    throw plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT, "openai-responses: " + what);
}

bool blank(std::string_view s) {
    for (const char c : s)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
    return true;
}

/// The sendable text of a text, json or skill block ("" for any other or a blank one): a view of
/// the request's own string, or of `scratch` for a json block's compact text, so a text is not
/// copied before it is written (bench/encode).
std::string_view block_text(const Value& b, std::string_view type,
                            rapidjson::StringBuffer& scratch) {
    std::string_view t;
    if (type == "text") t = text(member(b, "text"));
    if (type == "skill") t = text(member(b, "content"));
    if (type == "json" && member(b, "json") != nullptr)
        t = json::compact_into(*member(b, "json"), scratch);
    return blank(t) ? std::string_view() : t;
}

/// Where a block is, named when it is refused.
std::string where(std::size_t turn, std::size_t block) {
    return "turn " + std::to_string(turn) + " block " + std::to_string(block);
}

/// responses.6: the core's cache plan, read only for a model that takes explicit breakpoints.
struct Plan {
    long system_block = -1;
    std::vector<std::pair<std::size_t, std::size_t>> anchors;
    std::vector<bool> rendered;

    [[nodiscard]] long anchor_at(std::size_t t, std::size_t b) const {
        for (std::size_t i = 0; i < anchors.size(); ++i)
            if (anchors[i].first == t && anchors[i].second == b) return static_cast<long>(i);
        return -1;
    }
};

std::size_t plan_index(const Value* v, const char* what) {
    if (v == nullptr || !v->IsUint64() || v->GetUint64() > 1000000)
        refuse(std::string("prepared.cache_plan.") + what + ": expected a non-negative integer");
    return static_cast<std::size_t>(v->GetUint64());
}

Plan read_plan(const Value& prepared) {
    Plan plan;
    const Value* p = member(prepared, "cache_plan");
    if (p == nullptr || p->IsNull()) return plan;
    if (!p->IsObject()) refuse("prepared.cache_plan is not an object");
    if (const Value* s = member(*p, "system_block"); s != nullptr && !s->IsNull())
        plan.system_block = static_cast<long>(plan_index(s, "system_block"));
    if (const Value* a = member(*p, "turn_anchors"); a != nullptr && !a->IsNull()) {
        if (!a->IsArray()) refuse("prepared.cache_plan.turn_anchors is not an array");
        for (const auto& anchor : a->GetArray()) {
            const std::size_t t = plan_index(member(anchor, "turn"), "turn_anchors.turn");
            const std::size_t b = plan_index(member(anchor, "block"), "turn_anchors.block");
            if (plan.anchor_at(t, b) >= 0)
                refuse("prepared.cache_plan.turn_anchors names " + where(t, b) + " twice");
            plan.anchors.emplace_back(t, b);
        }
    }
    const std::size_t total = plan.anchors.size() + (plan.system_block >= 0 ? 1 : 0);
    if (total > kMaxBreakpoints)
        refuse("the cache plan asks for " + std::to_string(total) +
               " breakpoints; the Responses API writes at most 4");
    plan.rendered.assign(plan.anchors.size(), false);
    return plan;
}

/// Options of the provider instance, read per request (responses.7).
struct Options {
    bool store = false;
    std::string_view summary = "auto";
    std::string_view path = "/responses";
};

Options read_options(const Value* options) {
    Options o;
    if (options == nullptr || !options->IsObject()) return o;
    if (const Value* s = member(options, "store"); s != nullptr) {
        if (!s->IsBool()) refuse("options.store: expected a boolean");
        o.store = s->GetBool();
    }
    if (const Value* s = member(options, "reasoning_summary"); s != nullptr) {
        const std::string_view v = text(s);
        if (v != "auto" && v != "concise" && v != "detailed" && v != "none")
            refuse("options.reasoning_summary: expected auto, concise, detailed or none");
        o.summary = v;
    }
    if (const Value* p = member(options, "path"); p != nullptr) {
        const std::string_view v = text(p);
        if (v.empty() || v.front() != '/') refuse("options.path: must start with '/'");
        for (const char c : v)
            if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
                refuse("options.path: a character a path cannot hold");
        o.path = v;
    }
    return o;
}

/// Writes the `input` items of the turns (responses.2-responses.5).
class InputWriter {
  public:
    InputWriter(Writer& w, Plan& plan, bool explicit_marks, std::string_view family)
        : w_(w), plan_(plan), explicit_(explicit_marks), family_(family) {}

    void turn(const Value& turn, std::size_t t) {
        const std::string_view role = text(member(turn, "role"));
        if (role != "user" && role != "assistant")
            refuse("turn " + std::to_string(t) + " has role \"" + std::string(role.substr(0, 20)) +
                   "\" (user or assistant)");
        const Value* blocks = member(turn, "blocks");
        const std::size_t before = items_;
        if (blocks != nullptr && blocks->IsArray()) {
            if (role == "user")
                user_turn(*blocks, t);
            else
                assistant_turn(*blocks, t);
        }
        if (items_ == before)
            refuse("turn " + std::to_string(t) +
                   ": nothing left to send (only blank text, thinking, or provider blocks of "
                   "another family); a turn is never sent empty");
    }

  private:
    void begin_item() {
        w_.StartObject();
        ++items_;
    }

    void mark_if_anchored(std::size_t t, std::size_t k) {
        if (!explicit_) return;
        const long i = plan_.anchor_at(t, k);
        if (i < 0) return;
        plan_.rendered[static_cast<std::size_t>(i)] = true;
        json::key(w_, "prompt_cache_breakpoint");
        w_.StartObject();
        json::key(w_, "mode");
        json::string(w_, "explicit");
        w_.EndObject();
    }

    void input_text(std::string_view t, std::size_t turn, std::size_t k) {
        w_.StartObject();
        json::key(w_, "type");
        json::string(w_, "input_text");
        json::key(w_, "text");
        json::string(w_, t);
        mark_if_anchored(turn, k);
        w_.EndObject();
    }

    /// responses.3: an image as input_image (a data URL for inline data), a file as input_file
    /// (file_data as a data URL with its filename, or file_url).
    void media(const Value& b, std::string_view type, std::size_t turn, std::size_t k,
               const std::string& at) {
        const std::string_view mime = text(member(b, "media_type"));
        const Value* data = member(b, "data");
        const Value* url = member(b, "url");
        const bool inline_data = data != nullptr && data->IsString();
        if (!inline_data && (url == nullptr || !url->IsString()))
            refuse(at + ": an image or file with neither data nor url");
        if (inline_data && mime.empty()) refuse(at + ": inline data without media_type");
        std::string data_url;
        if (inline_data)
            data_url.append("data:").append(mime).append(";base64,").append(json::view(*data));
        w_.StartObject();
        json::key(w_, "type");
        if (type == "image") {
            json::string(w_, "input_image");
            json::key(w_, "detail");
            json::string(w_, "auto");
            json::key(w_, "image_url");
            json::string(w_, inline_data ? std::string_view(data_url) : json::view(*url));
        } else {
            json::string(w_, "input_file");
            if (inline_data) {
                json::key(w_, "file_data");
                json::string(w_, data_url);
                std::string name(text(member(b, "name")));
                if (name.empty()) {
                    const auto slash = mime.find('/');
                    name = "file." + std::string(slash == std::string_view::npos
                                                     ? std::string_view("bin")
                                                     : mime.substr(slash + 1));
                }
                json::key(w_, "filename");
                json::string(w_, name);
            } else {
                json::key(w_, "file_url");
                json::string(w_, json::view(*url));
            }
        }
        mark_if_anchored(turn, k);
        w_.EndObject();
    }

    /// responses.4: a tool result as function_call_output: its text and json parts joined by
    /// line breaks ("Error: " first for an error result, "(empty result)" for none); with an
    /// image or file, or on a model with explicit breakpoints, `output` is a list of parts.
    void tool_result(const Value& b, std::size_t t, std::size_t k) {
        const std::string_view id = text(member(b, "tool_use_id"));
        if (id.empty()) refuse(where(t, k) + ": a tool_result without tool_use_id");
        const Value* is_error = member(b, "is_error");
        // This writer's buffer, its capacity kept from result to result (bench/encode).
        std::string& joined = joined_;
        joined.clear();
        bool has_media = false;
        const Value* content = member(b, "content");
        if (content != nullptr && content->IsArray()) {
            for (const auto& c : content->GetArray()) {
                const std::string_view type = text(member(c, "type"));
                if (type == "image" || type == "file") has_media = true;
                const std::string_view piece = block_text(c, type, scratch_);
                if (piece.empty()) continue;
                if (!joined.empty()) joined += '\n';
                joined += piece;
            }
        }
        if (is_error != nullptr && is_error->IsTrue()) joined = "Error: " + joined;
        if (blank(joined)) joined = "(empty result)";
        begin_item();
        json::key(w_, "type");
        json::string(w_, "function_call_output");
        json::key(w_, "call_id");
        json::string(w_, id);
        json::key(w_, "output");
        if (!has_media && !explicit_) {
            json::string(w_, joined);
        } else {
            w_.StartArray();
            input_text(joined, t, k);
            std::size_t c = 0;
            for (const auto& part : content->GetArray()) {
                const std::string_view type = text(member(part, "type"));
                if (type == "image" || type == "file")
                    media(part, type, static_cast<std::size_t>(-1), 0,
                          where(t, k) + " content " + std::to_string(c));
                ++c;
            }
            w_.EndArray();
        }
        w_.EndObject();
    }

    void user_turn(const Value& blocks, std::size_t t) {
        // responses.4: the results first, in order, then one message with the rest.
        std::size_t k = 0;
        bool rest = false;
        for (const auto& b : blocks.GetArray()) {
            const std::string_view type = text(member(b, "type"));
            if (type == "tool_result")
                tool_result(b, t, k);
            else if (type == "tool_use")
                refuse(where(t, k) + ": a tool_use block in a user turn");
            else if (type == "image" || type == "file" || !block_text(b, type, scratch_).empty())
                rest = true;
            ++k;
        }
        if (!rest) return;
        begin_item();
        json::key(w_, "type");
        json::string(w_, "message");
        json::key(w_, "role");
        json::string(w_, "user");
        json::key(w_, "content");
        w_.StartArray();
        k = 0;
        for (const auto& b : blocks.GetArray()) {
            const std::string_view type = text(member(b, "type"));
            if (type == "image" || type == "file") {
                media(b, type, t, k, where(t, k));
            } else if (type != "tool_result") {
                const std::string_view s = block_text(b, type, scratch_);
                if (!s.empty()) input_text(s, t, k);
            }
            ++k;
        }
        w_.EndArray();
        w_.EndObject();
    }

    void assistant_turn(const Value& blocks, std::size_t t) {
        std::size_t k = 0;
        for (const auto& b : blocks.GetArray()) {
            const std::string_view type = text(member(b, "type"));
            if (explicit_ && plan_.anchor_at(t, k) >= 0)
                refuse("prepared.cache_plan.turn_anchors: " + where(t, k) +
                       " is in an assistant turn, and the Responses API takes no breakpoint on "
                       "assistant output (responses.6)");
            if (type == "tool_use") {
                function_call(b, t, k);
            } else if (type == "tool_result") {
                refuse(where(t, k) + ": a tool_result block in an assistant turn");
            } else if (type == "image" || type == "file") {
                refuse(where(t, k) +
                       ": an image or file in an assistant turn (assistant output is text)");
            } else if (type == "provider_block") {
                reasoning(b);
            } else if (const std::string_view s = block_text(b, type, scratch_); !s.empty()) {
                // responses.2: assistant text as a message whose content is the text.
                begin_item();
                json::key(w_, "type");
                json::string(w_, "message");
                json::key(w_, "role");
                json::string(w_, "assistant");
                json::key(w_, "content");
                json::string(w_, s);
                w_.EndObject();
            }
            // thinking and redacted_thinking: the reasoning goes back as its item (responses.5).
            ++k;
        }
    }

    void function_call(const Value& b, std::size_t t, std::size_t k) {
        const std::string_view id = text(member(b, "id"));
        const std::string_view name = text(member(b, "name"));
        // A block's place is named only when it is refused (bench/encode).
        if (id.empty()) refuse(where(t, k) + ": a tool_use without an id");
        if (name.empty()) refuse(where(t, k) + ": a tool_use without a name");
        const Value* input = member(b, "input");
        begin_item();
        json::key(w_, "type");
        json::string(w_, "function_call");
        json::key(w_, "call_id");
        json::string(w_, id);
        json::key(w_, "name");
        json::string(w_, name);
        json::key(w_, "arguments");
        json::string(w_, input != nullptr && input->IsObject()
                             ? json::compact_into(*input, scratch_)
                             : std::string_view("{}"));
        w_.EndObject();
    }

    /// responses.5: a reasoning item of this family goes back exactly as it came, to a model of
    /// the family that wrote it; any other is left out.
    void reasoning(const Value& b) {
        if (text(member(b, "wire_family")) != kWireFamily) return;
        const Value* inner = member(b, "block");
        if (text(member(inner, "type")) != kReasoningBlock) return;
        const Value* item = member(inner, "item");
        if (item == nullptr || !item->IsObject() || text(member(item, "type")) != "reasoning")
            return;
        if (model_family(text(member(inner, "model"))) != family_) return;
        item->Accept(w_);
        ++items_;
    }

    Writer& w_;
    Plan& plan_;
    bool explicit_;
    std::string_view family_;
    std::size_t items_ = 0;
    /// A json block's or a call's input's compact text, written here and read before the next
    /// use; its capacity is kept from block to block.
    rapidjson::StringBuffer scratch_;
    std::string joined_;
};

/// responses.2: the system texts joined by a blank line.
std::string system_text(const Value* system_blocks) {
    std::string out;
    if (system_blocks == nullptr || !system_blocks->IsArray()) return out;
    rapidjson::StringBuffer scratch;
    for (const auto& b : system_blocks->GetArray()) {
        const std::string_view t = block_text(b, text(member(b, "type")), scratch);
        if (t.empty()) continue;
        if (!out.empty()) out += "\n\n";
        out += t;
    }
    return out;
}

void write_tools(Writer& w, const Value* defs) {
    if (defs == nullptr || !defs->IsArray() || defs->Empty()) return;
    json::key(w, "tools");
    w.StartArray();
    for (const auto& d : defs->GetArray()) {
        const std::string_view name = text(member(d, "name"));
        if (name.empty()) refuse("a tool definition without a name");
        w.StartObject();
        json::key(w, "type");
        json::string(w, "function");
        json::key(w, "name");
        json::string(w, name);
        const std::string_view description = text(member(d, "description"));
        if (!description.empty()) {
            json::key(w, "description");
            json::string(w, description);
        }
        const Value* schema = member(d, "schema");
        json::key(w, "parameters");
        if (schema != nullptr && schema->IsObject()) {
            schema->Accept(w);
        } else {
            w.StartObject();
            json::key(w, "type");
            json::string(w, "object");
            json::key(w, "properties");
            w.StartObject();
            w.EndObject();
            w.EndObject();
        }
        // responses.3: strict only where the schema meets strict mode's rules.
        json::key(w, "strict");
        w.Bool(schema != nullptr && strict_compatible(*schema));
        w.EndObject();
    }
    w.EndArray();
}

}  // namespace

std::string_view model_family(std::string_view m) {
    // "-YYYY-MM-DD": 11 characters, digits but the dashes.
    if (m.size() > 11) {
        const std::string_view tail = m.substr(m.size() - 11);
        bool dated = tail[0] == '-' && tail[5] == '-' && tail[8] == '-';
        for (std::size_t i = 1; dated && i < tail.size(); ++i)
            if (i != 5 && i != 8 && (tail[i] < '0' || tail[i] > '9')) dated = false;
        if (dated) return m.substr(0, m.size() - 11);
    }
    return m;
}

std::string_view encode_request(std::string_view request_json, std::string& head, TurnSpan* span) {
    // This thread's copy of the request, parsed in place; its capacity is kept from call to call
    // (bench/encode).
    thread_local std::string copy;
    rapidjson::Document req;
    std::string why;
    if (!json::parse_insitu(request_json, copy, req, why))
        refuse("the provider request is not JSON: " + why);
    if (!req.IsObject()) refuse("the provider request is not a JSON object");
    const Value* prepared = member(req, "prepared");
    if (prepared == nullptr || !prepared->IsObject())
        refuse("the provider request has no prepared conversation");
    const Value* model_doc = member(req, "model");
    std::string_view model = text(member(model_doc, "wire_model"));
    if (model.empty()) model = text(member(model_doc, "id"));
    if (model.empty()) refuse("model.wire_model: a non-empty string is required");
    const Value* max_tokens = member(req, "max_tokens");
    if (max_tokens == nullptr || !max_tokens->IsInt64() || max_tokens->GetInt64() <= 0)
        refuse("max_tokens: a positive integer is required (the resolved output reserve)");
    const std::string_view caching = text(member(model_doc, "caching"));
    const bool explicit_marks = caching == "explicit";
    const Options opt = read_options(member(req, "options"));
    const Value* stream = member(req, "stream");
    const bool streaming = stream != nullptr && stream->IsTrue();

    head = R"({"schema_version":1,"method":"POST","path":")";
    head.append(opt.path);
    head.append(R"(","headers":{"content-type":"application/json")");
    if (streaming) head.append(R"(,"accept":"text/event-stream")");
    head.append("}}");

    Plan plan = explicit_marks ? read_plan(*prepared) : Plan{};

    // This thread's output buffer, its capacity kept from call to call as the copy's is; the
    // body is returned as a view of it, so it is not copied once more before the sink's copy.
    thread_local rapidjson::StringBuffer buffer;
    // limits.134's bound: a buffer the previous request grew past 64 MiB is not kept.
    if (buffer.GetSize() > kKeepBytes) {
        buffer.Clear();
        buffer.ShrinkToFit();
    }
    buffer.Clear();
    buffer.Reserve(request_json.size() + 1024);
    Writer w(buffer);
    w.StartObject();
    json::key(w, "model");
    json::string(w, model);
    const std::string system = system_text(member(*prepared, "system_blocks"));
    // responses.2, responses.6: the system content is `instructions`; on a model that takes
    // explicit breakpoints it is the first input item, a developer message whose input_text
    // can carry the system breakpoint (`instructions` is a plain string).
    if (!system.empty() && !explicit_marks) {
        json::key(w, "instructions");
        json::string(w, system);
    }
    json::key(w, "input");
    w.StartArray();
    if (!system.empty() && explicit_marks) {
        w.StartObject();
        json::key(w, "type");
        json::string(w, "message");
        json::key(w, "role");
        json::string(w, "developer");
        json::key(w, "content");
        w.StartArray();
        w.StartObject();
        json::key(w, "type");
        json::string(w, "input_text");
        json::key(w, "text");
        json::string(w, system);
        if (plan.system_block >= 0) {
            json::key(w, "prompt_cache_breakpoint");
            w.StartObject();
            json::key(w, "mode");
            json::string(w, "explicit");
            w.EndObject();
        }
        w.EndObject();
        w.EndArray();
        w.EndObject();
    } else if (plan.system_block >= 0) {
        refuse("prepared.cache_plan.system_block: there is no system content to carry it");
    }
    // responses.15: the turns' items follow the developer message (and the comma the first
    // item is written after) or open the array.
    const std::size_t turns_begin = buffer.GetSize() + (!system.empty() && explicit_marks ? 1 : 0);
    InputWriter input(w, plan, explicit_marks, model_family(model));
    const Value* turns = member(*prepared, "turns");
    if (turns == nullptr || !turns->IsArray() || turns->Empty())
        refuse("the prepared conversation has no turns");
    std::size_t t = 0;
    for (const auto& turn : turns->GetArray()) input.turn(turn, t++);
    if (span != nullptr) *span = TurnSpan{turns_begin, buffer.GetSize()};
    w.EndArray();
    for (std::size_t i = 0; i < plan.anchors.size(); ++i)
        if (!plan.rendered[i])
            refuse("prepared.cache_plan.turn_anchors: " +
                   where(plan.anchors[i].first, plan.anchors[i].second) +
                   " cannot carry a breakpoint in the Responses API (only a text, json or skill "
                   "block, an image, a file or a tool result that is sent can)");
    const Value* native = member(*prepared, "native_tools");
    if (native == nullptr || !native->IsFalse())
        write_tools(w, member(*prepared, "tool_definitions"));
    json::key(w, "max_output_tokens");
    w.Int64(max_tokens->GetInt64());
    // responses.7: the effort the core chose from the model's record (catalog.5).
    const std::string_view effort = text(member(member(req, "thinking"), "effort"));
    if (!effort.empty()) {
        json::key(w, "reasoning");
        w.StartObject();
        json::key(w, "effort");
        json::string(w, effort);
        if (effort != "none" && opt.summary != "none") {
            json::key(w, "summary");
            json::string(w, opt.summary);
        }
        w.EndObject();
    }
    // responses.5: reasoning comes back encrypted so it can be sent back without storing it.
    json::key(w, "store");
    w.Bool(opt.store);
    if (!opt.store) {
        json::key(w, "include");
        w.StartArray();
        json::string(w, "reasoning.encrypted_content");
        w.EndArray();
    }
    // responses.6: the conversation's id as prompt_cache_key on a model that caches.
    const std::string_view cache_key = text(member(req, "cache_key"));
    if (!cache_key.empty() && (caching == "explicit" || caching == "automatic")) {
        json::key(w, "prompt_cache_key");
        json::string(w, cache_key);
    }
    if (explicit_marks) {
        json::key(w, "prompt_cache_options");
        w.StartObject();
        json::key(w, "mode");
        json::string(w, "explicit");
        w.EndObject();
    }
    if (streaming) {
        json::key(w, "stream");
        w.Bool(true);
    }
    w.EndObject();
    // limits.134's bound: a buffer grown past 64 MiB by one huge request is not kept (the input
    // copy here; the output buffer at this thread's next call, once the caller has read it).
    if (copy.capacity() > kKeepBytes) std::string().swap(copy);
    return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace nucleo::responses
