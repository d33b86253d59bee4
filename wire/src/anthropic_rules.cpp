// The Anthropic Messages rule book (wire.101-wire.114), in the order the API reports them:
// tools, cache_control, system, then each message. Over the body's Shape (wire.164).
#include <algorithm>
#include <string>
#include <vector>

#include "contract_internal.hpp"

namespace nucleo::contract::internal {
namespace {

// wire.101, wire.102
std::optional<Violation> tools(const Shape& body) {
    for (std::size_t i = 0; i < body.tools.size(); ++i) {
        const Tool& t = body.tools[i];
        if (t.type_is_string && t.type != "custom") continue;  // server tools carry no schema
        const std::string at = "tools." + std::to_string(i) + ".custom.";
        if (!valid_tool_name(t.name)) {
            return broken("wire.101", at + "name",
                          at + "name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
        }
        if (t.schema && t.schema_type != "object") {
            return broken("wire.102", at + "input_schema.type",
                          at + "input_schema.type: Input should be 'object'");
        }
    }
    return std::nullopt;
}

}  // namespace

template <class B>
void anthropic_mark_order(const Shape& body, const std::vector<B>& list, MarkOrder& order) {
    for (const B& b : list) {
        if (b.mark_set) order.add(b.ttl_1h);
        if (b.type == "tool_result")
            for (std::uint32_t k = b.inner_begin; k < b.inner_end; ++k)
                order.add(body.inner_1h[k] != 0);
    }
}
template void anthropic_mark_order(const Shape&, const std::vector<Block>&, MarkOrder&);
template void anthropic_mark_order(const Shape&, const std::vector<Tool>&, MarkOrder&);

std::optional<Violation> anthropic_cache_control(const MarkOrder& blocks,
                                                 const Block& request_mark) {
    MarkOrder all = blocks;
    if (request_mark.mark_set) all.add(request_mark.ttl_1h);
    if (all.n > 4) {
        return broken(blocks.n > 4 ? "wire.103" : "wire.165", "cache_control",
                      "A maximum of 4 blocks with cache_control may be provided. Found " +
                          std::to_string(all.n) + ".");
    }
    if (all.long_after_short) {
        return broken(blocks.long_after_short ? "wire.104" : "wire.165", "cache_control",
                      "a ttl='1h' cache_control block must not come after a ttl='5m' "
                      "cache_control block. Note that blocks are processed in the following "
                      "order: `tools`, `system`, `messages`.");
    }
    return std::nullopt;
}

namespace {

// wire.103, wire.104, wire.165: the marks in the API's processing order (tools, system,
// messages), then the request-level mark of automatic caching, which lands on the last block.
// A breach only the request-level mark makes is reported as wire.165, with the API's text.
std::optional<Violation> cache_control(const Shape& body) {
    MarkOrder order;
    anthropic_mark_order(body, body.tools, order);
    anthropic_mark_order(body, body.system_blocks, order);
    anthropic_mark_order(body, body.blocks, order);
    return anthropic_cache_control(order, body.request_mark);
}

// wire.105
std::optional<Violation> system(const Shape& body) {
    for (std::size_t i = 0; i < body.system_blocks.size(); ++i) {
        const Block& b = body.system_blocks[i];
        if (b.type != "text") continue;
        const std::string at = "system." + std::to_string(i);
        if (b.text.empty()) return broken("wire.105", at, "system: text content blocks must be non-empty");
        if (!has_non_whitespace(b.text)) {
            return broken("wire.105", at,
                          "system: text content blocks must contain non-whitespace text");
        }
    }
    return std::nullopt;
}

/// The ids of the tool_use blocks of a message.
template <class F>
void each_use(const Shape& body, const Msg& m, F&& f) {
    for (const Block* b = body.begin(m); b != body.end(m); ++b)
        if (b->type == "tool_use") f(b->id);
}

/// wire.111 for one tool_result: it answers a tool_use of `prev` (none: the first message).
bool known_result(const Shape& ps, const Msg* prev, const Block& result) {
    bool known = false;
    if (prev != nullptr)
        each_use(ps, *prev,
                 [&](std::string_view id) { known = known || id == result.tool_use_id; });
    return known;
}

// wire.111: a tool_result answers a tool_use of the message just before it.
std::optional<Violation> orphan_results(const Shape& body, std::size_t i) {
    const Msg& m = body.messages[i];
    for (const Block* b = body.begin(m); b != body.end(m); ++b) {
        if (b->type != "tool_result") continue;
        if (!known_result(body, i > 0 ? &body.messages[i - 1] : nullptr, *b)) {
            const std::string at = "messages." + std::to_string(i) + ".content." + std::to_string(b - body.begin(m));
            return broken("wire.111", at,
                          at + ": unexpected `tool_use_id` found in `tool_result` blocks: " +
                              std::string(b->tool_use_id) +
                              ". Each `tool_result` block must have a corresponding `tool_use` "
                              "block in the previous message.");
        }
    }
    return std::nullopt;
}

bool has_use(const Shape& body, const Msg& m) {
    return std::any_of(body.begin(m), body.end(m),
                       [](const Block& b) { return b.type == "tool_use"; });
}

/// wire.112's two counts for `m`'s tool_use blocks against `next` (none: m is the last message):
/// the ids no tool_result of next answers, and how many are not answered in its leading run of
/// tool_result blocks. `missing` is filled only when given.
std::size_t unanswered(const Shape& body, const Msg& m, const Shape& ns, const Msg* next,
                       std::string* missing) {
    const Block* results = nullptr;
    const Block* results_end = nullptr;
    const Block* leading_end = nullptr;  // the run of tool_result blocks the next message begins with
    if (next != nullptr) {
        results = ns.begin(*next);
        results_end = ns.end(*next);
        leading_end = results;
        while (leading_end != results_end && leading_end->type == "tool_result") ++leading_end;
    }
    const auto answers = [](const Block* from, const Block* to, std::string_view id) {
        return std::any_of(from, to, [&](const Block& b) { return b.type == "tool_result" && b.tool_use_id == id; });
    };
    std::size_t broken_uses = 0;
    std::size_t not_leading = 0;
    for (const Block* b = body.begin(m); b != body.end(m); ++b) {
        if (b->type != "tool_use") continue;
        if (!answers(results, results_end, b->id)) {
            ++broken_uses;
            if (missing != nullptr) *missing += (missing->empty() ? "" : ", ") + std::string(b->id);
        }
        if (!answers(results, leading_end, b->id)) ++not_leading;
    }
    return broken_uses > 0 ? broken_uses : not_leading;
}

// wire.112: every tool_use is answered by a tool_result at the start of the next message. Runs
// for every assistant message of every audited request: it allocates nothing until it fails.
std::optional<Violation> unanswered_uses(const Shape& body, std::size_t i) {
    const Msg& m = body.messages[i];
    if (!has_use(body, m)) return std::nullopt;
    const Msg* next = i + 1 < body.messages.size() ? &body.messages[i + 1] : nullptr;
    if (unanswered(body, m, body, next, nullptr) == 0) return std::nullopt;
    std::string missing;
    const std::size_t not_leading = unanswered(body, m, body, next, &missing);
    if (!missing.empty()) {
        const std::string at = "messages." + std::to_string(i);
        return broken("wire.112", at,
                      at + ": `tool_use` ids were found without `tool_result` blocks immediately "
                           "after: " +
                          missing +
                          ". Each `tool_use` block must have a corresponding `tool_result` block "
                          "in the next message.");
    }
    const std::string at = "messages." + std::to_string(i + 1);
    return broken("wire.112", at,
                  at + ": Did not find " + std::to_string(not_leading) +
                      " `tool_result` block(s) at the beginning of this message. Messages "
                      "following `tool_use` blocks must begin with a matching number of "
                      "`tool_result` blocks.");
}

// wire.106-wire.112. The texts and places are built only for a violation: this loop runs over
// every message of every audited request.
std::optional<Violation> messages(const Shape& body) {
    const std::size_t n = body.messages.size();
    std::string_view prev_role;
    for (std::size_t i = 0; i < n; ++i) {
        const Msg& m = body.messages[i];
        const auto at = [i] { return "messages." + std::to_string(i); };
        const std::string_view role = m.role;
        if (role != "user" && role != "assistant")
            return broken("wire.106", at() + ".role", at() + ".role: Input should be 'user' or 'assistant'");
        if (i == 0 && role != "user")
            return broken("wire.107", at(), R"(messages: first message must use the "user" role)");
        if (role == prev_role) {
            return broken("wire.108", at(),
                          R"(messages: roles must alternate between "user" and "assistant", but found multiple ")" +
                              std::string(role) + R"(" roles in a row)");
        }
        prev_role = role;
        if (m.content == Kind::kAbsent) continue;  // a required field, not a rule of the book
        const bool final_assistant = role == "assistant" && i + 1 == n;
        if (m.content_empty && !final_assistant) {
            return broken("wire.109", at(),
                          at() + ": all messages must have non-empty content except for the "
                                 "optional final assistant message");
        }
        if (m.content != Kind::kArray) continue;
        bool results = false;
        for (const Block* b = body.begin(m); b != body.end(m); ++b) {
            results = results || b->type == "tool_result";
            if (b->type != "text") continue;
            if (!b->text.empty() && has_non_whitespace(b->text)) continue;
            const std::string where = at() + ".content." + std::to_string(b - body.begin(m));
            if (b->text.empty()) return broken("wire.110", where, "messages: text content blocks must be non-empty");
            return broken("wire.110", where, "messages: text content blocks must contain non-whitespace text");
        }
        if (role == "user") {
            if (!results) continue;
            if (auto e = orphan_results(body, i)) return e;
        } else if (auto e = unanswered_uses(body, i)) {
            return e;
        }
    }
    return std::nullopt;
}

/// wire.113 over the last message and the one before it: the type found where a thinking block
/// belongs when the rule is broken, else empty.
std::string_view thinking_missing(const Shape& as, const Msg& assistant, const Shape& ls,
                                  const Msg& last) {
    if (last.role != "user" || last.content != Kind::kArray) return {};
    bool loop = false;
    for (const Block* b = ls.begin(last); b != ls.end(last); ++b)
        loop = loop || b->type == "tool_result";
    if (!loop) return {};
    std::string_view found = "text";
    if (assistant.content == Kind::kArray && as.size(assistant) > 0)
        found = as.begin(assistant)->type;
    if (found == "thinking" || found == "redacted_thinking") return {};
    return found;
}

// wire.113: with thinking on, the assistant turn answered by the final user turn's tool results
// begins with a thinking (or redacted_thinking) block.
std::optional<Violation> thinking_first(const Shape& body) {
    if (!body.thinking_enabled || body.messages.size() < 2) return std::nullopt;
    const std::size_t a = body.messages.size() - 2;
    const std::string_view found =
        thinking_missing(body, body.messages[a], body, body.messages.back());
    if (found.empty()) return std::nullopt;
    const std::string at = "messages." + std::to_string(a) + ".content.0";
    return broken("wire.113", at, thinking_first_text(at, found));
}

// wire.114
std::optional<Violation> thinking_budget(const Shape& body) {
    if (!body.thinking_present || !body.max_tokens.is_int64 || !body.thinking_enabled) return std::nullopt;
    if (!body.budget_tokens.is_int64 || body.budget_tokens.value < body.max_tokens.value) return std::nullopt;
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

std::optional<Violation> check_anthropic(const Shape& body) {
    if (auto e = thinking_budget(body)) return e;
    if (auto e = tools(body)) return e;
    if (auto e = cache_control(body)) return e;
    if (auto e = system(body)) return e;
    if (auto e = messages(body)) return e;
    return thinking_first(body);
}

std::optional<Violation> anthropic_head(const Shape& body) {
    if (auto e = thinking_budget(body)) return e;
    if (auto e = tools(body)) return e;
    return system(body);
}

// wire.174: the predicates the audit of a split body composes (PieceRules); each says whether
// the rules above pass, never which text they would report.

bool anthropic_message_ok(const Shape& s, const Msg& m) {
    if (m.role != "user" && m.role != "assistant") return false;  // wire.106
    if (m.content == Kind::kAbsent) return true;
    if (m.content_empty)
        return false;  // wire.109, unless the final assistant message: not known here
    if (m.content != Kind::kArray) return true;
    return std::all_of(s.begin(m), s.end(m), [](const Block& b) {  // wire.110
        return b.type != "text" || (!b.text.empty() && has_non_whitespace(b.text));
    });
}

bool anthropic_first_ok(const Shape& s, const Msg& m) {
    // wire.107, and wire.111: a tool_result of the first message answers nothing.
    if (m.role != "user") return false;
    return m.content != Kind::kArray || std::none_of(s.begin(m), s.end(m), [](const Block& b) {
               return b.type == "tool_result";
           });
}

bool anthropic_pair_ok(const Shape& xs, const Msg& x, const Shape& ys, const Msg& y) {
    if (x.role == y.role) return false;                   // wire.108
    if (y.role == "user" && y.content == Kind::kArray) {  // wire.111
        for (const Block* b = ys.begin(y); b != ys.end(y); ++b)
            if (b->type == "tool_result" && !known_result(xs, &x, *b)) return false;
    }
    // wire.112
    return x.role != "assistant" || x.content != Kind::kArray || !has_use(xs, x) ||
           unanswered(xs, x, ys, &y, nullptr) == 0;
}

bool anthropic_last_ok(const Shape& s, const Msg& m) {
    return m.role != "assistant" || m.content != Kind::kArray || !has_use(s, m);  // wire.112
}

bool anthropic_thinking_ok(const Shape& as, const Msg& assistant, const Shape& ls,
                           const Msg& last) {
    return thinking_missing(as, assistant, ls, last).empty();
}

}  // namespace nucleo::contract::internal
