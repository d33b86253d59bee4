#include "thinking.hpp"

namespace nucleo::emulator {

void apply_thinking(const ThinkingAsk& ask, const contract::ModelRules* rules,
                    const ModelCatalog::Thinking& traits, ReplyInput& in) {
    // wire.190: high is the API's default effort; a record's default_effort replaces it.
    const std::string fallback = traits.default_effort.empty() ? "high" : traits.default_effort;
    const std::string effort = ask.effort.empty() ? fallback : ask.effort;
    if (ask.thinking == nullptr || !ask.thinking->IsObject()) {
        // wire.198: a model that always thinks thinks when it is not asked to, at its default.
        if (rules != nullptr && rules->always_thinks)
            in.adaptive_thinking_tokens = adaptive_thinking_tokens(effort);
        return;
    }
    const std::string type = json::string_member(*ask.thinking, "type");
    in.thinking = type == "enabled";
    if (type == "adaptive") {
        in.adaptive_thinking_tokens = adaptive_thinking_tokens(effort);
        in.thinking_summarized = json::string_member(*ask.thinking, "display") == "summarized";
    }
}

}  // namespace nucleo::emulator
