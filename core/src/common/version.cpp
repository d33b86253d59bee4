#include "nucleo/version.hpp"

namespace nucleo {
const char* version() noexcept { return NUCLEO_VERSION; }
}  // namespace nucleo
