// Whether a call thinks natively (tools.21), and the reasoning headroom it books (budget.5).
#pragma once

#include <cstdint>
#include <string>

#include "nucleo/catalog.hpp"

namespace nucleo {

/// tools.21: the same predicate gates the request-time thinking config and the schema strip, so
/// the two agree on whether a thinking block is coming back. True when the model's record says the
/// call thinks at this depth (ModelSpec::thinks_at: a budget or an effort other than `none` is sent,
/// or the model always thinks). Every caller (the response strip, the provider request, the output
/// reserve) asks this one function.
[[nodiscard]] bool thinking_active(const ModelSpec& model, Depth depth);

/// budget.5: the reasoning headroom a call books — the depth's thinking budget (the manual budget,
/// or the tokens booked for adaptive thinking and for a model that always thinks) when
/// thinking_active(model, depth), else 0. Added to the resolved output by the output reserve, so
/// the thinking a model spends out of max_tokens never truncates the answer asked for.
[[nodiscard]] std::int64_t reasoning_reserved(const ModelSpec& model, Depth depth);

/// catalog.5: the thinking a call at `depth` sends, as the model's record maps that depth: the
/// form (`enabled`, `adaptive`, `between_tools`, `disabled`, or empty: no thinking parameter) and
/// the effort level (or empty). The provider request carries both (`thinking.form`,
/// `thinking.effort`); each dialect writes them in its provider's fields.
struct ThinkingRequest {
    std::string form;
    std::string effort;
};
[[nodiscard]] ThinkingRequest thinking_request(const ModelSpec& model, Depth depth);

}  // namespace nucleo
