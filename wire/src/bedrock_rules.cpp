// The Bedrock Converse rule book (wire.130-wire.142): tools, system, each message, then the
// request-wide counts, in the order Bedrock reports them. Over the body's Shape (wire.164).
#include <algorithm>
#include <string>
#include <vector>

#include "contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

/// The toolUseId of each toolUse (or toolResult) block of a message, in order.
std::vector<std::string_view> block_ids(const Shape& body, const Msg& m, bool uses) {
    std::vector<std::string_view> ids;
    for (const Block* b = body.begin(m); b != body.end(m); ++b)
        if (uses ? b->tool_use : b->tool_result) ids.push_back(b->id);
    return ids;
}

const std::string kStart =
    "A conversation must start with a user message. Try again with a conversation that starts "
    "with a user message.";

// wire.130, wire.131
std::optional<Violation> tools(const Shape& body) {
    for (std::size_t i = 0; i < body.tools.size(); ++i) {
        const Tool& spec = body.tools[i];
        if (!spec.holder) continue;
        const std::string_view name = spec.holder_name;
        if (!valid_tool_name(name)) {
            return broken("wire.130", "toolConfig.tools." + std::to_string(i) + ".toolSpec.name",
                          "1 validation error detected: Value '" + std::string(name) +
                              "' at 'toolConfig.tools." + std::to_string(i + 1) +
                              ".member.toolSpec.name' failed to satisfy constraint: Member must "
                              "satisfy regular expression pattern: [a-zA-Z0-9_-]+");
        }
        if (spec.holder_schema && spec.holder_schema_type != "object") {
            return broken("wire.131",
                          "toolConfig.tools." + std::to_string(i) + ".toolSpec.inputSchema.json",
                          "The model returned the following errors: tools." + std::to_string(i) +
                              ".custom.input_schema.type: Input should be 'object'");
        }
    }
    return std::nullopt;
}

// wire.142: with Anthropic thinking on, the assistant turn answered by the final user turn's
// tool results begins with a reasoningContent block.
std::optional<Violation> thinking_first(const Shape& body) {
    const auto& messages = body.messages;
    if (!body.extra_thinking_enabled || messages.size() < 2) return std::nullopt;
    if (block_ids(body, messages.back(), false).empty()) return std::nullopt;
    const std::size_t a = messages.size() - 2;
    std::string_view found = "text";
    if (body.size(messages[a]) > 0) {
        const Block& first = *body.begin(messages[a]);
        if (first.reasoning) return std::nullopt;
        if (first.tool_use) found = "tool_use";
    }
    const std::string at = "messages." + std::to_string(a) + ".content.0";
    return broken("wire.142", at,
                  "The model returned the following errors: " + thinking_first_text(at, found));
}

}  // namespace

std::optional<Violation> check_bedrock(const Shape& body) {
    if (auto e = tools(body)) return e;
    const auto& messages = body.messages;
    if (messages.empty()) {
        return !body.messages_present ? std::nullopt : broken("wire.135", "messages", kStart);
    }
    int cache_points = 0;
    bool tool_blocks = false;
    for (const Tool& t : body.tools) cache_points += t.mark_present ? 1 : 0;
    for (std::size_t i = 0; i < body.system_blocks.size(); ++i) {
        const Block& b = body.system_blocks[i];
        cache_points += b.mark_present ? 1 : 0;
        if (b.text_is_string && !has_non_whitespace(b.text)) {
            return broken("wire.133", "system." + std::to_string(i),
                          "The text field in the SystemContentBlock object at system." +
                              std::to_string(i) +
                              " is blank. Add text to the text field, and try again.");
        }
    }
    std::string_view prev_role;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const Msg& m = messages[i];
        const std::string at = "messages." + std::to_string(i);
        const std::string_view role = m.role;
        if (role != "user" && role != "assistant") {
            return broken("wire.134", at + ".role",
                          "1 validation error detected: Value '" + std::string(role) +
                              "' at 'messages." + std::to_string(i + 1) +
                              ".member.role' failed to satisfy constraint: Member must satisfy "
                              "enum value set: [user, assistant]");
        }
        if (i == 0 && role != "user") return broken("wire.135", at, kStart);
        if (role == prev_role) {
            return broken("wire.136", at,
                          "A conversation must alternate between user and assistant roles. Make "
                          "sure the conversation alternates between user and assistant roles and "
                          "try again.");
        }
        prev_role = role;
        if (m.content != Kind::kArray || m.content_empty) {
            return broken("wire.137", at + ".content",
                          "The content field in the Message object at " + at +
                              " is empty. Add a ContentBlock object to the content field and try "
                              "again.");
        }
        for (const Block* b = body.begin(m); b != body.end(m); ++b) {
            cache_points += b->mark_present ? 1 : 0;
            tool_blocks = tool_blocks || b->tool_use || b->tool_result;
            if (b->text_is_string && !has_non_whitespace(b->text)) {
                const std::string where = at + ".content." + std::to_string(b - body.begin(m));
                return broken("wire.138", where,
                              "The text field in the ContentBlock object at " + where +
                                  " is blank. Add text to the text field, and try again.");
            }
        }
        if (role == "user") {
            const auto results = block_ids(body, m, false);
            if (results.empty()) continue;
            const auto uses = i > 0 ? block_ids(body, messages[i - 1], true) : std::vector<std::string_view>{};
            const bool all_known = std::all_of(results.begin(), results.end(), [&](auto id) {
                return std::find(uses.begin(), uses.end(), id) != uses.end();
            });
            if (results.size() > uses.size() || !all_known) {
                return broken("wire.139", at + ".content",
                              "The number of toolResult blocks at " + at +
                                  ".content exceeds the number of toolUse blocks of previous "
                                  "turn.");
            }
        } else {
            std::vector<std::string_view> answered;
            if (i + 1 < messages.size()) answered = block_ids(body, messages[i + 1], false);
            std::string missing;
            for (const auto id : block_ids(body, m, true))
                if (std::find(answered.begin(), answered.end(), id) == answered.end())
                    missing += (missing.empty() ? "" : ", ") + std::string(id);
            if (!missing.empty()) {
                return broken("wire.140", "messages." + std::to_string(i + 1) + ".content",
                              "Expected toolResult blocks at messages." + std::to_string(i + 1) +
                                  ".content for the following Ids: " + missing);
            }
        }
    }
    if (cache_points > 4) {
        // Bedrock passes the model's own refusal through.
        return broken("wire.132", "cachePoint",
                      "The model returned the following errors: A maximum of 4 blocks with "
                      "cache_control may be provided. Found " +
                          std::to_string(cache_points) + ".");
    }
    if (tool_blocks && !body.tool_config) {
        return broken("wire.141", "toolConfig",
                      "The toolConfig field must be defined when using toolUse and toolResult "
                      "content blocks.");
    }
    return thinking_first(body);
}

}  // namespace nucleo::contract::internal
