// The bridge between the "nucleo.host.model_call/1" slot (core/src/plugins/host.cpp) and the
// handler installed with set_model_call_handler (compaction.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace nucleo::internal {

/// Runs the installed handler on `request`; the answer goes to `answer`. Returns (NUCLEO_OK, "")
/// or a plugin.h status and a one-line message: NUCLEO_ERR_NOT_IMPLEMENTED when no handler is
/// installed, else the status of the handler's nucleo::Error kind. Never throws.
std::pair<int32_t, std::string> call_model_handler(std::string_view request, std::string& answer);

}  // namespace nucleo::internal
