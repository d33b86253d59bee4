// Servers the Streamable HTTP tests start: the hostile fixture (hostile_http_server.cpp), which
// names the port it took, and server-everything, given a port the test found free and waited on
// by connecting (a bounded number of tries).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nucleo/mcp.hpp"

extern char** environ;

namespace mcp_test {

/// A server process for one test, killed and reaped when the test ends.
class ServerProcess {
  public:
    /// Starts `argv` with `env` added; `out_fd`, when given, receives the read end of its stdout.
    ServerProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                  int* out_fd = nullptr) {
        int pipe_fds[2] = {-1, -1};
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        if (out_fd != nullptr) {
            if (::pipe(pipe_fds) != 0) return;
            posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
            posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
        } else {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        }
        std::vector<std::string> all_env;
        for (char** e = environ; *e != nullptr; ++e) all_env.emplace_back(*e);
        all_env.insert(all_env.end(), env.begin(), env.end());
        std::vector<char*> args, envp;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        for (const auto& e : all_env) envp.push_back(const_cast<char*>(e.c_str()));
        envp.push_back(nullptr);
        if (::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), envp.data()) != 0)
            pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
        if (out_fd != nullptr) {
            ::close(pipe_fds[1]);
            *out_fd = pipe_fds[0];
        }
    }
    ~ServerProcess() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;
    [[nodiscard]] bool started() const { return pid_ > 0; }

  private:
    pid_t pid_ = -1;
};

/// The hostile HTTP fixture in `mode`, its tools `first` listed first (comma-separated); its URL,
/// or empty when it did not name its port.
inline std::string start_hostile_http(std::unique_ptr<ServerProcess>& process,
                                      const std::string& mode = "well",
                                      const std::string& first = {}) {
    int out = -1;
    std::vector<std::string> argv = {HOSTILE_HTTP_SERVER, mode};
    if (!first.empty()) argv.push_back(first);
    process = std::make_unique<ServerProcess>(argv, std::vector<std::string>{}, &out);
    std::string line;
    char c = 0;
    while (out >= 0 && ::read(out, &c, 1) == 1 && c != '\n') line += c;
    if (out >= 0) ::close(out);
    if (line.rfind("PORT ", 0) != 0) return {};
    return "http://127.0.0.1:" + line.substr(5) + "/mcp";
}

/// A port nothing listens on right now (the system's pick for a socket bound to port 0).
inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(s);
    return ntohs(addr.sin_port);
}

/// Whether something accepts connections on 127.0.0.1:`port`, tried `tries` times, 50 ms apart.
inline bool wait_for_port(int port, int tries) {
    for (int i = 0; i < tries; ++i) {
        const int s = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        const bool up = ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        ::close(s);
        if (up) return true;
        ::poll(nullptr, 0, 50);
    }
    return false;
}

/// A server spec named "hostile-http" for the fixture at `url`.
inline nucleo::mcp::ServerSpec http_spec(const std::string& url) {
    nucleo::mcp::ServerSpec spec;
    spec.name = "hostile-http";
    spec.url = url;
    return spec;
}

/// The hostile HTTP fixture in `mode`, started for one test; fails the test when it does not
/// come up.
struct HostileHttp {
    std::unique_ptr<ServerProcess> process;
    std::string url;
    explicit HostileHttp(const std::string& mode = "well")
        : url(start_hostile_http(process, mode)) {
        EXPECT_FALSE(url.empty()) << "the hostile HTTP server named no port";
    }
    [[nodiscard]] nucleo::mcp::ServerSpec spec() const { return http_spec(url); }
};

}  // namespace mcp_test
