// Tool declaration and announcement (docs/spec/tools.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "test_support.hpp"

namespace nucleo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::keys_of;
using testing::LogCapture;
using ::testing::StartsWith;
using testing::text_of;
using testing::tool;

using testing::kNative;
using testing::kText;

// tools.1: "Declarations are add-only: a name already declared is a no-op, whatever the new
// declaration would produce".
TEST(Tools, SecondDeclarationOfANameChangesNothing) {
    ConversationContext ctx;
    EXPECT_TRUE(ctx.add_tool(tool("search", "first")));
    EXPECT_FALSE(ctx.add_tool(tool("search", "second")));
    EXPECT_EQ(ctx.add_tools({tool("search", "third"), tool("fetch")}), 1U);
    ASSERT_EQ(ctx.declared_tools().size(), 2U);
    EXPECT_EQ(ctx.declared_tools()[0].definition.description, "first");
    ctx.prepare_messages_for_llm(kNative, false);
    const auto* slot = ctx.objective_slot("tool:search");
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(slot->get_if<ToolDefinitionBlock>()->description, "first");
}

// tools.2: "Conversion to the wire definition happens at the first render after the
// declaration, never eagerly"; tools.102: what no provider takes is refused at the declaration.
TEST(Tools, DeclaredButNotRenderedIsObservableAndConversionIsNotEager) {
    ConversationContext ctx;
    try {
        ctx.add_tool(ToolDefinitionBlock{"broken", "d", "{not json"});
        FAIL() << "a schema that is not JSON must be refused at the declaration";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'broken'"));
    }
    ctx.add_tool(ToolDefinitionBlock{"fine", "d", R"({ "type" : "object" })"});
    EXPECT_THAT(ctx.pending_tools(), ElementsAre("fine"));
    EXPECT_EQ(ctx.announced_in("fine"), std::nullopt);
    EXPECT_TRUE(ctx.main_objective().empty());
    EXPECT_EQ(ctx.declared_tools()[0].definition.schema_json, R"({ "type" : "object" })");
    EXPECT_FALSE(ctx.frozen());
}

// The conversion re-emits the schema compact: what reached the content is the wire form.
TEST(Tools, RenderConvertsTheSchemaToItsCompactWireForm) {
    ConversationContext ctx;
    ctx.add_tool(ToolDefinitionBlock{"fine", "d", R"({ "type" : "object" })"});
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(p.tool_definitions.size(), 1U);
    EXPECT_EQ(p.tool_definitions[0].schema_json, R"({"type":"object"})");
    EXPECT_TRUE(ctx.pending_tools().empty());
}

// tools.3: "at the conversation's first render the palette joins the head (under tool: keys,
// preceded by the tool-weight guidance, which appears exactly when tools do)".
TEST(Tools, FirstRenderPlacesPaletteInTheHeadAfterTheGuidance) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_tools({tool("search"), tool("fetch")});
    ctx.add_message(Message::outgoing_text("q"));
    ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_THAT(keys_of(ctx.main_objective()),
                ElementsAre("task", "toolWeights", "tool:search", "tool:fetch"));
    EXPECT_EQ(text_of(*ctx.objective_slot("toolWeights")), std::string(tool_weight_guidance()));
    EXPECT_EQ(ctx.announced_in("search"), "head");
    EXPECT_EQ(ctx.messages().size(), 1U);
}

// conversation.13: "The tool-weight guidance lands under toolWeights when declared tools first
// render, and never for a tool-less conversation - a dangling "Available tools:" header primes weak
// models."
TEST(Tools, ToolLessConversationNeverCarriesTheGuidance) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("q"));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kText, false);
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("task"));
    EXPECT_EQ(p.system_text(), "t");
    EXPECT_EQ(p.turns.size(), 1U);
}

// tools.4: "after that the head is frozen and a newly declared tool is a stream message at the
// point of declaration, so the prefix ahead of it never moves and the transcript shows tools
// appearing when they appeared."
TEST(Tools, ToolDeclaredAfterTheFreezeArrivesAsStreamMessageAtItsPointOfDeclaration) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_tool(tool("search"));
    ctx.add_message(Message::outgoing_text("q1"));
    const PreparedConversation first = ctx.prepare_messages_for_llm(kText, false);
    ctx.add_message(Message::incoming_text("a1"));
    ctx.add_tool(tool("fetch"));  // declared with two messages in the conversation
    ctx.add_message(Message::outgoing_text("q2"));
    LogCapture log;
    const PreparedConversation second = ctx.prepare_messages_for_llm(kText, false);

    EXPECT_TRUE(log.errors().empty());
    EXPECT_EQ(second.system_text(), first.system_text());  // the head never moves
    EXPECT_EQ(ctx.objective_slot("tool:fetch"), nullptr);
    ASSERT_EQ(ctx.messages().size(), 4U);
    EXPECT_EQ(text_of(ctx.messages()[1].blocks[0]), "a1");
    const Message& announcement = ctx.messages()[2];
    EXPECT_EQ(text_of(ctx.messages()[3].blocks[0]), "q2");
    EXPECT_THAT(text_of(announcement.blocks[0]), StartsWith("Additional tools now available:"));
    EXPECT_THAT(text_of(announcement.blocks[0]), HasSubstr("fetch"));
    EXPECT_TRUE(announcement.outgoing());
    EXPECT_TRUE(announcement.app_authored);
    EXPECT_FALSE(announcement.compactable);
    EXPECT_EQ(ctx.announced_in("fetch"), announcement.id);
    // The guidance was in the head already: no second guidance in the stream.
    EXPECT_EQ(announcement.blocks.size(), 2U);
    // The text dialect renders the definition inline, in the turn at that point.
    ASSERT_EQ(second.turns.size(), 4U);
    EXPECT_EQ(second.turns[2].role, TurnRole::kUser);
    EXPECT_EQ(text_of(second.turns[2].blocks[1]),
              render_tool_definition_text(*announcement.blocks[1].get_if<ToolDefinitionBlock>()));

    // Rendering again announces nothing twice.
    ctx.prepare_messages_for_llm(kText, false);
    EXPECT_EQ(ctx.messages().size(), 4U);
}

// conversation.16: "If the notation or a tool first appears after the freeze, its companion arrives
// as a stream message at the point of appearance."
TEST(Tools, FirstToolAfterTheFreezeBringsTheGuidanceAsStreamMessage) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("q1"));
    ctx.prepare_messages_for_llm(kNative, false);
    ctx.add_tool(tool("search"));
    ctx.add_message(Message::outgoing_text("q2"));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_THAT(keys_of(ctx.main_objective()), ElementsAre("task"));
    ASSERT_EQ(ctx.messages().size(), 4U);
    EXPECT_EQ(text_of(ctx.messages()[1].blocks[0]), std::string(tool_weight_guidance()));
    EXPECT_THAT(text_of(ctx.messages()[2].blocks[0]),
                StartsWith("Additional tools now available:"));
    EXPECT_EQ(text_of(ctx.messages()[3].blocks[0]), "q2");
    // Native dialect: the definition is swept to the tools parameter, only the header stays.
    ASSERT_EQ(p.tool_definitions.size(), 1U);
    EXPECT_EQ(p.tool_definitions[0].name, "search");
    EXPECT_EQ(p.turns[2].blocks.size(), 1U);
}

// tools.5: "The announced set derives from the conversation content itself, never a side
// field."
TEST(Tools, AnnouncedSetDerivesFromTheContent) {
    ConversationParts parts;
    Message announcement;
    announcement.id = "ann";
    announcement.app_authored = true;
    announcement.blocks = {TextBlock{"Additional tools now available: fetch"}, tool("fetch")};
    parts.messages.push_back(Message::outgoing_text("q"));
    parts.messages.push_back(std::move(announcement));
    parts.tools.push_back({tool("fetch"), 1});
    parts.tools.push_back({tool("search"), 2});
    ConversationContext ctx = ConversationContext::from_parts(std::move(parts));
    EXPECT_EQ(ctx.announced_in("fetch"), "ann");
    EXPECT_EQ(ctx.announced_in("search"), std::nullopt);
    EXPECT_THAT(ctx.pending_tools(), ElementsAre("search"));
    ctx.prepare_messages_for_llm(kNative, false);
    // Only the unannounced one joins the head (the restored conversation has not rendered yet).
    EXPECT_EQ(ctx.objective_slot("tool:fetch"), nullptr);
    EXPECT_NE(ctx.objective_slot("tool:search"), nullptr);
}

// tools.12: "Every token count of a definition measures renderText, so the estimate and the
// text-fallback wire cannot diverge."
TEST(Tools, TextDialectSendsExactlyTheRenderedText) {
    const ToolDefinitionBlock def{"search", "[weight: light] Search.", R"({"type":"object"})"};
    EXPECT_EQ(render_tool_definition_text(def),
              "Tool: search\nDescription: [weight: light] Search.\nInput schema: "
              R"({"type":"object"})");
    ConversationContext ctx;
    ctx.add_tool(def);
    const PreparedConversation p = ctx.prepare_messages_for_llm(kText, false);
    EXPECT_TRUE(p.tool_definitions.empty());
    ASSERT_EQ(p.system_blocks.size(), 2U);
    EXPECT_EQ(text_of(p.system_blocks[1]), render_tool_definition_text(def));
}

// tools.10: "the client sweeps ToolDefinitionBlocks from the prepared turns into the provider's
// tools parameter, and its own encoder suppresses the inline form."
TEST(Tools, NativeDialectSweepsDefinitionsOutOfTheText) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_tools({tool("search"), tool("fetch")});
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(p.tool_definitions.size(), 2U);
    EXPECT_EQ(p.tool_definitions[0].name, "search");
    EXPECT_EQ(p.tool_definitions[1].name, "fetch");
    EXPECT_TRUE(p.native_tools);
    for (const ContentBlock& b : p.system_blocks) EXPECT_FALSE(b.is<ToolDefinitionBlock>());
    EXPECT_EQ(p.system_text(), "t\n\n" + std::string(tool_weight_guidance()));
}

// tools.103: where the dialect takes mid-conversation tool changes, a late tool's definition stays
// in its turn at its point in the stream (the dialect writes it as a tool addition), and the tools
// parameter, the head of every request, stays as it was.
TEST(Tools, ALateToolStaysInItsTurnWhereTheModelTakesToolChanges) {
    const FixedContentFormatter changes(true, true, true);
    ASSERT_TRUE(changes.supports_native_tool_changes());
    EXPECT_FALSE(FixedContentFormatter(false, true, true).supports_native_tool_changes())
        << "the text dialect has no tools parameter to keep";
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_tool(tool("search"));
    ctx.add_message(Message::outgoing_text("q1"));
    const PreparedConversation first = ctx.prepare_messages_for_llm(changes, false);
    ctx.add_message(Message::incoming_text("a1"));
    ctx.add_tool(tool("fetch"));
    ctx.add_message(Message::outgoing_text("q2"));
    const PreparedConversation second = ctx.prepare_messages_for_llm(changes, false);

    ASSERT_EQ(first.tool_definitions.size(), 1U);
    EXPECT_EQ(second.tool_definitions, first.tool_definitions);
    EXPECT_EQ(second.system_blocks, first.system_blocks);
    ASSERT_EQ(second.turns.size(), 4U);
    const PreparedTurn& announcement = second.turns[2];
    ASSERT_EQ(announcement.blocks.size(), 2U);
    EXPECT_THAT(text_of(announcement.blocks[0]), StartsWith("Additional tools now available:"));
    const auto* kept = announcement.blocks[1].get_if<ToolDefinitionBlock>();
    ASSERT_NE(kept, nullptr) << "the definition stays in its turn";
    EXPECT_EQ(kept->name, "fetch");

    // The same conversation for a dialect without tool changes sweeps it to the parameter.
    const PreparedConversation swept = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(swept.tool_definitions.size(), 2U);
    EXPECT_EQ(swept.tool_definitions[1].name, "fetch");
    EXPECT_EQ(swept.turns[2].blocks.size(), 1U);
}

}  // namespace
}  // namespace nucleo
