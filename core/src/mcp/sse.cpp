#include "mcp/sse.hpp"

#include <cstdlib>

namespace nucleo::mcp_internal {

bool SseReader::feed(std::string_view chunk, const std::function<bool(SseEvent&)>& on_event) {
    bool stop = false;
    for (std::size_t i = 0; i < chunk.size() && !stop; ++i) {
        const char c = chunk[i];
        if (after_cr_) {
            after_cr_ = false;
            if (c == '\n') continue;  // the LF of a CR LF
        }
        if (c == '\r' || c == '\n') {
            after_cr_ = c == '\r';
            if (!line(pending_, on_event, stop)) return false;
            pending_.clear();
            continue;
        }
        // mcp.44: neither a line nor an event grows past the bound.
        if (pending_.size() + event_.data.size() >= max_) return false;
        pending_ += c;
    }
    return true;
}

bool SseReader::line(std::string_view text, const std::function<bool(SseEvent&)>& on_event,
                     bool& stop) {
    if (text.empty()) {
        // A blank line dispatches the event; one without data is nothing to the reader, though
        // its id counts (an empty `data:` primes a stream for resumption).
        if (has_data_) {
            stop = !on_event(event_);
        }
        event_ = SseEvent{};
        has_data_ = false;
        return true;
    }
    if (text.front() == ':') return true;  // a comment
    const std::size_t colon = text.find(':');
    const std::string_view field = text.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
        if (event_.data.size() + value.size() + 1 > max_) return false;
        if (has_data_) event_.data += '\n';
        event_.data += value;
        has_data_ = has_data_ || !value.empty();
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) {
            event_.id = std::string(value);
            last_id_ = event_.id;
        }
    } else if (field == "retry") {
        const std::string digits(value);
        char* end = nullptr;
        const long ms = std::strtol(digits.c_str(), &end, 10);
        if (!digits.empty() && end != nullptr && *end == '\0' && ms >= 0) retry_ = ms;
    }
    return true;
}

}  // namespace nucleo::mcp_internal
