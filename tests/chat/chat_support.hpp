// The harness of the `nucleo chat` tests: the built binary against the real nucleo-emulator with
// the shipped config and an SQLite store in a temporary folder, run through pipes (run_piped) or
// a pseudo-terminal (PtyChat).
//
// Every read is bounded: poll() with the time left of one generous deadline per test, which
// fails the test (and kills the child) when reached. No sleeps.
#pragma once
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emulator_client.hpp"

extern char** environ;

namespace nucleo::chat_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Generous: a whole scripted session takes well under a second on an idle machine.
inline constexpr auto kDeadline = std::chrono::seconds(90);

/// A temporary folder removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "nucleo-chat-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) != nullptr) path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// The child's environment: ours, with the emulator as Anthropic's endpoint, the build's plugins
/// and the SQLite file in `dir`.
inline std::vector<std::string> chat_env(int port, const fs::path& dir, bool terminal) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv = *e;
        const auto dropped = {"ANTHROPIC_", "NUCLEO_", "NO_COLOR=", "TERM=", "USER="};
        if (std::none_of(dropped.begin(), dropped.end(),
                         [&](const char* d) { return kv.starts_with(d); })) {
            env.push_back(kv);
        }
    }
    env.push_back("ANTHROPIC_API_KEY=sk-test");
    env.push_back("ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(port));
    env.push_back(std::string("NUCLEO_PLUGIN_PATH=") + NUCLEO_BUILD_PLUGIN_DIR);
    env.push_back("NUCLEO_SQLITE_PATH=" + (dir / "chat.db").string());
    env.push_back("NUCLEO_LOG_LEVEL=warn");
    env.push_back(terminal ? "TERM=xterm" : "TERM=dumb");
    // chat.103: the line history goes to the test's folder.
    std::erase_if(env, [](const std::string& kv) { return kv.starts_with("XDG_STATE_HOME="); });
    env.push_back("XDG_STATE_HOME=" + (dir / "state").string());
    return env;
}

/// The shipped config unless `extra` names its own `--config`.
/// `--default-model` in `extra` (a test's marker, not passed on): no --model.
inline std::vector<std::string> chat_argv(std::vector<std::string> extra) {
    std::vector<std::string> argv = {NUCLEO_CLI, "chat"};
    if (std::find(extra.begin(), extra.end(), "--config") == extra.end()) {
        argv.insert(argv.end(),
                    {"--config", std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml"});
    }
    if (std::erase(extra, "--default-model") == 0)
        argv.insert(argv.end(), {"--model", "claude-sonnet-5-5"});
    argv.insert(argv.end(), {"--user", "alice"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
}

/// execve with string vectors; only called in a forked child.
[[noreturn]] inline void exec_child(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env) {
    std::vector<char*> a;
    std::vector<char*> e;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    e.push_back(nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
}

inline int wait_status(pid_t pid) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline int ms_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// ---- through a pipe ---------------------------------------------------------------------------

struct ChatRun {
    int status = -1;
    std::string out;
    std::string err;
    bool timed_out = false;
};

/// Runs `argv` (a `nucleo` command) with `input` on a pipe for stdin and the environment of
/// chat_env; collects stdout and stderr to EOF.
inline ChatRun run_command(const std::vector<std::string>& argv, int port, const fs::path& dir,
                           const std::string& input, const std::string& env_override = {}) {
    int in[2], out[2], err[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) return {};
    auto env = chat_env(port, dir, false);
    // NAME=value lines: each replaces the NAME chat_env set.
    std::istringstream overrides(env_override);
    for (std::string kv; std::getline(overrides, kv);) {
        if (kv.empty()) continue;
        const std::string name = kv.substr(0, kv.find('=') + 1);
        std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
        env.push_back(kv);
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        exec_child(argv, env);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ChatRun r;
    // The input is small (far under a pipe's buffer): written whole, then end of input.
    std::size_t written = 0;
    ::signal(SIGPIPE, SIG_IGN);
    while (written < input.size()) {
        const ssize_t n = ::write(in[1], input.data() + written, input.size() - written);
        if (n <= 0) break;
        written += static_cast<std::size_t>(n);
    }
    ::close(in[1]);
    const auto deadline = Clock::now() + kDeadline;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open = 2;
    while (open > 0) {
        const int ready = ::poll(fds, 2, ms_left(deadline));
        if (ready == 0) {
            r.timed_out = true;
            ::kill(pid, SIGKILL);
            break;
        }
        if (ready < 0 && errno == EINTR) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[4096];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (auto& f : fds) {
        if (f.fd >= 0) ::close(f.fd);
    }
    r.status = wait_status(pid);
    return r;
}

/// Runs `nucleo chat` with `input` on a pipe for stdin; collects stdout and stderr to EOF.
inline ChatRun run_piped(int port, const fs::path& dir, const std::vector<std::string>& extra,
                         const std::string& input, const std::string& env_override = {}) {
    return run_command(chat_argv(extra), port, dir, input, env_override);
}

/// The id in "conversation ID (new)".
inline std::string minted_id(const std::string& text) {
    std::smatch m;
    const std::regex re("conversation (\\S+) \\(new\\)");
    return std::regex_search(text, m, re) ? m[1].str() : std::string();
}

inline std::size_t count_lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// A folder of 80 files with long names: listing it is a tool result of about 2,000 tokens.
inline fs::path many_long_names(const fs::path& dir) {
    const fs::path tools = dir / "many";
    fs::create_directories(tools);
    for (int i = 0; i < 80; ++i) {
        std::ofstream(tools / ("quarterly-shipment-report-for-depot-number-" + std::to_string(i) +
                               "-with-parcels-and-signatures.txt"))
            << i;
    }
    return tools;
}

// ---- through a pseudo-terminal ----------------------------------------------------------------

/// `nucleo chat` on a pseudo-terminal: what a person at a terminal sees and types.
class PtyChat {
  public:
    PtyChat(int port, const fs::path& dir, const std::vector<std::string>& extra)
        : deadline_(Clock::now() + kDeadline) {
        const auto argv = chat_argv(extra);
        const auto env = chat_env(port, dir, true);
        winsize size{};
        size.ws_row = 40;
        size.ws_col = 200;
        pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
        if (pid_ == 0) exec_child(argv, env);
    }
    ~PtyChat() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            wait_status(pid_);
        }
        if (master_ >= 0) ::close(master_);
    }
    PtyChat(const PtyChat&) = delete;
    PtyChat& operator=(const PtyChat&) = delete;

    [[nodiscard]] bool started() const { return pid_ > 0 && master_ >= 0; }

    /// Reads until `marker` appears after what was consumed; returns the text before it (and
    /// consumes the marker). Fails the test at the deadline or at end of output.
    std::string until(const std::string& marker) {
        while (true) {
            const auto at = seen_.find(marker, cursor_);
            if (at != std::string::npos) {
                std::string chunk = seen_.substr(cursor_, at - cursor_);
                cursor_ = at + marker.size();
                return chunk;
            }
            if (!read_some()) {
                ADD_FAILURE() << "no '" << marker << "' in the terminal output:\n"
                              << seen_.substr(cursor_);
                return seen_.substr(cursor_);
            }
        }
    }

    /// A line typed at the prompt.
    void type(const std::string& line) { edit(line + "\n"); }

    /// Keys typed at the prompt, for the line editor: sent once the editor owns the terminal.
    /// The prompt can reach the screen a moment before the editor switches the terminal out of
    /// canonical mode; keys sent in between are read by the kernel's line discipline (which
    /// echoes them and takes Ctrl-V for itself), not by the editor a person at the prompt types to.
    void edit(const std::string& bytes) {
        await_line_editor();
        keys(bytes);
    }

    /// Bytes as the keyboard sends them (arrows as escape sequences, Ctrl-C as \x03), at once:
    /// for keys pressed while a turn runs.
    void keys(const std::string& bytes) {
        ASSERT_EQ(::write(master_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    }

    /// Reads to end of output and returns the exit status.
    int finish() {
        while (read_some()) {
        }
        if (Clock::now() >= deadline_) ::kill(pid_, SIGKILL);  // hung: never wait forever
        reaped_ = true;
        return wait_status(pid_);
    }

    [[nodiscard]] const std::string& everything() const { return seen_; }

  private:
    /// Waits, up to the deadline, until the terminal is out of canonical mode, as the line editor
    /// sets it while it reads a line (on Linux the master reports the terminal's modes).
    void await_line_editor() {
        while (Clock::now() < deadline_) {
            termios modes{};
            if (::tcgetattr(master_, &modes) == 0 && (modes.c_lflag & ICANON) == 0) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        ADD_FAILURE() << "the line editor never took the terminal:\n" << seen_.substr(cursor_);
    }

    /// One bounded read; false at end of output (EIO once the child closed the terminal) or at
    /// the deadline (a test failure).
    bool read_some() {
        pollfd p{master_, POLLIN, 0};
        while (true) {
            const int ready = ::poll(&p, 1, ms_left(deadline_));
            if (ready < 0 && errno == EINTR) continue;
            if (ready == 0) {
                ADD_FAILURE() << "the chat did not answer within the deadline";
                return false;
            }
            break;
        }
        char buf[4096];
        const ssize_t n = ::read(master_, buf, sizeof buf);
        if (n <= 0) return false;
        seen_.append(buf, static_cast<std::size_t>(n));
        return true;
    }

    Clock::time_point deadline_;
    int master_ = -1;
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string seen_;
    std::size_t cursor_ = 0;
};

inline constexpr const char* kPrompt = "you> ";

}  // namespace nucleo::chat_test
