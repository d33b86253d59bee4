// The store boundary rule (boundary.hpp; persistence.104).
#include "persistence/boundary.hpp"

#include <cstdio>
#include <string>

#include "nucleo/errors.hpp"

namespace nucleo::internal {

namespace {

// The length of the UTF-8 sequence starting at text[i], or 0 when it is invalid there. `cp`
// receives the code point.
std::size_t sequence_at(std::string_view text, std::size_t i, char32_t& cp) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    std::size_t n = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    } else if ((b0 & 0xE0) == 0xC0) {
        n = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// A printable, bounded rendering of an id for a refusal: at most 40 bytes, escaped.
std::string quoted(std::string_view id) {
    std::string out = "\"";
    for (std::size_t i = 0; i < id.size() && i < 40; ++i) {
        const auto c = static_cast<unsigned char>(id[i]);
        if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    out += id.size() > 40 ? "...\"" : "\"";
    return out;
}

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) noexcept {
    char32_t cp = 0;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequence_at(text, i, cp);
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

void check_store_id(std::string_view id, const char* role, const char* slot) {
    const std::string where = std::string("store ") + slot + ": the " + role + " " + quoted(id);
    if (id.size() > kMaxStoreIdBytes) {
        throw Error(ErrorKind::kInvalidArgument,
                    where + " is " + std::to_string(id.size()) + " bytes long; at most " +
                        std::to_string(kMaxStoreIdBytes) + " are allowed");
    }
    char32_t cp = 0;
    for (std::size_t i = 0; i < id.size();) {
        const std::size_t n = sequence_at(id, i, cp);
        if (n == 0) {
            throw Error(ErrorKind::kInvalidArgument,
                        where + " is not valid UTF-8 at byte " + std::to_string(i));
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            char code[16];
            std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(cp));
            throw Error(ErrorKind::kInvalidArgument, where + " holds the control character " +
                                                         code + " at byte " + std::to_string(i) +
                                                         "; ids are printable text");
        }
        i += n;
    }
}

void check_store_text(std::string_view text, const char* what, std::string_view conversation_id) {
    const std::size_t at = first_invalid_utf8(text);
    if (at == std::string_view::npos) return;
    const std::size_t from = at > 40 ? at - 40 : 0;
    throw Error(ErrorKind::kInvalidArgument,
                std::string(what) + " of conversation " + quoted(conversation_id) +
                    " is not valid UTF-8 at byte " + std::to_string(at) + " (just after " +
                    quoted(text.substr(from, at - from)) + "); text must be valid UTF-8");
}

}  // namespace nucleo::internal
