// `nucleo plugins --check` (abi.105): each plugin is loaded in a child process (this very
// `nucleo`, run as `nucleo plugins --json [--path DIR] TARGET`), so a plugin whose init crashes or
// hangs is reported by name with its signal or its timeout, and the listing goes on.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::cli {

/// What a child made of one plugin: its info when it loaded, else one line saying why not.
struct PluginCheck {
    std::optional<PluginInfo> info;
    std::string failure;
};

/// How a child process ended: killed after `idle_timeout` without a line on stdout, or its
/// waitpid status, with what it wrote on stderr.
struct ChildRun {
    bool timed_out = false;
    int status = 0;
    std::string stderr_text;
};

/// Runs this very `nucleo` with `arguments` and `environment` (NAME=VALUE entries added to this
/// process's) in a child without core dumps, handing each line it writes on stdout to `on_line`;
/// killed when silent on stdout for `idle_timeout`. Throws Error kInternal when it cannot start.
ChildRun run_child(const std::vector<std::string>& arguments, const std::vector<std::string>& environment,
                   std::chrono::milliseconds idle_timeout, const std::function<void(const std::string&)>& on_line);

/// "10 s", or "1500 ms" for a time that is no whole number of seconds.
std::string seconds_text(std::chrono::milliseconds d);

/// --timeout SECONDS (in (0, 3600], default 10 s); UsageError on anything else.
std::chrono::milliseconds timeout_option(const Args& args);

/// "signal 11 (Segmentation fault)".
std::string describe_signal(int sig);

/// Loads `target` (a name or a file) in a child `nucleo plugins --json OPTIONS TARGET`, killing
/// the child after `timeout`. `options` are the parent's search options (--config, --path).
/// Never throws for what the plugin does; throws Error kInternal when no child could be started.
PluginCheck check_in_child(const std::string& target, const std::vector<std::string>& options,
                           std::chrono::milliseconds timeout);

}  // namespace nucleo::cli
