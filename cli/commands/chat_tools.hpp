// The default tool palette of `nucleo chat` (tool calls show as they happen).
//
// Decision: the chat's tools are read-only and confined to one folder the user names with
// `--tools-dir DIR`; without it the chat has no tools at all. A chat must be safe to point at a
// real model, so nothing writes, runs a program or reaches the network, and nothing outside DIR
// is readable: a path is resolved (symlinks followed) and refused unless it stays inside DIR.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nucleo/agent.hpp"

namespace nucleo::cli {

/// At most this many bytes of a file are returned by read_file (the rest is cut, and the tool's
/// text says so), so one call cannot flood the conversation.
inline constexpr std::size_t kChatReadLimit = 64 * 1024;
/// At most this many entries are listed by list_files.
inline constexpr std::size_t kChatListLimit = 200;

/// `list_files` (entries of a folder under `root`, `/` after folder names, sorted) and
/// `read_file` (a text file under `root`). `root` must be an existing folder (Error kNotFound
/// naming it otherwise). Errors inside a call (a path outside `root`, a missing file) become
/// is_error results for the model to read, never a crash.
std::vector<AgentTool> folder_tools(const std::filesystem::path& root);

}  // namespace nucleo::cli
