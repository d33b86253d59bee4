// Whether a call thinks natively: seed 000 ThinkingMode.thinkingActive(model, depth).
#pragma once

#include <cstdint>

#include "nucleo/catalog.hpp"

namespace nucleo {

/// Seed 000 "Schema stripping": ThinkingMode.thinkingActive(model, depth), "the same predicate
/// that gates the request-time thinking config - so the schema strip and the request agree on
/// whether a thinking block is coming back". True when the depth is not kImmediate and the
/// model's catalog entry books a positive thinking budget for that depth. Every caller (the
/// response strip, the provider request, the output reserve) asks this one function.
[[nodiscard]] bool thinking_active(const ModelSpec& model, Depth depth);

/// Seed 000 "Output Budget Resolution": the reasoning headroom a call books
/// (ThinkingMode.reasoningReserved times spec.getThinkingBudget(depth)) — the thinking budget
/// when thinking_active(model, depth), else 0. Added to the resolved output by the output reserve.
[[nodiscard]] std::int64_t reasoning_reserved(const ModelSpec& model, Depth depth);

}  // namespace nucleo
