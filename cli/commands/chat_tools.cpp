// `nucleo chat`'s read-only folder tools (see chat_tools.hpp for the safety decision).
#include "commands/chat_tools.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <system_error>

#include "nucleo/errors.hpp"
#include "nucleo/schema.hpp"

namespace nucleo::cli::chat_tools {

/// list_files' arguments: a folder relative to the tools folder ("." or absent: the folder).
struct ListFilesInput {
    std::optional<std::string> path;
};

/// read_file's arguments: a file relative to the tools folder.
struct ReadFileInput {
    std::string path;
};

}  // namespace nucleo::cli::chat_tools

template <>
struct nucleo::Describe<nucleo::cli::chat_tools::ListFilesInput> {
    static constexpr std::string_view name = "ListFilesInput";
    static auto fields() {
        return std::tuple(schema::field("path", &nucleo::cli::chat_tools::ListFilesInput::path)
                              .description("A folder relative to the tools folder; omit for the "
                                           "tools folder itself"));
    }
};

template <>
struct nucleo::Describe<nucleo::cli::chat_tools::ReadFileInput> {
    static constexpr std::string_view name = "ReadFileInput";
    static auto fields() {
        return std::tuple(schema::field("path", &nucleo::cli::chat_tools::ReadFileInput::path)
                              .required()
                              .description("A file relative to the tools folder"));
    }
};

namespace nucleo::cli {

namespace fs = std::filesystem;
using chat_tools::ListFilesInput;
using chat_tools::ReadFileInput;

namespace {

/// `relative` resolved under `root` (already canonical), or nullopt when it leaves it: an
/// absolute path, `..` climbing out, or a symlink pointing elsewhere all resolve outside.
std::optional<fs::path> inside(const fs::path& root, const std::string& relative) {
    const fs::path asked(relative.empty() ? "." : relative);
    if (asked.is_absolute()) return std::nullopt;
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(root / asked, ec);
    if (ec) return std::nullopt;
    // Component-wise prefix: "/data/docs2" is not inside "/data/docs".
    auto r = root.begin();
    auto p = resolved.begin();
    for (; r != root.end(); ++r, ++p) {
        if (p == resolved.end() || *p != *r) return std::nullopt;
    }
    return resolved;
}

ToolOutput list_files(const fs::path& root, const ListFilesInput& in) {
    const std::string asked = in.path.value_or(".");
    const auto dir = inside(root, asked);
    if (!dir) return ToolOutput::error(asked + ": outside the tools folder");
    std::error_code ec;
    if (!fs::is_directory(*dir, ec)) return ToolOutput::error(asked + ": not a folder");
    std::vector<std::string> names;
    for (fs::directory_iterator it(*dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (it->is_directory(ec)) name += '/';
        names.push_back(std::move(name));
    }
    if (ec) return ToolOutput::error(asked + ": " + ec.message());
    std::sort(names.begin(), names.end());
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < kChatListLimit; ++i) out += names[i] + '\n';
    if (names.size() > kChatListLimit) {
        out += "(" + std::to_string(names.size() - kChatListLimit) + " more not listed)\n";
    }
    if (out.empty()) out = "(empty folder)\n";
    return {out, false};
}

ToolOutput read_file(const fs::path& root, const ReadFileInput& in) {
    const auto file = inside(root, in.path);
    if (!file) return ToolOutput::error(in.path + ": outside the tools folder");
    std::error_code ec;
    if (!fs::is_regular_file(*file, ec)) return ToolOutput::error(in.path + ": not a file");
    std::ifstream stream(*file, std::ios::binary);
    if (!stream) return ToolOutput::error(in.path + ": cannot open the file");
    std::string text(kChatReadLimit, '\0');
    stream.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(stream.gcount()));
    if (text.find('\0') != std::string::npos) {
        return ToolOutput::error(in.path + ": a binary file, not text");
    }
    if (stream.peek() != std::char_traits<char>::eof()) {
        text += "\n(cut at " + std::to_string(kChatReadLimit) + " bytes)";
    }
    return {text, false};
}

}  // namespace

std::vector<AgentTool> folder_tools(const fs::path& folder) {
    std::error_code ec;
    const fs::path root = fs::canonical(folder, ec);
    if (ec || !fs::is_directory(root, ec)) {
        throw Error(ErrorKind::kNotFound, "--tools-dir " + folder.string() + ": not a folder");
    }
    std::vector<AgentTool> tools;
    tools.push_back(make_tool<ListFilesInput>(
        "list_files", "Lists the files and folders of a folder inside the tools folder.",
        [root](const ListFilesInput& in) { return list_files(root, in); }));
    tools.push_back(make_tool<ReadFileInput>(
        "read_file", "Reads a text file inside the tools folder (up to 64 KiB).",
        [root](const ReadFileInput& in) { return read_file(root, in); }));
    return tools;
}

}  // namespace nucleo::cli
