// The parts `nucleo demo` stands on: the docs folder its agent searches and
// reads, the nucleo-emulator child process it runs when no provider key is set, and the
// temporary folder its SQLite store lives in. Each cleans up after itself (RAII), so a demo that
// fails half-way still leaves nothing running and nothing on disk. `nucleo ask --emulator` and
// `nucleo chat --emulator` start and aim at their emulator with the same code (cli.102).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "nucleo/agent.hpp"
#include "nucleo/config.hpp"

namespace nucleo::cli::demo {

/// The folder of the running executable (/proc/self/exe), where the installed nucleo-emulator
/// sits beside `nucleo` and from which the installed docs are found.
std::filesystem::path executable_dir();

/// Where the docs are when no --docs is given. Decision: the installed copy first
/// (<bindir>/../share/doc/nucleo, what `cmake --install` puts there), then the source tree's
/// docs/ of the build this binary came from (compiled in, used only while it exists). Throws
/// kNotFound naming both places when neither exists.
std::filesystem::path default_docs_dir();

/// The Markdown files of a docs folder, read once: the real data the demo's tools work on.
class DocsLibrary {
  public:
    /// Reads every *.md file of `dir` (not recursive), in name order. kNotFound when `dir` is not
    /// a folder, kInvalidArgument when it holds no Markdown file.
    explicit DocsLibrary(std::filesystem::path dir);

    [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
    [[nodiscard]] std::size_t files() const noexcept { return files_.size(); }
    [[nodiscard]] std::size_t bytes() const noexcept;

    /// Every file with its opening paragraph and its headings: the stable briefing the agent gets
    /// as its objective (and the system prefix every call reads from the provider's cache).
    [[nodiscard]] std::string outline() const;

    /// The tool `search_docs`: the paragraphs that mention `query` (case-insensitive), the files
    /// with most mentions first, at most `max_passages` of them and about `max_bytes` in all. The
    /// first line counts the passages and names the files. An empty query is an error result.
    [[nodiscard]] ToolOutput search(std::string_view query, std::size_t max_passages = 8,
                                    std::size_t max_bytes = 4500) const;

    /// The tool `read_doc`: one file by name ("operations.md", "docs/operations.md"), its first
    /// `max_bytes` bytes and how much was left out. An unknown name is an error result listing
    /// the names.
    [[nodiscard]] ToolOutput read(std::string_view name, std::size_t max_bytes = 6000) const;

  private:
    struct File {
        std::string name;
        std::string text;
    };
    [[nodiscard]] std::string names() const;

    std::filesystem::path dir_;
    std::vector<File> files_;
};

/// A temporary folder (mkdtemp under the system's temp folder), removed with what it holds.
class TempDir {
  public:
    explicit TempDir(std::string_view prefix);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    /// Removes the folder now; true when it is gone. Idempotent.
    bool remove() noexcept;

  private:
    std::filesystem::path path_;
};

/// nucleo-emulator as a child process on a free loopback port (--port 0 --port-file
/// --exit-with-parent): even a demo killed with SIGKILL leaves no server behind.
class EmulatorChild {
  public:
    /// Starts `binary` and waits (a bounded poll of the port file, at most 10 s) until it
    /// listens. Throws kInternal naming the binary when it cannot start, exits early or never
    /// writes its port.
    EmulatorChild(const std::filesystem::path& binary, const std::filesystem::path& work_dir);
    /// stop().
    ~EmulatorChild();
    EmulatorChild(const EmulatorChild&) = delete;
    EmulatorChild& operator=(const EmulatorChild&) = delete;

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    [[nodiscard]] int port() const noexcept { return port_; }
    [[nodiscard]] std::string base_url() const;

    /// SIGTERM, then waits for it to exit; returns its exit status (-1 when killed by a signal).
    /// Idempotent: later calls return the first status.
    int stop() noexcept;

  private:
    pid_t pid_ = -1;
    int port_ = 0;
    int status_ = -1;
    bool reaped_ = false;  ///< waited for: status_ is its exit status
};

/// cli.102: `provider` aimed at `emulator`: its base URL (with /v1 for the openai plugin, whose
/// paths start after it) and stand-in credentials (an api key, an AWS key pair, a region when it
/// has none; the emulator checks their shape, not their value).
ProviderConfig aimed_at(ProviderConfig provider, const EmulatorChild& emulator);

/// cli.102: `config` with every provider instance aimed at `emulator`.
Config aimed_at(const Config& config, const EmulatorChild& emulator);

/// The emulator of `nucleo ask --emulator` and `nucleo chat --emulator` (cli.102):
/// nucleo-emulator (find_emulator()) started in a temporary folder of its own; the process and
/// the folder are gone with the object.
class OwnEmulator {
  public:
    OwnEmulator();

    [[nodiscard]] const EmulatorChild& child() const noexcept { return child_; }

  private:
    TempDir dir_;  ///< declared first: removed after the emulator stopped
    EmulatorChild child_;
};

/// cli.102: `--emulator` of ask and chat: starts an OwnEmulator into `holder`, says so on stderr
/// ("nucleo COMMAND: answers come from nucleo-emulator at URL (--emulator)") and returns
/// `config` aimed at it.
Config with_own_emulator(const Config& config, std::optional<OwnEmulator>& holder,
                         std::string_view command);

/// Ctrl-C (SIGINT) and SIGTERM as a cancellation: from construction on, this thread (and every
/// thread started after it) blocks them, and a watcher thread that sigwait()s for them cancels
/// token(), so the demo stops at the next boundary of its turn and its destructors stop the
/// emulator and remove the temporary folder. Construct it before any other thread starts.
class InterruptWatch {
  public:
    InterruptWatch();
    /// Wakes the watcher, joins it and restores the signal mask.
    ~InterruptWatch();
    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

    [[nodiscard]] const CancellationToken& token() const noexcept { return token_; }
    /// The signal received (SIGINT, SIGTERM), or 0.
    [[nodiscard]] int received() const noexcept { return received_.load(); }

  private:
    CancellationToken token_;
    std::atomic<int> received_{0};
    sigset_t previous_{};
    std::thread watcher_;
};

/// The nucleo-emulator to run: $NUCLEO_EMULATOR when set, else the one beside this `nucleo`
/// (installed into the same bin folder; in the build tree both land in <build>/bin). Throws
/// kNotFound saying how to get one.
std::filesystem::path find_emulator();

}  // namespace nucleo::cli::demo
