// encode: the core's provider request → POST /{version}/models/{model}:generateContent
// (docs/spec/gemini.md gemini.1-gemini.8).
#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "gemini.hpp"
#include "json.hpp"

namespace nucleo::gemini {
namespace {

using json::member;
using json::text;
using json::Value;
using json::Writer;

/// gemini.6: the documented signature for a function call Gemini did not write (a conversation
/// begun on another provider), which the API's signature check accepts.
constexpr std::string_view kForeignCallSignature = "skip_thought_signature_validator";

[[noreturn]] void refuse(const std::string& what) {
    throw plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT, "gemini: " + what);
}

bool blank(std::string_view s) {
    for (const char c : s)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
    return true;
}

/// gemini.1: a model name that stays one path segment.
bool valid_model(std::string_view m) {
    if (m.empty() || m.size() > 200) return false;
    for (const char c : m)
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_')
            return false;
    return true;
}

/// Where a block is, named when it is refused: "turn T block B" (and "content K" inside a
/// tool result).
struct Where {
    std::size_t turn;
    std::size_t block;
    long content;  ///< -1: the block itself
    [[nodiscard]] std::string text() const {
        return "turn " + std::to_string(turn) + " block " + std::to_string(block) +
               (content < 0 ? "" : " content " + std::to_string(content));
    }
};

/// Writes the parts of one `contents` entry: a run of same-role turns (gemini.2), with the
/// signatures of gemini.6 placed on the part that follows them.
class ContentWriter {
  public:
    ContentWriter(Writer& w, std::unordered_map<std::string_view, std::string_view>& call_names)
        : w_(w), call_names_(call_names) {}

    void open(bool model, std::size_t turn) {
        model_ = model;
        first_turn_ = turn;
        parts_ = 0;
        calls_ = 0;
        pending_ = {};
        pending_thought_ = {};
        w_.StartObject();
        json::key(w_, "role");
        json::string(w_, model ? "model" : "user");
        json::key(w_, "parts");
        w_.StartArray();
    }

    void close(std::size_t last_turn) {
        if (!pending_.empty()) empty_text(std::exchange(pending_, {}));
        if (parts_ == 0) {
            refuse("turns " + std::to_string(first_turn_) + ".." + std::to_string(last_turn) +
                   " hold nothing Gemini takes (only blank text, thinking or provider blocks); a "
                   "turn is never sent empty");
        }
        w_.EndArray();
        w_.EndObject();
    }

    void block(const Value& b, std::size_t turn, std::size_t index) {
        const std::string_view type = text(member(b, "type"));
        // Named only for a refusal: this runs for every block of the conversation.
        const Where where{turn, index, -1};
        if (type == "text") {
            const std::string_view t = text(member(b, "text"));
            if (!blank(t)) text_part(t);
        } else if (type == "json") {
            const Value* v = member(b, "json");
            if (v != nullptr) text_part(json::compact(*v));
        } else if (type == "skill") {
            const std::string_view t = text(member(b, "content"));
            if (!blank(t)) text_part(t);
        } else if (type == "image" || type == "file") {
            media_part(b, where);
        } else if (type == "tool_use") {
            if (!model_) refuse(where.text() + ": a tool_use block in a user turn");
            call_part(b, where);
        } else if (type == "tool_result") {
            if (model_) refuse(where.text() + ": a tool_result block in an assistant turn");
            result_parts(b, where);
        } else if (type == "thinking") {
            // gemini.5: a thought summary goes back only as the part its signature came on.
            if (!pending_thought_.empty() && model_) {
                begin_part();
                json::key(w_, "text");
                json::string(w_, text(member(b, "thinking")));
                json::key(w_, "thought");
                w_.Bool(true);
                end_part(std::exchange(pending_thought_, {}));
            }
        } else if (type == "provider_block") {
            signature_block(b);
        }
        // redacted_thinking and tool_definition: nothing on this wire (gemini.5).
    }

  private:
    void begin_part() {
        w_.StartObject();
        ++parts_;
    }
    void end_part(std::string_view signature) {
        if (!signature.empty()) {
            json::key(w_, "thoughtSignature");
            json::string(w_, signature);
        }
        w_.EndObject();
    }
    std::string_view take_signature() { return std::exchange(pending_, {}); }

    void text_part(std::string_view t) {
        begin_part();
        json::key(w_, "text");
        json::string(w_, t);
        end_part(take_signature());
    }
    void empty_text(std::string_view signature) {
        begin_part();
        json::key(w_, "text");
        json::string(w_, "");
        end_part(signature);
    }

    void media_part(const Value& b, const Where& where) {
        const std::string_view mime = text(member(b, "media_type"));
        const Value* data = member(b, "data");
        const Value* url = member(b, "url");
        if (mime.empty()) refuse(where.text() + ": an image or file without media_type");
        const bool inline_data = data != nullptr && data->IsString();
        if (!inline_data && (url == nullptr || !url->IsString()))
            refuse(where.text() + ": an image or file with neither data nor url");
        begin_part();
        json::key(w_, inline_data ? "inlineData" : "fileData");
        w_.StartObject();
        json::key(w_, "mimeType");
        json::string(w_, mime);
        json::key(w_, inline_data ? "data" : "fileUri");
        json::string(w_, json::view(inline_data ? *data : *url));
        w_.EndObject();
        end_part(take_signature());
    }

    void call_part(const Value& b, const Where& where) {
        const std::string_view id = text(member(b, "id"));
        const std::string_view name = text(member(b, "name"));
        if (name.empty()) refuse(where.text() + ": a tool_use without a name");
        call_names_[id] = name;
        const Value* input = member(b, "input");
        begin_part();
        json::key(w_, "functionCall");
        w_.StartObject();
        json::key(w_, "name");
        json::string(w_, name);
        json::key(w_, "args");
        if (input != nullptr && input->IsObject()) {
            input->Accept(w_);
        } else {
            w_.StartObject();
            w_.EndObject();
        }
        w_.EndObject();
        std::string_view signature = take_signature();
        // gemini.6: the first call of a step carries a signature; one Gemini did not write gets
        // the documented stand-in.
        if (signature.empty() && calls_ == 0) signature = kForeignCallSignature;
        ++calls_;
        end_part(signature);
    }

    void result_parts(const Value& b, const Where& where) {
        const std::string_view id = text(member(b, "tool_use_id"));
        const auto found = call_names_.find(id);
        if (found == call_names_.end())
            refuse(where.text() + ": a tool_result for tool_use id \"" + std::string(id) +
                   "\", which no earlier tool_use has (Gemini names the function it answers)");
        const Value* is_error = member(b, "is_error");
        const bool error = is_error != nullptr && is_error->IsTrue();
        std::string joined;
        const Value* content = member(b, "content");
        const bool has_content = content != nullptr && content->IsArray();
        if (has_content) {
            for (const auto& c : content->GetArray()) {
                const std::string_view t = text(member(c, "type"));
                const Value* json_value = t == "json" ? member(c, "json") : nullptr;
                const std::string_view piece = t == "text" ? text(member(c, "text")) : "";
                if (piece.empty() && json_value == nullptr) continue;
                if (!joined.empty()) joined += '\n';
                if (json_value != nullptr) joined += json::compact(*json_value);
                joined += piece;
            }
        }
        begin_part();
        json::key(w_, "functionResponse");
        w_.StartObject();
        json::key(w_, "name");
        json::string(w_, found->second);
        json::key(w_, "response");
        w_.StartObject();
        json::key(w_, error ? "error" : "output");
        json::string(w_, joined);
        w_.EndObject();
        w_.EndObject();
        end_part(take_signature());
        // gemini.4: a result's images and files follow its functionResponse as their own parts.
        if (!has_content) return;
        std::size_t k = 0;
        for (const auto& c : content->GetArray()) {
            const std::string_view t = text(member(c, "type"));
            if (t == "image" || t == "file")
                media_part(c, Where{where.turn, where.block, static_cast<long>(k)});
            ++k;
        }
    }

    void signature_block(const Value& b) {
        if (text(member(b, "wire_family")) != kWireFamily) return;
        const Value* inner = member(b, "block");
        if (text(member(inner, "type")) != kSignatureBlock) return;
        const std::string_view signature = text(member(inner, "thoughtSignature"));
        if (signature.empty()) return;
        const std::string_view on = text(member(inner, "on"));
        if (on == "empty_text") {
            empty_text(signature);
        } else if (on == "thought") {
            pending_thought_ = signature;
        } else {
            if (!pending_.empty()) empty_text(pending_);
            pending_ = signature;
        }
    }

    Writer& w_;
    std::unordered_map<std::string_view, std::string_view>& call_names_;
    bool model_ = false;
    std::size_t first_turn_ = 0;
    std::size_t parts_ = 0;
    std::size_t calls_ = 0;
    std::string_view pending_;
    std::string_view pending_thought_;
};

void write_system(Writer& w, const Value* system_blocks) {
    if (system_blocks == nullptr || !system_blocks->IsArray()) return;
    bool open = false;
    for (const auto& b : system_blocks->GetArray()) {
        const std::string_view type = text(member(b, "type"));
        std::string t;
        if (type == "text") t = std::string(text(member(b, "text")));
        if (type == "skill") t = std::string(text(member(b, "content")));
        if (type == "json" && member(b, "json") != nullptr) t = json::compact(*member(b, "json"));
        if (blank(t)) continue;
        if (!open) {
            json::key(w, "systemInstruction");
            w.StartObject();
            json::key(w, "parts");
            w.StartArray();
            open = true;
        }
        w.StartObject();
        json::key(w, "text");
        json::string(w, t);
        w.EndObject();
    }
    if (open) {
        w.EndArray();
        w.EndObject();
    }
}

void write_tools(Writer& w, const Value* defs) {
    if (defs == nullptr || !defs->IsArray() || defs->Empty()) return;
    json::key(w, "tools");
    w.StartArray();
    w.StartObject();
    json::key(w, "functionDeclarations");
    w.StartArray();
    for (const auto& d : defs->GetArray()) {
        const std::string_view name = text(member(d, "name"));
        if (name.empty()) refuse("a tool definition without a name");
        w.StartObject();
        json::key(w, "name");
        json::string(w, name);
        const std::string_view description = text(member(d, "description"));
        if (!description.empty()) {
            json::key(w, "description");
            json::string(w, description);
        }
        // gemini.3: the schema as JSON Schema, which Gemini takes whole in parametersJsonSchema.
        const Value* schema = member(d, "schema");
        if (schema != nullptr && schema->IsObject()) {
            json::key(w, "parametersJsonSchema");
            schema->Accept(w);
        }
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndArray();
}

/// gemini.5: thinkingConfig from the model record's mapping of the depth.
void write_generation_config(Writer& w, const Value& req) {
    json::key(w, "generationConfig");
    w.StartObject();
    const Value* max_tokens = member(req, "max_tokens");
    if (max_tokens != nullptr && max_tokens->IsInt64() && max_tokens->GetInt64() > 0) {
        json::key(w, "maxOutputTokens");
        w.Int64(max_tokens->GetInt64());
    }
    const Value* thinking = member(req, "thinking");
    const Value* active = member(thinking, "active");
    const bool thinks = active != nullptr && active->IsTrue();
    const std::string_view effort = text(member(thinking, "effort"));
    const std::string_view form = text(member(thinking, "form"));
    const Value* budget = member(thinking, "budget_tokens");
    const Value* include = member(member(req, "options"), "include_thoughts");
    const bool summaries = include == nullptr || !include->IsFalse();
    if (!effort.empty() || form == "enabled" || form == "disabled" || thinks) {
        json::key(w, "thinkingConfig");
        w.StartObject();
        bool off = false;
        if (!effort.empty()) {
            std::string level(effort);
            for (char& c : level)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            json::key(w, "thinkingLevel");
            json::string(w, level);
        } else if (form == "disabled") {
            json::key(w, "thinkingBudget");
            w.Int(0);
            off = true;
        } else if (budget != nullptr && budget->IsInt64() && budget->GetInt64() > 0) {
            json::key(w, "thinkingBudget");
            w.Int64(budget->GetInt64());
        }
        if (!off) {
            json::key(w, "includeThoughts");
            w.Bool(summaries);
        }
        w.EndObject();
    }
    w.EndObject();
}

}  // namespace

void encode_request(std::string_view request_json, std::string& head, std::string& body,
                    TurnSpan* span) {
    // This thread's copy of the request, parsed in place; its capacity is kept from call to call
    // (a fresh copy of a long conversation costs its pages again on every call: bench/encode).
    thread_local std::string copy;
    copy.assign(request_json);
    rapidjson::Document req;
    std::string why;
    if (!json::parse_insitu(copy, req, why)) refuse("the provider request is not JSON: " + why);
    if (!req.IsObject()) refuse("the provider request is not a JSON object");
    const Value* prepared = member(req, "prepared");
    if (prepared == nullptr || !prepared->IsObject())
        refuse("the provider request has no prepared conversation");
    std::string_view model = text(member(member(req, "model"), "wire_model"));
    if (model.starts_with("models/")) model.remove_prefix(7);
    if (!valid_model(model))
        refuse("model.wire_model \"" + std::string(model.substr(0, 80)) +
               "\" is not a Gemini model name (letters, digits, '.', '-', '_')");
    const std::string_view version_option = text(member(member(req, "options"), "api_version"));
    const std::string_view version = version_option.empty() ? "v1beta" : version_option;
    if (version != "v1beta" && version != "v1" && version != "v1alpha")
        refuse("options.api_version must be v1beta, v1 or v1alpha");
    const Value* stream = member(req, "stream");
    const bool streaming = stream != nullptr && stream->IsTrue();

    head = R"({"schema_version":1,"method":"POST","path":"/)";
    head.append(version).append("/models/").append(model);
    head.append(streaming ? R"(:streamGenerateContent?alt=sse")" : R"(:generateContent")");
    head.append(R"(,"headers":{"content-type":"application/json"}})");

    // This thread's output buffer, its capacity kept from call to call as the copy's is.
    thread_local rapidjson::StringBuffer buffer;
    buffer.Clear();
    buffer.Reserve(request_json.size() + 1024);
    Writer w(buffer);
    w.StartObject();
    write_system(w, member(*prepared, "system_blocks"));
    json::key(w, "contents");
    w.StartArray();
    // gemini.15: the turns' entries open the array.
    const std::size_t turns_begin = buffer.GetSize();
    std::unordered_map<std::string_view, std::string_view> call_names;
    ContentWriter content(w, call_names);
    const Value* turns = member(*prepared, "turns");
    bool open = false;
    bool open_model = false;
    std::size_t t = 0;
    if (turns != nullptr && turns->IsArray()) {
        for (const auto& turn : turns->GetArray()) {
            const std::string_view role = text(member(turn, "role"));
            if (role != "user" && role != "assistant")
                refuse("turn " + std::to_string(t) + " has role \"" +
                       std::string(role.substr(0, 20)) + "\" (user or assistant)");
            const bool model_turn = role == "assistant";
            if (open && model_turn != open_model) content.close(t - 1);
            if (!open || model_turn != open_model) content.open(model_turn, t);
            open = true;
            open_model = model_turn;
            const Value* blocks = member(turn, "blocks");
            if (blocks != nullptr && blocks->IsArray()) {
                std::size_t i = 0;
                for (const auto& b : blocks->GetArray()) content.block(b, t, i++);
            }
            ++t;
        }
    }
    if (open) content.close(t - 1);
    if (!open) refuse("the prepared conversation has no turns");
    if (span != nullptr) *span = TurnSpan{turns_begin, buffer.GetSize()};
    w.EndArray();
    const Value* native = member(*prepared, "native_tools");
    if (native == nullptr || !native->IsFalse())
        write_tools(w, member(*prepared, "tool_definitions"));
    write_generation_config(w, req);
    w.EndObject();
    body.assign(buffer.GetString(), buffer.GetSize());
    // limits.134's bound: a buffer grown past 64 MiB by one huge request is not kept.
    constexpr std::size_t kKeepBytes = std::size_t{64} << 20;
    if (copy.capacity() > kKeepBytes) std::string().swap(copy);
    if (buffer.GetSize() > kKeepBytes) {
        buffer.Clear();
        buffer.ShrinkToFit();
    }
}

}  // namespace nucleo::gemini
