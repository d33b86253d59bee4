// The rule book's cases (wire.101-wire.142, wire.165): per rule a body that keeps it, one that breaks it,
// the provider's exact text and where it broke. Shared by the rule book's unit test and the
// emulator's test, which posts the same bodies over HTTP.
#pragma once

#include <vector>

#include "nucleo/wire/contract.hpp"

namespace wire_cases {

using nucleo::contract::WireFamily;

struct Case {
    const char* rule;
    WireFamily family;
    const char* keeps;
    const char* breaks;
    const char* text;   ///< the provider's exact text for `breaks`
    const char* where;  ///< where it broke
};

constexpr WireFamily A = WireFamily::kAnthropicMessages;
constexpr WireFamily O = WireFamily::kOpenAIChat;
constexpr WireFamily B = WireFamily::kBedrockConverse;

#define U(text) R"({"role":"user","content":[{"type":"text","text":")" text R"("}]})"
#define AS(text) R"({"role":"assistant","content":[{"type":"text","text":")" text R"("}]})"

inline const std::vector<Case> kCases = {
    {"wire.101", A,
     R"({"tools":[{"name":"search_orders","input_schema":{"type":"object"}}],"messages":[)" U("hi") "]}",
     R"({"tools":[{"name":"search orders!","input_schema":{"type":"object"}}],"messages":[)" U("hi") "]}",
     "tools" ".0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", "tools" ".0.custom.name"},
    {"wire.102", A,
     R"({"tools":[{"name":"t","input_schema":{"type":"object"}}],"messages":[)" U("hi") "]}",
     R"({"tools":[{"name":"t","input_schema":{"type":"array"}}],"messages":[)" U("hi") "]}",
     "tools" ".0.custom.input_schema.type: Input should be 'object'", "tools" ".0.custom.input_schema.type"},
    {"wire.103", A,
     R"({"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"b","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]}]})",
     R"({"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"b","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"c","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"d","cache_control":{"type":"ephemeral"}}]}]})",
     "A maximum of 4 blocks with cache_control may be provided. Found 5.", "cache_control"},
    {"wire.104", A,
     R"({"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]})",
     R"({"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]})",
     "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that "
     "blocks are processed in the following order: `tools`, `system`, `messages`.",
     "cache_control"},
    {"wire.165", A,
     R"({"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]})",
     R"({"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[
        {"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"b","cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]}]})",
     "A maximum of 4 blocks with cache_control may be provided. Found 5.", "cache_control"},
    {"wire.105", A, R"({"system":[{"type":"text","text":"s"}],"messages":[)" U("hi") "]}",
     R"({"system":[{"type":"text","text":"  "}],"messages":[)" U("hi") "]}",
     "system: text content blocks must contain non-whitespace text", "system.0"},
    {"wire.106", A, R"({"messages":[)" U("hi") "]}",
     R"({"messages":[{"role":"system","content":"s"}]})",
     "messages.0.role: Input should be 'user' or 'assistant'", "messages.0.role"},
    {"wire.107", A, R"({"messages":[)" U("hi") "," AS("ok") "]}",
     R"({"messages":[)" AS("hi") "," U("ok") "]}",
     R"(messages: first message must use the "user" role)", "messages.0"},
    {"wire.108", A, R"({"messages":[)" U("hi") "," AS("ok") "," U("go") "]}",
     R"({"messages":[)" U("hi") "," U("again") "]}",
     R"(messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row)",
     "messages.1"},
    {"wire.109", A, R"({"messages":[)" U("hi") R"(,{"role":"assistant","content":[]}]})",
     R"({"messages":[{"role":"user","content":[]}]})",
     "messages.0: all messages must have non-empty content except for the optional final assistant message",
     "messages.0"},
    {"wire.110", A, R"({"messages":[)" U("hi") "]}", R"({"messages":[)" U(" ") "]}",
     "messages: text content blocks must contain non-whitespace text", "messages.0.content.0"},
    {"wire.111", A,
     R"({"messages":[)" U("hi") R"(,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]})",
     R"({"messages":[)" U("hi") "," AS("ok") R"(,
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"r"}]}]})",
     "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9. Each "
     "`tool_result` block must have a corresponding `tool_use` block in the previous message.",
     "messages.2.content.0"},
    {"wire.112", A,
     R"({"messages":[)" U("hi") R"(,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"},{"type":"text","text":"x"}]}]})",
     R"({"messages":[)" U("hi") R"(,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"text","text":"x"}]}]})",
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. "
     "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
     "messages.1"},
    {"wire.113", A,
     R"({"max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[)" U("hi") R"(,
        {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]})",
     R"({"max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[)" U("hi") R"(,
        {"role":"assistant","content":[{"type":"text","text":"let me look"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]})",
     "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When "
     "`thinking` is enabled, a final `assistant` message must start with a thinking block "
     "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
     "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
     "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
     "messages.1.content.0"},
    {"wire.114", A,
     R"({"max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[)" U("hi") "]}",
     R"({"max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[)" U("hi") "]}",
     "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation "
     "at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
     "thinking.budget_tokens"},
    {"wire.120", O,
     R"({"tools":[{"type":"function","function":{"name":"search_orders","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]})",
     R"({"tools":[{"type":"function","function":{"name":"search orders!","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]})",
     "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that "
     "matches the pattern '^[a-zA-Z0-9_-]+$'.",
     "tools[0].function.name"},
    {"wire.121", O,
     R"({"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]})",
     R"({"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"array"}}}],"messages":[{"role":"user","content":"hi"}]})",
     R"(Invalid schema for function 'f': schema must be a JSON Schema of 'type: "object"', got 'type: "array"'.)",
     "tools[0].function.parameters"},
    {"wire.122", O, R"({"messages":[{"role":"user","content":"hi"}]})",
     R"({"messages":[{"role":"human","content":"hi"}]})",
     "Invalid value: 'human'. Supported values are: 'system', 'assistant', 'user', 'function', "
     "'tool', and 'developer'.",
     "messages.[0].role"},
    {"wire.123", O, R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]})",
     R"({"messages":[{"role":"user","content":"hi"},{"role":"system","content":"s"}]})",
     "Invalid value: 'system' at messages.[1]: the system content is one leading system message; "
     "a later message carries the role 'user', 'assistant' or 'tool'.",
     "messages.[1].role"},
    {"wire.124", O,
     R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]})",
     R"({"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"r"}]})",
     "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
     "'tool_calls'.",
     "messages.[1].role"},
    {"wire.125", O,
     R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]})",
     R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"next"}]})",
     "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
     "'tool_call_id'. The following tool_call_ids did not have response messages: c1",
     "messages.[2].role"},
    {"wire.130", B,
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"search_orders","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"search orders!","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     "1 validation error detected: Value 'search orders!' at 'toolConfig.tools.1.member.toolSpec.name' "
     "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
     "toolConfig.tools.0.toolSpec.name"},
    {"wire.131", B,
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"array"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     "The model returned the following errors: tools" ".0.custom.input_schema.type: Input should be 'object'",
     "toolConfig.tools.0.toolSpec.inputSchema.json"},
    {"wire.132", B,
     R"({"system":[{"text":"s"},{"cachePoint":{"type":"default"}}],"messages":[{"role":"user","content":[{"text":"a"},{"cachePoint":{"type":"default"}},{"text":"b"},{"cachePoint":{"type":"default"}},{"text":"c"},{"cachePoint":{"type":"default"}}]}]})",
     R"({"system":[{"text":"s"},{"cachePoint":{"type":"default"}}],"messages":[{"role":"user","content":[{"text":"a"},{"cachePoint":{"type":"default"}},{"text":"b"},{"cachePoint":{"type":"default"}},{"text":"c"},{"cachePoint":{"type":"default"}},{"text":"d"},{"cachePoint":{"type":"default"}}]}]})",
     "The model returned the following errors: A maximum of 4 blocks with cache_control may be "
     "provided. Found 5.",
     "cachePoint"},
    {"wire.133", B, R"({"system":[{"text":"s"}],"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"system":[{"text":" "}],"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     "The text field in the SystemContentBlock object at system.0 is blank. Add text to the text "
     "field, and try again.",
     "system.0"},
    {"wire.134", B, R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"messages":[{"role":"system","content":[{"text":"hi"}]}]})",
     "1 validation error detected: Value 'system' at 'messages.1.member.role' failed to satisfy "
     "constraint: Member must satisfy enum value set: [user, assistant]",
     "messages.0.role"},
    {"wire.135", B,
     R"({"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":"ok"}]}]})",
     R"({"messages":[{"role":"assistant","content":[{"text":"hi"}]},{"role":"user","content":[{"text":"ok"}]}]})",
     "A conversation must start with a user message. Try again with a conversation that starts "
     "with a user message.",
     "messages.0"},
    {"wire.136", B,
     R"({"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":"ok"}]}]})",
     R"({"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"user","content":[{"text":"ok"}]}]})",
     "A conversation must alternate between user and assistant roles. Make sure the conversation "
     "alternates between user and assistant roles and try again.",
     "messages.1"},
    {"wire.137", B, R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"messages":[{"role":"user","content":[]}]})",
     "The content field in the Message object at messages.0 is empty. Add a ContentBlock object to "
     "the content field and try again.",
     "messages.0.content"},
    {"wire.138", B, R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})",
     R"({"messages":[{"role":"user","content":[{"text":""}]}]})",
     "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the "
     "text field, and try again.",
     "messages.0.content.0"},
    {"wire.139", B,
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":"ok"}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks "
     "of previous turn.",
     "messages.2.content"},
    {"wire.140", B,
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"text":"r"}]}]})",
     "Expected toolResult blocks at messages.2.content for the following Ids: t1",
     "messages.2.content"},
    {"wire.141", B,
     R"({"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     R"({"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
     "toolConfig"},
    {"wire.142", B,
     R"({"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}},"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"hm","signature":"s"}}},{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     R"({"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}},"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]},"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]})",
     "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or "
     "`redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` "
     "message must start with a thinking block (preceeding the lastmost set of `tool_use` and "
     "`tool_result` blocks). We recommend you include thinking blocks from previous turns. To "
     "avoid this requirement, disable `thinking`. Please consult our documentation at "
     "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
     "messages.1.content.0"},
};

#undef U
#undef AS

}  // namespace wire_cases
