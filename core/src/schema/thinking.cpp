#include "nucleo/thinking.hpp"

namespace nucleo {

bool thinking_active(const ModelSpec& model, Depth depth) {
    return depth != Depth::kImmediate && model.thinking_budget_for(depth) > 0;
}

std::int64_t reasoning_reserved(const ModelSpec& model, Depth depth) {
    return thinking_active(model, depth) ? model.thinking_budget_for(depth) : 0;
}

}  // namespace nucleo
