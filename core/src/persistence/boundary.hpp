// The one rule every store call meets at the document boundary (persistence.104), checked by the
// host before any store plugin sees the call, so the four stores answer bad input the same way.
#pragma once

#include <cstddef>
#include <string_view>

namespace nucleo::internal {

/// The longest id a store accepts, in bytes (persistence.104).
inline constexpr std::size_t kMaxStoreIdBytes = 256;

/// Refuses (kInvalidArgument) an id that is longer than kMaxStoreIdBytes, not valid UTF-8, or
/// holds a control character (U+0000-U+001F, U+007F-U+009F). The message names `role` ("user
/// id", "conversation id"), the store slot and the byte position; the id itself is quoted cut
/// short, so a 1 MB id never floods a log line.
void check_store_id(std::string_view id, const char* role, const char* slot);

/// Refuses (kInvalidArgument) a document text (a request or a snapshot) that is not valid UTF-8,
/// naming `what`, the byte position and the text just before it.
void check_store_text(std::string_view text, const char* what, std::string_view conversation_id);

}  // namespace nucleo::internal
