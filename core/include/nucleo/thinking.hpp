// Whether a call thinks natively (tools.21), and the reasoning headroom it books (budget.5).
#pragma once

#include <cstdint>

#include "nucleo/catalog.hpp"

namespace nucleo {

/// tools.21: the same predicate gates the request-time thinking config and the schema strip, so
/// the two agree on whether a thinking block is coming back. True when the depth is not kImmediate
/// and the model's catalog entry books a positive thinking budget for that depth. Every caller (the
/// response strip, the provider request, the output reserve) asks this one function.
[[nodiscard]] bool thinking_active(const ModelSpec& model, Depth depth);

/// budget.5: the reasoning headroom a call books — the thinking budget
/// when thinking_active(model, depth), else 0. Added to the resolved output by the output reserve.
[[nodiscard]] std::int64_t reasoning_reserved(const ModelSpec& model, Depth depth);

}  // namespace nucleo
