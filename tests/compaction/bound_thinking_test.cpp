// wire.192 end to end: a conversation of Claude Sonnet 5.5 (the shipped catalog's record binds a
// thinking block to its prefix, and nucleo-emulator enforces it: wire.193) is compacted by the
// ladder and its next call is accepted, while the same history rewritten without dropping the
// thinking of the answers after the change is refused with the provider's words.
#include <gtest/gtest.h>

#include <string>

#include "compaction_support.hpp"
#include "emulator_client.hpp"
#include "growing_support.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {
namespace {

std::size_t thinking_blocks(const ConversationContext& c) {
    std::size_t n = 0;
    for (const Message& m : c.messages()) {
        for (const ContentBlock& b : m.blocks) n += b.is<ThinkingBlock>() ? 1 : 0;
    }
    return n;
}

TEST(BoundThinking, ACompactedConversationIsAcceptedAndOneThatKeptItsThinkingIsNot) {
    const emulator_test::EmulatorProcess emulator;  // the shipped catalog: wire.193 applies
    // The shipped catalog needs its five provider instances; only anthropic is called.
    std::string providers = "include: models.yaml\nproviders:\n";
    for (const char* p : {"anthropic", "openai", "bedrock", "gemini", "openai-responses"}) {
        providers += std::string("  ") + p + ":\n    plugin: " + p +
                     "\n    base_url: http://127.0.0.1:" + std::to_string(emulator.port()) +
                     "\n    api_key: test\n";
    }
    const Config config = Config::parse(
        providers, std::string(NUCLEO_SOURCE_DIR) + "/config/bound_thinking_test.yaml");
    ProviderClient client =
        ProviderClient::from_config(config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}), "anthropic");
    const ModelSpec& model = config.catalog().find("claude-sonnet-5-5");
    ASSERT_TRUE(model.thinking.bound_to_prefix);

    // No tools: the emulator answers in text, so every turn stays a plain exchange.
    ConversationContext c("bound-thinking", "alice");
    c.put_main_objective("task", "You fix build failures in the repository.");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kStandard);  // adaptive thinking: every answer carries a bound block
    for (int k = 1; k <= 16; ++k) {
        c.add_message(
            Message::outgoing_text("Question " + std::to_string(k) + ": " + prose(30, k)));
        (void)client.call(c, model);
    }
    ASSERT_GE(thinking_blocks(c), 16U) << "the emulator answered with thinking";

    // The history rewritten as a compaction would, but keeping every answer's thinking: the
    // answers after the summary are sent after another prefix than the one they were bound to.
    ConversationContext kept = c;
    compact_half(kept);
    kept.add_message(Message::outgoing_text("What is left to fix?"));
    try {
        (void)client.call(kept, model);
        ADD_FAILURE() << "a thinking block sent after another prefix was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        EXPECT_NE(std::string(e.what()).find("The block is bound to a different conversation"),
                  std::string::npos)
            << e.what();
    }

    // The ladder drops them (wire.192), so the next call goes through.
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, model, 1024);
    ASSERT_TRUE(r.compacted());
    EXPECT_GT(r.thinking_blocks_dropped, 0);
    c.add_message(Message::outgoing_text("What is left to fix?"));
    const LLMResponse answer = client.call(c, model);
    EXPECT_FALSE(answer.message.blocks.empty());
}

}  // namespace
}  // namespace nucleo::compaction_test
