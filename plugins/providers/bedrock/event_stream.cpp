// The AWS event-stream framing of ConverseStream answers (application/vnd.amazon.eventstream).
// Each message: total length (u32, big-endian), headers length (u32), prelude CRC32 (over those
// 8 bytes), headers, payload, message CRC32 (over everything before it). A header is a name
// (u8 length + bytes), a type byte and a value; Converse sends strings (type 7: u16 length +
// bytes), the other types are skipped by their fixed or prefixed sizes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "converse.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::bedrock {
namespace {

using nucleo::plugin::Failure;

std::uint32_t crc32(std::string_view bytes) {
    static const std::array<std::uint32_t, 256> kTable = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1U) : c >> 1U;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFU;
    for (const char ch : bytes)
        c = kTable[(c ^ static_cast<unsigned char>(ch)) & 0xFFU] ^ (c >> 8U);
    return c ^ 0xFFFFFFFFU;
}

std::uint32_t be32(std::string_view s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24U) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16U) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8U) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

std::uint32_t be16(std::string_view s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 8U) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1]));
}

[[noreturn]] void bad_frame(std::size_t offset, const std::string& what, std::string_view body) {
    throw Failure(NUCLEO_ERR_PROTOCOL,
                  "bedrock: the event stream is cut off or corrupt at byte " +
                      std::to_string(offset) + " (" + what +
                      "); it began: " + providers::quote_first_bytes(body),
                  200);
}

}  // namespace

std::vector<StreamEvent> read_event_stream(std::string_view body) {
    std::vector<StreamEvent> events;
    std::size_t at = 0;
    while (at < body.size()) {
        if (body.size() - at < 16) bad_frame(at, "a message shorter than its prelude", body);
        const std::uint32_t total = be32(body, at);
        const std::uint32_t headers_len = be32(body, at + 4);
        if (crc32(body.substr(at, 8)) != be32(body, at + 8)) bad_frame(at, "prelude CRC", body);
        if (total < 16 || headers_len > total - 16 || total > body.size() - at) {
            bad_frame(at, "message length " + std::to_string(total), body);
        }
        const std::string_view message = body.substr(at, total);
        if (crc32(message.substr(0, total - 4)) != be32(message, total - 4)) {
            bad_frame(at, "message CRC", body);
        }
        StreamEvent ev;
        std::string exception_type;
        const std::string_view headers = message.substr(12, headers_len);
        std::size_t h = 0;
        while (h < headers.size()) {
            const std::size_t name_len = static_cast<unsigned char>(headers[h]);
            if (h + 1 + name_len + 1 > headers.size()) bad_frame(at, "header name", body);
            const std::string_view name = headers.substr(h + 1, name_len);
            const auto type = static_cast<unsigned char>(headers[h + 1 + name_len]);
            h += 2 + name_len;
            std::size_t value_len = 0;
            std::size_t prefix = 0;
            switch (type) {
                case 0:
                case 1:
                    value_len = 0;
                    break;  // bool true / false
                case 2:
                    value_len = 1;
                    break;  // byte
                case 3:
                    value_len = 2;
                    break;  // short
                case 4:
                    value_len = 4;
                    break;  // int
                case 5:
                case 8:
                    value_len = 8;
                    break;  // long, timestamp
                case 9:
                    value_len = 16;
                    break;  // uuid
                case 6:
                case 7:  // bytes, string
                    if (h + 2 > headers.size()) bad_frame(at, "header value length", body);
                    value_len = be16(headers, h);
                    prefix = 2;
                    break;
                default:
                    bad_frame(at, "header type " + std::to_string(type), body);
            }
            if (h + prefix + value_len > headers.size()) bad_frame(at, "header value", body);
            const std::string_view value = headers.substr(h + prefix, value_len);
            if (type == 7) {
                if (name == ":event-type")
                    ev.event_type = value;
                else if (name == ":message-type")
                    ev.message_type = value;
                else if (name == ":exception-type" || name == ":error-code")
                    exception_type = value;
            }
            h += prefix + value_len;
        }
        if (!exception_type.empty()) ev.event_type = exception_type;
        ev.payload = message.substr(12 + headers_len, total - 16 - headers_len);
        events.push_back(std::move(ev));
        at += total;
    }
    return events;
}

}  // namespace nucleo::bedrock
