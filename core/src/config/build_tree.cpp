// config.1: the build tree's libnucleo reads the source tree's config. Only this file sees the
// absolute folders of the build, so every other file of the library compiles the same in any
// checkout and ccache reuses it across clones (scripts/build).
#include "config/build_tree.hpp"

#include <system_error>

namespace nucleo::config_internal {

std::optional<std::filesystem::path> build_tree_config(const std::filesystem::path& library_dir) {
    std::error_code ec;
    if (!std::filesystem::equivalent(library_dir, NUCLEO_BUILD_TREE_LIB_DIR, ec) || ec)
        return std::nullopt;
    return std::filesystem::path(NUCLEO_SOURCE_CONFIG_DIR) / "nucleo.yaml";
}

}  // namespace nucleo::config_internal
