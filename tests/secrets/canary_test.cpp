// limits.105: no secret leaves through an output. Every `nucleo` command (cli/commands/) runs with
// a canary API key and a base URL whose password is a canary, against the real nucleo-emulator,
// with the log at trace; stdout and stderr of each are searched for both canaries. A call that
// fails (a dead port, retried) is searched too: its retry warnings and its final error name the
// URL.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;
using test_support::CliRun;

const std::string kKey = "sk-ant-canarykey-5b1f0e77";
const std::string kOpenAiKey = "sk-canary-openai-2d8c41aa";
const std::string kPassword = "canarypass-9d2c6e13";
const std::string kDoc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/minimal.json";

struct TempDir {
    TempDir() : path(fs::temp_directory_path() / ("nucleo-canary-" + std::to_string(::getpid()))) {
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    fs::path path;
};

class Canaries : public ::testing::Test {
protected:
    /// `nucleo ARGS` with the canaries in its environment, the log at trace, `input` on stdin.
    CliRun nucleo(const std::string& args, int port, const std::string& input = "") {
        const std::string base = "http://canary:" + kPassword + "@127.0.0.1:" + std::to_string(port);
        const std::string env = "env NUCLEO_LOG_LEVEL=trace ANTHROPIC_API_KEY=" + kKey +
                                " ANTHROPIC_BASE_URL=" + base + " OPENAI_API_KEY=" + kOpenAiKey +
                                " OPENAI_BASE_URL=" + base + "/v1 NUCLEO_SQLITE_PATH='" +
                                (dir_.path / "nucleo.db").string() + "' NUCLEO_PLUGIN_PATH='" +
                                NUCLEO_BUILD_PLUGIN_DIR + "' HOME='" + dir_.path.string() + "' ";
        // Input comes through a pipe, so that run_command's redirections (appended) are this
        // command's.
        const std::string feed = "printf '%s\\n' '" + input + "' | ";
        return test_support::run_command(feed + env + "'" + std::string(NUCLEO_CLI) + "' " + args);
    }

    /// Fails the test when either canary shows in the run's outputs.
    static void expect_clean(const std::string& what, const CliRun& r) {
        for (const std::string* canary : {&kKey, &kOpenAiKey, &kPassword}) {
            EXPECT_EQ(r.out.find(*canary), std::string::npos) << what << ": stdout shows a canary:\n" << r.out;
            EXPECT_EQ(r.err.find(*canary), std::string::npos) << what << ": stderr shows a canary:\n" << r.err;
        }
    }

    TempDir dir_;
};

TEST_F(Canaries, NoCommandPrintsTheKeyOrTheUrlPassword) {
    emulator_test::EmulatorProcess emulator;
    const int port = emulator.port();
    struct Run {
        std::string args;
        std::string input;
        bool must_succeed;
    };
    const std::string config = " --config '" + std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml'";
    const std::string doc = " --in '" + kDoc + "'";
    const std::vector<Run> runs = {
        {"version", "", true},
        {"ask --model claude-sonnet-5-5" + config + " hello there", "", true},
        {"ask --model gpt-4o-mini --json" + config + " hello there", "", true},
        {"config" + config, "", true},
        {"models" + config, "", true},
        {"plugins" + config, "", true},
        {"plugin check anthropic" + config, "", true},
        {"render --model claude-sonnet-5-5" + doc + config, "", true},
        {"render --model gpt-4o-mini" + doc + config, "", true},
        {"render --prepared --model claude-sonnet-5-5" + doc + config, "", true},
        {"send --model claude-sonnet-5-5" + doc + config, "", true},
        {"send --model gpt-4o-mini" + doc + config, "", true},
        {"tokens --model claude-sonnet-5-5" + doc + config, "", true},
        {"transcript" + doc, "", true},
        {"compact --model claude-sonnet-5-5 --report" + doc + config, "", true},
        {"chat --model claude-sonnet-5-5 --user canary --new" + config, "hello there", true},
        {"conversations --user canary list" + config, "", true},
        {"logs --user canary --json" + config, "", true},
        {"mcp list" + config, "", true},
        {"demo --emulator" + config, "", false},
    };
    // Every subcommand `nucleo --help` lists is run above: a new command must join this list.
    const CliRun help = nucleo("--help", port);
    std::istringstream lines(help.out.substr(help.out.find("Subcommands:")));
    std::string line;
    std::getline(lines, line);
    int listed = 0;
    while (std::getline(lines, line) && !line.empty()) {
        const std::string name = line.substr(2, line.find(' ', 2) - 2);
        if (name == "help") continue;
        ++listed;
        EXPECT_TRUE(std::any_of(runs.begin(), runs.end(),
                                [&](const Run& run) { return run.args.rfind(name + " ", 0) == 0 || run.args == name; }))
            << "nucleo " << name << " is not run with the canaries";
    }
    EXPECT_GE(listed, 13) << help.out;
    for (const Run& run : runs) {
        const CliRun r = nucleo(run.args, port, run.input);
        if (run.must_succeed) {
            EXPECT_EQ(r.status, 0) << run.args << "\n" << r.err;
        }
        expect_clean(run.args, r);
        if (run.args.rfind("render --model", 0) == 0) {
            EXPECT_NE(r.out.find("http://canary:***@127.0.0.1:" + std::to_string(port)), std::string::npos) << r.out;
        }
        if (run.args.rfind("chat", 0) == 0) {
            EXPECT_NE(r.out.find("This is the emulator's answer to: hello there"), std::string::npos) << r.out;
        }
    }
}

TEST_F(Canaries, AFailingCallsRetryWarningsAndErrorShowNeither) {
    // Port 9 (discard): nothing listens; the call is retried with warnings, then fails naming
    // the URL, its password redacted.
    const CliRun r = nucleo("send --model claude-sonnet-5-5 --in '" + kDoc + "' --config '" +
                                std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml'",
                            9);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("retrying"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("http://canary:***@127.0.0.1:9/v1/messages"), std::string::npos) << r.err;
    expect_clean("send to a dead port", r);
}

}  // namespace
}  // namespace nucleo
