// Incremental framing of streamed answers (answers.2): the bytes libcurl hands over, cut into
// the events a plugin's decode_event reads (plugin.h, ABI 1.2). The core frames because framing is
// transport, the same for every dialect that shares it; what an event MEANS is the plugin's.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace nucleo::internal {

/// How a dialect's stream is framed: the capabilities' "stream_framing".
enum class StreamFraming { kSse, kAwsEventStream };

/// Parses "sse" | "aws-eventstream"; anything else is kSse (the common case; an unknown framing
/// only costs the deltas, since the answer is decoded from the whole body).
StreamFraming parse_stream_framing(std::string_view name) noexcept;

/// Feeds chunks in any cut; calls the handler once per complete event, in order. SSE: an event
/// ends at a blank line; `name` is its `event:` field (empty when none) and `data` its `data:`
/// lines joined by "\n" (comments and other fields ignored; CRLF accepted). AWS event stream: each
/// length-prefixed message; `name` is its ":event-type" header (":exception-type" for an
/// exception), `data` its payload. CRCs are not checked here: the plugin's decode of the whole body
/// checks them, and a frame that cannot be right (lengths out of range) stops the framing — no
/// more deltas, the decode at the end reports the corruption.
class StreamFramer {
  public:
    using Handler = std::function<void(std::string_view name, std::string_view data)>;

    explicit StreamFramer(StreamFraming framing) : framing_(framing) {}
    void feed(std::string_view chunk, const Handler& on_event);

  private:
    void feed_sse(const Handler& on_event);
    void feed_aws(const Handler& on_event);

    StreamFraming framing_;
    std::string buffer_;
    std::size_t pos_ = 0;  // first unconsumed byte of buffer_
    bool broken_ = false;
    // SSE: the event being assembled.
    std::string event_;
    std::string data_;
    bool has_data_ = false;
};

}  // namespace nucleo::internal
