// The AWS event-stream binary framing (content type application/vnd.amazon.eventstream) that
// Bedrock's ConverseStream answers with: each message is a prelude (total length, headers length,
// both big-endian uint32, then a CRC32 of those 8 bytes), string-typed headers, the payload and a
// CRC32 of everything before it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nucleo::emulator {

/// One framed message with string headers (type 7) in the given order.
std::string event_stream_message(const std::vector<std::pair<std::string, std::string>>& headers,
                                 std::string_view payload);

/// An event as ConverseStream sends it: `:event-type`, `:content-type: application/json`,
/// `:message-type: event`, and the JSON payload.
std::string event_stream_event(std::string_view event_type, std::string_view json_payload);

}  // namespace nucleo::emulator
