// tools.103 end to end: the shipped default model (the shipped catalog's first record, Claude
// Sonnet 5.5, whose record takes mid-conversation tool changes) through ProviderClient, the real
// Anthropic plugin and nucleo-emulator, which enforces the Messages API's rules for system
// messages and tool additions (docs/emulator.md "Mid-conversation system messages and tool
// changes"). A tool declared after the first call goes out as a tool addition at its point: the
// emulator accepts it, `tools` stays as it was, the prefix the previous call wrote is read from
// the cache, and the model may call the new tool.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "emulator_client.hpp"
#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

class ToolChanges : public ::testing::Test {
  protected:
    ToolChanges()
        : config_(Config::parse(providers_yaml(),
                                std::string(NUCLEO_SOURCE_DIR) + "/config/tool_changes_test.yaml")),
          client_(ProviderClient::from_config(config_, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}),
                                              "anthropic")) {}

    /// The shipped catalog needs its three provider instances; only anthropic is called.
    std::string providers_yaml() const { return emulator_test::shipped_config_yaml(emulator_.port()); }

    static rapidjson::Document body_of(const HttpRequest& request) {
        rapidjson::Document d;
        const std::string_view body = request.body.view();
        d.Parse(body.data(), body.size());
        EXPECT_FALSE(d.HasParseError());
        return d;
    }

    static std::string header(const HttpRequest& request, std::string_view name) {
        for (const auto& [key, value] : request.headers)
            if (key == name) return value;
        return "";
    }

    emulator_test::EmulatorProcess emulator_;
    Config config_;
    ProviderClient client_;
};

const ToolDefinitionBlock kFetch{"fetch_page", "Fetches one page of the documentation.",
                                 R"({"type":"object","properties":{"url":{"type":"string"}}})"};

/// Long enough standing instructions for the model's minimum cacheable prefix.
std::string instructions() {
    std::string text;
    for (int i = 0; i < 120; ++i)
        text += "You answer questions about the documentation, citing the page you read. ";
    return text;
}

/// The result of every tool call of the last answer, so the conversation ends with a user turn.
void answer_tool_calls(ConversationContext& c) {
    const Message& last = c.messages().back();
    Message results;
    results.direction = Direction::kOutgoing;
    for (const ContentBlock& b : last.blocks) {
        if (const auto* use = b.get_if<ToolUseBlock>())
            results.blocks.push_back(
                ToolResultBlock{use->id, {TextBlock{"The install guide is docs/install.md."}}, false});
    }
    if (!results.blocks.empty()) c.add_message(std::move(results));
}

TEST_F(ToolChanges, TheDefaultModelGetsALateToolAsAToolAdditionAndKeepsItsCache) {
    const ModelSpec& model = config_.catalog().all().front();
    ASSERT_EQ(model.id, "claude-sonnet-5-5") << "the shipped default model";
    ASSERT_TRUE(model.tool_changes && model.system_messages);

    ConversationContext c("tool-changes", "alice");
    c.put_main_objective("task", instructions());
    c.set_output(OutputSize::kShort);
    c.add_message(Message::outgoing_text("Where is the install guide?"));
    const rapidjson::Document first = body_of(client_.build_request(c, model));
    ASSERT_TRUE(client_.call(c, model).appended);

    c.add_tool(kFetch);
    c.add_message(Message::outgoing_text("Fetch the install guide page, please."));
    const HttpRequest request = client_.build_request(c, model);
    const rapidjson::Document second = body_of(request);
    EXPECT_FALSE(first.HasMember("tools"));
    EXPECT_FALSE(second.HasMember("tools")) << "the late tool left `tools` as it was";
    EXPECT_NE(header(request, "anthropic-beta").find("inline-tools-2026-09-15"),
              std::string::npos);
    const auto& messages = second["messages"];
    const auto& last = messages[messages.Size() - 1];
    ASSERT_STREQ(last["role"].GetString(), "system");
    EXPECT_STREQ(last["content"][0]["tool"]["definition"]["name"].GetString(), "fetch_page");

    const LLMResponse r = client_.call(c, model);
    ASSERT_TRUE(r.appended) << "the emulator accepts the tool addition";
    EXPECT_GT(r.usage.cache_read_tokens, 0) << "the prefix of the first call was read back";
    bool called = false;
    for (const ContentBlock& b : r.message.blocks) {
        if (const auto* use = b.get_if<ToolUseBlock>()) called = called || use->name == "fetch_page";
    }
    EXPECT_TRUE(called) << "the model may call the tool added in the stream";
}

TEST_F(ToolChanges, TheCallAfterATurnOfToolAdditionsCarriesItUnchanged) {
    const ModelSpec& model = config_.catalog().find("claude-sonnet-5-5");
    ConversationContext c("tool-changes-next", "alice");
    c.put_main_objective("task", instructions());
    c.set_output(OutputSize::kShort);
    c.add_message(Message::outgoing_text("Where is the install guide?"));
    ASSERT_TRUE(client_.call(c, model).appended);
    c.add_tool(kFetch);
    c.add_message(Message::outgoing_text("Fetch it."));
    const rapidjson::Document with_addition = body_of(client_.build_request(c, model));
    ASSERT_TRUE(client_.call(c, model).appended);
    answer_tool_calls(c);
    if (c.messages().back().incoming())
        c.add_message(Message::outgoing_text("Thanks. And the upgrade notes?"));
    const rapidjson::Document next = body_of(client_.build_request(c, model));
    const auto& before = with_addition["messages"];
    const auto& after = next["messages"];
    ASSERT_GT(after.Size(), before.Size());
    // The system message of the addition stays where it was sent (no cache mark rides it).
    const rapidjson::SizeType at = before.Size() - 1;
    EXPECT_EQ(after[at], before[at]);
    EXPECT_STREQ(after[at]["role"].GetString(), "system");
    const LLMResponse r = client_.call(c, model);
    ASSERT_TRUE(r.appended);
    EXPECT_GT(r.usage.cache_read_tokens, 0);
}

}  // namespace
}  // namespace nucleo
