// Version of libnucleo and of the plugin ABI it hosts.
#pragma once

#include "nucleo/plugin.h"

namespace nucleo {

/// The library's version string ("0.1.0").
const char* version() noexcept;

}  // namespace nucleo
