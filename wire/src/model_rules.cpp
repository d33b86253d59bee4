// The per-model request rules (wire.176-wire.185), read from the body directly: a handful of
// top-level members, so no Shape is gathered. Each text is the provider's where one was found;
// docs/spec/wire.md says which texts are the rule book's own, written in the provider's style.
#include "nucleo/wire/model_rules.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

namespace nucleo::contract {
namespace {

using Value = rapidjson::Value;

/// The member `name` of `v` (the last one when the key repeats, as the providers' readers take
/// it, wire.164), or nullptr when `v` is not an object or lacks it. A JSON null counts as absent.
const Value* member(const Value* v, std::string_view name) {
    if (v == nullptr || !v->IsObject()) return nullptr;
    const Value* found = nullptr;
    for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
        if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == name)
            found = &it->value;
    }
    return found != nullptr && found->IsNull() ? nullptr : found;
}

std::string_view string_of(const Value* v) {
    return v != nullptr && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                                         : std::string_view();
}

bool contains(const std::vector<std::string>& list, std::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

/// pydantic's enumeration, as Anthropic's validation errors spell it: 'a', 'b' or 'c'.
std::string pydantic_choices(const std::vector<std::string>& values) {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
        out += "'" + values[i] + "'";
    }
    return out;
}

/// OpenAI's enumeration: 'a', 'b', and 'c' ('a' and 'b' for two).
std::string openai_choices(const std::vector<std::string>& values) {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) {
            if (values.size() == 2) {
                out += " and ";
            } else {
                out += i + 1 == values.size() ? ", and " : ", ";
            }
        }
        out += "'" + values[i] + "'";
    }
    return out;
}

ModelViolation refusal(const char* rule, std::string where, std::string message, int status,
                       std::string type, std::string param = {}, std::string code = {}) {
    ModelViolation v;
    v.rule = rule;
    v.where = std::move(where);
    v.message = std::move(message);
    v.status = status;
    v.error_type = std::move(type);
    v.param = std::move(param);
    v.code = std::move(code);
    return v;
}

bool known_form(std::string_view type) {
    return type == "enabled" || type == "adaptive" || type == "between_tools" || type == "disabled";
}

// ---- the Anthropic model's texts (also what Bedrock passes through) ----------------------------

/// wire.176: a thinking form the model does not take. "adaptive", and "enabled" / "disabled"
/// on a model with adaptive thinking, are the API's texts; the rest is ours, in their style.
std::string form_text(std::string_view type, const ModelRules& rules) {
    if (type == "adaptive") return "adaptive thinking is not supported on this model";
    std::string text =
        "\"thinking.type." + std::string(type) + "\" is not supported for this model.";
    if (contains(rules.forms, "adaptive")) {
        text +=
            " Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking "
            "behavior.";
    } else if (contains(rules.forms, "enabled")) {
        text += " Use \"thinking.type.enabled\" with \"budget_tokens\" for extended thinking.";
    }
    return text;
}

/// wire.178 (ours): an effort on a model that takes none, or one it does not list.
std::string effort_text(const ModelRules& rules) {
    if (rules.efforts.empty()) return "\"output_config.effort\" is not supported for this model.";
    return "output_config.effort: Input should be " + pydantic_choices(rules.efforts);
}

/// wire.179: the first sampling parameter set to a value other than its default (temperature
/// and top_p default to 1; top_k has no default, so any value is one), or "".
std::string sampling_refused(const Value* temperature, const Value* top_p, const Value* top_k) {
    const auto non_default_one = [](const Value* v) {
        return v != nullptr && !(v->IsNumber() && v->GetDouble() == 1.0);
    };
    if (non_default_one(temperature)) return "`temperature` is deprecated for this model.";
    if (non_default_one(top_p)) return "`top_p` is deprecated for this model.";
    if (top_k != nullptr) return "`top_k` is deprecated for this model.";
    return "";
}

constexpr const char* kPrefillText =
    "This model does not support assistant message prefill. The conversation must end with a "
    "user message.";
constexpr const char* kForcedToolText =
    "tool_choice: type \"tool\" and \"any\" are not supported for this model.";

/// The index of the last message when it is the assistant's, or -1.
long long final_assistant(const Value* messages) {
    if (messages == nullptr || !messages->IsArray() || messages->Empty()) return -1;
    const Value& last = (*messages)[messages->Size() - 1];
    return string_of(member(&last, "role")) == "assistant"
               ? static_cast<long long>(messages->Size()) - 1
               : -1;
}

std::optional<ModelViolation> anthropic_rules(const Value& body, const ModelRules& rules) {
    const auto bad = [](const char* rule, std::string where, std::string message) {
        return refusal(rule, std::move(where), std::move(message), 400, "invalid_request_error");
    };
    const Value* thinking = member(&body, "thinking");
    const std::string_view type = string_of(member(thinking, "type"));
    if (!rules.forms.empty() && known_form(type) && !contains(rules.forms, type))
        return bad("wire.176", "thinking.type", form_text(type, rules));
    if (const Value* display = member(thinking, "display");
        display != nullptr && !rules.display.empty() &&
        !contains(rules.display, string_of(display))) {
        const std::string at =
            known_form(type) ? "thinking." + std::string(type) + ".display" : "thinking.display";
        return bad("wire.177", at, at + ": Input should be " + pydantic_choices(rules.display));
    }
    if (const Value* effort = member(member(&body, "output_config"), "effort");
        effort != nullptr && !contains(rules.efforts, string_of(effort))) {
        return bad("wire.178", "output_config.effort", effort_text(rules));
    }
    if (rules.refuses_sampling) {
        std::string text = sampling_refused(member(&body, "temperature"), member(&body, "top_p"),
                                            member(&body, "top_k"));
        if (!text.empty()) {
            const std::string at = text.substr(1, text.find('`', 1) - 1);
            return bad("wire.179", at, std::move(text));
        }
    }
    if (const long long last = final_assistant(member(&body, "messages"));
        rules.refuses_prefill && last >= 0) {
        return bad("wire.180", "messages." + std::to_string(last), kPrefillText);
    }
    if (const std::string_view choice = string_of(member(member(&body, "tool_choice"), "type"));
        rules.refuses_forced_tool_use && (choice == "any" || choice == "tool")) {
        return bad("wire.181", "tool_choice.type", kForcedToolText);
    }
    return std::nullopt;
}

std::optional<ModelViolation> openai_rules(const Value& body, const ModelRules& rules) {
    const Value* effort = member(&body, "reasoning_effort");
    // wire.189: function tools with any effort but `none`, or with none sent (the model's default
    // effort reasons), on a model that takes them only without reasoning.
    if (const Value* tools = member(&body, "tools");
        rules.refuses_tools_with_reasoning && tools != nullptr && tools->IsArray() && !tools->Empty() &&
        string_of(effort) != "none") {
        return refusal("wire.189", "reasoning_effort",
                       "Function tools with reasoning_effort are not supported for " + rules.wire_model +
                           " in /v1/chat/completions. To use function tools, use /v1/responses or set "
                           "reasoning_effort to 'none'.",
                       400, "invalid_request_error", "reasoning_effort", "");
    }
    if (effort == nullptr) return std::nullopt;
    if (rules.efforts.empty()) {
        return refusal(
            "wire.182", "reasoning_effort",
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.", 400,
            "invalid_request_error", "reasoning_effort", "unsupported_parameter");
    }
    const std::string_view value = string_of(effort);
    if (!effort->IsString() || contains(rules.efforts, value)) return std::nullopt;
    return refusal("wire.182", "reasoning_effort",
                   "Unsupported value: 'reasoning_effort' does not support '" + std::string(value) +
                       "' with this model. Supported values are: " + openai_choices(rules.efforts) +
                       ".",
                   400, "invalid_request_error", "reasoning_effort", "unsupported_value");
}

std::optional<ModelViolation> bedrock_rules(const Value& body, const ModelRules& rules) {
    const auto bad = [](const char* rule, std::string where, const std::string& message) {
        return refusal(rule, std::move(where),
                       "The model returned the following errors: " + message, 400,
                       "ValidationException");
    };
    const Value* extra = member(&body, "additionalModelRequestFields");
    // wire.183: a record with Anthropic thinking forms is a Claude model; Bedrock passes its
    // refusals through. Amazon Nova's reasoningConfig is not checked (no refusal text is known).
    if (!rules.forms.empty()) {
        const std::string_view type = string_of(member(member(extra, "thinking"), "type"));
        if (known_form(type) && !contains(rules.forms, type))
            return bad("wire.183", "additionalModelRequestFields.thinking.type",
                       form_text(type, rules));
        const std::pair<const Value*, const char*> efforts[] = {
            {member(member(&body, "outputConfig"), "effort"), "outputConfig.effort"},
            {member(member(extra, "output_config"), "effort"),
             "additionalModelRequestFields.output_config.effort"}};
        for (const auto& [effort, at] : efforts) {
            if (effort != nullptr && !contains(rules.efforts, string_of(effort)))
                return bad("wire.183", at, effort_text(rules));
        }
    }
    // wire.184: the model's other refusals, passed through the same way.
    if (rules.refuses_sampling) {
        const Value* inference = member(&body, "inferenceConfig");
        std::string text = sampling_refused(member(inference, "temperature"),
                                            member(inference, "topP"), member(extra, "top_k"));
        if (!text.empty()) return bad("wire.184", "inferenceConfig", text);
    }
    if (const long long last = final_assistant(member(&body, "messages"));
        rules.refuses_prefill && last >= 0) {
        return bad("wire.184", "messages." + std::to_string(last), kPrefillText);
    }
    if (const Value* choice = member(member(&body, "toolConfig"), "toolChoice");
        rules.refuses_forced_tool_use &&
        (member(choice, "any") != nullptr || member(choice, "tool") != nullptr)) {
        return bad("wire.184", "toolConfig.toolChoice", kForcedToolText);
    }
    return std::nullopt;
}

/// gemini.29: a thinkingLevel the model's record does not list (the record's efforts, written in
/// lower case; the wire takes the level in upper case). The text is the emulator's: Google's own
/// wording for this refusal is not published.
std::optional<ModelViolation> gemini_rules(const Value& body, const ModelRules& rules) {
    const Value* level =
        member(member(member(&body, "generationConfig"), "thinkingConfig"), "thinkingLevel");
    if (level == nullptr) return std::nullopt;
    std::string lower(string_of(level));
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (level->IsString() && contains(rules.efforts, lower)) return std::nullopt;
    return refusal("gemini.29", "generationConfig.thinkingConfig.thinkingLevel",
                   "Thinking level " + std::string(string_of(level)) +
                       " is not supported for model " + rules.wire_model + ".",
                   400, "INVALID_ARGUMENT");
}

/// responses.29: `reasoning.effort` the model's record does not list (the Chat Completions
/// refusal's wording for the Responses field; no tools-with-reasoning refusal: the Responses API is
/// where those models take tools with reasoning).
std::optional<ModelViolation> responses_rules(const Value& body, const ModelRules& rules) {
    const Value* effort = member(member(&body, "reasoning"), "effort");
    if (effort == nullptr || effort->IsNull()) return std::nullopt;
    if (rules.efforts.empty())
        return refusal("responses.29", "reasoning.effort",
                       "Unsupported parameter: 'reasoning.effort' is not supported with this "
                       "model.",
                       400, "invalid_request_error", "reasoning.effort", "unsupported_parameter");
    const std::string_view value = string_of(effort);
    if (effort->IsString() && contains(rules.efforts, value)) return std::nullopt;
    return refusal("responses.29", "reasoning.effort",
                   "Unsupported value: 'reasoning.effort' does not support '" + std::string(value) +
                       "' with this model. Supported values are: " + openai_choices(rules.efforts) +
                       ".",
                   400, "invalid_request_error", "reasoning.effort", "unsupported_value");
}

}  // namespace

std::optional<ModelViolation> check_model_available(WireFamily family, const ModelRules& rules) {
    if (rules.status != "retired") return std::nullopt;
    switch (family) {
        case WireFamily::kAnthropicMessages:
            return refusal("wire.185", "model", "model: " + rules.wire_model, 404,
                           "not_found_error");
        case WireFamily::kOpenAIChat:
            return refusal("wire.185", "model",
                           "The model `" + rules.wire_model +
                               "` does not exist or you do not have access to it.",
                           404, "invalid_request_error", "", "model_not_found");
        case WireFamily::kBedrockConverse:
            return refusal("wire.185", "modelId",
                           "This model version has reached the end of its life. Please refer to "
                           "the AWS documentation for more details.",
                           404, "ResourceNotFoundException");
        case WireFamily::kGeminiGenerate:
            return refusal("wire.185", "model",
                           "models/" + rules.wire_model +
                               " is not found for API version v1beta, or is not supported for "
                               "generateContent.",
                           404, "NOT_FOUND");
        case WireFamily::kOpenAIResponses:
            return refusal("wire.185", "model",
                           "The model `" + rules.wire_model +
                               "` does not exist or you do not have access to it.",
                           404, "invalid_request_error", "", "model_not_found");
        case WireFamily::kUnknown:
            break;
    }
    return std::nullopt;
}

std::optional<ModelViolation> check_model_request(WireFamily family, const rapidjson::Value& body,
                                                  const ModelRules& rules) {
    if (auto gone = check_model_available(family, rules)) return gone;
    if (!body.IsObject()) return std::nullopt;
    switch (family) {
        case WireFamily::kAnthropicMessages:
            return anthropic_rules(body, rules);
        case WireFamily::kOpenAIChat:
            return openai_rules(body, rules);
        case WireFamily::kBedrockConverse:
            return bedrock_rules(body, rules);
        case WireFamily::kGeminiGenerate:  // the record's thinking levels: gemini.29
            return gemini_rules(body, rules);
        case WireFamily::kOpenAIResponses:  // the record's efforts: responses.29
            return responses_rules(body, rules);
        case WireFamily::kUnknown:
            break;
    }
    return std::nullopt;
}

}  // namespace nucleo::contract
