// Finding and loading the config for a `nucleo` subcommand: `--config FILE`,
// else NUCLEO_CONFIG, else ./config/nucleo.yaml, else the installed config.
#pragma once

#include <filesystem>

#include <optional>
#include <string>

#include "args.hpp"
#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

namespace nucleo::cli {

/// The key of the option every config-reading subcommand declares (config_option(), args.hpp).
inline constexpr const char* kConfigOption = "config";

/// `--config FILE` if given, else nucleo::Config::default_path().
std::filesystem::path config_path(const Args& args);

/// Loads the config config_path() names. Throws nucleo::Error (kConfig / kNotFound), which
/// main() prints as one line and turns into exit status 2.
nucleo::Config load_config(const Args& args);

/// The stores the config chooses (stores.persistent, stores.session), opened at start so every
/// command that reaches a store uses both (persistence.106). A plugin that is unknown, refuses its
/// options or cannot reach its server fails here with the error's own kind, the message
/// starting with the choice's "FILE:LINE:COLUMN: stores.session (redis): ".
struct ConfiguredStores {
    std::optional<nucleo::PersistentStore> persistent;
    std::optional<nucleo::SessionStore> session;
    /// "stores.persistent (sqlite, file PATH) at FILE:LINE:COLUMN", or "" without one.
    std::string persistent_where;
};
ConfiguredStores open_stores(const nucleo::Config& config, const nucleo::PluginLoader& loader);

}  // namespace nucleo::cli
