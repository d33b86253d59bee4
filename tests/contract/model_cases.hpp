// The per-model rules' cases (wire.176-wire.184, wire.189): per case a model of the shipped catalog
// (config/models.yaml), a body its record takes, one it refuses with the provider's status, error
// type and exact text, and where set another model whose record takes the refused body (the
// difference is the record's, not the body's). Shared by the rule book's unit test
// (tests/contract/model_rules_test.cpp, over records written out by hand) and the emulator's test
// (tests/emulator/emulator_catalog_test.cpp, over the shipped catalog itself). The bodies carry no
// model: Anthropic and OpenAI name it in the body, Bedrock in the path, and the tests add it.
#pragma once

#include <vector>

#include "nucleo/wire/contract.hpp"

namespace model_cases {

using nucleo::contract::WireFamily;

struct Case {
    const char* name;  ///< the test's name
    const char* rule;
    WireFamily family;
    const char* model;   ///< a wire_model of the shipped catalog
    const char* keeps;   ///< a body the model's record takes
    const char* breaks;  ///< a body it refuses
    int status;
    const char* type;  ///< Anthropic error.type, OpenAI error.type, Bedrock x-amzn-ErrorType
    const char* code;  ///< OpenAI error.code ("" elsewhere)
    const char* text;  ///< the exact message
    const char* where;
    const char* takes_it;  ///< a model whose record takes `breaks` (nullptr: none chosen)
};

constexpr WireFamily A = WireFamily::kAnthropicMessages;
constexpr WireFamily O = WireFamily::kOpenAIChat;
constexpr WireFamily B = WireFamily::kBedrockConverse;

// Anthropic and Bedrock message lists; OpenAI's.
#define MC_ANTHROPIC(extra)       \
    R"({"max_tokens":4096)" extra \
    R"(,"messages":[{"role":"user","content":"What is the answer?"}]})"
#define MC_PREFILL \
    R"(,"messages":[{"role":"user","content":"What is the answer?"},{"role":"assistant","content":"The answer is"}]})"
#define MC_OPENAI(extra) \
    R"({"messages":[{"role":"user","content":"What is the answer?"}])" extra "}"
#define MC_BEDROCK(extra) \
    R"({"messages":[{"role":"user","content":[{"text":"What is the answer?"}]}])" extra "}"
#define MC_TOOLS \
    R"(,"tools":[{"name":"lookup","description":"Looks up","input_schema":{"type":"object"}}])"
#define MC_OPENAI_TOOLS \
    R"(,"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}])"
#define MC_BEDROCK_TOOLS(choice)                                                                                               \
    R"(,"toolConfig":{"tools":[{"toolSpec":{"name":"lookup","inputSchema":{"json":{"type":"object"}}}}],"toolChoice":)" choice \
    "}"

#define MC_ADAPTIVE_USE \
    " Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."
#define MC_BEDROCK_SAYS "The model returned the following errors: "
#define MC_PREFILL_TEXT                                                                        \
    "This model does not support assistant message prefill. The conversation must end with a " \
    "user message."

inline const std::vector<Case> kCases = {
    // ---- Anthropic Messages ----------------------------------------------------------------
    {"EnabledOnAnAdaptiveOnlyModel", "wire.176", A, "claude-opus-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"enabled","budget_tokens":2048})"), 400,
     "invalid_request_error", "",
     "\"thinking.type.enabled\" is not supported for this model." MC_ADAPTIVE_USE, "thinking.type",
     "claude-haiku-4-5-20251001"},
    {"DisabledOnAModelThatAlwaysThinks", "wire.176", A, "claude-opus-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"disabled"})"), 400, "invalid_request_error", "",
     "\"thinking.type.disabled\" is not supported for this model." MC_ADAPTIVE_USE, "thinking.type",
     "claude-haiku-5-5"},
    {"DisabledWhereBetweenToolsIsTheLowest", "wire.176", A, "claude-sonnet-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"between_tools"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"disabled"})"), 400, "invalid_request_error", "",
     "\"thinking.type.disabled\" is not supported for this model." MC_ADAPTIVE_USE, "thinking.type",
     "claude-opus-5"},
    {"AdaptiveOnAManualOnlyModel", "wire.176", A, "claude-haiku-4-5-20251001",
     MC_ANTHROPIC(R"(,"thinking":{"type":"enabled","budget_tokens":2048})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive"})"), 400, "invalid_request_error", "",
     "adaptive thinking is not supported on this model", "thinking.type", "claude-sonnet-5"},
    {"BetweenToolsWhereNotOffered", "wire.176", A, "claude-haiku-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"disabled"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"between_tools"})"), 400, "invalid_request_error", "",
     "\"thinking.type.between_tools\" is not supported for this model." MC_ADAPTIVE_USE,
     "thinking.type", "claude-sonnet-5-5"},
    {"BetweenToolsOnAManualOnlyModel", "wire.176", A, "claude-haiku-4-5-20251001",
     MC_ANTHROPIC(R"(,"thinking":{"type":"disabled"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"between_tools"})"), 400, "invalid_request_error", "",
     "\"thinking.type.between_tools\" is not supported for this model. Use "
     "\"thinking.type.enabled\" with "
     "\"budget_tokens\" for extended thinking.",
     "thinking.type", nullptr},
    {"DisplayTheModelDoesNotOffer", "wire.177", A, "claude-sonnet-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive","display":"summarized"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive","display":"updates"})"), 400,
     "invalid_request_error", "",
     "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
     "thinking.adaptive.display", nullptr},
    {"EffortTheModelDoesNotList", "wire.178", A, "claude-sonnet-5-5",
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"max"})"),
     MC_ANTHROPIC(R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"extreme"})"), 400,
     "invalid_request_error", "",
     "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
     "output_config.effort", nullptr},
    {"EffortOnAModelWithoutEffort", "wire.178", A, "claude-haiku-4-5-20251001",
     MC_ANTHROPIC(R"(,"thinking":{"type":"enabled","budget_tokens":2048})"),
     MC_ANTHROPIC(R"(,"output_config":{"effort":"high"})"), 400, "invalid_request_error", "",
     "\"output_config.effort\" is not supported for this model.", "output_config.effort",
     "claude-sonnet-5"},
    {"Temperature", "wire.179", A, "claude-sonnet-5-5", MC_ANTHROPIC(R"(,"temperature":1)"),
     MC_ANTHROPIC(R"(,"temperature":0.2)"), 400, "invalid_request_error", "",
     "`temperature` is deprecated for this model.", "temperature", "claude-haiku-4-5-20251001"},
    {"TopP", "wire.179", A, "claude-haiku-5-5", MC_ANTHROPIC(R"(,"top_p":1)"),
     MC_ANTHROPIC(R"(,"top_p":0.9)"), 400, "invalid_request_error", "",
     "`top_p` is deprecated for this model.", "top_p", "claude-haiku-4-5-20251001"},
    {"TopK", "wire.179", A, "claude-opus-5-5", MC_ANTHROPIC(R"(,"top_k":null)"),
     MC_ANTHROPIC(R"(,"top_k":40)"), 400, "invalid_request_error", "",
     "`top_k` is deprecated for this model.", "top_k", "claude-haiku-4-5-20251001"},
    {"Prefill", "wire.180", A, "claude-sonnet-5-5", MC_ANTHROPIC(""),
     R"({"max_tokens":4096)" MC_PREFILL, 400, "invalid_request_error", "", MC_PREFILL_TEXT,
     "messages.1", "claude-haiku-4-5-20251001"},
    {"ForcedToolUseAny", "wire.181", A, "claude-sonnet-5-5",
     MC_ANTHROPIC(MC_TOOLS R"(,"tool_choice":{"type":"auto"})"),
     MC_ANTHROPIC(MC_TOOLS R"(,"tool_choice":{"type":"any"})"), 400, "invalid_request_error", "",
     "tool_choice: type \"tool\" and \"any\" are not supported for this model.", "tool_choice.type",
     "claude-haiku-5-5"},
    {"ForcedToolUseByName", "wire.181", A, "claude-fable-5-2",
     MC_ANTHROPIC(MC_TOOLS R"(,"tool_choice":{"type":"none"})"),
     MC_ANTHROPIC(MC_TOOLS R"(,"tool_choice":{"type":"tool","name":"lookup"})"), 400,
     "invalid_request_error", "",
     "tool_choice: type \"tool\" and \"any\" are not supported for this model.", "tool_choice.type",
     "claude-opus-5"},
    // ---- OpenAI Chat -----------------------------------------------------------------------
    {"NoneOnAModelThatAlwaysReasons", "wire.182", O, "gpt-6.1-sol",
     MC_OPENAI(R"(,"reasoning_effort":"low")"), MC_OPENAI(R"(,"reasoning_effort":"none")"), 400,
     "invalid_request_error", "unsupported_value",
     "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported "
     "values are: "
     "'low', 'medium', 'high', 'xhigh', and 'max'.",
     "reasoning_effort", "gpt-6-sol"},
    {"MaxWhereTheModelStopsAtXhigh", "wire.182", O, "gpt-5.6-sol",
     MC_OPENAI(R"(,"reasoning_effort":"xhigh")"), MC_OPENAI(R"(,"reasoning_effort":"max")"), 400,
     "invalid_request_error", "unsupported_value",
     "Unsupported value: 'reasoning_effort' does not support 'max' with this model. Supported "
     "values are: "
     "'none', 'low', 'medium', 'high', and 'xhigh'.",
     "reasoning_effort", "gpt-6.1-terra"},
    {"EffortOnAModelThatDoesNotReason", "wire.182", O, "gpt-4.1-2025-04-14", MC_OPENAI(""),
     MC_OPENAI(R"(,"reasoning_effort":"low")"), 400, "invalid_request_error",
     "unsupported_parameter",
     "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
     "reasoning_effort", "gpt-6-luna"},
    {"FunctionToolsWithReasoning", "wire.189", O, "gpt-6-sol",
     MC_OPENAI(MC_OPENAI_TOOLS R"(,"reasoning_effort":"none")"),
     MC_OPENAI(MC_OPENAI_TOOLS R"(,"reasoning_effort":"medium")"), 400, "invalid_request_error", "",
     "Function tools with reasoning_effort are not supported for gpt-6-sol in /v1/chat/completions. "
     "To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
     "reasoning_effort", "gpt-6.1-terra"},
    {"FunctionToolsAtTheDefaultEffort", "wire.189", O, "gpt-6-luna",
     MC_OPENAI(R"(,"reasoning_effort":"high")"), MC_OPENAI(MC_OPENAI_TOOLS), 400,
     "invalid_request_error", "",
     "Function tools with reasoning_effort are not supported for gpt-6-luna in /v1/chat/completions. "
     "To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
     "reasoning_effort", "gpt-6.1-terra"},
    // ---- Bedrock Converse (the Claude model's refusal passed through) ---------------------------
    {"ConverseEnabledOnAnAdaptiveModel", "wire.183", B, "us.anthropic.claude-sonnet-5-5",
     MC_BEDROCK(R"(,"additionalModelRequestFields":{"thinking":{"type":"between_tools"}})"),
     MC_BEDROCK(
         R"(,"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":2048}})"),
     400, "ValidationException", "",
     MC_BEDROCK_SAYS "\"thinking.type.enabled\" is not supported for this model." MC_ADAPTIVE_USE,
     "additionalModelRequestFields.thinking.type",
     "global.anthropic.claude-haiku-4-5-20251001-v1:0"},
    {"ConverseEffortOnAModelWithoutEffort", "wire.183", B,
     "global.anthropic.claude-haiku-4-5-20251001-v1:0",
     MC_BEDROCK(
         R"(,"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":2048}})"),
     MC_BEDROCK(R"(,"outputConfig":{"effort":"high"})"), 400, "ValidationException", "",
     MC_BEDROCK_SAYS "\"output_config.effort\" is not supported for this model.",
     "outputConfig.effort", "us.anthropic.claude-haiku-5-5"},
    {"ConverseTemperature", "wire.184", B, "us.anthropic.claude-sonnet-5-5",
     MC_BEDROCK(R"(,"inferenceConfig":{"maxTokens":512})"),
     MC_BEDROCK(R"(,"inferenceConfig":{"maxTokens":512,"temperature":0.2})"), 400,
     "ValidationException", "", MC_BEDROCK_SAYS "`temperature` is deprecated for this model.",
     "inferenceConfig", "global.anthropic.claude-haiku-4-5-20251001-v1:0"},
    {"ConversePrefill", "wire.184", B, "us.anthropic.claude-haiku-5-5", MC_BEDROCK(""),
     R"({"messages":[{"role":"user","content":[{"text":"What is the answer?"}]},{"role":"assistant","content":[{"text":"The answer is"}]}]})",
     400, "ValidationException", "", MC_BEDROCK_SAYS MC_PREFILL_TEXT, "messages.1",
     "global.anthropic.claude-haiku-4-5-20251001-v1:0"},
    {"ConverseForcedToolUse", "wire.184", B, "us.anthropic.claude-sonnet-5-5",
     MC_BEDROCK(MC_BEDROCK_TOOLS(R"({"auto":{}})")), MC_BEDROCK(MC_BEDROCK_TOOLS(R"({"any":{}})")),
     400, "ValidationException", "",
     MC_BEDROCK_SAYS "tool_choice: type \"tool\" and \"any\" are not supported for this model.",
     "toolConfig.toolChoice", "us.anthropic.claude-haiku-5-5"},
};

#undef MC_ANTHROPIC
#undef MC_PREFILL
#undef MC_OPENAI
#undef MC_BEDROCK
#undef MC_TOOLS
#undef MC_BEDROCK_TOOLS
#undef MC_ADAPTIVE_USE
#undef MC_BEDROCK_SAYS
#undef MC_PREFILL_TEXT

}  // namespace model_cases
