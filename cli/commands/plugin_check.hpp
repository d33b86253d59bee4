// `nucleo plugins --check` (abi.105): each plugin is loaded in a child process (this very
// `nucleo`, run as `nucleo plugins --json [--path DIR] TARGET`), so a plugin whose init crashes or
// hangs is reported by name with its signal or its timeout, and the listing goes on.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "nucleo/plugins.hpp"

namespace nucleo::cli {

/// What a child made of one plugin: its info when it loaded, else one line saying why not.
struct PluginCheck {
    std::optional<PluginInfo> info;
    std::string failure;
};

/// Loads `target` (a name or a file) in a child `nucleo plugins --json OPTIONS TARGET`, killing
/// the child after `timeout`. `options` are the parent's search options (--config, --path).
/// Never throws for what the plugin does; throws Error kInternal when no child could be started.
PluginCheck check_in_child(const std::string& target, const std::vector<std::string>& options,
                           std::chrono::milliseconds timeout);

}  // namespace nucleo::cli
