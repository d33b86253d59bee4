// Transcript::render (conversation.33). Each test pins one clause of:
// "every message under its role, in order - the text as said, each tool call with its name and
// arguments, each tool result against the call it answers (an error result marked), an admitted
// skill by name, an attachment by kind. Thinking blocks are left out (the provider's channel,
// meant for nobody else) and so are tool schemas."
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nucleo/conversation.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo {
namespace {

Message outgoing(std::vector<ContentBlock> blocks) {
    Message m;
    m.direction = Direction::kOutgoing;
    m.blocks = std::move(blocks);
    return m;
}

Message incoming(std::vector<ContentBlock> blocks) {
    Message m = outgoing(std::move(blocks));
    m.direction = Direction::kIncoming;
    return m;
}

std::string render(const std::vector<Message>& messages) {
    return Transcript::render(messages);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// "every message under its role, in order - the text as said"
TEST(Transcript, EveryMessageUnderItsRoleInOrderWithTheTextAsSaid) {
    const std::string text = render({Message::outgoing_text("Where is order 42?"),
                                     Message::incoming_text("Let me look.\nOne moment."),
                                     Message::outgoing_text("Thanks!")});
    EXPECT_EQ(text,
              "user:\nWhere is order 42?\n\n"
              "assistant:\nLet me look.\nOne moment.\n\n"
              "user:\nThanks!\n");
}

// "each tool call with its name and arguments"
TEST(Transcript, EachToolCallWithItsNameAndArguments) {
    const std::string text = render({incoming(
        {TextBlock{"Searching."}, ToolUseBlock{"toolu_1", "search_orders", R"({"query":"42"})"}})});
    EXPECT_EQ(text,
              "assistant:\nSearching.\n[tool call search_orders (toolu_1)] {\"query\":\"42\"}\n");
}

// "each tool result against the call it answers (an error result marked)"
TEST(Transcript, EachToolResultAgainstTheCallItAnswersWithErrorsMarked) {
    const std::string text =
        render({incoming({ToolUseBlock{"toolu_1", "search_orders", "{}"},
                          ToolUseBlock{"toolu_2", "refund", R"({"order":42})"}}),
                outgoing({ToolResultBlock{"toolu_2", {TextBlock{"not allowed"}}, true},
                          ToolResultBlock{"toolu_1", {TextBlock{"Order 42 shipped."}}, false}})});
    EXPECT_TRUE(contains(text, "[tool result of refund (toolu_2), error]\nnot allowed\n")) << text;
    EXPECT_TRUE(contains(text, "[tool result of search_orders (toolu_1)]\nOrder 42 shipped.\n"))
        << text;
    // Only the error result is marked.
    EXPECT_EQ(text.find("error"), text.rfind("error"));
}

TEST(Transcript, AResultWhoseCallIsNotRenderedShowsItsIdAlone) {
    const std::string text = render({outgoing({ToolResultBlock{"toolu_9", {TextBlock{"ok"}}}})});
    EXPECT_EQ(text, "user:\n[tool result of toolu_9]\nok\n");
}

// "an admitted skill by name" — its content is the model's, not the reader's.
TEST(Transcript, AnAdmittedSkillByName) {
    const std::string text =
        render({outgoing({SkillBlock{"refund-policy", "Refunds within 30 days."}})});
    EXPECT_EQ(text, "user:\n[skill: refund-policy]\n");
}

// "an attachment by kind" — the bytes never reach the transcript.
TEST(Transcript, AnAttachmentByKind) {
    const std::string text = render(
        {outgoing({ImageBlock{"image/png", "iVBORw0KGgo=", ""},
                   FileBlock{"application/pdf", "invoice.pdf", "", "https://example.com/i.pdf"}}),
         outgoing({ToolResultBlock{"x", {ImageBlock{"image/jpeg", "", "https://e.com/a.jpg"}}}})});
    EXPECT_TRUE(contains(text, "[image: image/png]\n[file: invoice.pdf, application/pdf]\n"))
        << text;
    EXPECT_TRUE(contains(text, "[image: image/jpeg]")) << text;
    EXPECT_FALSE(contains(text, "iVBORw0KGgo=")) << text;
    EXPECT_FALSE(contains(text, "https://")) << text;
}

// "Thinking blocks are left out (the provider's channel, meant for nobody else)"
TEST(Transcript, ThinkingBlocksAreLeftOut) {
    const std::string text =
        render({Message::outgoing_text("Hi"),
                incoming({ThinkingBlock{"secret reasoning", "sig"}, RedactedThinkingBlock{"opaque"},
                          TextBlock{"Hello."}}),
                incoming({ThinkingBlock{"only thinking", "sig2"}})});
    EXPECT_EQ(text, "user:\nHi\n\nassistant:\nHello.\n");
}

// "and so are tool schemas"
TEST(Transcript, ToolSchemasAreLeftOut) {
    const ToolDefinitionBlock tool{"fetch", "Fetch a page.",
                                   R"({"type":"object","properties":{"url":{"type":"string"}}})"};
    const std::string text =
        render({outgoing({TextBlock{"Additional tools now available: fetch"}, tool})});
    EXPECT_EQ(text, "user:\nAdditional tools now available: fetch\n[tool available: fetch]\n");
    EXPECT_FALSE(contains(text, "properties"));
}

TEST(Transcript, JsonAndPojoBlocksReadAsSaid) {
    const std::string text =
        render({incoming({JsonBlock{R"({"a":1})"}, PojoBlock{"Order", R"({"id":42})"}})});
    EXPECT_EQ(text, "assistant:\n{\"a\":1}\nOrder {\"id\":42}\n");
}

// conversation.33: the objective is model input that no transcript replay ever ships as
// conversation content.
TEST(Transcript, RendersAConversationWithoutItsObjective) {
    ConversationContext conversation("c-1", "alice");
    conversation.put_main_objective("task", std::string("SECRET standing instruction"));
    conversation.add_message(Message::outgoing_text("Question?"));
    conversation.add_message(Message::incoming_text("Answer."));
    const std::string text = Transcript::render(conversation);
    EXPECT_EQ(text, "user:\nQuestion?\n\nassistant:\nAnswer.\n");
    EXPECT_EQ(text, render(conversation.messages()));
}

TEST(Transcript, AnEmptyConversationRendersEmpty) {
    EXPECT_EQ(render({}), "");
}

}  // namespace
}  // namespace nucleo
