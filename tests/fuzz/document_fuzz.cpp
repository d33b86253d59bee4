// The conversation document reader under libFuzzer: any input is read or refused with an Error
// (never a crash, whatever its depth: limits.120), and what is read is a fixed point of
// read -> write -> read -> write (the second write equals the first), and valid UTF-8: text that
// is not, raw or through an escape, is refused on read (conversation.106).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/utf8.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::string first;
    try {
        first = nucleo::write_conversation_parts(nucleo::read_conversation_parts(text));
    } catch (const nucleo::Error&) {
        return 0;  // refused: the reader's answer to bad input
    }
    if (!nucleo::internal::is_valid_utf8(first)) std::abort();
    // What the writer wrote must read back, and write the same again.
    const std::string second =
        nucleo::write_conversation_parts(nucleo::read_conversation_parts(first));
    if (second != first) std::abort();
    return 0;
}
