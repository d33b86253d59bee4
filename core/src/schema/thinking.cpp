#include "nucleo/thinking.hpp"

namespace nucleo {

bool thinking_active(const ModelSpec& model, Depth depth) {
    return model.thinks_at(depth);
}

std::int64_t reasoning_reserved(const ModelSpec& model, Depth depth) {
    return thinking_active(model, depth) ? model.thinking_budget_for(depth) : 0;
}

ThinkingRequest thinking_request(const ModelSpec& model, Depth depth) {
    ThinkingRequest r;
    const DepthThinking d = model.thinking_at(depth);
    switch (d.kind) {
        case DepthThinking::Kind::kNone:
            break;
        case DepthThinking::Kind::kDisabled:
            r.form = "disabled";
            break;
        case DepthThinking::Kind::kBetweenTools:
            r.form = "between_tools";
            r.effort = d.effort;
            break;
        case DepthThinking::Kind::kBudget:
            r.form = "enabled";
            break;
        case DepthThinking::Kind::kEffort:
            // Anthropic's adaptive thinking takes the effort beside it; a model without thinking
            // forms (OpenAI, Nova) takes the effort alone.
            if (model.thinking.accepts(ThinkingForm::kAdaptive)) r.form = "adaptive";
            r.effort = d.effort;
            break;
    }
    return r;
}

}  // namespace nucleo
