// Where a libnucleo that runs from its build tree reads its config (config.1).
#pragma once

#include <filesystem>
#include <optional>

namespace nucleo::config_internal {

/// The source tree's config/nucleo.yaml when `library_dir` is the build tree's library folder
/// (a build has no installed config beside it), else nullopt.
std::optional<std::filesystem::path> build_tree_config(const std::filesystem::path& library_dir);

}  // namespace nucleo::config_internal
