// nucleo-extractive through the loader (compaction.42), unit-tested through the
// loader: names, numbers, paths, errors and decisions are what a summary keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace {

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    EXPECT_FALSE(d.HasParseError()) << json;
    return d;
}

class Extractive : public ::testing::Test {
  protected:
    nucleo::Plugin plugin = nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive");
    nucleo::SummarizerInstance s = plugin.make_summarizer();

    rapidjson::Document summarize(const std::string& request) {
        return parse(s.summarize(request));
    }
};

const char* kChat =
    "Hello there, thanks for joining. "
    "The build broke with error E1234 in src/render/cache.cpp at line 88. "
    "It was a lovely morning anyway. "
    "We decided to pin the cache breakpoints to the system prefix. "
    "Nothing else happened really. "
    "Alice Martin owns the rollout.";

TEST_F(Extractive, ServesTheSummarizerFactory) {
    EXPECT_EQ(plugin.info().name, "extractive");
    EXPECT_TRUE(plugin.serves("nucleo.summarizer/1"));
}

TEST_F(Extractive, KeepsSentencesWithErrorsPathsNumbersDecisionsAndNamesFirst) {
    // Room for roughly the three informative sentences, not the small talk.
    const auto d = summarize(std::string(R"({"schema_version":1,"target_tokens":45,"text":")") +
                             kChat + "\"}");
    const std::string summary = d["summary"].GetString();
    EXPECT_NE(summary.find("error E1234 in src/render/cache.cpp"), std::string::npos) << summary;
    EXPECT_NE(summary.find("We decided to pin"), std::string::npos) << summary;
    EXPECT_NE(summary.find("Alice Martin"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("lovely morning"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("Nothing else"), std::string::npos) << summary;
    // In original order.
    EXPECT_LT(summary.find("E1234"), summary.find("decided"));
    EXPECT_LT(summary.find("decided"), summary.find("Alice"));
    EXPECT_LE(d["summary_tokens"].GetUint64(), 45u);
    EXPECT_EQ(d["summary_tokens"].GetUint64(), (summary.size() + 3) / 4);
    EXPECT_EQ(d["schema_version"].GetInt(), 1);
    EXPECT_STREQ(d["token_estimate"].GetString(), "bytes/4");
}

TEST_F(Extractive, RespectsTheTargetSize) {
    for (unsigned target : {1u, 5u, 20u, 40u, 80u, 1000u}) {
        const auto d = summarize(R"({"schema_version":1,"target_tokens":)" +
                                 std::to_string(target) + R"(,"text":")" + kChat + "\"}");
        EXPECT_LE(d["summary_tokens"].GetUint64(), target) << target;
        EXPECT_GT(d["summary_chars"].GetUint64(), 0u) << target;
    }
}

TEST_F(Extractive, EverythingFitsKeepsEverySentence) {
    const auto d = summarize(R"({"target_tokens":1000,"text":")" + std::string(kChat) + "\"}");
    EXPECT_EQ(d["sentences_kept"].GetUint64(), d["sentences_total"].GetUint64());
    EXPECT_EQ(std::string(d["summary"].GetString()), kChat);
}

TEST_F(Extractive, IsDeterministic) {
    const std::string req =
        R"({"schema_version":1,"target_tokens":30,"text":")" + std::string(kChat) + "\"}";
    const std::string first = s.summarize(req);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(s.summarize(req), first);
    EXPECT_EQ(plugin.make_summarizer().summarize(req), first);
}

TEST_F(Extractive, SegmentsAreSummarizedTogetherAndSeparatedByLineBreaks) {
    const auto d = summarize(R"({"schema_version":1,"target_tokens":19,"segments":[)"
                             R"("Small talk here. The deploy failed with exit code 137.",)"
                             R"("Weather was nice. We chose PostgreSQL 15 for the store."]})");
    EXPECT_STREQ(d["summary"].GetString(),
                 "The deploy failed with exit code 137.\nWe chose PostgreSQL 15 for the store.");
}

TEST_F(Extractive, TooSmallATargetCutsTheBestSentence) {
    const auto d = summarize(
        R"({"target_tokens":4,"text":"Nothing. The error was in /etc/nucleo/nucleo.yaml line 12."})");
    const std::string summary = d["summary"].GetString();
    EXPECT_LE(summary.size(), 16u);
    EXPECT_EQ(summary.rfind("..."), summary.size() - 3) << summary;
    EXPECT_EQ(summary.rfind("The", 0), 0u) << summary;
}

TEST_F(Extractive, BadRequestsAreInvalidArgumentsNamingTheField) {
    for (const char* bad : {"not json", R"({"text":"x"})", R"({"target_tokens":0,"text":"x"})",
                            R"({"target_tokens":5})", R"({"target_tokens":5,"segments":[1]})",
                            R"({"schema_version":2,"target_tokens":5,"text":"x"})"}) {
        try {
            (void)s.summarize(bad);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const nucleo::Error& e) {
            EXPECT_EQ(e.kind(), nucleo::ErrorKind::kInvalidArgument) << bad;
            EXPECT_NE(
                std::string(e.what()).find("plugin 'extractive' summarize failed: summarize:"),
                std::string::npos)
                << e.what();
        }
    }
}

/// A pytest run: a command, many passing lines, one failure with its assertion, the tally.
std::string pytest_log() {
    std::string log = "$ pytest -q tests/net\\n";
    for (int i = 0; i < 40; ++i) {
        log += "tests/net/test_retry.py::test_case_" + std::to_string(i) + " PASSED\\n";
    }
    log += "tests/net/test_retry.py::test_backoff_jitter FAILED\\n";
    log += "    assert delay == 17\\n";
    log += "E   AssertionError: expected 17 got 23 in test_backoff_jitter\\n";
    log += "tests/net/test_retry.py:88: AssertionError\\n";
    for (int i = 0; i < 40; ++i) log += "-- Docs: https://docs.pytest.org/en/stable/how-to\\n";
    log += "1 failed, 40 passed in 3.81s";
    return log;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        out.push_back(text.substr(start, nl - start));
    }
    out.push_back(text.substr(start));
    return out;
}

TEST_F(Extractive, KeepsLinesAsLinesAndTheFailureWithItsContext) {
    // compaction.113: a log keeps its shape; the command, the failing assertion with the lines
    // around it and the tally are kept; the repeated footer never is.
    const auto d =
        summarize(R"({"schema_version":1,"target_tokens":120,"text":")" + pytest_log() + "\"}");
    const std::string summary = d["summary"].GetString();
    const std::vector<std::string> kept = lines_of(summary);
    std::string source = pytest_log();
    for (std::size_t p; (p = source.find("\\n")) != std::string::npos;) source.replace(p, 2, "\n");
    const std::vector<std::string> lines = lines_of(source);
    for (const std::string& line : kept) {
        EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end())
            << "not a line of the log: " << line;
    }
    for (const char* must :
         {"$ pytest -q tests/net", "E   AssertionError: expected 17 got 23 in test_backoff_jitter",
          "tests/net/test_retry.py::test_backoff_jitter FAILED",
          "tests/net/test_retry.py:88: AssertionError", "1 failed, 40 passed in 3.81s"}) {
        EXPECT_NE(std::find(kept.begin(), kept.end(), must), kept.end())
            << "lost: " << must << "\nsummary:\n"
            << summary;
    }
    EXPECT_LE(
        std::count(kept.begin(), kept.end(), "-- Docs: https://docs.pytest.org/en/stable/how-to"),
        1)
        << summary;
    EXPECT_LE(d["summary_tokens"].GetUint64(), 120u);
}

TEST_F(Extractive, FragmentsAreNeverKeptForTheirOwnSake) {
    // compaction.113: "1." and a lone backticked word are wrapped-line debris, not facts.
    const auto d = summarize(
        R"({"target_tokens":14,"text":"1.\n`x`.\nWhat does reasoning_effort do on gpt-6-sol?\n2."})");
    EXPECT_STREQ(d["summary"].GetString(), "What does reasoning_effort do on gpt-6-sol?");
}

TEST_F(Extractive, AToolOutputsFirstLineOutranksTheFactsBelowIt) {
    // compaction.113: the first line says what the output is (the search, its counts); a later
    // line with more paths and names is one finding among many.
    const std::string text =
        R"(55 passages in 9 files mention \"caching\"\n)"
        R"([glossary.md:67, section \"C\"]\n)"
        R"(**cache plan** (`nucleo::CachePlan`, `core/include/nucleo/prepared.hpp`) decides in )"
        R"(src/core/render.cpp where the breakpoints of CallOptions go, per caching.105.\n)"
        R"([glossary.md:69, section \"C\"]\n)"
        R"(**cache policy** (`nucleo::CachePolicy`) picks seed or sliding in src/core/plan.cpp.)";
    const auto d = summarize(R"({"target_tokens":40,"text":")" + text + "\"}");
    const std::string summary = d["summary"].GetString();
    EXPECT_TRUE(summary.starts_with("55 passages in 9 files")) << summary;
}

TEST_F(Extractive, AnUnknownCounterFallsBackToTheEstimateAndABadOneIsRefused) {
    // abi.132: a counter name the host does not know (the request is over, or not the host's)
    // leaves the plugin on its bytes/4 estimate; a counter that is not a string is bad input.
    const auto d = summarize(std::string(R"({"target_tokens":45,"token_counter":"gone","text":")") +
                             kChat + "\"}");
    EXPECT_STREQ(d["token_estimate"].GetString(), "bytes/4");
    EXPECT_THROW((void)s.summarize(R"({"target_tokens":5,"token_counter":7,"text":"x"})"),
                 nucleo::Error);
}

TEST_F(Extractive, RefusesAConfigThatIsNotAnObject) {
    EXPECT_THROW((void)plugin.make_summarizer("[1,2]"), nucleo::Error);
}

}  // namespace
