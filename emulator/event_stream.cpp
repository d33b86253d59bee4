#include "event_stream.hpp"

#include <zlib.h>

#include <cstdint>

namespace nucleo::emulator {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
    out.push_back(static_cast<char>((v >> 24) & 0xFF));
    out.push_back(static_cast<char>((v >> 16) & 0xFF));
    out.push_back(static_cast<char>((v >> 8) & 0xFF));
    out.push_back(static_cast<char>(v & 0xFF));
}

std::uint32_t crc32_of(std::string_view bytes) {
    // zlib's crc32 is the IEEE 802.3 CRC the event-stream format specifies.
    return static_cast<std::uint32_t>(
        ::crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

constexpr char kHeaderTypeString = 7;

}  // namespace

std::string event_stream_message(const std::vector<std::pair<std::string, std::string>>& headers,
                                 std::string_view payload) {
    std::string hdr;
    for (const auto& [name, value] : headers) {
        hdr.push_back(static_cast<char>(name.size()));
        hdr += name;
        hdr.push_back(kHeaderTypeString);
        hdr.push_back(static_cast<char>((value.size() >> 8) & 0xFF));
        hdr.push_back(static_cast<char>(value.size() & 0xFF));
        hdr += value;
    }
    const auto total = static_cast<std::uint32_t>(12 + hdr.size() + payload.size() + 4);
    std::string msg;
    msg.reserve(total);
    put_u32(msg, total);
    put_u32(msg, static_cast<std::uint32_t>(hdr.size()));
    put_u32(msg, crc32_of(msg));
    msg += hdr;
    msg += payload;
    put_u32(msg, crc32_of(msg));
    return msg;
}

std::string event_stream_event(std::string_view event_type, std::string_view json_payload) {
    return event_stream_message({{":event-type", std::string(event_type)},
                                 {":content-type", "application/json"},
                                 {":message-type", "event"}},
                                json_payload);
}

}  // namespace nucleo::emulator
