// Text helpers of the config concern: quoting values into one-line messages.
#pragma once

#include <string>
#include <string_view>

namespace nucleo::config_internal {

/// `"value"` with control characters, quotes and backslashes escaped and anything past 80
/// characters cut to "...", so a refusal stays one line whatever the file held.
std::string quote(std::string_view value);

}  // namespace nucleo::config_internal
