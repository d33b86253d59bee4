// abi.105: one child process per plugin for `nucleo plugins --check`.
#include "commands/plugin_check.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>

#include <rapidjson/document.h>

#include "common/process_text.hpp"
#include "nucleo/errors.hpp"

extern char** environ;

namespace nucleo::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A pipe's two ends, closed when it goes.
struct Pipe {
    std::array<int, 2> fd{-1, -1};
    Pipe() {
        if (::pipe2(fd.data(), O_CLOEXEC) != 0)
            throw Error(ErrorKind::kInternal, std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    ~Pipe() {
        close_end(0);
        close_end(1);
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    void close_end(int i) {
        if (fd[i] >= 0) ::close(fd[i]);
        fd[i] = -1;
    }
};

std::string self_executable() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error(ErrorKind::kInternal, "cannot find the nucleo executable: " + ec.message());
    return self.string();
}

std::string first_line(std::string text) {
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    return text;
}

/// The one plugin of `nucleo plugins --json` output, if it lists exactly one.
std::optional<PluginInfo> read_listing(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("plugins") || !d["plugins"].IsArray() ||
        d["plugins"].Size() != 1 || !d["plugins"][0].IsObject())
        return std::nullopt;
    const auto& p = d["plugins"][0];
    const auto text = [&](const char* k) {
        return p.HasMember(k) && p[k].IsString() ? std::string(p[k].GetString()) : std::string();
    };
    const auto number = [&](const char* k) { return p.HasMember(k) && p[k].IsUint() ? p[k].GetUint() : 0U; };
    PluginInfo info;
    info.name = text("name");
    info.version = text("version");
    info.description = text("description");
    info.file = text("file");
    info.abi_major = number("abi_major");
    info.abi_minor = number("abi_minor");
    if (p.HasMember("factories") && p["factories"].IsArray())
        for (const auto& f : p["factories"].GetArray())
            if (f.IsString()) info.factories.emplace_back(f.GetString());
    return info;
}

}  // namespace

ChildRun run_child(const std::vector<std::string>& arguments, const std::vector<std::string>& environment,
                   std::chrono::milliseconds idle_timeout, const std::function<void(const std::string&)>& on_line) {
    std::vector<std::string> args = arguments;
    args.insert(args.begin(), self_executable());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text = environment;
    for (char** e = environ; *e != nullptr; ++e) env_text.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    // A plugin that crashes is reported, not dumped: no core file from the checks.
    rlimit core{};
    if (::getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_cur != 0) {
        core.rlim_cur = 0;
        (void)::setrlimit(RLIMIT_CORE, &core);
    }
    Pipe out;
    Pipe err;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        throw Error(ErrorKind::kInternal, std::string("cannot start a child process: ") + std::strerror(spawned));
    out.close_end(1);
    err.close_end(1);

    // Read both pipes until the child closes them or it is silent on stdout for idle_timeout.
    ChildRun run;
    std::string pending;
    Clock::time_point deadline = Clock::now() + idle_timeout;
    std::array<pollfd, 2> fds{pollfd{out.fd[0], POLLIN, 0}, pollfd{err.fd[0], POLLIN, 0}};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            run.timed_out = true;
            break;
        }
        const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            std::array<char, 4096> buf{};
            const ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
            if (n > 0) {
                if (i == 1) {
                    run.stderr_text.append(buf.data(), static_cast<std::size_t>(n));
                    continue;
                }
                pending.append(buf.data(), static_cast<std::size_t>(n));
                for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
                    on_line(pending.substr(0, nl));
                    pending.erase(0, nl + 1);
                    deadline = Clock::now() + idle_timeout;
                }
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
            }
        }
    }
    if (!pending.empty()) on_line(pending);
    if (run.timed_out) ::kill(pid, SIGKILL);
    while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
    }
    return run;
}

// One spelling with the helper of `isolation: process` (abi.130).
std::string describe_signal(int sig) { return internal::signal_text(sig); }

std::string seconds_text(std::chrono::milliseconds d) { return internal::duration_text(d); }

std::chrono::milliseconds timeout_option(const Args& args) {
    std::chrono::milliseconds timeout{10000};
    if (auto t = args.get("timeout")) {
        char* end = nullptr;
        const double seconds = std::strtod(t->c_str(), &end);
        if (end == t->c_str() || *end != '\0' || !(seconds > 0) || seconds > 3600)
            throw UsageError{"--timeout expects seconds between 0 and 3600, got '" + *t + "'"};
        timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
    }
    return timeout;
}

PluginCheck check_in_child(const std::string& target, const std::vector<std::string>& options,
                           std::chrono::milliseconds timeout) {
    std::vector<std::string> args = {"plugins", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(target);
    std::string stdout_text;
    const ChildRun run = run_child(args, {}, timeout, [&](const std::string& line) { stdout_text += line + "\n"; });
    const bool timed_out = run.timed_out;
    const int status = run.status;
    const std::string& stderr_text = run.stderr_text;

    PluginCheck check;
    if (timed_out) {
        check.failure = "plugin " + target + " did not finish loading within " + seconds_text(timeout) +
                        "; the child loading it was killed";
    } else if (WIFSIGNALED(status)) {
        check.failure = "plugin " + target + " crashed while loading: " + describe_signal(WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        check.info = read_listing(stdout_text);
        if (!check.info) check.failure = "plugin " + target + ": the check gave no listing";
    } else {
        std::string why = first_line(stderr_text);
        const std::string prefix = "nucleo plugins: ";
        if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        check.failure = why.empty() ? "plugin " + target + ": the check exited with status " +
                                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1)
                                    : why;
    }
    return check;
}

}  // namespace nucleo::cli
