// The Bedrock Converse rule book (wire.130-wire.142): tools, system, each message, then the
// request-wide counts, in the order Bedrock reports them.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "contract/contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

bool is_cache_point(const Value& block) { return member(block, "cachePoint") != nullptr; }

/// The toolUseId of each `kind` ("toolUse" or "toolResult") block of a message, in order.
std::vector<std::string_view> block_ids(const Value& message, const char* kind) {
    std::vector<std::string_view> ids;
    if (const Value* content = array(message, "content")) {
        for (const auto& b : content->GetArray())
            if (const Value* block = member(b, kind)) ids.push_back(str(*block, "toolUseId"));
    }
    return ids;
}

const std::string kStart =
    "A conversation must start with a user message. Try again with a conversation that starts "
    "with a user message.";

// wire.130, wire.131
std::optional<Violation> tools(const Value& body) {
    const Value* tc = member(body, "toolConfig");
    const Value* tools = tc == nullptr ? nullptr : array(*tc, "tools");
    if (tools == nullptr) return std::nullopt;
    for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
        const Value* spec = member((*tools)[i], "toolSpec");
        if (spec == nullptr) continue;
        const std::string_view name = str(*spec, "name");
        if (!valid_tool_name(name)) {
            return broken("wire.130", "toolConfig.tools." + std::to_string(i) + ".toolSpec.name",
                          "1 validation error detected: Value '" + std::string(name) +
                              "' at 'toolConfig.tools." + std::to_string(i + 1) +
                              ".member.toolSpec.name' failed to satisfy constraint: Member must "
                              "satisfy regular expression pattern: [a-zA-Z0-9_-]+");
        }
        const Value* schema = member(*spec, "inputSchema");
        const Value* json = schema == nullptr ? nullptr : member(*schema, "json");
        if (json != nullptr && schema_type(json) != "object") {
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
std::optional<Violation> thinking_first(const Value& body, const Value& messages) {
    const Value* extra = member(body, "additionalModelRequestFields");
    const Value* thinking = extra == nullptr ? nullptr : member(*extra, "thinking");
    if (thinking == nullptr || str(*thinking, "type") != "enabled" || messages.Size() < 2)
        return std::nullopt;
    if (block_ids(messages[messages.Size() - 1], "toolResult").empty()) return std::nullopt;
    const rapidjson::SizeType a = messages.Size() - 2;
    const Value* content = array(messages[a], "content");
    std::string_view found = "text";
    if (content != nullptr && !content->Empty()) {
        const Value& first = (*content)[0];
        if (member(first, "reasoningContent") != nullptr) return std::nullopt;
        if (member(first, "toolUse") != nullptr) found = "tool_use";
    }
    const std::string at = "messages." + std::to_string(a) + ".content.0";
    return broken("wire.142", at,
                  "The model returned the following errors: " + thinking_first_text(at, found));
}

}  // namespace

std::optional<Violation> check_bedrock(const Value& body) {
    if (!body.IsObject()) return std::nullopt;
    if (auto e = tools(body)) return e;
    const Value* messages = array(body, "messages");
    if (messages == nullptr || messages->Empty()) {
        return member(body, "messages") == nullptr ? std::nullopt
                                                   : broken("wire.135", "messages", kStart);
    }
    int cache_points = 0;
    bool tool_blocks = false;
    if (const Value* tc = member(body, "toolConfig")) {
        if (const Value* tools = array(*tc, "tools"))
            for (const auto& t : tools->GetArray()) cache_points += is_cache_point(t) ? 1 : 0;
    }
    if (const Value* system = array(body, "system")) {
        for (rapidjson::SizeType i = 0; i < system->Size(); ++i) {
            const Value& b = (*system)[i];
            cache_points += is_cache_point(b) ? 1 : 0;
            const Value* text = member(b, "text");
            if (text != nullptr && text->IsString() && !has_non_whitespace(str(b, "text"))) {
                return broken("wire.133", "system." + std::to_string(i),
                              "The text field in the SystemContentBlock object at system." +
                                  std::to_string(i) +
                                  " is blank. Add text to the text field, and try again.");
            }
        }
    }
    std::string_view prev_role;
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const Value& m = (*messages)[i];
        const std::string at = "messages." + std::to_string(i);
        const std::string_view role = str(m, "role");
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
        const Value* content = array(m, "content");
        if (content == nullptr || content->Empty()) {
            return broken("wire.137", at + ".content",
                          "The content field in the Message object at " + at +
                              " is empty. Add a ContentBlock object to the content field and try "
                              "again.");
        }
        for (rapidjson::SizeType k = 0; k < content->Size(); ++k) {
            const Value& b = (*content)[k];
            cache_points += is_cache_point(b) ? 1 : 0;
            tool_blocks = tool_blocks || member(b, "toolUse") != nullptr ||
                          member(b, "toolResult") != nullptr;
            const Value* text = member(b, "text");
            if (text != nullptr && text->IsString() && !has_non_whitespace(str(b, "text"))) {
                const std::string where = at + ".content." + std::to_string(k);
                return broken("wire.138", where,
                              "The text field in the ContentBlock object at " + where +
                                  " is blank. Add text to the text field, and try again.");
            }
        }
        if (role == "user") {
            const auto results = block_ids(m, "toolResult");
            if (results.empty()) continue;
            const auto uses = i > 0 ? block_ids((*messages)[i - 1], "toolUse")
                                    : std::vector<std::string_view>{};
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
            std::set<std::string_view> answered;
            if (i + 1 < messages->Size())
                for (auto id : block_ids((*messages)[i + 1], "toolResult")) answered.insert(id);
            std::string missing;
            for (const auto id : block_ids(m, "toolUse"))
                if (answered.count(id) == 0) missing += (missing.empty() ? "" : ", ") + std::string(id);
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
    if (tool_blocks && member(body, "toolConfig") == nullptr) {
        return broken("wire.141", "toolConfig",
                      "The toolConfig field must be defined when using toolUse and toolResult "
                      "content blocks.");
    }
    return thinking_first(body, *messages);
}

}  // namespace nucleo::contract::internal
