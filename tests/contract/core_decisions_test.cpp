// The core's decisions before any plugin sees a request, through the core with the real Anthropic
// plugin and the real nucleo-emulator (which enforces the same rule book): a conversation that
// would break a rule is corrected by a documented decision (wire.171: thinking off for the call)
// or refused naming the rule, the message and the block, with nothing sent (wire.170); tool
// declarations no provider takes are refused at add_tool (tools.102).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;

ModelSpec claude() { return contract_test::claude("anthropic", true); }

class CoreDecisions : public ::testing::Test {
  protected:
    void SetUp() override { emulator_ = std::make_unique<EmulatorProcess>(); }

    ProviderClient client() const {
        return contract_test::emulator_client(*emulator_, "anthropic", NUCLEO_BUILD_PLUGIN_DIR);
    }

    long requests_seen() const { return contract_test::requests_seen(*emulator_); }

    /// A tool loop at thinking depth whose assistant turn begins with `first` (then a tool call),
    /// answered by the tool's result.
    static ConversationContext tool_loop(ContentBlock first) {
        ConversationContext c("c-loop", "alice");
        c.put_main_objective("task", "You look up orders.");
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kStandard);
        c.add_tool(ToolDefinitionBlock{"lookup", "Looks an order up.", R"({"type":"object","properties":{"id":{"type":"string"}}})"});
        c.add_message(Message::outgoing_text("Where is order 42?"));
        Message call;
        call.direction = Direction::kIncoming;
        call.blocks = {std::move(first), ToolUseBlock{"toolu_1", "lookup", R"({"id":"42"})"}};
        c.add_message(call);
        Message result;
        result.direction = Direction::kOutgoing;
        result.blocks = {ToolResultBlock{"toolu_1", {TextBlock{"shipped"}}, false}};
        c.add_message(result);
        return c;
    }

    std::unique_ptr<EmulatorProcess> emulator_;
};

TEST_F(CoreDecisions, ALoopTurnWithoutThinkingGoesWithoutThinkingAndIsAnswered) {
    // wire.171: the assistant turn begins with text (a round taken at a lower depth); with
    // thinking on the provider would refuse it (wire.113), so the call goes without thinking.
    ConversationContext c = tool_loop(TextBlock{"Let me look."});
    ProviderClient pc = client();
    const HttpRequest rendered = pc.build_request(c, claude(), {}, true);
    EXPECT_NE(rendered.body.str().find("\"thinking\":{\"type\":\"disabled\"}"), std::string::npos)
        << rendered.body;
    EXPECT_EQ(rendered.body.str().find("\"output_config\""), std::string::npos) << rendered.body;
    const LLMResponse r = pc.call(c, claude());
    EXPECT_EQ(requests_seen(), 1);
    EXPECT_EQ(c.messages().size(), 4U);
    EXPECT_TRUE(c.messages().back().incoming());
    (void)r;
}

TEST_F(CoreDecisions, ALoopTurnThatBeginsWithThinkingKeepsThinking) {
    ConversationContext c = tool_loop(ThinkingBlock{"The order id is 42.", "sig"});
    ProviderClient pc = client();
    const HttpRequest rendered = pc.build_request(c, claude(), {}, true);
    EXPECT_NE(rendered.body.str().find("\"thinking\":{\"type\":\"adaptive\""), std::string::npos)
        << rendered.body;
    EXPECT_NE(rendered.body.str().find("\"effort\":\"medium\""), std::string::npos) << rendered.body;
    pc.call(c, claude());
    EXPECT_EQ(requests_seen(), 1);
}

TEST_F(CoreDecisions, AConversationThatStartsWithTheModelIsRefusedNamingRuleMessageAndBlock) {
    // wire.170: Anthropic takes a conversation that starts with the user's turn.
    ConversationContext c("c-first", "alice");
    c.put_main_objective("task", "You look up orders.");
    c.set_depth(Depth::kImmediate);
    c.add_message(Message::incoming_text("Hello, how can I help?"));
    c.add_message(Message::outgoing_text("Where is order 42?"));
    const std::string first_id = c.messages().front().id;
    ProviderClient pc = client();
    try {
        pc.call(c, claude());
        FAIL() << "a conversation that starts with the model was sent";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << what;
        EXPECT_NE(what.find("wire.170"), std::string::npos) << what;
        EXPECT_NE(what.find("message '" + first_id + "'"), std::string::npos) << what;
        EXPECT_NE(what.find("block 0 (text)"), std::string::npos) << what;
        EXPECT_NE(what.find("add a user message before it"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    EXPECT_EQ(requests_seen(), 0);
    EXPECT_EQ(c.messages().size(), 2U);
}

TEST(ToolDeclaration, ANameNoProviderTakesIsRefusedAtAddTool) {
    // tools.102
    ConversationContext c("c-tools", "alice");
    EXPECT_TRUE(c.add_tool(ToolDefinitionBlock{"search_orders-2", "Searches.", R"({"type":"object"})"}));
    for (const char* name : {"search orders!", "", "a.b", "ünïcode"}) {
        try {
            c.add_tool(ToolDefinitionBlock{name, "Searches.", R"({"type":"object"})"});
            FAIL() << "tool name '" << name << "' was declared";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
            EXPECT_NE(std::string(e.what()).find("^[a-zA-Z0-9_-]{1,64}$"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("rename it"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(c.add_tool(ToolDefinitionBlock{std::string(65, 'a'), "Long.", R"({"type":"object"})"}), Error);
    EXPECT_TRUE(c.add_tool(ToolDefinitionBlock{std::string(64, 'a'), "Long.", R"({"type":"object"})"}));
    EXPECT_EQ(c.declared_tools().size(), 2U);
}

TEST(ToolDeclaration, AnInputSchemaNotOfTypeObjectIsRefusedAtAddTool) {
    ConversationContext c("c-tools", "alice");
    for (const char* schema : {R"({"type":"array"})", R"({"properties":{}})", "[]", "{not json", ""}) {
        try {
            c.add_tool(ToolDefinitionBlock{"lookup", "Looks up.", schema});
            FAIL() << "schema " << schema << " was declared";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
            EXPECT_NE(std::string(e.what()).find("tool 'lookup'"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("\"type\": \"object\""), std::string::npos) << e.what();
        }
    }
    EXPECT_TRUE(c.declared_tools().empty());
}

}  // namespace
}  // namespace nucleo
