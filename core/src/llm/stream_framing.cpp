#include "llm/stream_framing.hpp"

#include <cstdint>

namespace nucleo::internal {
namespace {

std::uint32_t be32(std::string_view s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24U) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16U) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8U) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// AWS event-stream header value sizes by type byte (0-9); strings and byte arrays (6, 7) carry a
// u16 length instead.
constexpr int kFixedSize[] = {0, 0, 1, 2, 4, 8, -1, -1, 8, 16};

}  // namespace

StreamFraming parse_stream_framing(std::string_view name) noexcept {
    return name == "aws-eventstream" ? StreamFraming::kAwsEventStream : StreamFraming::kSse;
}

void StreamFramer::feed(std::string_view chunk, const Handler& on_event) {
    if (broken_) return;
    // Consumed bytes are dropped once they are the larger part, so a long stream stays O(n).
    if (pos_ > 0 && pos_ * 2 >= buffer_.size()) {
        buffer_.erase(0, pos_);
        pos_ = 0;
    }
    buffer_.append(chunk);
    if (framing_ == StreamFraming::kSse) {
        feed_sse(on_event);
    } else {
        feed_aws(on_event);
    }
}

void StreamFramer::feed_sse(const Handler& on_event) {
    while (true) {
        const std::size_t nl = buffer_.find('\n', pos_);
        if (nl == std::string::npos) return;
        std::string_view line(buffer_.data() + pos_, nl - pos_);
        pos_ = nl + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            if (has_data_ || !event_.empty()) on_event(event_, data_);
            event_.clear();
            data_.clear();
            has_data_ = false;
            continue;
        }
        if (line.front() == ':') continue;  // a comment (keep-alive)
        const std::size_t colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value = colon == std::string_view::npos ? std::string_view{}
                                                                 : line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        if (field == "event") {
            event_.assign(value);
        } else if (field == "data") {
            if (has_data_) data_ += '\n';
            data_.append(value);
            has_data_ = true;
        }
    }
}

void StreamFramer::feed_aws(const Handler& on_event) {
    while (buffer_.size() - pos_ >= 12) {
        const std::string_view at(buffer_.data() + pos_, buffer_.size() - pos_);
        const std::uint32_t total = be32(at, 0);
        const std::uint32_t headers = be32(at, 4);
        if (total < 16 || headers > total - 16) {
            broken_ = true;
            return;
        }
        if (at.size() < total) return;
        std::string_view name;
        std::size_t h = 12;
        const std::size_t h_end = 12 + headers;
        while (h < h_end) {
            const std::size_t name_len = static_cast<unsigned char>(at[h]);
            if (h + 1 + name_len + 1 > h_end) break;
            const std::string_view header = at.substr(h + 1, name_len);
            const unsigned type = static_cast<unsigned char>(at[h + 1 + name_len]);
            h += 2 + name_len;
            if (type > 9) break;
            std::size_t len = 0;
            if (type == 6 || type == 7) {
                if (h + 2 > h_end) break;
                len = (static_cast<std::size_t>(static_cast<unsigned char>(at[h])) << 8U) |
                      static_cast<unsigned char>(at[h + 1]);
                h += 2;
            } else {
                len = static_cast<std::size_t>(kFixedSize[type]);
            }
            if (h + len > h_end) break;
            if (type == 7 && (header == ":event-type" || header == ":exception-type"))
                name = at.substr(h, len);
            h += len;
        }
        on_event(name, at.substr(h_end, total - 4 - h_end));
        pos_ += total;
    }
}

}  // namespace nucleo::internal
