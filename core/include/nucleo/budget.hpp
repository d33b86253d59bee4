// Output budget resolution: how much the next call may answer, and what it reserves.
//
// docs/spec/output-budget.md: resolve_output_budget() is the single source of truth for the
// output-token budget of the next LLM call, three declaration layers and no default (budget.1,
// budget.2), capped at the model's max output (budget.3); outputReserve(spec) adds the reasoning
// headroom and clamps at the ceiling, and the same number is both the rate-limiter reservation's
// output part and the wire max_tokens. On truncation the SENT message's budget is raised to the
// ceiling and the call retried once; a call already at the ceiling fails as uncorrectable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {

/// The wired binding's declarations: layer 3 of the chain (budget.1: a job that attached its
/// priced binding declared the output in its model requirement), and the last layer of the depth
/// resolution.
struct BindingDeclarations {
    std::optional<OutputDeclaration> output;
    std::optional<Depth> depth;
};

/// budget.1: 1. the last outgoing message's requested_output_tokens; 2. the
/// conversation's OutputDeclaration, translated through `spec` (a rung via
/// ModelSpec::output_budget_for, a count as is); 3. the binding's declaration. Capped at
/// spec.max_output_tokens ("a budget above what the model can emit is not a budget"). Nothing
/// declared anywhere throws UncorrectableLLMException naming the conversation (the seat): "that is
/// a bug to surface, never a number to invent".
std::int64_t resolve_output_budget(const ConversationContext& conversation, const ModelSpec& spec,
                                   const BindingDeclarations& binding = {});

/// budget.4: the conversation's depth, else the binding's, else the refusal
/// (UncorrectableLLMException naming the conversation).
Depth resolve_depth(const ConversationContext& conversation, const BindingDeclarations& binding = {});

/// budget.5: the resolved output plus the reasoning headroom the call books
/// (reasoning_reserved(spec, depth)), clamped at spec.max_output_tokens "exactly as the Anthropic
/// wire clamps max_tokens". The wire max_tokens and the rate-limiter reservation's output part.
std::int64_t output_reserve(const ConversationContext& conversation, const ModelSpec& spec,
                            const BindingDeclarations& binding = {});

/// budget.7: the retry signal, carrying the previous and the new budget. Thrown
/// after the sent message's budget was raised; the caller retries the call once.
class OutputTruncationRetryException : public Error {
public:
    OutputTruncationRetryException(std::int64_t previous_budget, std::int64_t new_budget);
    [[nodiscard]] std::int64_t previous_budget() const noexcept { return previous_; }
    [[nodiscard]] std::int64_t new_budget() const noexcept { return new_; }

private:
    std::int64_t previous_;
    std::int64_t new_;
};

/// The truncation escalation (budget.7, budget.8): a call that stopped at max_tokens after being
/// sent with `sent_budget` raises the SENT message's (the last outgoing message's)
/// requested_output_tokens to spec.max_output_tokens and throws OutputTruncationRetryException.
/// When `sent_budget` is already at the ceiling there is nowhere to grow: that case is the model's
/// own limit refusing the answer, so it surfaces as UncorrectableRuntimeLLMException instead.
/// Throws kInvalidArgument when the conversation has no outgoing message.
[[noreturn]] void escalate_truncation(ConversationContext& conversation, const ModelSpec& spec,
                                      std::int64_t sent_budget);

}  // namespace nucleo
