// abi.105, abi.121, abi.130: the names of a child's end and of a time bound (process_text.hpp).
#include "common/process_text.hpp"

#include <cstring>

namespace nucleo::internal {

std::string signal_text(int sig) {
    const char* text = ::strsignal(sig);
    return "signal " + std::to_string(sig) +
           (text != nullptr ? std::string(" (") + text + ")" : std::string());
}

std::string duration_text(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s"
                                 : std::to_string(d.count()) + " ms";
}

}  // namespace nucleo::internal
