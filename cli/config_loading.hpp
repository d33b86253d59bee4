// Finding and loading the config for a `nucleo` subcommand: `--config FILE`,
// else NUCLEO_CONFIG, else ./config/nucleo.yaml, else the installed config.
#pragma once

#include <filesystem>

#include "args.hpp"
#include "nucleo/config.hpp"

namespace nucleo::cli {

/// The option name every config-reading subcommand accepts (`--config FILE`); add it to
/// Args::allow_only.
inline constexpr const char* kConfigOption = "config";

/// `--config FILE` if given, else nucleo::Config::default_path().
std::filesystem::path config_path(const Args& args);

/// Loads the config config_path() names. Throws nucleo::Error (kConfig / kNotFound), which
/// main() prints as one line and turns into exit status 2.
nucleo::Config load_config(const Args& args);

}  // namespace nucleo::cli
