#include "mcp/stdio_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "nucleo/errors.hpp"

extern char** environ;

namespace nucleo::mcp_internal {
namespace {

// A stderr line longer than this is logged in pieces, so a server cannot grow the host's memory
// through its diagnostics (mcp.4).
constexpr std::size_t kMaxStderrLine = 4096;
// How long ending() waits for a server whose output closed to exit, before calling it alive.
constexpr int kEndingWaitMs = 2000;

int milliseconds_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const std::string_view key = entry.substr(0, entry.find('='));
        const bool overridden =
            std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == key; });
        if (!overridden) out.emplace_back(entry);
    }
    for (const auto& [key, value] : env) out.push_back(key + "=" + value);
    return out;
}

}  // namespace

StdioProcess::StdioProcess(std::string server, const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& env)
    : server_(std::move(server)) {
    if (argv.empty() || argv.front().empty())
        throw Error(ErrorKind::kInvalidArgument,
                    "MCP server '" + server_ + "': no command to start");
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw Error(ErrorKind::kInternal, "pipe2 failed");
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        ::close(in_pipe[0]);
        ::close(in_pipe[1]);
        throw Error(ErrorKind::kInternal, "pipe2 failed");
    }
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
        for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
        throw Error(ErrorKind::kInternal, "pipe2 failed");
    }
    std::vector<std::string> args = argv;
    std::vector<char*> c_args;
    for (auto& a : args) c_args.push_back(a.data());
    c_args.push_back(nullptr);
    std::vector<std::string> vars = environment_with(env);
    std::vector<char*> c_vars;
    for (auto& v : vars) c_vars.push_back(v.data());
    c_vars.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    // mcp.6: a process group of its own, so closing kills whatever the server started too, and
    // the terminal's Ctrl-C (meant for the host, which cancels a turn) never reaches it. The
    // host's blocked signals are not the server's.
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    pid_t pid = -1;
    const int spawned =
        ::posix_spawnp(&pid, c_args[0], &actions, &attributes, c_args.data(), c_vars.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    in_ = in_pipe[1];
    out_ = out_pipe[0];
    err_ = err_pipe[0];
    if (spawned != 0) {
        close_fd(in_);
        close_fd(out_);
        close_fd(err_);
        throw Error(ErrorKind::kTransport, "MCP server '" + server_ + "': cannot start '" +
                                               argv.front() + "': " + std::strerror(spawned));
    }
    pid_ = pid;
    for (int fd : {in_, out_, err_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

StdioProcess::~StdioProcess() {
    close_fd(in_);
    kill();
    drain_stderr(true);
    close_fd(out_);
    close_fd(err_);
}

void StdioProcess::kill() {
    if (pid_ <= 0 || reaped_) return;
    // mcp.6: the whole group, never waited for politely: a server holds nothing the host needs
    // after its last answer, and a hung one would hang the host's close.
    ::kill(-pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
}

bool StdioProcess::write(std::string_view bytes, Clock::time_point deadline) {
    if (in_ < 0) return false;
    // A write to a server that closed its input raises SIGPIPE, which would end the host: the
    // signal is blocked on this thread for the write, and a pending one is taken back.
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    bool ok = true;
    bool broke = false;
    while (!bytes.empty()) {
        const ssize_t n = ::write(in_, bytes.data(), bytes.size());
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            // The pipe is full: read what the server says meanwhile, so neither side waits on
            // the other.
            pollfd p[3] = {{in_, POLLOUT, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
            const int ready = ::poll(p, stdout_closed_ ? 1 : 3, milliseconds_left(deadline));
            if (ready == 0 && Clock::now() >= deadline) {
                ok = false;
                break;
            }
            if ((p[1].revents & (POLLIN | POLLHUP)) != 0 ||
                (p[2].revents & (POLLIN | POLLHUP)) != 0)
                pump(Clock::now());
            continue;
        }
        broke = (n < 0 && errno == EPIPE);
        ok = false;
        break;
    }
    if (broke) {
        const timespec zero{0, 0};
        while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return ok;
}

void StdioProcess::drain_stderr(bool flush_all) {
    for (;;) {
        std::size_t end = stderr_buffer_.find('\n');
        if (end == std::string::npos) {
            if (stderr_buffer_.size() < kMaxStderrLine && !(flush_all && !stderr_buffer_.empty()))
                return;
            end = std::min(stderr_buffer_.size(), kMaxStderrLine);
        }
        const std::string_view line(stderr_buffer_.data(), end);
        // mcp.4: the server's stderr is its log, not a failure.
        if (!line.empty())
            NUCLEO_LOG_INFO("MCP server '{}': {}", server_, internal::printable_utf8(line));
        stderr_buffer_.erase(0, std::min(stderr_buffer_.size(), end + 1));
    }
}

bool StdioProcess::pump(Clock::time_point deadline) {
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const bool watch_err = err_ >= 0;
    const int count = watch_err ? 2 : 1;
    if (stdout_closed_) {
        p[0].fd = -1;
    }
    const int ready = ::poll(p, static_cast<nfds_t>(count), milliseconds_left(deadline));
    if (ready < 0) return errno == EINTR;
    if (ready == 0) return false;
    char buffer[65536];
    if (watch_err && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = ::read(err_, buffer, sizeof buffer);
        if (n > 0) {
            stderr_buffer_.append(buffer, static_cast<std::size_t>(n));
            drain_stderr(false);
        } else if (n == 0) {
            drain_stderr(true);
            close_fd(err_);
        }
    }
    if (!stdout_closed_ && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = ::read(out_, buffer, sizeof buffer);
        if (n > 0) {
            stdout_buffer_.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0) {
            stdout_closed_ = true;
        }
    }
    return true;
}

StdioProcess::Read StdioProcess::read_line(std::string& line, Clock::time_point deadline,
                                           std::size_t max_bytes) {
    for (;;) {
        const std::size_t end = stdout_buffer_.find('\n');
        if (end != std::string::npos && end <= max_bytes) {
            line.assign(stdout_buffer_, 0, end);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            stdout_buffer_.erase(0, end + 1);
            return Read::kLine;
        }
        // mcp.13: a message past the limit is not read on; the caller gives the server up.
        if (stdout_buffer_.size() > max_bytes) {
            stdout_buffer_.clear();
            return Read::kOversized;
        }
        if (stdout_closed_) return Read::kClosed;
        if (!pump(deadline) && Clock::now() >= deadline) return Read::kTimeout;
    }
}

std::string StdioProcess::ending() {
    if (!reaped_ && pid_ > 0) {
        // The output closes a moment before the process is gone: wait for its exit on a pidfd,
        // bounded, so a server that closed stdout and lives on cannot hold the caller.
        const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
        if (pidfd >= 0) {
            pollfd p{pidfd, POLLIN, 0};
            while (::poll(&p, 1, kEndingWaitMs) < 0 && errno == EINTR) {
            }
            ::close(pidfd);
        }
        pid_t done = -1;
        while ((done = ::waitpid(pid_, &status_, WNOHANG)) < 0 && errno == EINTR) {
        }
        if (done != pid_) return "closed its output";
        reaped_ = true;
    }
    drain_stderr(true);
    if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "was killed by signal " + std::to_string(WTERMSIG(status_));
    return "ended";
}

}  // namespace nucleo::mcp_internal
