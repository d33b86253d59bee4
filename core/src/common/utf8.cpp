// UTF-8 checks (utf8.hpp): simdjson's validator for the common case of valid text, a scalar
// decoder for the position of a fault.
#include "common/utf8.hpp"

#include <simdjson.h>

#include <cstring>

namespace nucleo::internal {

std::size_t utf8_sequence_at(std::string_view text, std::size_t i, char32_t* code_point) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    char32_t cp = 0;
    char32_t least = 0;
    if (lead < 0x80) {
        if (code_point != nullptr) *code_point = lead;
        return 1;
    }
    if ((lead & 0xE0) == 0xC0) {
        length = 2, cp = lead & 0x1F, least = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, cp = lead & 0x0F, least = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, cp = lead & 0x07, least = 0x10000;
    } else {
        return 0;
    }
    if (i + length > text.size()) return 0;
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    if (code_point != nullptr) *code_point = cp;
    return length;
}

bool is_valid_utf8(std::string_view text) noexcept {
    return simdjson::validate_utf8(text.data(), text.size());
}

std::size_t first_invalid_utf8(std::string_view text) noexcept {
    if (is_valid_utf8(text)) return std::string_view::npos;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_sequence_at(text, i, nullptr);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;  // not reached: the validator and the decoder agree
}

namespace {

/// The code unit of the four hex digits at `p`, or -1 when they are not four hex digits.
long hex4(const char* p) noexcept {
    long value = 0;
    for (int k = 0; k < 4; ++k) {
        const char c = p[k];
        int digit = 0;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return -1;
        }
        value = value * 16 + digit;
    }
    return value;
}

}  // namespace

std::size_t first_lone_surrogate_escape(std::string_view json) noexcept {
    const char* const begin = json.data();
    const char* const end = begin + json.size();
    const char* p = begin;
    while (p < end) {
        const void* hit = std::memchr(p, '\\', static_cast<std::size_t>(end - p));
        if (hit == nullptr) break;
        const char* escape = static_cast<const char*>(hit);
        // Inside a JSON string every backslash starts an escape of two characters or, for \u,
        // six; stepping over whole escapes keeps `\\u` (a backslash, then a u) from reading as one.
        if (end - escape < 6 || escape[1] != 'u') {
            p = escape + 2;
            continue;
        }
        const long unit = hex4(escape + 2);
        if (unit >= 0xDC00 && unit <= 0xDFFF) return static_cast<std::size_t>(escape - begin);
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            const bool paired = end - escape >= 12 && escape[6] == '\\' && escape[7] == 'u' &&
                                hex4(escape + 8) >= 0xDC00 && hex4(escape + 8) <= 0xDFFF;
            if (!paired) return static_cast<std::size_t>(escape - begin);
            p = escape + 12;
            continue;
        }
        p = escape + 6;
    }
    return std::string_view::npos;
}

std::size_t first_invalid_utf8_in_json(std::string_view json) noexcept {
    const std::size_t raw = first_invalid_utf8(json);
    const std::size_t escaped = first_lone_surrogate_escape(json);
    return raw < escaped ? raw : escaped;
}

std::string printable_utf8(std::string_view text) {
    if (is_valid_utf8(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + 16);
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_sequence_at(text, i, nullptr);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

}  // namespace nucleo::internal
