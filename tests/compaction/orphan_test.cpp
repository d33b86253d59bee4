// Orphan-freedom end to end (compaction.32: orphan-freedom checked by feeding every compacted
// result to the provider encoders and the emulator's pairing rules): each compacted fixture is
// encoded by the real Anthropic, OpenAI and Bedrock dialect plugins and sent to nucleo-emulator,
// which answers with the providers' own 400 when a tool_use or tool_result is left without its
// pair.
#include <gtest/gtest.h>

#include <filesystem>

#include "compaction_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"

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

    ProviderClient client(const std::string& plugin) const {
        ProviderConfig config;
        config.name = plugin;
        config.plugin = plugin;
        config.base_url = "http://127.0.0.1:" + std::to_string(emulator_->port());
        // OpenAI's base URL ends in /v1 (the SDKs' OPENAI_BASE_URL convention).
        if (plugin == "openai") config.base_url += "/v1";
        config.credentials.api_key = "sk-test";
        config.credentials.access_key_id = "AKIDTEST";
        config.credentials.secret_access_key = "secret";
        config.credentials.region = "us-east-1";
        TransportOptions transport;
        transport.retry.max_attempts = 1;
        return {config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(plugin).make_provider(),
                transport};
    }

    static bool built(const std::string& plugin) {
        static const bool any =
            std::filesystem::exists(std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-anthropic.so");
        if (!any) ADD_FAILURE() << "no provider plugin is built: build anthropic openai bedrock";
        return std::filesystem::exists(std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + plugin +
                                       ".so");
    }

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
    ModelSpec model = test_model();
    for (const Case& k : cases) {
        SCOPED_TRACE(k.name);
        ConversationContext c = k.fixture();
        ContextWindowManager manager(scripted(k.summarizer_config), {k.comfort, std::nullopt});
        const CompactionReport r = manager.ensure_fits(c, model, 512);
        ASSERT_TRUE(r.compacted());
        expect_no_orphans(c);
        for (const char* dialect : {"anthropic", "openai", "bedrock"}) {
            SCOPED_TRACE(dialect);
            if (!built(dialect)) continue;
            ConversationContext copy = c;
            ProviderClient pc = client(dialect);
            model.provider = dialect;
            // The encoder accepts it (a dialect refuses a request it cannot express) ...
            EXPECT_NO_THROW((void)pc.build_request(copy, model));
            // ... and the emulator's pairing rules accept the call.
            try {
                const LLMResponse answer = pc.call(copy, model);
                EXPECT_FALSE(answer.message.blocks.empty());
            } catch (const Error& e) {
                ADD_FAILURE() << "the emulator refused the compacted conversation: " << e.what();
            }
        }
    }
}

TEST_F(OrphanFreedom, TheEmulatorDoesRefuseAnOrphan) {
    // The check above can fail: an orphaned tool_use, built by hand, is refused.
    ConversationContext c = base("orphan");
    c.add_message(Message::outgoing_text("Read module 1."));
    c.add_message(tool_call("a1", {"x1"}));
    c.add_message(Message::outgoing_text("Never mind."));
    ProviderClient pc = client("anthropic");
    EXPECT_THROW(pc.call(c, test_model()), Error);
}

}  // namespace
}  // namespace nucleo
