// Server-sent events as the Streamable HTTP transport carries them (mcp.44): the answer to a POST
// and the GET stream are read event by event as the bytes come, each event's data bounded.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nucleo::mcp_internal {

/// One event: its `data` lines joined with "\n", and its `id` when it had one.
struct SseEvent {
    std::string data;
    std::optional<std::string> id;
};

/// Reads an event stream chunk by chunk (the WHATWG event-stream format: lines ended by LF, CR LF
/// or CR; `data:`, `id:`, `retry:` and `event:` fields; comments and other fields ignored; an
/// event dispatched at its blank line).
class SseReader {
  public:
    /// `max_event_bytes` bounds one event's data and one line; past it feed() returns false.
    explicit SseReader(std::size_t max_event_bytes) : max_(max_event_bytes) {}

    /// Reads `chunk`, calling `on_event` for each complete event; `on_event` returns false to
    /// stop reading (feed then returns true at once). False when a line or an event passed the
    /// bound.
    bool feed(std::string_view chunk, const std::function<bool(SseEvent&)>& on_event);

    /// The id of the last event that set one (what Last-Event-ID resumes from).
    [[nodiscard]] const std::optional<std::string>& last_event_id() const { return last_id_; }
    /// The reconnection delay the server asked for with `retry:` (milliseconds).
    [[nodiscard]] std::optional<long> retry_ms() const { return retry_; }

  private:
    bool line(std::string_view text, const std::function<bool(SseEvent&)>& on_event, bool& stop);

    std::size_t max_;
    std::string pending_;  // the line being read
    bool after_cr_ = false;
    SseEvent event_;
    bool has_data_ = false;
    std::optional<std::string> last_id_;
    std::optional<long> retry_;
};

}  // namespace nucleo::mcp_internal
