// Orphan-freedom end to end (compaction.32: orphan-freedom checked by feeding every compacted
// result to the provider encoders and the emulator's pairing rules): each compacted fixture is
// encoded by the real Anthropic, OpenAI and Bedrock dialect plugins and sent to nucleo-emulator,
// which answers with the providers' own 400 when a tool_use or tool_result is left without its
// pair.
#include <gtest/gtest.h>

#include "dialects.hpp"

namespace nucleo {
namespace {

using namespace compaction_test;

struct Case {
    const char* name;
    ConversationContext (*fixture)();
    const char* summarizer_config;
    std::int64_t comfort;
};

class OrphanFreedom : public ::testing::Test {
  protected:
    void SetUp() override { emulator_ = std::make_unique<emulator_test::EmulatorProcess>(); }

    std::unique_ptr<emulator_test::EmulatorProcess> emulator_;
};

TEST_F(OrphanFreedom, EveryCompactedFixtureIsAcceptedByEveryDialect) {
    const Case cases[] = {
        {"light", light_fixture, "{}", 10000},
        {"light-fails", light_fixture, R"({"fail_levels":["LIGHT"]})", 10000},
        {"aggressive-own-result", light_fixture, R"({"fail_levels":["LIGHT","MODERATE"]})", 10000},
        {"maximum-own-result", light_fixture,
         R"({"fail_levels":["LIGHT","MODERATE"],"overshoot":3.0})", 10000},
        {"moderate", moderate_fixture, "{}", 10000},
        {"aggressive", [] { return aggressive_fixture(); }, "{}", 10000},
        {"maximum", maximum_fixture, R"({"overshoot":3.0})", 10000},
        {"parallel", parallel_fixture, "{}", 2500},
        {"parallel-moderate", parallel_fixture, R"({"fail_levels":["LIGHT"]})", 2500},
        {"parallel-maximum", parallel_fixture,
         R"({"fail_levels":["LIGHT","MODERATE"],"overshoot":3.0})", 2500},
    };
    const ModelSpec model = test_model();
    const DialectClients dialects(*emulator_);
    for (const Case& k : cases) {
        SCOPED_TRACE(k.name);
        ConversationContext c = k.fixture();
        ContextWindowManager manager(scripted(k.summarizer_config), {k.comfort, std::nullopt});
        const CompactionReport r = manager.ensure_fits(c, model, 512);
        ASSERT_TRUE(r.compacted());
        expect_no_orphans(c);
        dialects.expect_accepted(c, model);
    }
}

TEST_F(OrphanFreedom, TheEmulatorDoesRefuseAnOrphan) {
    // The check above can fail: an orphaned tool_use, built by hand, is refused.
    ConversationContext c = base("orphan");
    c.add_message(Message::outgoing_text("Read module 1."));
    c.add_message(tool_call("a1", {"x1"}));
    c.add_message(Message::outgoing_text("Never mind."));
    EXPECT_THROW(dialect_client(*emulator_, "anthropic")->call(c, test_model()), Error);
}

}  // namespace
}  // namespace nucleo
