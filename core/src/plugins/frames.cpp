// abi.130: the framing of the helper process channel (frames.hpp).
#include "plugins/frames.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nucleo::plugins_detail {
namespace {

void put_size(std::string& out, std::size_t n) {
    const auto v = static_cast<std::uint32_t>(n);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}

bool read_exactly(int fd, char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

std::uint32_t frame_size(const char* header) noexcept {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(header[i])) << (8 * i);
    return v;
}

std::string encode_frame(const Frame& fields) {
    std::size_t total = 0;
    for (const auto& f : fields) total += 4 + f.size();
    std::string out;
    out.reserve(4 + total);
    put_size(out, total);
    for (const auto& f : fields) {
        put_size(out, f.size());
        out += f;
    }
    return out;
}

std::optional<Frame> decode_payload(std::string_view payload) {
    Frame fields;
    while (!payload.empty()) {
        if (payload.size() < 4) return std::nullopt;
        const std::uint32_t n = frame_size(payload.data());
        payload.remove_prefix(4);
        if (n > payload.size()) return std::nullopt;
        fields.emplace_back(payload.substr(0, n));
        payload.remove_prefix(n);
    }
    return fields;
}

bool write_frame(int fd, const Frame& fields) {
    const std::string bytes = encode_frame(fields);
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<Frame> read_frame(int fd) {
    char header[4];
    if (!read_exactly(fd, header, sizeof header)) return std::nullopt;
    std::string payload(frame_size(header), '\0');
    if (!read_exactly(fd, payload.data(), payload.size())) return std::nullopt;
    return decode_payload(payload);
}

}  // namespace nucleo::plugins_detail
