// tools.102: a tool declaration every provider takes, checked where a tool is declared.
#pragma once

#include <string_view>

#include "nucleo/content.hpp"

namespace nucleo::internal {

/// Throws Error(kInvalidArgument), naming `who` and the tool, when the name is outside
/// ^[a-zA-Z0-9_-]{1,64}$ or the input schema is not a JSON object of type "object".
void check_tool_declaration(const ToolDefinitionBlock& definition, std::string_view who);

}  // namespace nucleo::internal
