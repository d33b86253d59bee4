// Issue 2 item 1: "cmake --install installs headers, library, plugins, the command and a CMake
// package, so find_package(nucleo) works for an out-of-tree host application and an out-of-tree
// plugin. Prove it in the test suite: build examples/c-summarizer ... out of tree against the
// installed package, load it, call it."
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kWork = NUCLEO_INSTALL_TEST_DIR;
const fs::path kPrefix = kWork / "prefix";

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string q(const fs::path& p) {
    return "'" + p.string() + "'";
}

/// Runs a shell command with its output in `log`; returns the exit status.
int run(const std::string& cmd, const fs::path& log) {
    const int raw = std::system((cmd + " >" + q(log) + " 2>&1").c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

/// Configures and builds an out-of-tree CMake project against the installed prefix.
void build_out_of_tree(const fs::path& source, const fs::path& build, const std::string& lang) {
    const std::string cmake = q(NUCLEO_CMAKE_COMMAND);
    std::string flags = NUCLEO_SANITIZE_FLAGS;
    std::string configure = cmake + " -S " + q(source) + " -B " + q(build) + " -G '" +
                            NUCLEO_CMAKE_GENERATOR + "' -DCMAKE_BUILD_TYPE=Debug" +
                            " -DCMAKE_PREFIX_PATH=" + q(kPrefix) +
                            " -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF";
    if (lang == "C") {
        configure += " -DCMAKE_C_COMPILER=" + q(NUCLEO_C_COMPILER);
        if (!flags.empty()) configure += " '-DCMAKE_C_FLAGS=" + flags + "'";
    } else {
        configure += " -DCMAKE_CXX_COMPILER=" + q(NUCLEO_CXX_COMPILER);
        if (!flags.empty()) configure += " '-DCMAKE_CXX_FLAGS=" + flags + "'";
    }
    const fs::path log = build.string() + ".log";
    ASSERT_EQ(run(configure, log), 0) << configure << "\n" << slurp(log);
    ASSERT_EQ(run(cmake + " --build " + q(build), log), 0) << slurp(log);
}

class Install : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        fs::remove_all(kWork);
        fs::create_directories(kWork);
        const fs::path log = kWork / "install.log";
        install_status_ = run(q(NUCLEO_CMAKE_COMMAND) + " --install " + q(NUCLEO_BINARY_DIR) +
                                  " --prefix " + q(kPrefix),
                              log);
        install_log_ = slurp(log);
    }
    // `cmake --install` needs every installed target built: run this after a full build.
    void SetUp() override {
        ASSERT_EQ(install_status_, 0) << "cmake --install failed (is the whole build done?)\n"
                                      << install_log_;
    }

    static inline int install_status_ = -1;
    static inline std::string install_log_;
};

TEST_F(Install, InstallsHeadersLibraryCommandPackageAndPlugins) {
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugin.h"));
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugin.hpp"));
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugins.hpp"));
    EXPECT_TRUE(fs::exists(kPrefix / "bin/nucleo"));
    bool lib = false, config = false, extractive = false;
    for (const auto& e : fs::recursive_directory_iterator(kPrefix)) {
        const std::string name = e.path().filename().string();
        lib = lib || name == "libnucleo.so";
        config = config || name == "nucleoConfig.cmake";
        extractive = extractive || name == "nucleo-extractive.so";
    }
    EXPECT_TRUE(lib);
    EXPECT_TRUE(config);
    EXPECT_TRUE(extractive);
    // Tests' fixture plugins are never installed.
    EXPECT_FALSE(fs::exists(kPrefix / "lib/nucleo/plugins/nucleo-c11.so"));
}

TEST_F(Install, OutOfTreeCPluginBuildsLoadsAndKeepsTheFirstSentenceOfEachSegment) {
    const fs::path build = kWork / "c-summarizer";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/c-summarizer", build, "C"));
    const fs::path so = build / "nucleo-c-summarizer.so";
    ASSERT_TRUE(fs::exists(so));
    const nucleo::Plugin plugin = nucleo::PluginLoader().load(so.string());
    EXPECT_EQ(plugin.info().name, "c-summarizer");
    EXPECT_EQ(plugin.info().factories, std::vector<std::string>{"nucleo.summarizer/1"});
    const auto s = plugin.make_summarizer();
    EXPECT_EQ(s.summarize(R"({"schema_version":1,"segments":[)"
                          R"("The build failed. Nobody knows why.",)"
                          R"("  We chose \"PostgreSQL\"! It scales.",)"
                          R"("No sentence end here"]})"),
              R"({"schema_version":1,"summary":"The build failed. We chose \"PostgreSQL\"! )"
              R"(No sentence end here","segments":["The build failed.","We chose \"PostgreSQL\"!",)"
              R"("No sentence end here"],"summary_tokens":16})");
    EXPECT_EQ(s.summarize(R"({"text":"Version 1.2 shipped. Then 1.3.","target_tokens":9})"),
              R"({"schema_version":1,"summary":"Version 1.2 shipped.","segments":)"
              R"(["Version 1.2 shipped."],"summary_tokens":5})");
    try {
        (void)s.summarize(R"({"segments":[1,2]})");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), nucleo::ErrorKind::kInvalidArgument);
    }
}

TEST_F(Install, OutOfTreeHostApplicationLinksTheInstalledLibrary) {
    const fs::path build = kWork / "host_app";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "tests/install/host_app", build, "CXX"));
    // The installed extractive plugin, found by name in the installed plugin folder next to the
    // installed libnucleo (the build tree's folder is not searched by an installed library).
    const fs::path log = kWork / "host_app.run.log";
    const std::string cmd = "env -u NUCLEO_PLUGIN_PATH " + q(build / "host_app") +
                            " extractive '{\"target_tokens\":50,\"text\":\"Hi. Error 7 in a.c.\"}'";
    ASSERT_EQ(run(cmd, log), 0) << slurp(log);
    const std::string out = slurp(log);
    EXPECT_NE(out.find("loaded extractive"), std::string::npos) << out;
    EXPECT_NE(out.find(R"("summary":"Hi. Error 7 in a.c.")"), std::string::npos) << out;
}

// ---- examples/host-agent: a C++ host running a two-tool agent (issue 8 item 5) ----------------

TEST_F(Install, OutOfTreeHostAgentCallsBothToolsAndAnswers) {
    const fs::path build = kWork / "host-agent";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/host-agent", build, "CXX"));
    nucleo::emulator_test::EmulatorProcess emulator;
    const std::string url = "http://127.0.0.1:" + std::to_string(emulator.port());
    // The provider given both ways the example takes it: a base URL, and a nucleo.yaml whose
    // catalog names the model (the installed plugin folder is found by the installed library).
    const fs::path yaml = kWork / "host-agent.yaml";
    std::ofstream(yaml) << "providers:\n"
                           "  emu: {plugin: anthropic, base_url: \"" << url << "\", api_key: sk-test}\n"
                           "models:\n"
                           "  - id: emu-sonnet\n"
                           "    provider: emu\n"
                           "    wire_model: claude-sonnet-4-5\n"
                           "    grade: LARGE\n"
                           "    max_context_tokens: 200000\n"
                           "    max_output_tokens: 4096\n"
                           "    output_budget: {SHORT: 1024, MEDIUM: 2048, LONG: 4096, EXTENDED: 4096}\n"
                           "    native_tools: true\n"
                           "    prices: {input: 3.0, output: 15.0}\n";
    for (const std::string& provider :
         {"--base-url " + url + " --api-key sk-test", "--config " + q(yaml) + " --model emu-sonnet"}) {
        SCOPED_TRACE(provider);
        // The emulator's scripting: two tool rounds, each calling the next declared tool, so the
        // model asks for the calculator, then the notebook, then answers.
        const fs::path log = kWork / "host-agent.run.log";
        const std::string cmd = "env -u NUCLEO_PLUGIN_PATH " + q(build / "host-agent") + " " +
                                provider +
                                " --header 'x-emulator-fault:tool-rounds=2,tool-cycle'"
                                " 'What is 6 times 7? Keep the result in a note.'";
        ASSERT_EQ(run(cmd, log), 0) << slurp(log);
        const std::string out = slurp(log);
        // The emulator fills the schema: a=1, b=1, the enum's first constant; the second call
        // answers a turn that holds only the tool result, so its string is the emulator's default
        // word.
        EXPECT_NE(out.find(R"(tool calculate {"a":1.0,"b":1.0,"op":"add"} -> 2)"), std::string::npos)
            << out;
        EXPECT_NE(out.find(R"(tool save_note {"text":"emulator"} -> saved note 1: emulator)"),
                  std::string::npos)
            << out;
        EXPECT_NE(out.find("answer: The tool save_note returned: saved note 1: emulator"),
                  std::string::npos)
            << out;
        EXPECT_NE(out.find("rounds 3, tool calls 2, notes 1"), std::string::npos) << out;
    }
}

}  // namespace
