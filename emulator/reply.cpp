#include "reply.hpp"

#include <algorithm>
#include <cctype>

#include "prefix_cache.hpp"
#include "thinking_binding.hpp"

namespace nucleo::emulator {
namespace {

constexpr int kMaxSchemaDepth = 12;

bool is_word_byte(unsigned char c) {
    return std::isalnum(c) != 0 || c == '_' || c == '-' || c >= 0x80;
}

/// Resolves a local "#/..." JSON pointer against the schema root; nullptr when not resolvable.
const json::Value* resolve_ref(const json::Value& root, const std::string& ref) {
    if (!ref.starts_with("#")) return nullptr;
    const json::Value* at = &root;
    std::size_t pos = 1;
    while (pos < ref.size()) {
        if (ref[pos] != '/') return nullptr;
        const std::size_t next = ref.find('/', pos + 1);
        const std::string token =
            ref.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
        at = json::member(*at, token.c_str());
        if (at == nullptr) return nullptr;
        pos = next == std::string::npos ? ref.size() : next;
    }
    return at;
}

/// The schema's type, taking the first non-"null" entry of a type array.
std::string schema_type(const json::Value& s) {
    const json::Value* t = json::member(s, "type");
    if (t == nullptr) return json::member(s, "properties") != nullptr ? "object" : "";
    if (t->IsString()) return t->GetString();
    if (t->IsArray()) {
        for (const auto& e : t->GetArray()) {
            if (e.IsString() && std::string_view(e.GetString()) != "null") return e.GetString();
        }
        if (!t->Empty() && (*t)[0].IsString()) return (*t)[0].GetString();
    }
    return "";
}

void write_string_for(const json::Value& s, const std::string& word, json::Writer& w) {
    const std::string format = json::string_member(s, "format");
    std::string value = word;
    if (format == "date-time")
        value = "2024-01-01T00:00:00Z";
    else if (format == "date")
        value = "2024-01-01";
    else if (format == "time")
        value = "00:00:00";
    else if (format == "email")
        value = "user@example.com";
    else if (format == "uri" || format == "url")
        value = "https://example.com/";
    else if (format == "uuid")
        value = "00000000-0000-4000-8000-000000000000";
    const long long min_len = json::int_member(s, "minLength", 0);
    const long long max_len = json::int_member(s, "maxLength", -1);
    while (static_cast<long long>(value.size()) < min_len) value += 'x';
    if (max_len >= 0 && static_cast<long long>(value.size()) > max_len) {
        value = std::string(json::utf8_prefix(value, static_cast<std::size_t>(max_len)));
    }
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void write_number_for(const json::Value& s, bool integer, json::Writer& w) {
    double v = 1;
    if (const json::Value* lo = json::member(s, "minimum"); lo != nullptr && lo->IsNumber()) {
        v = std::max(v, lo->GetDouble());
    }
    if (const json::Value* lo = json::member(s, "exclusiveMinimum");
        lo != nullptr && lo->IsNumber() && v <= lo->GetDouble()) {
        v = lo->GetDouble() + 1;
    }
    if (const json::Value* hi = json::member(s, "maximum"); hi != nullptr && hi->IsNumber()) {
        v = std::min(v, hi->GetDouble());
    }
    if (integer) {
        w.Int64(static_cast<long long>(v));
    } else {
        w.Double(v);
    }
}

void write_value_for(const json::Value& root, const json::Value& s, const std::string& word,
                     json::Writer& w, int depth);

void write_object_for(const json::Value& root, const json::Value& s, const std::string& word,
                      json::Writer& w, int depth) {
    w.StartObject();
    const json::Value* props = json::member(s, "properties");
    const json::Value* required = json::member(s, "required");
    if (required != nullptr && required->IsArray()) {
        for (const auto& r : required->GetArray()) {
            if (!r.IsString()) continue;
            w.Key(r.GetString(), r.GetStringLength());
            const json::Value* ps =
                props != nullptr ? json::member(*props, r.GetString()) : nullptr;
            if (ps != nullptr) {
                write_value_for(root, *ps, word, w, depth + 1);
            } else {
                w.String(word.data(), static_cast<rapidjson::SizeType>(word.size()));
            }
        }
    }
    w.EndObject();
}

void write_value_for(const json::Value& root, const json::Value& s, const std::string& word,
                     json::Writer& w, int depth) {
    if (depth > kMaxSchemaDepth || !s.IsObject()) {
        w.Null();
        return;
    }
    if (const json::Value* c = json::member(s, "const")) {
        c->Accept(w);
        return;
    }
    if (const json::Value* e = json::member(s, "enum");
        e != nullptr && e->IsArray() && !e->Empty()) {
        (*e)[0].Accept(w);
        return;
    }
    if (const json::Value* ref = json::member(s, "$ref"); ref != nullptr && ref->IsString()) {
        if (const json::Value* target = resolve_ref(root, ref->GetString())) {
            write_value_for(root, *target, word, w, depth + 1);
            return;
        }
    }
    for (const char* combinator : {"anyOf", "oneOf", "allOf"}) {
        const json::Value* alts = json::member(s, combinator);
        if (alts == nullptr || !alts->IsArray() || alts->Empty()) continue;
        // The first alternative that is not {"type": "null"}.
        const json::Value* pick = &(*alts)[0];
        for (const auto& a : alts->GetArray()) {
            if (schema_type(a) != "null") {
                pick = &a;
                break;
            }
        }
        write_value_for(root, *pick, word, w, depth + 1);
        return;
    }
    const std::string type = schema_type(s);
    if (type == "object") {
        write_object_for(root, s, word, w, depth);
    } else if (type == "array") {
        w.StartArray();
        const json::Value* items = json::member(s, "items");
        const long long min_items = json::int_member(s, "minItems", 0);
        const long long max_items = json::int_member(s, "maxItems", -1);
        long long n = items != nullptr ? std::max(1LL, min_items) : 0;
        if (max_items >= 0) n = std::min(n, max_items);
        for (long long i = 0; i < n; ++i) write_value_for(root, *items, word, w, depth + 1);
        w.EndArray();
    } else if (type == "integer") {
        write_number_for(s, true, w);
    } else if (type == "number") {
        write_number_for(s, false, w);
    } else if (type == "boolean") {
        w.Bool(true);
    } else if (type == "null") {
        w.Null();
    } else {
        write_string_for(s, word, w);
    }
}

std::string answer_text(const ReplyInput& in) {
    if (in.has_tool_result) {
        const std::string tool =
            in.tool_result_name.empty() ? "The tool" : "The tool " + in.tool_result_name;
        const std::string line = json::first_line(in.tool_result_text);
        if (in.tool_result_error) {
            return tool + " reported an error: " + line +
                   ". I cannot complete the request with it.";
        }
        return tool + " returned: " + line;
    }
    const std::string q = json::first_line(in.question);
    return q.empty() ? std::string("This is the emulator's answer.")
                     : "This is the emulator's answer to: " + q;
}

const ToolDecl* chosen_tool(const ReplyInput& in) {
    const bool scripted =
        in.has_tool_result && (in.tool_rounds < 0 || in.assistant_turns < in.tool_rounds);
    if (in.tools.empty() || in.tool_choice_none || !(in.last_is_question || scripted))
        return nullptr;
    if (!in.forced_tool.empty()) {
        for (const auto& t : in.tools) {
            if (t.name == in.forced_tool) return &t;
        }
    }
    // tool-cycle: the k-th answer of the conversation calls tool k mod n, so a scripted loop
    // reaches every tool a host registered, not only the first.
    if (in.tool_cycle) {
        return &in.tools[static_cast<std::size_t>(in.assistant_turns) % in.tools.size()];
    }
    return &in.tools.front();
}

}  // namespace

std::string question_word(std::string_view question) {
    std::size_t end = question.size();
    while (end > 0) {
        while (end > 0 && !is_word_byte(static_cast<unsigned char>(question[end - 1]))) --end;
        std::size_t begin = end;
        while (begin > 0 && is_word_byte(static_cast<unsigned char>(question[begin - 1]))) --begin;
        std::string_view word = question.substr(begin, end - begin);
        while (!word.empty() && word.front() == '-') word.remove_prefix(1);
        while (!word.empty() && word.back() == '-') word.remove_suffix(1);
        if (!word.empty()) return std::string(word);
        end = begin;
    }
    return "emulator";
}

std::string arguments_for_schema(const json::Value& schema, const std::string& word) {
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    if (schema.IsObject() && schema_type(schema) == "object") {
        write_object_for(schema, schema, word, w, 0);
    } else {
        // Tool inputs are objects on every provider; anything else gets an empty object.
        w.StartObject();
        w.EndObject();
    }
    return std::string(buf.GetString(), buf.GetSize());
}

long long adaptive_thinking_tokens(std::string_view effort) {
    if (effort == "low") return 1000;
    if (effort == "medium") return 2000;
    if (effort == "xhigh") return 8000;
    if (effort == "max") return 16000;
    return 4000;
}

Reply make_reply(const ReplyInput& in) {
    Reply r;
    if (in.thinking || in.thinking_summarized) {
        r.thinking = "The user wrote: " + json::first_line(in.question, 120) +
                     ". I will answer deterministically.";
    }
    if (in.thinking || in.adaptive_thinking_tokens > 0) {
        r.has_thinking = true;
        r.thinking_signature = thinking_signature(in.conversation_digest, in.thinking_binding);
        r.hidden_thinking_tokens = in.adaptive_thinking_tokens;
    }
    std::string* body = &r.text;
    if (const ToolDecl* tool = chosen_tool(in)) {
        r.tool_call = true;
        r.tool_name = tool->name;
        r.tool_id = in.id_prefix + in.conversation_digest.substr(0, 12) + "_" +
                    std::to_string(in.assistant_turns + 1);
        static const json::Value kEmpty(rapidjson::kObjectType);
        r.tool_input = arguments_for_schema(tool->schema != nullptr ? *tool->schema : kEmpty,
                                            question_word(in.question));
        body = &r.tool_input;
    } else {
        r.text = answer_text(in);
        // channel.101: the earliest stop sequence in the answer ends it, the sequence left out.
        std::size_t cut = std::string::npos;
        for (const auto& seq : in.stop_sequences) {
            const std::size_t at = r.text.find(seq);
            if (at != std::string::npos && (cut == std::string::npos || at < cut)) {
                cut = at;
                r.stop_sequence = seq;
            }
        }
        if (cut != std::string::npos) r.text.resize(cut);
    }
    // wire.190: hidden thinking is spent first, out of the same max_tokens (4 bytes a token).
    const std::size_t hidden = static_cast<std::size_t>(r.hidden_thinking_tokens) * 4;
    const std::size_t content = hidden + r.thinking.size() + body->size();
    std::size_t budget = static_cast<std::size_t>(std::max(1LL, in.max_tokens)) * 4;
    if (in.force_truncate) budget = std::min(budget, std::max<std::size_t>(1, content / 2));
    if (hidden >= budget && content > budget) {
        // The thinking alone used the whole output: no visible answer at all.
        r.truncated = true;
        r.stop_sequence.clear();
        r.thinking.clear();
        body->clear();
        r.hidden_thinking_tokens = std::max(1LL, in.max_tokens);
        r.output_tokens = std::max(1LL, in.max_tokens);
    } else if (content > budget) {
        budget -= hidden;
        r.truncated = true;
        r.stop_sequence.clear();  // the output limit came first
        r.thinking = std::string(json::utf8_prefix(r.thinking, budget));
        *body = std::string(json::utf8_prefix(*body, budget - r.thinking.size()));
        r.output_tokens = std::max(1LL, in.max_tokens);
    } else {
        r.output_tokens = std::max<long long>(
            1, r.hidden_thinking_tokens + tokens_for_bytes(r.thinking.size() + body->size()));
    }
    return r;
}

std::vector<std::string> stop_sequences_from(const json::Value* value) {
    std::vector<std::string> out;
    if (value == nullptr) return out;
    const auto add = [&out](const json::Value& v) {
        if (v.IsString() && v.GetStringLength() > 0)
            out.emplace_back(v.GetString(), v.GetStringLength());
    };
    if (value->IsArray()) {
        for (const auto& v : value->GetArray()) add(v);
    } else {
        add(*value);
    }
    return out;
}

std::vector<std::string> split_for_stream(std::string_view text, std::size_t piece) {
    std::vector<std::string> out;
    while (!text.empty()) {
        std::string_view head = json::utf8_prefix(text, piece);
        if (head.empty()) head = text.substr(0, std::min(text.size(), piece));  // never stall
        out.emplace_back(head);
        text.remove_prefix(head.size());
    }
    return out;
}

}  // namespace nucleo::emulator
