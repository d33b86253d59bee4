// The framing between the core and a plugin's helper process (abi.130): each message is a
// little-endian uint32 byte count followed by that many bytes, which are a list of fields, each
// again a uint32 byte count and its bytes. The first field names the message ("hello", "create",
// "call", "ok", "error", "refused"). Nothing but bytes crosses, so a helper built from the same
// sources speaks it on any machine, and no field needs escaping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::plugins_detail {

using Frame = std::vector<std::string>;

/// A message framed for the wire: its byte count, then its fields.
std::string encode_frame(const Frame& fields);

/// The fields of a payload (the bytes after the leading byte count), or nullopt when the payload
/// is not a list of fields that fills it exactly.
std::optional<Frame> decode_payload(std::string_view payload);

/// The byte count at the start of `header` (4 bytes).
std::uint32_t frame_size(const char* header) noexcept;

/// The helper's side: a blocking write of a whole message to `fd` (a socket; no SIGPIPE). False
/// when the peer is gone.
bool write_frame(int fd, const Frame& fields);

/// The helper's side: a blocking read of one message from `fd`. nullopt at the end of the stream
/// or on a message that does not parse.
std::optional<Frame> read_frame(int fd);

}  // namespace nucleo::plugins_detail
