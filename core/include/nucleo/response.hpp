// The answer contract an outgoing message carries (tools.20).
#pragma once

#include <string>

namespace nucleo {

/// Decides how the model is asked to answer. tools.20:
/// response_instructions(native_tools_available, thinking_active) omits `tool_calls` when native
/// tool calling is available and `reasoning` (and the answer's own nested reasoning) when thinking
/// is active. A handler that uses the @-notation makes the conversation carry the notation legend
/// under the `legend` slot.
class ResponseHandler {
public:
    virtual ~ResponseHandler() = default;

    /// True when response_instructions() writes the schema in the @-notation.
    [[nodiscard]] virtual bool uses_schema_notation() const = 0;

    /// Text appended to the outgoing message at render: how to shape the answer. Empty for a
    /// plain-prose answer.
    [[nodiscard]] virtual std::string response_instructions(bool native_tools_available,
                                                            bool thinking_active) const = 0;
};

}  // namespace nucleo
