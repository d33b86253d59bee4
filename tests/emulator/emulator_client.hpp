// Test harness for nucleo-emulator: starts the real binary on a free loopback port (waiting for
// its port file with a bounded poll, never a blind sleep), speaks HTTP with libcurl and decodes
// the three streaming framings.
#pragma once

#include <rapidjson/document.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nucleo::emulator_test {

struct HttpResult {
    long status = 0;
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;
};

/// A running emulator process, stopped with SIGTERM on destruction.
class EmulatorProcess {
  public:
    explicit EmulatorProcess(std::vector<std::string> extra_args = {});
    ~EmulatorProcess();
    EmulatorProcess(const EmulatorProcess&) = delete;
    EmulatorProcess& operator=(const EmulatorProcess&) = delete;

    int port() const { return port_; }
    std::string url(const std::string& path) const;
    /// The first line the process printed on stdout.
    std::string stdout_first_line() const;
    /// Sends SIGTERM and returns the exit status (-1 if it did not exit normally).
    int stop();

    HttpResult post(const std::string& path, const std::string& body,
                    const std::vector<std::string>& headers) const;
    HttpResult get(const std::string& path) const;

  private:
    std::string dir_;
    pid_t pid_ = -1;
    int port_ = 0;
};

/// The shipped model catalog, config/models.yaml of the source tree.
std::string shipped_catalog();

/// A nucleo.yaml text: the shipped catalog (included by its path) and its four provider
/// instances (anthropic, openai, bedrock, gemini) on the emulator listening on `port`, key "test";
/// `anthropic_options`, when not empty, is the anthropic instance's `options` as YAML lines
/// (`threads: true`).
std::string shipped_config_yaml(int port, const std::string& anthropic_options = {});

/// A temporary catalog file holding `yaml`, removed with the object: a test's own records, for
/// the fields the shipped catalog does not carry.
class CatalogFile {
  public:
    explicit CatalogFile(const std::string& yaml);
    ~CatalogFile();
    CatalogFile(const CatalogFile&) = delete;
    CatalogFile& operator=(const CatalogFile&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

/// The headers of an authenticated Anthropic Messages call, with `extra` after them.
std::vector<std::string> anthropic_headers(const std::vector<std::string>& extra = {});
/// The header of an authenticated Bedrock call (a Bedrock API key).
std::vector<std::string> bedrock_headers();

/// `body` parsed; fails the test (and returns the document with its parse error) when it is not
/// JSON.
rapidjson::Document parse(const std::string& body);

/// Compact JSON of `v`.
std::string str(const rapidjson::Value& v);

/// caching.103: moves the emulator's cache clock forward by `seconds` (`POST /clock`); returns
/// the clock's total offset.
long long advance_clock(const EmulatorProcess& emu, long long seconds);

/// Runs the emulator binary with `args` to completion; returns its exit status.
int run_emulator_to_exit(const std::vector<std::string>& args);

/// How a run of the emulator binary ended.
struct EmulatorExit {
    int status = -1;             ///< the exit status; -1 when killed or still running
    bool still_running = false;  ///< it had not exited within the limit (then stopped)
    std::string out;
    std::string err;
};

/// Runs the emulator binary with `args` and waits for it at most `limit`; one still running
/// then is stopped with SIGTERM and reported as `still_running`.
EmulatorExit run_emulator_bounded(const std::vector<std::string>& args,
                                  std::chrono::milliseconds limit = std::chrono::seconds(10));

/// Server-sent events: (event name, data) pairs; the name is "" for `data:`-only streams.
std::vector<std::pair<std::string, std::string>> parse_sse(const std::string& body);

/// AWS event-stream messages: (:event-type, payload). Fails the test on a bad CRC or length.
std::vector<std::pair<std::string, std::string>> parse_event_stream(const std::string& body);

/// Writes `body` to a temporary file and runs ../shared/tools/validate_wire.py on the given
/// files; returns "" when valid or skipped (no ../shared), else the validator's output.
std::string validate_wire(const std::string& provider, const std::vector<std::string>& bodies);

}  // namespace nucleo::emulator_test
