// The stdio transport's child process (mcp.4 to mcp.6): an MCP server started with pipes on its
// stdin, stdout and stderr, in a process group of its own, its stderr lines sent to the log.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nucleo::mcp_internal {

using Clock = std::chrono::steady_clock;

class StdioProcess {
  public:
    enum class Read { kLine, kTimeout, kClosed, kOversized };

    /// Starts `argv` (argv[0] looked up on PATH) with `env` added to the host's environment.
    /// Throws Error(kTransport) naming `server` when it cannot be started.
    StdioProcess(std::string server, const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& env);
    /// mcp.6: kills the process group and reaps the server.
    ~StdioProcess();
    StdioProcess(const StdioProcess&) = delete;
    StdioProcess& operator=(const StdioProcess&) = delete;

    /// Writes all of `bytes` before `deadline`; false when the server stopped reading (it closed
    /// its input, or the deadline passed with the pipe full).
    bool write(std::string_view bytes, Clock::time_point deadline);
    /// The next line of the server's stdout (without its newline) into `line`. kOversized once a
    /// line passes `max_bytes` (nothing more of it is kept); kClosed when the output ended.
    Read read_line(std::string& line, Clock::time_point deadline, std::size_t max_bytes);
    /// How the server ended ("exited with status 3", "was killed by signal 11"), waiting a
    /// bounded time for it to end after its output closed; "closed its output" if it lives on.
    std::string ending();
    /// Kills the process group now (a server given up on).
    void kill();

  private:
    /// Waits until `deadline` for output of either stream and reads what came (stdout into the
    /// line buffer, stderr to the log); false when nothing came.
    bool pump(Clock::time_point deadline);
    void drain_stderr(bool flush_all);

    std::string server_;
    pid_t pid_ = -1;
    int in_ = -1;   // the server's stdin (we write)
    int out_ = -1;  // its stdout (we read)
    int err_ = -1;  // its stderr (we read, to the log)
    bool reaped_ = false;
    int status_ = 0;
    std::string stdout_buffer_;
    std::string stderr_buffer_;
    bool stdout_closed_ = false;
};

}  // namespace nucleo::mcp_internal
