// The store boundary rule (boundary.hpp; persistence.104).
#include "persistence/boundary.hpp"

#include <cstdio>
#include <string>

#include "common/utf8.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::internal {

namespace {

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

void check_store_id(std::string_view id, const char* role, const char* slot) {
    const std::string where = std::string("store ") + slot + ": the " + role + " " + quoted(id);
    if (id.size() > kMaxStoreIdBytes) {
        throw Error(ErrorKind::kInvalidArgument,
                    where + " is " + std::to_string(id.size()) + " bytes long; at most " +
                        std::to_string(kMaxStoreIdBytes) + " are allowed");
    }
    char32_t cp = 0;
    for (std::size_t i = 0; i < id.size();) {
        const std::size_t n = utf8_sequence_at(id, i, &cp);
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
