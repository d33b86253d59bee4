// limits.142: what compacting a large input costs in memory, measured on the `nucleo compact`
// process (getrusage of the waited-for children: each test runs in its own process under ctest,
// so the only child measured is the command this test runs).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMiB = 1024 * 1024;

/// A conversation whose second user message is one text of `bytes` bytes (a pasted log), ending
/// with a user turn.
std::string document_with_text_of(std::int64_t bytes) {
    std::string big;
    big.reserve(static_cast<std::size_t>(bytes));
    while (static_cast<std::int64_t>(big.size()) + 5 <= bytes) big += "word ";
    std::string doc = R"({"schema_version":1,"conversation_id":"big","messages":[)";
    for (int i = 0; i < 3; ++i) {
        doc += R"({"id":"u)" + std::to_string(i) +
               R"(","direction":"outgoing","blocks":[{"type":"text","text":")" +
               (i == 1 ? big : "question " + std::to_string(i)) + R"("}]},)";
        doc += R"({"id":"a)" + std::to_string(i) +
               R"(","direction":"incoming","blocks":[{"type":"text","text":"answer"}]},)";
    }
    doc += R"({"id":"u9","direction":"outgoing","blocks":[{"type":"text","text":"last"}]}]})";
    return doc;
}

TEST(CompactionMemory, ThePeakOfCompactingAnInputStaysWithinSixTimesItPlus64MiB) {
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's shadow memory and quarantine are part of the measured process's RSS;
    // the bound is measured by the plain build of the same suite.
    GTEST_SKIP() << "resident memory is not the program's own under AddressSanitizer";
#endif
    constexpr std::int64_t kInput = 32 * kMiB;
    const fs::path doc =
        fs::temp_directory_path() / ("nucleo-memory-" + std::to_string(::getpid()) + ".json");
    std::ofstream(doc) << document_with_text_of(kInput);
    const test_support::CliRun r = test_support::run_command(
        "env NUCLEO_PLUGIN_PATH=" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + " " + NUCLEO_CLI +
        " compact --in " + doc.string() + " --model claude-sonnet-5-5 --comfort 100000 --config " +
        NUCLEO_SOURCE_DIR + "/config/nucleo.yaml");
    fs::remove(doc);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_LT(r.out.size(), 64 * 1024U) << "the pasted text was summarized";
    rusage usage{};
    ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &usage), 0);
    const std::int64_t peak = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
    EXPECT_LT(peak, 6 * kInput + 64 * kMiB)
        << "peak " << peak / kMiB << " MiB for an input of " << kInput / kMiB << " MiB";
}

}  // namespace
}  // namespace nucleo
