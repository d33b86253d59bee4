#include "cache_diagnostics.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "thinking_binding.hpp"

namespace nucleo::emulator {
namespace {

// The published DiagnosticsParam schema (anthropic-openapi.yml, BetaDiagnosticsParam):
// `previous_message_id` is a string of at most 256 characters, or null.
constexpr std::size_t kMaxIdCharacters = 256;

std::size_t utf8_characters(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

PrefixKey key_of(PrefixHasher& h) {
    return h.marks().at(h.mark());
}

/// A member's compact JSON, or a byte JSON never produces when it is absent: leaving out a
/// parameter and sending it as null are told apart, as sending it or not changes the request.
std::string member_or_absent(const json::Value& doc, const char* name) {
    const json::Value* m = json::member(doc, name);
    return m == nullptr ? std::string("\x01") : json::write(*m);
}

const char* type_name(MissReason r) {
    switch (r) {
        case MissReason::kModelChanged:
            return "model_changed";
        case MissReason::kToolsChanged:
            return "tools_changed";
        case MissReason::kSystemChanged:
            return "system_changed";
        case MissReason::kMessagesChanged:
            return "messages_changed";
        case MissReason::kPreviousMessageNotFound:
            return "previous_message_not_found";
        case MissReason::kUnavailable:
            return "unavailable";
        case MissReason::kNone:
            break;
    }
    return "";
}

}  // namespace

std::optional<std::string> check_diagnostics_param(const json::Value& doc) {
    const json::Value* d = json::member(doc, "diagnostics");
    // The SDK types the member `DiagnosticsParam | null`: null is taken, as leaving it out.
    if (d == nullptr || d->IsNull()) return std::nullopt;
    if (!d->IsObject()) return "diagnostics: Input should be a valid dictionary";
    for (const auto& m : d->GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (name != "previous_message_id") {
            return "diagnostics." + std::string(name) + ": Extra inputs are not permitted";
        }
    }
    const json::Value* id = json::member(*d, "previous_message_id");
    if (id == nullptr || id->IsNull()) return std::nullopt;
    if (!id->IsString()) return "diagnostics.previous_message_id: Input should be a valid string";
    if (utf8_characters(std::string_view(id->GetString(), id->GetStringLength())) >
        kMaxIdCharacters) {
        return "diagnostics.previous_message_id: String should have at most " +
               std::to_string(kMaxIdCharacters) + " characters";
    }
    return std::nullopt;
}

DiagnosticsAsk diagnostics_ask(const json::Value& doc) {
    DiagnosticsAsk ask;
    const json::Value* d = json::member(doc, "diagnostics");
    if (d == nullptr || !d->IsObject()) return ask;
    ask.requested = true;
    const json::Value* id = json::member(*d, "previous_message_id");
    if (id != nullptr && id->IsString())
        ask.previous = std::string(id->GetString(), id->GetStringLength());
    return ask;
}

Fingerprint fingerprint(const json::Value& doc) {
    Fingerprint fp;
    // `speed` left out or null is the standard speed, the API's default.
    const json::Value* speed = json::member(doc, "speed");
    fp.model = json::string_member(doc, "model") + "\x1f" +
               (speed == nullptr || speed->IsNull() ? std::string("standard")
                : speed->IsString()                 ? std::string(speed->GetString())
                                                    : json::write(*speed));
    PrefixHasher tools("diagnostics\x1ftools");
    PrefixHasher system("diagnostics\x1fsystem");
    std::optional<PrefixHasher> message;
    const auto end_message = [&] {
        if (message) fp.messages.push_back(key_of(*message));
    };
    const auto part = [&](PromptPart kind, std::size_t, std::string_view bytes) {
        switch (kind) {
            case PromptPart::kTool:
                tools.append(bytes);
                break;
            case PromptPart::kSystem:
                system.append(bytes);
                break;
            case PromptPart::kMessageRole:
                end_message();
                message.emplace("diagnostics\x1fmessage");
                message->append(bytes);
                break;
            case PromptPart::kMessageBlock:
                message->append(bytes);
                break;
        }
    };
    visit_canonical_prompt(BindingDialect::kAnthropic, doc, part);
    end_message();
    fp.tools = key_of(tools);
    fp.system = key_of(system);
    // CacheMissUnavailable: "other prompt-affecting parameters, such as `thinking` or
    // `tool_choice`"; `output_config` carries the effort, which shapes the thinking.
    PrefixHasher params("diagnostics\x1fparams");
    for (const char* name : {"thinking", "tool_choice", "output_config"}) {
        params.append(member_or_absent(doc, name));
        params.append("\x1f");
    }
    fp.params = key_of(params);
    return fp;
}

Diagnosis compare(const Fingerprint& previous, const Fingerprint& now) {
    // The canonical bytes of the previous request's messages from message `from` on.
    const auto messages_bytes = [&previous](std::size_t from) {
        std::size_t bytes = 0;
        for (std::size_t i = from; i < previous.messages.size(); ++i)
            bytes += previous.messages[i].bytes;
        return bytes;
    };
    const std::size_t after_tools = previous.system.bytes + messages_bytes(0);
    const std::size_t whole = previous.tools.bytes + after_tools;
    // The cache is per model, then its prefix runs tools, system, messages; a change of the
    // thinking or tool choice invalidates the messages' entries (Anthropic's prompt-caching
    // guide), so it is met before them.
    if (previous.model != now.model) return {MissReason::kModelChanged, tokens_for_bytes(whole)};
    if (previous.tools != now.tools) return {MissReason::kToolsChanged, tokens_for_bytes(whole)};
    if (previous.system != now.system)
        return {MissReason::kSystemChanged, tokens_for_bytes(after_tools)};
    if (previous.params != now.params) return {MissReason::kUnavailable, 0};
    // Appended messages are not a divergence: only an index both requests have can differ.
    const std::size_t common = std::min(previous.messages.size(), now.messages.size());
    for (std::size_t i = 0; i < common; ++i) {
        if (previous.messages[i] != now.messages[i])
            return {MissReason::kMessagesChanged, tokens_for_bytes(messages_bytes(i))};
    }
    return {};
}

std::string diagnostics_json(const Diagnosis& d) {
    if (d.reason == MissReason::kNone) return "null";
    std::string reason = R"({"type":")" + std::string(type_name(d.reason)) + "\"";
    if (d.reason != MissReason::kPreviousMessageNotFound && d.reason != MissReason::kUnavailable)
        reason += R"(,"cache_missed_input_tokens":)" + std::to_string(d.missed_tokens);
    return R"({"cache_miss_reason":)" + reason + "}}";
}

void FingerprintStore::set_capacity(std::size_t capacity) {
    std::lock_guard lock(mu_);
    capacity_ = capacity;
    while (entries_.size() > capacity_) {
        entries_.erase(oldest_first_.front());
        oldest_first_.pop_front();
    }
}

Diagnosis FingerprintStore::diagnose_and_store(const std::optional<std::string>& previous,
                                               const std::string& id, Fingerprint fp) {
    std::lock_guard lock(mu_);
    Diagnosis d;
    if (previous) {
        const auto it = entries_.find(*previous);
        d = it == entries_.end() ? Diagnosis{MissReason::kPreviousMessageNotFound, 0}
                                 : compare(it->second.fp, fp);
    }
    // The same id again (the same prompt) is stored anew: it becomes the newest.
    if (const auto it = entries_.find(id); it != entries_.end()) {
        oldest_first_.erase(it->second.age);
        entries_.erase(it);
    }
    oldest_first_.push_back(id);
    entries_.emplace(id, Entry{std::move(fp), std::prev(oldest_first_.end())});
    while (entries_.size() > capacity_) {
        entries_.erase(oldest_first_.front());
        oldest_first_.pop_front();
    }
    return d;
}

void FingerprintStore::clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
    oldest_first_.clear();
}

std::size_t FingerprintStore::size() {
    std::lock_guard lock(mu_);
    return entries_.size();
}

}  // namespace nucleo::emulator
