// Finding and loading the config for a `nucleo` subcommand: `--config FILE`, else
// nucleo::Config::default_path() (config.1).
#pragma once

#include <filesystem>

#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "nucleo/config.hpp"
#include "nucleo/configured.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

namespace nucleo::cli {

/// The key of the option every config-reading subcommand declares (config_option(), args.hpp).
inline constexpr const char* kConfigOption = "config";

/// `--config FILE` if given, else nucleo::Config::default_path().
std::filesystem::path config_path(const Args& args);

/// Loads the config config_path() names. Throws nucleo::Error (kConfig / kNotFound), which
/// main() prints as one line and turns into exit status 2. A `plugins.paths` entry that is not a
/// folder is a warning on stderr ("nucleo: warning: FILE: plugins.paths: no folder DIR").
nucleo::Config load_config(const Args& args);

/// A `${VAR}` without a default in the config's files (the file and what it includes) whose
/// variable is unset, so it expanded to "".
struct UnsetVariable {
    std::string name;   ///< "NUCLEO_SQLITE_PATH"
    std::string where;  ///< "FILE:LINE"
    int line = 0;
    std::string file;
};
std::vector<UnsetVariable> unset_variables(const nucleo::Config& config);

/// Loads every plugin the config names (each provider instance's, the stores', the
/// summarizer's). The first that cannot be loaded is Error kPlugin starting with its
/// "FILE:LINE:COLUMN: providers.NAME.plugin: " and the loader's reason (which lists the folders
/// searched).
void resolve_plugins(const nucleo::Config& config, const nucleo::PluginLoader& loader);

/// The stores the config chooses (nucleo/configured.hpp).
using nucleo::ConfiguredStores;

}  // namespace nucleo::cli
