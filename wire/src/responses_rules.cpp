// The OpenAI Responses rule book (docs/spec/openai-responses.md responses.20-responses.27) over a
// parsed body, and the audit's plan checks for the family (responses.28). The body's `input` is
// a list of typed items rather than `messages`, so the family is read from the DOM (wire.213).
// The texts are the API's own where OpenAI publishes them.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

using rapidjson::Value;

const Value* get(const Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string_view str(const Value* v) {
    return v != nullptr && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                                         : std::string_view();
}

/// The type of `v` as OpenAI's invalid_type messages name it.
std::string type_name(const Value& v) {
    if (v.IsNull()) return "null";
    if (v.IsBool()) return "a boolean";
    if (v.IsInt64() || v.IsUint64()) return "an integer";
    if (v.IsNumber()) return "a decimal";
    if (v.IsString()) return "a string";
    if (v.IsArray()) return "an array";
    return "an object";
}

std::optional<Violation> invalid_type(const std::string& at, const char* expected, const Value& v) {
    return broken("responses.21", at,
                  "Invalid type for '" + at + "': expected " + expected + ", but got " +
                      type_name(v) + " instead.");
}

std::optional<Violation> missing(const std::string& at) {
    return broken("responses.22", at, "Missing required parameter: '" + at + "'.");
}

/// responses.21: the top-level fields this family sends, each of its documented type.
std::optional<Violation> check_fields(const Value& body) {
    const Value* model = get(body, "model");
    if (model == nullptr)
        return broken("responses.20", "model", "Missing required parameter: 'model'.");
    if (!model->IsString()) return invalid_type("model", "a string", *model);
    for (const char* k : {"instructions", "prompt_cache_key"})
        if (const Value* v = get(body, k); v != nullptr && !v->IsString() && !v->IsNull())
            return invalid_type(k, "a string", *v);
    for (const char* k : {"store", "stream", "parallel_tool_calls"})
        if (const Value* v = get(body, k); v != nullptr && !v->IsBool() && !v->IsNull())
            return invalid_type(k, "a boolean", *v);
    if (const Value* v = get(body, "max_output_tokens"); v != nullptr && !v->IsNull()) {
        if (!v->IsInt64()) return invalid_type("max_output_tokens", "an integer", *v);
        if (v->GetInt64() < 16)
            return broken("responses.21", "max_output_tokens",
                          "Invalid 'max_output_tokens': integer below minimum value. Expected a "
                          "value >= 16, but got " +
                              std::to_string(v->GetInt64()) + " instead.");
    }
    if (const Value* v = get(body, "include"); v != nullptr && !v->IsNull()) {
        if (!v->IsArray()) return invalid_type("include", "an array", *v);
        for (rapidjson::SizeType i = 0; i < v->Size(); ++i)
            if (!(*v)[i].IsString())
                return invalid_type("include[" + std::to_string(i) + "]", "a string", (*v)[i]);
    }
    if (const Value* v = get(body, "reasoning"); v != nullptr && !v->IsNull()) {
        if (!v->IsObject()) return invalid_type("reasoning", "an object", *v);
        for (const char* k : {"effort", "summary"})
            if (const Value* f = get(*v, k); f != nullptr && !f->IsString() && !f->IsNull())
                return invalid_type(std::string("reasoning.") + k, "a string", *f);
    }
    if (const Value* v = get(body, "prompt_cache_options"); v != nullptr && !v->IsObject())
        return invalid_type("prompt_cache_options", "an object", *v);
    return std::nullopt;
}

/// responses.27: function tools, each named as the API's pattern allows.
std::optional<Violation> check_tools(const Value& body) {
    const Value* tools = get(body, "tools");
    if (tools == nullptr || tools->IsNull()) return std::nullopt;
    if (!tools->IsArray()) return invalid_type("tools", "an array", *tools);
    for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
        const Value& t = (*tools)[i];
        const std::string at = "tools[" + std::to_string(i) + "]";
        if (!t.IsObject()) return invalid_type(at, "an object", t);
        if (str(get(t, "type")) != "function") continue;
        const std::string_view name = str(get(t, "name"));
        bool ok = !name.empty() && name.size() <= 64;
        for (const char c : name)
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-'))
                ok = false;
        if (!ok)
            return broken("responses.27", at + ".name",
                          "Invalid '" + at +
                              ".name': string does not match pattern. Expected a string that "
                              "matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.");
        if (const Value* p = get(t, "parameters"); p != nullptr && !p->IsObject() && !p->IsNull())
            return invalid_type(at + ".parameters", "an object", *p);
        if (const Value* s = get(t, "strict"); s != nullptr && !s->IsBool() && !s->IsNull())
            return invalid_type(at + ".strict", "a boolean", *s);
    }
    return std::nullopt;
}

/// responses.22: one input item's required fields and their types.
std::optional<Violation> check_item(const Value& item, const std::string& at) {
    if (!item.IsObject()) return invalid_type(at, "an object", item);
    const std::string_view type = str(get(item, "type"));
    if (type.empty() || type == "message") {
        const std::string_view role = str(get(item, "role"));
        if (role != "user" && role != "assistant" && role != "system" && role != "developer")
            return broken("responses.22", at + ".role",
                          "Invalid value: '" + std::string(role) +
                              "'. Supported values are: "
                              "'assistant', 'system', 'developer', and 'user'.");
        const Value* content = get(item, "content");
        if (content == nullptr) return missing(at + ".content");
        if (!content->IsString() && !content->IsArray())
            return invalid_type(at + ".content", "a string or an array", *content);
        return std::nullopt;
    }
    if (type == "function_call") {
        for (const char* k : {"call_id", "name", "arguments"}) {
            const Value* v = get(item, k);
            if (v == nullptr) return missing(at + "." + k);
            if (!v->IsString()) return invalid_type(at + "." + k, "a string", *v);
        }
        return std::nullopt;
    }
    if (type == "function_call_output") {
        const Value* id = get(item, "call_id");
        if (id == nullptr) return missing(at + ".call_id");
        if (!id->IsString()) return invalid_type(at + ".call_id", "a string", *id);
        const Value* output = get(item, "output");
        if (output == nullptr) return missing(at + ".output");
        if (!output->IsString() && !output->IsArray())
            return invalid_type(at + ".output", "a string or an array", *output);
        return std::nullopt;
    }
    if (type == "reasoning") {
        const Value* id = get(item, "id");
        if (id == nullptr) return missing(at + ".id");
        if (!id->IsString()) return invalid_type(at + ".id", "a string", *id);
        const Value* summary = get(item, "summary");
        if (summary == nullptr) return missing(at + ".summary");
        if (!summary->IsArray()) return invalid_type(at + ".summary", "an array", *summary);
        if (const Value* e = get(item, "encrypted_content");
            e != nullptr && !e->IsString() && !e->IsNull())
            return invalid_type(at + ".encrypted_content", "a string", *e);
    }
    return std::nullopt;
}

}  // namespace

std::optional<Violation> responses_head(const Value& body) {
    if (!body.IsObject()) return not_an_object();
    if (auto e = check_fields(body)) return e;
    if (auto e = check_tools(body)) return e;
    const Value* input = get(body, "input");
    if (input == nullptr)
        return broken("responses.20", "input", "Missing required parameter: 'input'.");
    if (input->IsString()) return std::nullopt;
    if (!input->IsArray()) return invalid_type("input", "a string or an array", *input);
    if (input->Empty())
        return broken("responses.20", "input",
                      "Invalid 'input': empty array. Expected an array with minimum length 1, but "
                      "got an empty array instead.");
    return std::nullopt;
}

std::optional<Violation> check_responses(const Value& body) {
    if (auto e = responses_head(body)) return e;
    const Value* input = get(body, "input");
    if (input->IsString()) return std::nullopt;
    const Value* store = get(body, "store");
    const bool stored = store == nullptr || !store->IsFalse();
    std::unordered_set<std::string_view> calls;
    std::unordered_set<std::string_view> answered;
    for (rapidjson::SizeType i = 0; i < input->Size(); ++i) {
        const Value& item = (*input)[i];
        const std::string at = "input[" + std::to_string(i) + "]";
        if (auto e = check_item(item, at)) return e;
        const std::string_view type = str(get(item, "type"));
        if (type == "function_call") calls.insert(str(get(item, "call_id")));
        if (type == "function_call_output") {
            const std::string_view id = str(get(item, "call_id"));
            // responses.23: an output answers a call made earlier in the input.
            if (calls.count(id) == 0)
                return broken("responses.23", at + ".call_id",
                              "No tool call found for function call output with call_id " +
                                  std::string(id) + ".");
            answered.insert(id);
        }
        // responses.25: an unstored reasoning item is sent back with its encrypted content.
        if (type == "reasoning" && !stored && str(get(item, "encrypted_content")).empty())
            return broken("responses.25", at,
                          "Item with id '" + std::string(str(get(item, "id"))) +
                              "' not found. Items are not persisted when `store` is set to "
                              "false. Try again with `store` set to true, or remove this item "
                              "from your input.");
    }
    // responses.24: every call is answered before the input ends.
    for (rapidjson::SizeType i = 0; i < input->Size(); ++i) {
        const Value& item = (*input)[i];
        if (str(get(item, "type")) != "function_call") continue;
        const std::string_view id = str(get(item, "call_id"));
        if (answered.count(id) == 0)
            return broken("responses.24", "input[" + std::to_string(i) + "]",
                          "No tool output found for function call " + std::string(id) + ".");
    }
    return std::nullopt;
}

std::optional<Violation> responses_plan(const Value& body_value, const CallPlan& plan) {
    const Value* body = &body_value;
    // responses.28 (wire.161 for this family): the system content is `instructions`, or the
    // leading developer message on a model with explicit breakpoints (responses.6).
    std::string channel(str(get(*body, "instructions")));
    const Value* input = get(*body, "input");
    if (input != nullptr && input->IsArray() && !input->Empty() &&
        str(get((*input)[0], "role")) == "developer") {
        const Value* content = get((*input)[0], "content");
        if (content != nullptr && content->IsArray())
            for (const auto& p : content->GetArray()) channel.append(str(get(p, "text")));
    }
    for (std::size_t i = 0; i < plan.system_texts.size(); ++i) {
        if (!has_non_whitespace(plan.system_texts[i])) continue;
        if (channel.find(plan.system_texts[i]) == std::string::npos)
            return broken("responses.28", "instructions",
                          "system block " + std::to_string(i) +
                              " the core prepared is missing from instructions, where this wire "
                              "family carries the system content");
    }
    if (system_joined(plan).empty() && has_non_whitespace(channel))
        return broken("responses.28", "instructions",
                      "instructions carry text although the core prepared no system content");
    // responses.28 (wire.163): max_output_tokens is the reserved output budget.
    if (plan.max_tokens > 0) {
        const Value* max = get(*body, "max_output_tokens");
        if (max == nullptr || !max->IsInt64() || max->GetInt64() != plan.max_tokens)
            return broken("responses.28", "max_output_tokens",
                          "max_output_tokens is " +
                              std::string(max == nullptr   ? "nothing"
                                          : max->IsInt64() ? std::to_string(max->GetInt64())
                                                           : "a non-integer") +
                              " but the core reserved an output budget of " +
                              std::to_string(plan.max_tokens));
    }
    return std::nullopt;
}

void responses_summary(const Value& items, ItemsSummary& out) {
    out = ItemsSummary{};
    if (!items.IsArray() || items.Empty()) return;
    std::unordered_set<std::string_view> calls;
    std::unordered_set<std::string_view> outputs;
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
        const Value& item = items[i];
        if (check_item(item, "input[" + std::to_string(i) + "]")) return;  // responses.22
        const std::string_view type = str(get(item, "type"));
        const std::string_view id = str(get(item, "call_id"));
        if (type == "function_call") calls.insert(id);
        // responses.23: an output whose call is not in the piece needs one in a piece before.
        if (type == "function_call_output" && outputs.insert(id).second && calls.count(id) == 0)
            out.needed.emplace_back(id);
        if (type == "reasoning" && str(get(item, "encrypted_content")).empty())
            out.bare_reasoning = true;  // responses.25 when store is false
    }
    // responses.24: the calls the piece leaves for a later piece to answer.
    for (const Value& item : items.GetArray())
        if (str(get(item, "type")) == "function_call" &&
            outputs.count(str(get(item, "call_id"))) == 0)
            out.pending.emplace_back(str(get(item, "call_id")));
    out.ok = true;
}

bool responses_passes(const Value& head, const std::vector<const ItemsSummary*>& pieces,
                      const CallPlan& plan) {
    if (!head.IsObject() || responses_plan(head, plan) || responses_head(head)) return false;
    const Value* input = get(head, "input");
    if (input == nullptr || !input->IsArray()) return false;
    const Value* store = get(head, "store");
    const bool stored = store == nullptr || !store->IsFalse();
    // responses.23, responses.24 across the pieces: each piece's outputs without their call
    // answer calls a piece before left pending (each once), and none is pending at the end.
    std::vector<std::string_view> pending;
    for (const ItemsSummary* p : pieces) {
        if (!p->ok || (!stored && p->bare_reasoning)) return false;
        for (const std::string& id : p->needed) {
            const auto it = std::find(pending.begin(), pending.end(), id);
            if (it == pending.end()) return false;
            pending.erase(it);
        }
        pending.insert(pending.end(), p->pending.begin(), p->pending.end());
    }
    return pending.empty();
}

}  // namespace nucleo::contract::internal
