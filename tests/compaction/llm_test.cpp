// The llm summarizer through the host's "nucleo.host.model_call/1" extension (plugin.h 1.1,
// compaction.40): a model of the SMALL grade called through ProviderClient against the real
// nucleo-emulator, each summary a recorded and costed call.
#include <gtest/gtest.h>

#include "compaction_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

Config emulator_config(int port) {
    const std::string yaml = R"(
providers:
  emulator: {plugin: anthropic, base_url: "http://127.0.0.1:)" +
                             std::to_string(port) +
                             R"(", api_key: sk-test}
models:
  - id: big-model
    provider: emulator
    wire_model: claude-sonnet-5-5
    grade: LARGE
    max_context_tokens: 200000
    max_output_tokens: 8192
    output_budget: {SHORT: 1024, MEDIUM: 2048, LONG: 4096, EXTENDED: 8192}
    prices: {input: 3.0, output: 15.0, cache_write: 3.75, cache_read: 0.3}
  - id: small-model
    provider: emulator
    wire_model: claude-haiku-4-5
    grade: SMALL
    max_context_tokens: 200000
    max_output_tokens: 8192
    output_budget: {SHORT: 1024, MEDIUM: 2048, LONG: 4096, EXTENDED: 8192}
    prices: {input: 1.0, output: 5.0, cache_write: 1.25, cache_read: 0.1}
)";
    return Config::parse(yaml, "emulator.yaml");
}

SummarizerInstance llm(const std::string& config = "{}") {
    return PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("llm").make_summarizer(config);
}

TEST(LlmSummarizer, EachSummaryIsARecordedCostedCallAtTheSmallGrade) {
    // compaction.40: "a job at the Grade.SMALL grade unless the compactor is built with another,
    // admitted against rate limits, recorded and costed like any other call".
    emulator_test::EmulatorProcess emulator;
    ModelCallService service(emulator_config(emulator.port()),
                             PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}));
    const ModelCallHandler previous = set_model_call_handler(service.handler());
    ConversationContext c = light_fixture();
    const ConversationContext before = c;
    CompactionReport r;
    try {
        r = ContextWindowManager(llm(), test_settings()).ensure_fits(c, test_model(), 512);
    } catch (...) {
        set_model_call_handler(previous);
        throw;
    }
    set_model_call_handler(previous);
    ASSERT_TRUE(r.compacted());
    expect_survival(before, c);
    expect_no_orphans(c);
    const std::vector<ModelCallRecord> calls = service.records();
    ASSERT_GE(calls.size(), r.summaries.size());
    for (const ModelCallRecord& call : calls) {
        EXPECT_EQ(call.model_id, "small-model");
        EXPECT_EQ(call.purpose, "compaction");
        EXPECT_GT(call.cost, 0.0);
    }
    for (const CompactionSummary& s : r.summaries) {
        EXPECT_EQ(s.model, "small-model");
        EXPECT_GT(s.cost, 0.0);
    }
    EXPECT_GT(r.cost(), 0.0);
}

TEST(LlmSummarizer, AConfiguredGradeIsUsed) {
    emulator_test::EmulatorProcess emulator;
    ModelCallService service(emulator_config(emulator.port()),
                             PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}));
    const ModelCallHandler previous = set_model_call_handler(service.handler());
    const std::string answer =
        llm(R"({"grade":"LARGE"})")
            .summarize(
                R"({"schema_version":1,"text":"Build failed in src/a.cpp.","target_tokens":20})");
    set_model_call_handler(previous);
    EXPECT_NE(answer.find(R"("model":"big-model")"), std::string::npos) << answer;
    ASSERT_EQ(service.records().size(), 1U);
    EXPECT_EQ(service.records().front().model_id, "big-model");
}

TEST(LlmSummarizer, WithoutAModelCallServiceItFailsAndMaximumFailsTheCall) {
    const ModelCallHandler previous = set_model_call_handler({});
    ConversationContext c = light_fixture();
    const std::string before = write_conversation_document(c);
    try {
        ContextWindowManager(llm(), test_settings()).ensure_fits(c, test_model(), 512);
        ADD_FAILURE() << "every summary fails, so MAXIMUM must fail the call";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented);
        EXPECT_NE(std::string(e.what()).find("set_model_call_handler"), std::string::npos)
            << e.what();
    }
    set_model_call_handler(previous);
    EXPECT_EQ(write_conversation_document(c), before);
}

}  // namespace
}  // namespace nucleo
