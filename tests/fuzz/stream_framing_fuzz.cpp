// The SSE and AWS event-stream framing of streamed answers under libFuzzer: the first byte picks
// the framing and the cut size, the rest is fed in chunks of that size. Every event handed out
// lies within the input's bytes (its sizes are bounded by what was fed) and nothing crashes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "llm/stream_framing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    using nucleo::internal::StreamFramer;
    using nucleo::internal::StreamFraming;
    const StreamFraming framing = (data[0] & 1U) ? StreamFraming::kAwsEventStream : StreamFraming::kSse;
    const std::size_t cut = 1 + (data[0] >> 1U);
    const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    StreamFramer framer(framing);
    const StreamFramer::Handler on_event = [&](std::string_view name, std::string_view event) {
        if (name.size() > body.size() || event.size() > body.size()) std::abort();
    };
    for (std::size_t at = 0; at < body.size(); at += cut) {
        framer.feed(body.substr(at, std::min(cut, body.size() - at)), on_event);
    }
    return 0;
}
