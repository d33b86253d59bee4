// nucleo-extractive through the loader (compaction.42), unit-tested through the
// loader: names, numbers, paths, errors and decisions are what a summary keeps.
#include <gtest/gtest.h>

#include <string>

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

TEST_F(Extractive, RefusesAConfigThatIsNotAnObject) {
    EXPECT_THROW((void)plugin.make_summarizer("[1,2]"), nucleo::Error);
}

}  // namespace
