// `nucleo chat`, the built binary against the real nucleo-emulator with the
// shipped config and an SQLite store in a temporary folder: a scripted session through a
// pseudo-terminal (a real tty: prompts, streamed answer, /cost, /history, /quit), and scripts
// through pipes (two messages, then a second process resuming the conversation; an unknown slash
// command; tool calls; a provider that is down; start-up errors).
//
// Every read is bounded: poll() with the time left of one generous deadline per test, which
// fails the test (and kills the child) when reached. No sleeps.
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

namespace nucleo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Generous: a whole scripted session takes well under a second on an idle machine.
constexpr auto kDeadline = std::chrono::seconds(90);

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
std::vector<std::string> chat_env(int port, const fs::path& dir, bool terminal) {
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
std::vector<std::string> chat_argv(std::vector<std::string> extra) {
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
[[noreturn]] void exec_child(const std::vector<std::string>& argv,
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

int wait_status(pid_t pid) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ms_left(Clock::time_point deadline) {
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

/// Runs `nucleo chat` with `input` on a pipe for stdin; collects stdout and stderr to EOF.
ChatRun run_piped(int port, const fs::path& dir, const std::vector<std::string>& extra,
                  const std::string& input, const std::string& env_override = {}) {
    int in[2], out[2], err[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) return {};
    const auto argv = chat_argv(extra);
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

/// The id in "conversation ID (new)".
std::string minted_id(const std::string& text) {
    std::smatch m;
    const std::regex re("conversation (\\S+) \\(new\\)");
    return std::regex_search(text, m, re) ? m[1].str() : std::string();
}

std::size_t count_lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// A folder of 80 files with long names: listing it is a tool result of about 2,000 tokens.
fs::path many_long_names(const fs::path& dir) {
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

constexpr const char* kPrompt = "you> ";

// ---- the tests --------------------------------------------------------------------------------

TEST(ChatTerminal, AScriptedSessionStreamsAnswersAndReportsCostAndHistory) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string greeting = chat.until(kPrompt);
    EXPECT_NE(minted_id(greeting), "") << greeting;
    EXPECT_NE(greeting.find("\x1b["), std::string::npos) << "a terminal gets colour";

    chat.type("Where is my parcel");
    const std::string answer = chat.until(kPrompt);
    EXPECT_NE(answer.find("This is the emulator's answer to: Where is my parcel"),
              std::string::npos)
        << answer;
    EXPECT_NE(answer.find("1 round"), std::string::npos) << answer;
    // The answer came as a stream: the emulator served a streamed response.
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"streams\":1"), std::string::npos) << stats.body;

    chat.type("/cost");
    const std::string cost = chat.until(kPrompt);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        cost, m,
        std::regex("cost: 1 turn, 1 round; tokens in ([0-9]+) \\(cache read [0-9]+, cache write "
                   "[0-9]+\\), out ([0-9]+); cache hit rate [0-9.]+%; spend \\$([0-9.]+)")))
        << cost;
    EXPECT_GT(std::stoll(m[1].str()), 0);
    EXPECT_GT(std::stoll(m[2].str()), 0);
    EXPECT_GT(std::stod(m[3].str()), 0.0);

    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: Where is my parcel"), std::string::npos) << history;
    EXPECT_NE(history.find("2. assistant: This is the emulator's answer to: Where is my parcel"),
              std::string::npos)
        << history;

    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

TEST(ChatPipe, TwoMessagesThenASecondProcessResumesTheConversation) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first =
        run_piped(emulator.port(), dir.path, {"--new"}, "first question\nsecond question\n");
    ASSERT_FALSE(first.timed_out);
    ASSERT_EQ(first.status, 0) << first.err;
    // stdout is for scripts: the two answers, one line each, no prompt, no ANSI.
    EXPECT_EQ(first.out,
              "This is the emulator's answer to: first question\n"
              "This is the emulator's answer to: second question\n");
    const std::string id = minted_id(first.err);
    ASSERT_FALSE(id.empty()) << first.err;

    const ChatRun second = run_piped(emulator.port(), dir.path, {"--conversation", id},
                                     "/history\nthird question\n/history\n");
    ASSERT_FALSE(second.timed_out);
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_NE(second.err.find("conversation " + id + " (resumed, 4 messages)"), std::string::npos)
        << second.err;
    EXPECT_EQ(second.out.find("\x1b["), std::string::npos);
    EXPECT_EQ(second.out.find(kPrompt), std::string::npos);
    const std::string restored =
        "1. user: first question\n"
        "2. assistant: This is the emulator's answer to: first question\n"
        "3. user: second question\n"
        "4. assistant: This is the emulator's answer to: second question\n";
    EXPECT_EQ(second.out, restored + "This is the emulator's answer to: third question\n" +
                              restored +
                              "5. user: third question\n"
                              "6. assistant: This is the emulator's answer to: third question\n");
}

TEST(ChatPipe, AnUnknownSlashCommandIsNamedAndTheSessionGoesOn) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r =
        run_piped(emulator.port(), dir.path, {}, "/frobnicate now\n/compact 10x\nhello\n/cost\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("unknown command '/frobnicate'"), std::string::npos) << r.err;
    for (const char* c : {"/history", "/transcript", "/compact", "/cost", "/new", "/quit"}) {
        EXPECT_NE(r.err.find(c), std::string::npos) << c << " not listed: " << r.err;
    }
    EXPECT_NE(
        r.err.find("nucleo chat: /compact: TOKENS must be a positive whole number, got '10x'"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cost: 1 turn"), std::string::npos) << r.out;
}

// chat.112: /undo takes back the last exchange and saves; /retry asks the last message again and
// replaces its answer; both are kept when the conversation is resumed.
TEST(ChatPipe, UndoTakesBackTheLastExchangeAndRetryReplacesItsAnswer) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first = run_piped(emulator.port(), dir.path, {"--new"},
                                    "first question\nsecond question\n/undo\n/history\n"
                                    "third question\n/retry\n/history\n");
    ASSERT_FALSE(first.timed_out);
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_NE(first.err.find("[took back \"second question\" and 1 message after it]"),
              std::string::npos)
        << first.err;
    EXPECT_NE(first.err.find("[took back \"third question\" and 1 message after it]"),
              std::string::npos)
        << first.err;
    const std::string after_undo =
        "1. user: first question\n"
        "2. assistant: This is the emulator's answer to: first question\n";
    const std::string after_retry =
        after_undo +
        "3. user: third question\n"
        "4. assistant: This is the emulator's answer to: third question\n";
    EXPECT_EQ(first.out,
              "This is the emulator's answer to: first question\n"
              "This is the emulator's answer to: second question\n" +
                  after_undo +
                  "This is the emulator's answer to: third question\n"
                  "This is the emulator's answer to: third question\n" +
                  after_retry);
    const std::string id = minted_id(first.err);
    ASSERT_FALSE(id.empty()) << first.err;

    // Saved: a second process resumes the conversation as the first left it; --system there is
    // said to be unused.
    const ChatRun second = run_piped(emulator.port(), dir.path,
                                     {"--conversation", id, "--system", "Be terse."}, "/history\n");
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_EQ(second.out, after_retry);
    EXPECT_NE(second.err.find("--system is not applied: conversation " + id +
                              " keeps the instructions it was started with"),
              std::string::npos)
        << second.err;

    // Nothing of the user's to take back: said, nothing changes.
    const ChatRun empty = run_piped(emulator.port(), dir.path, {"--new"}, "/undo\n/history\n");
    EXPECT_EQ(empty.status, 0) << empty.err;
    EXPECT_NE(empty.err.find("nothing to take back"), std::string::npos) << empty.err;
    EXPECT_EQ(empty.out, "(no messages yet)\n");
}

TEST(ChatPipe, AnUnknownConversationIdIsAStartUpErrorNamingItAndTheStore) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path,
                                {"--conversation", "ChatThinker-conv-nope"}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("ChatThinker-conv-nope"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("user 'alice'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stores.persistent (sqlite)"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

// persistence.106: the config's stores.session is opened at start; a plugin that does not exist
// is a start-up error naming the file and line of the choice, before any request.
TEST(ChatPipe, ASessionStoreThatCannotBeOpenedIsAStartUpErrorNamingItsLine) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    std::ifstream in(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto swap = [&](const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    swap("include: models.yaml",
         "include: \"" + std::string(NUCLEO_SOURCE_DIR) + "/config/models.yaml\"");
    swap("  session:\n    plugin: memory\n", "  session:\n    plugin: redisx\n");
    const fs::path config = dir.path / "session.yaml";
    std::ofstream(config) << text;
    const auto line =
        1 + std::count(text.begin(), text.begin() + text.find("    plugin: redisx"), '\n');
    const ChatRun r =
        run_piped(emulator.port(), dir.path, {"--config", config.string()}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("session.yaml:" + std::to_string(line) + ":5: stores.session (redisx)"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

TEST(ChatPipe, ABadModelIdIsAStartUpErrorListingTheCatalog) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--model", "no-such-model"}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("no-such-model"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("claude-sonnet-5-5"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ChatPipe, AMissingApiKeyIsAStartUpErrorBeforeAnyRequest) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path, {}, "hello\n", "ANTHROPIC_API_KEY=");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("provider 'anthropic' has no api_key"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

TEST(ChatPipe, AFailedTurnIsOneLineIsNotKeptAndTheScriptExitsOne) {
    // Nothing listens on the discard port: the turn fails after the client's retries. The
    // session goes on, the failed message is not in the conversation (ownership.105), and a
    // script learns of the failure from the exit status (chat.110).
    TempDir dir;
    const ChatRun r = run_piped(9, dir.path, {}, "hello\n/history\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 1) << r.err;
    const auto failed = r.err.find(
        "nucleo chat: model claude-sonnet-5-5 (provider anthropic): the turn failed "
        "and was not kept");
    ASSERT_NE(failed, std::string::npos) << r.err;
    EXPECT_EQ(count_lines(r.err.substr(failed)), 1U) << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:9"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "(no messages yet)\n");
}

TEST(ChatPipe, AReaderThatGoesAwayDoesNotEndTheSessionBeforeItSaves) {
    // chat.111: `nucleo chat | head -1` -- stdout's reader is gone before the first answer. The
    // child starts with SIGPIPE at its default (as from a shell), and chat ignores it, so each
    // turn completes and is saved and the session ends normally at end of input.
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    const auto argv = chat_argv({});
    const auto env = chat_env(emulator.port(), dir.path, false);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(null, 2);
        for (int fd : {in[0], in[1], out[0], out[1], null}) ::close(fd);
        exec_child(argv, env);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(out[0]);  // the reader is gone
    ::signal(SIGPIPE, SIG_IGN);
    const std::string input = "hello\nhello again\n";
    EXPECT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    ::close(in[1]);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    ASSERT_FALSE(WIFSIGNALED(st)) << "chat ended by signal " << WTERMSIG(st);
    EXPECT_EQ(WEXITSTATUS(st), 0);
    // Both turns were saved: -c resumes the conversation and /history lists them.
    const ChatRun r = run_piped(emulator.port(), dir.path, {"-c"}, "/history\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_NE(r.out.find("1. user: hello\n"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("3. user: hello again\n"), std::string::npos) << r.out << r.err;
}

TEST(ChatPipe, ToolCallsShowAsTheyHappenAndTheAnswerUsesTheResult) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = dir.path / "docs";
    fs::create_directories(tools);
    std::ofstream(tools / "notes.txt") << "hello\n";
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "what is in the folder\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    // The emulator calls the first declared tool (list_files) with no arguments (none required).
    EXPECT_NE(r.err.find("[tool list_files {}] ok\n"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "The tool list_files returned: notes.txt\n");
    EXPECT_NE(r.err.find("2 rounds"), std::string::npos) << r.err;
}

TEST(ChatPipe, TheWholeConversationIsCachedSoTheHitRateClimbsOverTurns) {
    // Every turn resends the conversation; marked for caching, the next turn reads the prefix
    // from the cache (the emulator's prefix cache, above the model's 1,024-token minimum).
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\nagain\nonce more\n/cost\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<long long> reads;
    const std::regex turn_note("rounds, [0-9]+ in \\(cache read ([0-9]+)\\)");
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), turn_note);
         it != std::sregex_iterator(); ++it) {
        reads.push_back(std::stoll((*it)[1].str()));
    }
    ASSERT_EQ(reads.size(), 3U) << r.err;
    EXPECT_LT(reads[0], reads[1]) << r.err;
    EXPECT_LT(reads[1], reads[2]) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("cache hit rate ([0-9.]+)%"))) << r.out;
    EXPECT_GT(std::stod(m[1].str()), 0.0);
}

TEST(ChatPipe, CompactReportsTheLevelAndNewStartsAnotherConversation) {
    // The user's messages and the final answers are non-compactable: what /compact can shrink is
    // a tool result, so the model lists a folder of many long names first.
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\n/compact\n/transcript\n/new\n/history\n/transcript\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m,
        std::regex("compaction: level ([A-Z]+), ([0-9]+) -> ([0-9]+) tokens \\(target ([0-9]+), "
                   "(met|NOT met)\\)")))
        << r.out;
    EXPECT_NE(m[1].str(), "NONE");
    EXPECT_LT(std::stoll(m[3].str()), std::stoll(m[2].str()));
    EXPECT_EQ(std::stoll(m[4].str()), std::stoll(m[2].str()) / 2);
    // compaction.106: whether the target was met follows from the numbers printed.
    EXPECT_EQ(m[5].str(), std::stoll(m[3].str()) <= std::stoll(m[4].str()) ? "met" : "NOT met");
    // The transcript after compaction: the question and the answer word for word, the listing
    // no longer whole.
    const std::string after = r.out.substr(static_cast<std::size_t>(m.position(0)));
    EXPECT_NE(after.find("user:\nlist them\n"), std::string::npos) << after;
    EXPECT_NE(after.find("assistant:\nThe tool list_files returned: quarterly-shipment-report"),
              std::string::npos)
        << after;
    EXPECT_EQ(after.find("depot-number-79-with"), std::string::npos) << after;
    // /new: a second id minted; its history is empty and its transcript too.
    const std::string first = minted_id(r.err);
    const std::string second = minted_id(r.err.substr(r.err.find(first) + first.size()));
    EXPECT_FALSE(second.empty()) << r.err;
    EXPECT_NE(first, second);
    EXPECT_TRUE(r.out.ends_with("(no messages yet)\n")) << r.out;
}

// caching.131, caching.132: the shipped default model takes cache diagnostics; the turn after
// /compact, whose earlier messages changed, gets one line saying why its cache missed and that
// Nucleo placed its marks anew, and the turns before it none.
TEST(ChatPipe, ATurnWhoseCacheMissedSaysWhyInOneLine) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\nagain\n/compact\nonce more\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::regex missed(
        "\\[cache missed in round [0-9]+: an earlier message changed since the previous answer "
        "\\(about ([0-9]+) input tokens not read from the cache\\); Nucleo placed its marks "
        "anew after compaction or an edit rewrote earlier messages\\]");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, missed)) << r.err;
    EXPECT_GT(std::stoll(m[1].str()), 0);
    // Only the turn after the compaction missed: one note in the session.
    EXPECT_NE(r.out.find("compaction: level"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("[cache missed", static_cast<std::size_t>(m.position(0)) + 1),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.substr(0, static_cast<std::size_t>(m.position(0))).find("[cache missed"),
              std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace nucleo

namespace nucleo {
namespace {

/// chat.108: the resume command printed on the way out, without the config path.
std::string resume_line(const std::string& id) {
    return "--user alice --conversation " + id;
}

// chat.102, chat.103: the arrows edit the line, Up recalls an earlier line, and the history is
// there again in the next session.
TEST(ChatTerminal, LineEditingAndAHistoryKeptAcrossSessions) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    std::string id;
    {
        PtyChat chat(emulator.port(), dir.path, {});
        ASSERT_TRUE(chat.started());
        id = minted_id(chat.until(kPrompt));
        // "hello wrld", three Left arrows, "o": the model gets "hello world".
        chat.edit("hello wrld\x1b[D\x1b[D\x1b[Do\r");
        EXPECT_NE(chat.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
                  std::string::npos);
        chat.edit("\x1b[A\r");  // Up: the line again
        EXPECT_NE(chat.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
                  std::string::npos);
        chat.type("/history");
        const std::string history = chat.until(kPrompt);
        EXPECT_NE(history.find("3. user: hello world"), std::string::npos) << history;
        EXPECT_EQ(history.find("wrld"), std::string::npos) << history;
        chat.type("/exit");  // the session ends as a user ends it, the resume line printed
        EXPECT_EQ(chat.finish(), 0) << chat.everything();
        EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
    }
    const fs::path file = dir.path / "state" / "nucleo" / "chat_history";
    ASSERT_TRUE(fs::exists(file));
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    std::ifstream in(file);
    const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(std::regex_search(saved, std::regex("hello(\\\\040| )world"))) << saved;

    PtyChat again(emulator.port(), dir.path, {"--conversation", id});
    ASSERT_TRUE(again.started());
    again.until(kPrompt);
    // Up as many times as the saved history holds entries after the last "hello world" (the
    // slash commands typed after it are history too), then Enter: the last session's line.
    std::vector<std::string> entries;
    {
        std::istringstream lines(saved);
        for (std::string entry; std::getline(lines, entry);)
            if (!entry.empty() && !entry.starts_with("_HiStOrY_")) entries.push_back(entry);
    }
    std::size_t ups = 0;
    for (std::size_t i = entries.size(); i-- > 0;) {
        ++ups;
        if (std::regex_search(entries[i], std::regex("hello(\\\\040| )world"))) break;
    }
    ASSERT_GT(ups, 0U) << saved;
    std::string keys;
    for (std::size_t i = 0; i < ups; ++i) keys += "\x1b[A";
    again.edit(keys + "\r");
    EXPECT_NE(again.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
              std::string::npos);
    again.type("/exit");
    EXPECT_EQ(again.finish(), 0) << again.everything();
}

// chat.101: an escape sequence in an answer is shown, never obeyed; a typed line holding an
// escape character (Ctrl-V Esc inserts one, as a paste would) is sent like any text.
TEST(ChatTerminal, AnEscapeSequenceInAnAnswerLeavesTheScreenIntact) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    chat.until(kPrompt);
    chat.edit("wipe \x16\x1b[2J now\r");
    const std::string answer = chat.until(kPrompt);
    EXPECT_NE(answer.find("This is the emulator's answer to: wipe \\x1b[2J now"), std::string::npos)
        << answer;
    EXPECT_EQ(answer.find("\x1b[2J"), std::string::npos) << "the screen was cleared: " << answer;
    EXPECT_EQ(answer.find("the turn failed"), std::string::npos) << answer;
    chat.type("/transcript");
    const std::string transcript = chat.until(kPrompt);
    EXPECT_NE(transcript.find("wipe \\x1b[2J now"), std::string::npos) << transcript;
    EXPECT_EQ(transcript.find("\x1b[2J"), std::string::npos) << transcript;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.104, chat.105: while the provider takes its time the status line says why the turn
// waits; Ctrl-C cancels the turn (the conversation keeps the user's message, no answer), the
// session goes on, and Ctrl-C at the prompt ends it.
TEST(ChatTerminal, CtrlCCancelsAWaitingTurnWhoseStatusLineSaysWhy) {
    // The emulator answers after 10 s: the turn is cancelled long before.
    emulator_test::EmulatorProcess emulator({"--latency-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type("a slow question");
    chat.until("connecting to anthropic (claude-sonnet-5-5)");
    chat.keys("\x03");
    const std::string cancelled = chat.until(kPrompt);
    EXPECT_NE(
        cancelled.find("[cancelled before the answer; conversation " + id + " holds your message]"),
        std::string::npos)
        << cancelled;
    EXPECT_EQ(cancelled.find("the turn failed"), std::string::npos) << cancelled;
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: a slow question"), std::string::npos) << history;
    EXPECT_EQ(history.find("2. "), std::string::npos) << history;
    chat.edit("\x03");  // at the prompt: the end
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
    EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
}

// chat.104: Ctrl-C while the answer streams: what was shown stays, marked as cut, and is not
// kept in the conversation.
TEST(ChatTerminal, CtrlCWhileTheAnswerStreamsLeavesItCutAndNotKept) {
    // The emulator's stream stops for 10 s halfway: part of the answer is on screen.
    emulator_test::EmulatorProcess emulator({"--stream-stall-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type(
        "tell me a long story about parcels and depots and the people who sort them at night");
    chat.until("This is the emulator's answer to: tell me");
    chat.keys("\x03");
    const std::string rest = chat.until(kPrompt);
    EXPECT_NE(rest.find("[cancelled: the answer above is cut and was not kept; conversation " + id +
                        " holds your message]"),
              std::string::npos)
        << rest;
    EXPECT_EQ(rest.find("who sort them at night\r\n"), std::string::npos)
        << "the whole answer came: " << rest;
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: tell me a long story"), std::string::npos) << history;
    EXPECT_EQ(history.find("2. "), std::string::npos) << history;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.104: a second Ctrl-C right after the first ends the session (at once when the turn is
// still winding down, at the prompt when it has): the answer that takes 10 s never comes.
TEST(ChatTerminal, ASecondCtrlCDuringATurnEndsTheSession) {
    emulator_test::EmulatorProcess emulator({"--latency-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type("another slow question");
    chat.until("connecting to anthropic");
    chat.keys("\x03");
    chat.until("cancelling");
    chat.keys("\x03");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
    EXPECT_EQ(chat.everything().find("This is the emulator's answer"), std::string::npos)
        << chat.everything();
    EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
}

// chat.106, chat.109, --system: /history labels tool results as such; -c resumes the user's
// latest conversation; /help lists every command.
TEST(ChatPipe, ContinueResumesTheLatestConversationAndHistoryLabelsToolResults) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first = run_piped(emulator.port(), dir.path, {}, "an older one\n");
    ASSERT_EQ(first.status, 0) << first.err;
    const fs::path tools = dir.path / "docs";
    fs::create_directories(tools);
    std::ofstream(tools / "notes.txt") << "hello\n";
    const ChatRun second = run_piped(emulator.port(), dir.path,
                                     {"--tools-dir", tools.string(), "--system", "Be brief."},
                                     "what is in the folder\n");
    ASSERT_EQ(second.status, 0) << second.err;
    const std::string latest = minted_id(second.err);
    ASSERT_FALSE(latest.empty()) << second.err;
    {
        // --system is the conversation's objective: the stored document holds it.
        std::string bytes;
        for (const char* file : {"chat.db", "chat.db-wal"}) {
            std::ifstream db(dir.path / file, std::ios::binary);
            bytes.append(std::istreambuf_iterator<char>(db), std::istreambuf_iterator<char>());
        }
        EXPECT_NE(bytes.find("Be brief."), std::string::npos);
    }

    const ChatRun resumed = run_piped(emulator.port(), dir.path, {"-c"}, "/history\n/help\n");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("conversation " + latest + " (resumed, 4 messages)"),
              std::string::npos)
        << resumed.err;
    EXPECT_NE(resumed.out.find("1. user: what is in the folder\n"), std::string::npos)
        << resumed.out;
    EXPECT_NE(resumed.out.find("3. tool result: [tool result of "), std::string::npos)
        << resumed.out;
    const auto help_at = resumed.out.find("\n/history ");
    ASSERT_NE(help_at, std::string::npos) << resumed.out;
    const std::string help = resumed.out.substr(help_at);
    for (const char* c :
         {"/history", "/transcript", "/compact", "/cost", "/new", "/quit", "/exit", "/help"}) {
        EXPECT_NE(help.find(c), std::string::npos) << c << ": " << help;
    }

    const ChatRun nobody =
        run_piped(emulator.port(), dir.path, {"--continue", "--user", "bob"}, "");
    EXPECT_EQ(nobody.status, 0) << nobody.err;
    EXPECT_NE(nobody.err.find("user 'bob' has no conversation in stores.persistent (sqlite"),
              std::string::npos)
        << nobody.err;
    const ChatRun both = run_piped(emulator.port(), dir.path, {"-c", "--new"}, "");
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("--conversation, --continue and --new exclude each other"),
              std::string::npos)
        << both.err;
}

// chat.107: without --model, the first model whose provider has its key: here only OpenAI's is
// set, so the chat talks to gpt-4.1 rather than failing on Anthropic's missing key.
TEST(ChatPipe, TheDefaultModelIsOneWhoseKeyIsSet) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(
        emulator.port(), dir.path, {"--default-model"}, "hello\n/cost\n",
        "ANTHROPIC_API_KEY=\nOPENAI_API_KEY=sk-test\nOPENAI_BASE_URL=" + emulator.url("/v1"));
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"openai\":1,"), std::string::npos) << stats.body;
    EXPECT_NE(stats.body.find("\"anthropic\":0,"), std::string::npos) << stats.body;
}

// cli.102: --emulator talks to an emulator of the session's own, whatever the config's base URLs
// and keys say (here: no key, and nothing listens at Anthropic's base URL).
TEST(ChatPipe, TheEmulatorOptionTalksToAnEmulatorOfItsOwn) {
    TempDir dir;
    const ChatRun r = run_piped(9, dir.path, {"--emulator", "--new"}, "hello\n/cost\n",
                                "ANTHROPIC_API_KEY=\nOPENAI_API_KEY=\nAWS_ACCESS_KEY_ID=");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.rfind("nucleo chat: answers come from nucleo-emulator at http://127.0.0.1:", 0),
              0U)
        << r.err;
}

}  // namespace
}  // namespace nucleo
