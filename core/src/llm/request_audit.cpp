#include "llm/request_audit.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/log_internal.hpp"
#include "conversation/utf8_check.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/thinking.hpp"
#include "nucleo/wire/contract.hpp"

namespace nucleo::internal {
namespace {

thread_local bool read_whole_body = false;

bool user_first_family(contract::WireFamily f) {
    return f == contract::WireFamily::kAnthropicMessages ||
           f == contract::WireFamily::kBedrockConverse;
}

}  // namespace

void check_first_turn(const ProviderConfig& config, const ProviderCapabilities& caps,
                      const ConversationContext& conversation) {
    const contract::WireFamily family = contract::wire_family_from_name(caps.wire_family);
    const auto& messages = conversation.messages();
    if (!user_first_family(family) || messages.empty() || messages.front().outgoing()) return;
    const Message& first = messages.front();
    const std::string block =
        first.blocks.empty()
            ? std::string("no block")
            : "block 0 (" + std::string(block_type_name(first.blocks.front())) + ")";
    throw Error(ErrorKind::kInvalidArgument,
                "conversation '" + conversation.conversation_id() + "': wire.170: message '" +
                    first.id + "', " + block + ", is the model's and comes first, but provider '" +
                    config.name + "' (" + std::string(contract::wire_family_name(family)) +
                    ") takes a conversation that starts with the user's turn; add a user message "
                    "before it; nothing was sent");
}

namespace {
/// Whether `key` is reported for the first time in this process: the log-once of the call's
/// corrections (a bounded set, cleared when full, so a long-lived host may report one again).
bool first_report(std::string key) {
    static std::mutex mutex;
    static std::set<std::string> reported;
    std::lock_guard<std::mutex> lock(mutex);
    if (reported.size() > 4096) reported.clear();
    return reported.insert(std::move(key)).second;
}
}  // namespace

bool thinking_for_call(const ProviderConfig& config, const ProviderCapabilities& caps,
                       const ConversationContext& conversation, bool thinking) {
    if (!thinking || !user_first_family(contract::wire_family_from_name(caps.wire_family)))
        return thinking;
    const auto& messages = conversation.messages();
    // The wire's final user turn: the trailing run of outgoing messages, in a tool loop when one
    // of them carries a tool result; the assistant turn before it is the run of incoming ones.
    std::size_t end = messages.size();
    bool loop = false;
    while (end > 0 && messages[end - 1].outgoing()) {
        for (const ContentBlock& b : messages[end - 1].blocks)
            loop = loop || b.is<ToolResultBlock>();
        --end;
    }
    if (!loop || end == 0) return thinking;
    std::size_t first = end;
    while (first > 0 && messages[first - 1].incoming()) --first;
    const Message& turn = messages[first];
    if (!turn.blocks.empty() && (turn.blocks.front().is<ThinkingBlock>() ||
                                 turn.blocks.front().is<RedactedThinkingBlock>())) {
        return thinking;
    }
    if (first_report("wire.171\x1f" + config.name + '\x1f' + conversation.conversation_id())) {
        NUCLEO_LOG_INFO(
            "conversation '{}': wire.171: the call to provider '{}' goes without thinking: the "
            "tool loop's assistant turn (message '{}') begins with {}, not a thinking block, "
            "which the provider refuses with thinking on (wire.113)",
            conversation.conversation_id(), config.name, turn.id,
            turn.blocks.empty() ? "nothing" : block_type_name(turn.blocks.front()));
    }
    return false;
}

bool reasoning_off_for_tools(const ProviderConfig& config, const ModelSpec& model, Depth depth,
                             std::size_t tool_definitions) {
    if (!model.refuses_tools_with_reasoning || tool_definitions == 0) return false;
    const ThinkingRequest asked = thinking_request(model, depth);
    if (asked.effort == "none" || (asked.effort.empty() && !model.thinks_at(depth))) return false;
    if (!model.thinking.accepts_effort("none")) {
        throw Error(
            ErrorKind::kInvalidArgument,
            "model \"" + model.id +
                "\" takes function tools only without reasoning (its catalog record: " +
                "refuses: [tools_with_reasoning]) and has no \"none\" effort, and this call "
                "carries " +
                std::to_string(tool_definitions) + " tool definition(s) at depth " +
                to_string(depth) +
                ": call it without tools, or choose a model that takes them; nothing was sent");
    }
    if (first_report("catalog.6\x1f" + config.name + '\x1f' + model.id)) {
        NUCLEO_LOG_WARN(
            "model '{}' on provider '{}': calls with function tools go with reasoning effort "
            "\"none\" "
            "(depth {} asks \"{}\"): the model takes function tools only without reasoning "
            "(catalog.6)",
            model.id, config.name, to_string(depth),
            asked.effort.empty() ? model.thinking.default_effort : asked.effort);
    }
    return true;
}

std::string_view provider_blocks_kept(const ProviderCapabilities& caps) {
    return caps.provider_blocks ? std::string_view(caps.wire_family) : std::string_view();
}

std::size_t provider_blocks_left_out(const ProviderConfig& config, const ProviderCapabilities& caps,
                                     const ConversationContext& conversation) {
    const std::string_view kept = provider_blocks_kept(caps);
    std::size_t count = 0;
    std::set<std::string> kinds;
    for (const Message& m : conversation.messages()) {
        for (const ContentBlock& b : m.blocks) {
            const auto* p = b.get_if<ProviderBlock>();
            if (p == nullptr || p->wire_family == kept) continue;
            ++count;
            kinds.insert(p->type + " (" + p->wire_family + ")");
        }
    }
    if (count == 0) return 0;
    std::string names;
    for (const std::string& k : kinds) names += (names.empty() ? "" : ", ") + k;
    if (first_report("answers.110\x1f" + config.name + '\x1f' + conversation.conversation_id() +
                     '\x1f' + names)) {
        NUCLEO_LOG_WARN(
            "conversation '{}': answers.110: {} answer block(s) of another provider's wire "
            "format left out of the request to provider '{}' ({}), which cannot take "
            "them: {}; they stay in the conversation",
            conversation.conversation_id(), count, config.name,
            caps.wire_family.empty() ? config.plugin : caps.wire_family, names);
    }
    return count;
}

std::optional<std::string> diagnosed_previous_answer(const ModelSpec& model,
                                                     const ConversationContext& conversation) {
    if (!model.cache_diagnostics) return std::nullopt;
    const auto& messages = conversation.messages();
    for (auto it = messages.rbegin(); it != messages.rend(); ++it)
        if (it->incoming() && !it->provider_message_id.empty()) return it->provider_message_id;
    return std::string();
}

bool last_audit_read_whole() noexcept {
    return read_whole_body;
}

void audit_encoded_request(const ProviderConfig& config, const ProviderCapabilities& caps,
                           std::string_view path, const HttpRequest& http,
                           const AuditedCall& call) {
    const contract::WireFamily family = contract::wire_family_from_name(caps.wire_family);
    contract::CallPlan plan;
    if (call.prepared != nullptr) {
        plan.breakpoints = call.prepared->cache_plan.breakpoints();
        // wire.161: the text blocks of the system content are what every family carries as
        // text; JSON and skill blocks are rendered by the plugin and not compared byte for byte.
        for (const ContentBlock& b : call.prepared->system_blocks) {
            if (const auto* t = b.get_if<TextBlock>()) plan.system_texts.push_back(t->text);
        }
    }
    plan.max_tokens = call.max_tokens;
    if (call.body_limit > 0) plan.max_body_bytes = call.body_limit;
    contract::OutgoingRequest request;
    request.method = http.method;
    request.path = path;
    request.headers = &http.headers;
    if (call.split != nullptr && !http.body.contiguous()) {
        request.body_in_pieces = true;  // caching.115: the body is the split's pieces, not joined
    } else {
        request.body = http.body.view();
        request.readable = http.body.readable();  // wire.172
    }
    request.parsed = call.parsed_body;
    read_whole_body = true;
    const auto violation =
        call.split != nullptr
            ? contract::audit_split_request(family, request, *call.split, plan, &read_whole_body)
            : contract::audit_request(family, request, plan);
    if (!violation) return;
    // conversation.109: the plugin is blamed only for what it made of valid input. A prepared
    // conversation holding text that is not UTF-8 (which conversation.106 and conversation.107
    // keep out) is the input's fault, named where it is; walked only once the audit refused.
    if (call.prepared != nullptr) {
        if (const std::optional<Utf8Fault> fault = find_invalid_utf8(*call.prepared))
            throw Error(ErrorKind::kInvalidArgument,
                        "provider '" + config.name + "' (plugin '" + config.plugin +
                            "'): the conversation handed to the plugin is not valid UTF-8 at " +
                            fault->where + " byte " + std::to_string(fault->at) +
                            ", so its encoded request breaks " + violation->line() +
                            "; nothing was sent: the conversation's text is at fault, not the "
                            "plugin");
    }
    throw Error(ErrorKind::kPlugin,
                "provider '" + config.name + "' (plugin '" + config.plugin + "', wire family " +
                    std::string(contract::wire_family_name(family)) +
                    "): the encoded request breaks " + violation->line() +
                    "; nothing was sent: the plugin's encode is at fault, update or replace it");
}

}  // namespace nucleo::internal
