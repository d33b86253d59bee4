// Running a command (the `nucleo` CLI, usually) from a test: its exit status, stdout and stderr.
// Shared by the CLI tests of every concern (tests/abi, tests/llm, tests/service, tests/demo).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nucleo::test_support {

/// What a command did.
struct CliRun {
    int status = -1;  ///< the exit status; -1 when it did not exit normally
    std::string out;
    std::string err;
};

/// The whole content of a file ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `command` through the shell with stdout and stderr captured apart, in files unique to
/// this process and call (tests of one program run in parallel under ctest), removed afterwards.
/// Its stdin is /dev/null unless the command pipes or redirects its own: `nucleo ask` reads a
/// piped stdin (cli.105), and a test's own stdin may be a pipe that never ends.
inline CliRun run_command(const std::string& command) {
    static std::atomic<int> calls{0};
    const std::filesystem::path base =
        std::filesystem::temp_directory_path() /
        ("nucleo-test-" + std::to_string(::getpid()) + "-" + std::to_string(calls++));
    const std::filesystem::path out = base.string() + ".out";
    const std::filesystem::path err = base.string() + ".err";
    const int raw = std::system(
        ("{ " + command + "\n} </dev/null >'" + out.string() + "' 2>'" + err.string() + "'")
            .c_str());
    CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    std::error_code ignored;
    std::filesystem::remove(out, ignored);
    std::filesystem::remove(err, ignored);
    return r;
}

}  // namespace nucleo::test_support
