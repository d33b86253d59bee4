// The README's host program: examples/hello-host/main.cpp compiles (a target of this folder),
// answers against the real nucleo-emulator with the shipped config, and is the README's copy.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "cli_support.hpp"
#include "emulator_client.hpp"

namespace nucleo::cli_test {
namespace {

namespace fs = std::filesystem;

TEST(ReadmeHostProgram, AnswersWithTheConfigDefaults) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = test_support::run_command(
        "env ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" +
        HELLO_HOST + "' " + quoted(kShippedConfig));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("This is the emulator's answer to: Why is the sky blue?\ncost $", 0), 0u)
        << r.out;
}

TEST(ReadmeHostProgram, TheReadmeShowsTheExampleAsItIs) {
    const std::string readme = test_support::slurp(fs::path(NUCLEO_SOURCE_DIR) / "README.md");
    const std::string example =
        test_support::slurp(fs::path(NUCLEO_SOURCE_DIR) / "examples" / "hello-host" / "main.cpp");
    // Every line of the example but its leading comment is in the README, in one block.
    const std::size_t body = example.find("#include");
    ASSERT_NE(body, std::string::npos);
    std::istringstream lines(example.substr(body));
    std::string line;
    int checked = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        EXPECT_NE(readme.find(line + "\n"), std::string::npos) << "README lacks: " << line;
        ++checked;
    }
    EXPECT_GE(checked, 12);
    EXPECT_LE(checked, 17) << "the README promises a program of about 15 lines";
}

}  // namespace
}  // namespace nucleo::cli_test
