// cli.109: `nucleo ask -a FILE` (attachments.hpp).
//
// Decisions:
//  - The type is told by the file's first bytes, never by its name: a `.png` that is a PDF is
//    sent as the PDF it is, and a file the provider would refuse is refused here, with its name.
//  - Plain text is bytes without NUL that are valid UTF-8; it is a document (the providers'
//    `text/plain` document), so it needs a model that accepts DOCUMENTS, as a PDF does.
#include "commands/attachments.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

#include "args.hpp"

namespace nucleo::cli {

namespace {

struct Kind {
    const char* media_type;
    Input input;
};

/// True when `bytes` is UTF-8 text: well-formed sequences (no overlong form, no surrogate, at
/// most U+10FFFF) and no NUL.
bool utf8_text(std::string_view bytes) {
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c == 0) return false;
        std::size_t more = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            more = 1;
            cp = c & 0x1Fu;
        } else if ((c & 0xF0) == 0xE0) {
            more = 2;
            cp = c & 0x0Fu;
        } else if ((c & 0xF8) == 0xF0) {
            more = 3;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (i + more >= bytes.size()) return false;  // cut short
        for (std::size_t k = 1; k <= more; ++k) {
            const auto next = static_cast<unsigned char>(bytes[i + k]);
            if ((next & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (next & 0x3Fu);
        }
        static constexpr std::uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kLeast[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += more + 1;
    }
    return true;
}

/// The type of `bytes` by their signature; nullopt for none ask attaches.
std::optional<Kind> kind_of(std::string_view bytes) {
    if (bytes.starts_with("\x89PNG\r\n\x1a\n")) return Kind{"image/png", Input::kImages};
    if (bytes.starts_with("\xFF\xD8\xFF")) return Kind{"image/jpeg", Input::kImages};
    if (bytes.starts_with("GIF87a") || bytes.starts_with("GIF89a"))
        return Kind{"image/gif", Input::kImages};
    if (bytes.size() >= 12 && bytes.starts_with("RIFF") && bytes.substr(8, 4) == "WEBP")
        return Kind{"image/webp", Input::kImages};
    if (bytes.starts_with("%PDF-")) return Kind{"application/pdf", Input::kDocuments};
    if (utf8_text(bytes)) return Kind{"text/plain", Input::kDocuments};
    return std::nullopt;
}

std::string base64(std::string_view in) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const std::uint32_t n = (static_cast<unsigned char>(in[i]) << 16) |
                                (static_cast<unsigned char>(in[i + 1]) << 8) |
                                static_cast<unsigned char>(in[i + 2]);
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        out += kAlphabet[(n >> 6) & 63];
        out += kAlphabet[n & 63];
    }
    if (const std::size_t rest = in.size() - i; rest > 0) {
        std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16;
        if (rest == 2) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

/// What `model`'s record accepts beyond text, for the refusal ("images", "nothing but text").
std::string accepted_by(const ModelSpec& model) {
    const bool images = model.accepts(Input::kImages);
    const bool documents = model.accepts(Input::kDocuments);
    if (images && documents) return "images and documents";
    if (images) return "images only";
    if (documents) return "documents only";
    return "nothing but text";
}

[[noreturn]] void refuse(const std::string& file, const std::string& why) {
    throw UsageError{"--attach " + file + ": " + why};
}

/// The bytes of `file`; a UsageError naming it when it cannot be read.
std::string read_file(const std::string& file) {
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec);
    if (ec || !std::filesystem::exists(status)) refuse(file, "no such file");
    if (!std::filesystem::is_regular_file(status)) refuse(file, "not a regular file");
    std::ifstream in(file, std::ios::binary);
    if (!in) refuse(file, std::string("cannot read it (") + std::strerror(errno) + ")");
    std::string bytes(std::istreambuf_iterator<char>(in), {});
    if (in.bad()) refuse(file, "cannot read it");
    return bytes;
}

}  // namespace

std::vector<ContentBlock> attachment_blocks(const std::vector<std::string>& files,
                                            const ModelSpec& model) {
    std::vector<ContentBlock> blocks;
    for (const std::string& file : files) {
        const std::string bytes = read_file(file);
        if (bytes.empty()) refuse(file, "the file is empty");
        const std::optional<Kind> kind = kind_of(bytes);
        if (!kind) {
            refuse(file,
                   "not a type ask attaches (a png, jpeg, gif or webp image; a PDF or plain text)");
        }
        if (!model.accepts(kind->input)) {
            refuse(file, std::string("model ") + model.id + " does not accept " +
                             (kind->input == Input::kImages ? "images" : "documents") + " (" +
                             kind->media_type + "); its catalog record accepts " +
                             accepted_by(model));
        }
        if (kind->input == Input::kImages) {
            blocks.emplace_back(ImageBlock{kind->media_type, base64(bytes), ""});
        } else {
            blocks.emplace_back(FileBlock{kind->media_type,
                                          std::filesystem::path(file).filename().string(),
                                          base64(bytes), ""});
        }
    }
    return blocks;
}

}  // namespace nucleo::cli
