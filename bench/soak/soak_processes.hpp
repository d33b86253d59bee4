// Child processes of the soak's coordinator (bench/soak): started, signalled and waited for with
// a deadline, never an unbounded wait.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nucleo::soak {

/// Starts `args[0]` with `args`, its stdout and stderr appended to `output`. Throws when it
/// cannot be started.
pid_t spawn(const std::vector<std::string>& args, const std::string& output);

/// The exit status of `pid` once it ended, nullopt while it runs (waitpid WNOHANG). A process
/// killed by a signal reports 128 + the signal, as a shell does.
std::optional<int> exited(pid_t pid);

/// Waits for `pid` to end until `deadline`, polling; nullopt when it still runs then.
std::optional<int> wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline);

/// Runs a shell command; its exit status (128 + signal when killed).
int run_shell(const std::string& command);

}  // namespace nucleo::soak
