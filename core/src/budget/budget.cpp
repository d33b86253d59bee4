#include "nucleo/budget.hpp"

#include <algorithm>

#include "nucleo/thinking.hpp"

namespace nucleo {
namespace {

std::string seat_name(const ConversationContext& c) {
    return c.conversation_id().empty() ? std::string("(unnamed conversation)") : "'" + c.conversation_id() + "'";
}

std::int64_t translate(const OutputDeclaration& declaration, const ModelSpec& spec) {
    if (const auto* rung = std::get_if<OutputSize>(&declaration)) return spec.output_budget_for(*rung);
    return std::get<std::int64_t>(declaration);
}

const Message* last_outgoing(const ConversationContext& c) {
    const auto& messages = c.messages();
    for (auto it = messages.rbegin(); it != messages.rend(); ++it)
        if (it->outgoing()) return &*it;
    return nullptr;
}

}  // namespace

std::int64_t resolve_output_budget(const ConversationContext& conversation, const ModelSpec& spec,
                                   const BindingDeclarations& binding) {
    std::optional<std::int64_t> budget;
    if (const Message* m = last_outgoing(conversation); m != nullptr && m->requested_output_tokens) {
        budget = *m->requested_output_tokens;
    } else if (conversation.output()) {
        budget = translate(*conversation.output(), spec);
    } else if (binding.output) {
        budget = translate(*binding.output, spec);
    }
    if (!budget) {
        throw UncorrectableLLMException(
            "conversation " + seat_name(conversation) +
            " declares no output budget: neither its last outgoing message (requested_output_tokens), "
            "nor the conversation (an OutputSize rung or a token count), nor its model binding says how "
            "much the seat answers");
    }
    if (*budget <= 0) {
        throw UncorrectableLLMException("conversation " + seat_name(conversation) +
                                        " declares a non-positive output budget (" +
                                        std::to_string(*budget) + " tokens)");
    }
    return std::min(*budget, spec.max_output_tokens);
}

Depth resolve_depth(const ConversationContext& conversation, const BindingDeclarations& binding) {
    if (conversation.depth()) return *conversation.depth();
    if (binding.depth) return *binding.depth;
    throw UncorrectableLLMException("conversation " + seat_name(conversation) +
                                    " declares no depth: neither the conversation nor its model binding "
                                    "says how much the model thinks");
}

std::int64_t output_reserve(const ConversationContext& conversation, const ModelSpec& spec,
                            const BindingDeclarations& binding) {
    const std::int64_t output = resolve_output_budget(conversation, spec, binding);
    const std::int64_t reasoning = reasoning_reserved(spec, resolve_depth(conversation, binding));
    return std::min(output + reasoning, spec.max_output_tokens);
}

OutputTruncationRetryException::OutputTruncationRetryException(std::int64_t previous_budget,
                                                               std::int64_t new_budget)
    : Error(ErrorKind::kOutputTruncated,
            "the answer was truncated at " + std::to_string(previous_budget) +
                " output tokens; retrying once with " + std::to_string(new_budget)),
      previous_(previous_budget),
      new_(new_budget) {}

void escalate_truncation(ConversationContext& conversation, const ModelSpec& spec, std::int64_t sent_budget) {
    if (sent_budget >= spec.max_output_tokens) {
        throw UncorrectableRuntimeLLMException(
            "the answer of model '" + spec.id + "' was truncated at its own output ceiling of " +
            std::to_string(spec.max_output_tokens) + " tokens; no larger budget exists");
    }
    const Message* sent = last_outgoing(conversation);
    if (sent == nullptr) {
        throw Error(ErrorKind::kInvalidArgument,
                    "conversation " + seat_name(conversation) + " has no outgoing message to escalate");
    }
    conversation.set_requested_output_tokens(sent->id, spec.max_output_tokens);
    throw OutputTruncationRetryException(sent_budget, spec.max_output_tokens);
}

}  // namespace nucleo
