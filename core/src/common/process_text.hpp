// How a child process's end and a time bound are named in errors, one spelling for every place
// that runs plugin code in another process: `nucleo plugins --check` (abi.105), the conformance
// kit's child (abi.121) and the helper of `isolation: process` (abi.130).
#pragma once

#include <chrono>
#include <string>

namespace nucleo::internal {

/// "signal 11 (Segmentation fault)".
std::string signal_text(int sig);

/// "10 s", or "1500 ms" for a time that is no whole number of seconds.
std::string duration_text(std::chrono::milliseconds d);

}  // namespace nucleo::internal
