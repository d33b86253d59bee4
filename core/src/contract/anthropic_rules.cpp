// The Anthropic Messages rule book (wire.101-wire.114), in the order the API reports them:
// tools, cache_control, system, then each message.
#include <set>
#include <string>
#include <vector>

#include "contract/contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

bool marked(const Value& v) {
    const Value* cc = member(v, "cache_control");
    return cc != nullptr && !cc->IsNull();
}

/// The cache_control marks in the API's processing order (tools, system, messages, with the
/// blocks nested in a tool_result), each with its TTL ("5m" when none is named).
std::vector<std::string_view> cache_marks(const Value& body) {
    std::vector<std::string_view> ttls;
    const auto one = [&ttls](const Value& b) {
        if (marked(b)) ttls.push_back(str(*member(b, "cache_control"), "ttl", "5m"));
    };
    const auto blocks = [&](const Value* arr) {
        if (arr == nullptr) return;
        for (const auto& b : arr->GetArray()) {
            one(b);
            if (str(b, "type") == "tool_result") {
                if (const Value* inner = array(b, "content"))
                    for (const auto& c : inner->GetArray()) one(c);
            }
        }
    };
    blocks(array(body, "tools"));
    blocks(array(body, "system"));
    if (const Value* messages = array(body, "messages"))
        for (const auto& m : messages->GetArray()) blocks(array(m, "content"));
    return ttls;
}

// wire.101, wire.102
std::optional<Violation> tools(const Value& body) {
    const Value* tools = array(body, "tools");
    if (tools == nullptr) return std::nullopt;
    for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
        const Value& t = (*tools)[i];
        if (str(t, "type", "custom") != "custom") continue;  // server tools carry no schema
        const std::string at = "tools." + std::to_string(i) + ".custom.";
        if (!valid_tool_name(str(t, "name"))) {
            return broken("wire.101", at + "name",
                          at + "name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
        }
        const Value* schema = member(t, "input_schema");
        if (schema != nullptr && schema_type(schema) != "object") {
            return broken("wire.102", at + "input_schema.type",
                          at + "input_schema.type: Input should be 'object'");
        }
    }
    return std::nullopt;
}

// wire.103, wire.104
std::optional<Violation> cache_control(const Value& body) {
    const auto ttls = cache_marks(body);
    if (ttls.size() > 4) {
        return broken("wire.103", "cache_control",
                      "A maximum of 4 blocks with cache_control may be provided. Found " +
                          std::to_string(ttls.size()) + ".");
    }
    bool short_seen = false;
    for (const auto ttl : ttls) {
        if (ttl == "1h" && short_seen) {
            return broken("wire.104", "cache_control",
                          "a ttl='1h' cache_control block must not come after a ttl='5m' "
                          "cache_control block. Note that blocks are processed in the following "
                          "order: `tools`, `system`, `messages`.");
        }
        short_seen = short_seen || ttl != "1h";
    }
    return std::nullopt;
}

// wire.105
std::optional<Violation> system(const Value& body) {
    const Value* system = array(body, "system");
    if (system == nullptr) return std::nullopt;
    for (rapidjson::SizeType i = 0; i < system->Size(); ++i) {
        const Value& b = (*system)[i];
        if (str(b, "type") != "text") continue;
        const std::string_view text = str(b, "text");
        const std::string at = "system." + std::to_string(i);
        if (text.empty()) return broken("wire.105", at, "system: text content blocks must be non-empty");
        if (!has_non_whitespace(text)) {
            return broken("wire.105", at,
                          "system: text content blocks must contain non-whitespace text");
        }
    }
    return std::nullopt;
}

std::vector<std::string_view> tool_use_ids(const Value& message) {
    std::vector<std::string_view> ids;
    if (const Value* content = array(message, "content")) {
        for (const auto& b : content->GetArray())
            if (str(b, "type") == "tool_use") ids.push_back(str(b, "id"));
    }
    return ids;
}

// wire.111: a tool_result answers a tool_use of the message just before it.
std::optional<Violation> orphan_results(const Value& messages, rapidjson::SizeType i) {
    const Value* content = array(messages[i], "content");
    if (content == nullptr) return std::nullopt;
    std::set<std::string_view> known;
    if (i > 0)
        for (auto id : tool_use_ids(messages[i - 1])) known.insert(id);
    for (rapidjson::SizeType k = 0; k < content->Size(); ++k) {
        const Value& b = (*content)[k];
        if (str(b, "type") != "tool_result") continue;
        const std::string_view id = str(b, "tool_use_id");
        if (known.count(id) == 0) {
            const std::string at = "messages." + std::to_string(i) + ".content." + std::to_string(k);
            return broken("wire.111", at,
                          at + ": unexpected `tool_use_id` found in `tool_result` blocks: " +
                              std::string(id) +
                              ". Each `tool_result` block must have a corresponding `tool_use` "
                              "block in the previous message.");
        }
    }
    return std::nullopt;
}

// wire.112: every tool_use is answered by a tool_result at the start of the next message.
std::optional<Violation> unanswered_uses(const Value& messages, rapidjson::SizeType i) {
    const auto uses = tool_use_ids(messages[i]);
    if (uses.empty()) return std::nullopt;
    std::set<std::string_view> answered;
    std::set<std::string_view> leading;
    if (i + 1 < messages.Size()) {
        if (const Value* next = array(messages[i + 1], "content")) {
            bool at_start = true;
            for (const auto& b : next->GetArray()) {
                const bool result = str(b, "type") == "tool_result";
                at_start = at_start && result;
                if (!result) continue;
                answered.insert(str(b, "tool_use_id"));
                if (at_start) leading.insert(str(b, "tool_use_id"));
            }
        }
    }
    std::string missing;
    std::size_t not_leading = 0;
    for (const auto id : uses) {
        if (answered.count(id) == 0) missing += (missing.empty() ? "" : ", ") + std::string(id);
        if (leading.count(id) == 0) ++not_leading;
    }
    if (!missing.empty()) {
        const std::string at = "messages." + std::to_string(i);
        return broken("wire.112", at,
                      at + ": `tool_use` ids were found without `tool_result` blocks immediately "
                           "after: " +
                          missing +
                          ". Each `tool_use` block must have a corresponding `tool_result` block "
                          "in the next message.");
    }
    if (not_leading > 0) {
        const std::string at = "messages." + std::to_string(i + 1);
        return broken("wire.112", at,
                      at + ": Did not find " + std::to_string(not_leading) +
                          " `tool_result` block(s) at the beginning of this message. Messages "
                          "following `tool_use` blocks must begin with a matching number of "
                          "`tool_result` blocks.");
    }
    return std::nullopt;
}

// wire.106-wire.112
std::optional<Violation> messages(const Value& messages) {
    const rapidjson::SizeType n = messages.Size();
    std::string_view prev_role;
    for (rapidjson::SizeType i = 0; i < n; ++i) {
        const Value& m = messages[i];
        const std::string at = "messages." + std::to_string(i);
        const std::string_view role = str(m, "role");
        if (role != "user" && role != "assistant")
            return broken("wire.106", at + ".role", at + ".role: Input should be 'user' or 'assistant'");
        if (i == 0 && role != "user")
            return broken("wire.107", at, R"(messages: first message must use the "user" role)");
        if (role == prev_role) {
            return broken("wire.108", at,
                          R"(messages: roles must alternate between "user" and "assistant", but found multiple ")" +
                              std::string(role) + R"(" roles in a row)");
        }
        prev_role = role;
        const Value* content = member(m, "content");
        if (content == nullptr) continue;  // a required field, not a rule of the book
        const bool final_assistant = role == "assistant" && i + 1 == n;
        const bool empty = (content->IsString() && content->GetStringLength() == 0) ||
                           (content->IsArray() && content->Empty());
        if (empty && !final_assistant) {
            return broken("wire.109", at,
                          at + ": all messages must have non-empty content except for the "
                               "optional final assistant message");
        }
        if (!content->IsArray()) continue;
        for (rapidjson::SizeType k = 0; k < content->Size(); ++k) {
            const Value& b = (*content)[k];
            if (str(b, "type") != "text") continue;
            const std::string_view text = str(b, "text");
            const std::string where = at + ".content." + std::to_string(k);
            if (text.empty()) return broken("wire.110", where, "messages: text content blocks must be non-empty");
            if (!has_non_whitespace(text)) {
                return broken("wire.110", where,
                              "messages: text content blocks must contain non-whitespace text");
            }
        }
        if (role == "user") {
            if (auto e = orphan_results(messages, i)) return e;
        } else if (auto e = unanswered_uses(messages, i)) {
            return e;
        }
    }
    return std::nullopt;
}

// wire.113: with thinking on, the assistant turn answered by the final user turn's tool results
// begins with a thinking (or redacted_thinking) block.
std::optional<Violation> thinking_first(const Value& body) {
    const Value* thinking = member(body, "thinking");
    if (thinking == nullptr || str(*thinking, "type") != "enabled") return std::nullopt;
    const Value* messages = array(body, "messages");
    if (messages == nullptr || messages->Size() < 2) return std::nullopt;
    const Value& last = (*messages)[messages->Size() - 1];
    const Value* results = array(last, "content");
    if (str(last, "role") != "user" || results == nullptr) return std::nullopt;
    bool loop = false;
    for (const auto& b : results->GetArray()) loop = loop || str(b, "type") == "tool_result";
    if (!loop) return std::nullopt;
    const rapidjson::SizeType a = messages->Size() - 2;
    const Value& assistant = (*messages)[a];
    const Value* content = member(assistant, "content");
    std::string_view found = "text";
    if (content != nullptr && content->IsArray() && !content->Empty())
        found = str((*content)[0], "type");
    if (found == "thinking" || found == "redacted_thinking") return std::nullopt;
    const std::string at = "messages." + std::to_string(a) + ".content.0";
    return broken("wire.113", at, thinking_first_text(at, found));
}

// wire.114
std::optional<Violation> thinking_budget(const Value& body) {
    const Value* thinking = member(body, "thinking");
    const Value* max = member(body, "max_tokens");
    if (thinking == nullptr || max == nullptr || !max->IsInt64() ||
        str(*thinking, "type") != "enabled")
        return std::nullopt;
    const Value* budget = member(*thinking, "budget_tokens");
    if (budget == nullptr || !budget->IsInt64() || budget->GetInt64() < max->GetInt64())
        return std::nullopt;
    return broken("wire.114", "thinking.budget_tokens",
                  "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                  "documentation at https://docs.claude.com/en/docs/build-with-claude/"
                  "extended-thinking#max-tokens-and-context-window-size");
}

}  // namespace

std::string thinking_first_text(const std::string& at, std::string_view found) {
    return at + ".type: Expected `thinking` or `redacted_thinking`, but found `" +
           std::string(found) +
           "`. When `thinking` is enabled, a final `assistant` message must start with a thinking "
           "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
           "recommend you include thinking blocks from previous turns. To avoid this "
           "requirement, disable `thinking`. Please consult our documentation at "
           "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";
}

std::optional<Violation> check_anthropic(const Value& body) {
    if (!body.IsObject()) return std::nullopt;
    if (auto e = thinking_budget(body)) return e;
    if (auto e = tools(body)) return e;
    if (auto e = cache_control(body)) return e;
    if (auto e = system(body)) return e;
    if (const Value* m = array(body, "messages")) {
        if (auto e = messages(*m)) return e;
    }
    return thinking_first(body);
}

}  // namespace nucleo::contract::internal
