// The OpenAI Chat Completions rule book (wire.120-wire.125): tools, then the messages in order.
// Over the body's Shape (wire.164).
#include <algorithm>
#include <string>
#include <vector>

#include "contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

// wire.120, wire.121
std::optional<Violation> tools(const Shape& body) {
    for (std::size_t i = 0; i < body.tools.size(); ++i) {
        const Tool& fn = body.tools[i];
        if (!fn.holder) continue;
        const std::string_view name = fn.holder_name;
        const std::string at = "tools[" + std::to_string(i) + "].function.name";
        if (name.size() > 64) {
            return broken("wire.120", at,
                          "Invalid '" + at +
                              "': string too long. Expected a string with maximum length 64, but "
                              "got a string with length " +
                              std::to_string(name.size()) + " instead.");
        }
        if (!valid_tool_name(name)) {
            return broken("wire.120", at,
                          "Invalid '" + at +
                              "': string does not match pattern. Expected a string that matches "
                              "the pattern '^[a-zA-Z0-9_-]+$'.");
        }
        if (fn.holder_schema && fn.holder_schema_type != "object") {
            const std::string_view got = fn.holder_schema_type;
            return broken("wire.121", "tools[" + std::to_string(i) + "].function.parameters",
                          "Invalid schema for function '" + std::string(name) +
                              "': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"" +
                              std::string(got.empty() ? "None" : got) + "\"'.");
        }
    }
    return std::nullopt;
}

// wire.122-wire.125
std::optional<Violation> messages(const Shape& body, Scope scope) {
    std::vector<std::string_view> pending;  // tool_call ids still waiting for their tool message
    std::size_t pending_from = 0;
    const auto unanswered = [&](std::size_t at) {
        std::string ids;
        for (const auto id : pending) ids += (ids.empty() ? "" : ", ") + std::string(id);
        return broken("wire.125", "messages.[" + std::to_string(at) + "].role",
                      "An assistant message with 'tool_calls' must be followed by tool messages "
                      "responding to each 'tool_call_id'. The following tool_call_ids did not "
                      "have response messages: " +
                          ids);
    };
    for (std::size_t i = 0; i < body.messages.size(); ++i) {
        const Msg& m = body.messages[i];
        const std::string at = "messages.[" + std::to_string(i) + "]";
        const std::string_view role = m.role;
        if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
            role != "tool" && role != "function") {
            return broken("wire.122", at + ".role",
                          "Invalid value: '" + std::string(role) +
                              "'. Supported values are: 'system', 'assistant', 'user', "
                              "'function', 'tool', and 'developer'.");
        }
        if (scope == Scope::kCore && i > 0 && (role == "system" || role == "developer")) {
            return broken("wire.123", at + ".role",
                          "Invalid value: '" + std::string(role) +
                              "' at " + at +
                              ": the system content is one leading system message; a later "
                              "message carries the role 'user', 'assistant' or 'tool'.");
        }
        if (role == "tool") {
            if (!m.tool_call_id_present) {
                return broken("wire.124", at + ".tool_call_id",
                              "Missing parameter 'tool_call_id': messages with role 'tool' must "
                              "have a 'tool_call_id'.");
            }
            const std::string_view id = m.tool_call_id;
            const auto it = std::find(pending.begin(), pending.end(), id);
            if (it == pending.end()) {
                return broken("wire.124", at + ".role",
                              "Invalid parameter: messages with role 'tool' must be a response to "
                              "a preceeding message with 'tool_calls'.");
            }
            pending.erase(it);
            continue;
        }
        if (!pending.empty()) return unanswered(i);
        if (role == "assistant") {
            pending.assign(body.call_ids.begin() + m.calls_begin, body.call_ids.begin() + m.calls_end);
            pending_from = i;
        }
    }
    if (!pending.empty()) return unanswered(pending_from);
    return std::nullopt;
}

}  // namespace

std::optional<Violation> check_openai(const Shape& body, Scope scope) {
    if (auto e = tools(body)) return e;
    return messages(body, scope);
}

std::optional<Violation> openai_head(const Shape& body) {
    return tools(body);
}

// wire.174: wire.122-wire.125 over one piece of the messages, as PieceSummary records them: its
// leading tool messages answer what the piece before left pending; from its first other message
// on, the piece is checked on its own.
void openai_piece(const Shape& body, bool first_in_request, PieceSummary& out) {
    std::vector<std::string_view>& pending = out.exit_pending;
    for (std::size_t i = 0; i < body.messages.size() && out.ok; ++i) {
        const Msg& m = body.messages[i];
        const std::string_view role = m.role;
        if (role != "system" && role != "developer" && role != "user" && role != "assistant" &&
            role != "tool" && role != "function") {
            out.ok = false;  // wire.122
        } else if (!(first_in_request && i == 0) && (role == "system" || role == "developer")) {
            out.ok = false;  // wire.123
        } else if (role == "tool") {
            if (!m.tool_call_id_present) {
                out.ok = false;  // wire.124
            } else if (!out.has_non_tool) {
                out.leading_tool_ids.push_back(m.tool_call_id);
            } else {
                const auto it = std::find(pending.begin(), pending.end(), m.tool_call_id);
                if (it == pending.end()) {
                    out.ok = false;  // wire.124
                } else {
                    pending.erase(it);
                }
            }
        } else if (out.has_non_tool && !pending.empty()) {
            out.ok = false;  // wire.125
        } else {
            out.has_non_tool = true;  // the pieces before must leave nothing pending here
            if (role == "assistant")
                pending.assign(body.call_ids.begin() + m.calls_begin,
                               body.call_ids.begin() + m.calls_end);
        }
    }
}

}  // namespace nucleo::contract::internal
