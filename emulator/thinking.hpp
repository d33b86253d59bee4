// How a request asks the emulator to think, read the same way for Anthropic Messages and Bedrock
// Converse (wire.190, wire.197, wire.198): the form, the effort and the display decide the
// thinking block of the answer and the tokens it spends.
#pragma once

#include <string>

#include "catalog.hpp"
#include "json.hpp"
#include "reply.hpp"

namespace nucleo::emulator {

/// A request's thinking fields, wherever its dialect puts them: Anthropic `thinking` and
/// `output_config.effort`; Converse `additionalModelRequestFields.thinking` and
/// `outputConfig.effort` (else `additionalModelRequestFields.output_config.effort`).
struct ThinkingAsk {
    const json::Value* thinking = nullptr;  ///< the thinking object; nullptr when absent or null
    std::string effort;                     ///< "" when none is sent
};

/// Sets the thinking of `in`: `enabled` thinks with a shown text; `adaptive` spends the tokens of
/// the effort (wire.190), the record's `thinking.default_effort` when none is sent, else high;
/// with no thinking object at all, a model whose record says `thinking.always` thinks
/// adaptively at that default effort all the same (wire.198). `rules` is the model's record, or
/// nullptr when the catalog has none.
void apply_thinking(const ThinkingAsk& ask, const contract::ModelRules* rules,
                    const ModelCatalog::Thinking& traits, ReplyInput& in);

}  // namespace nucleo::emulator
