// The channel contract (docs/spec/channel.md, tools.20).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/schema.hpp"
#include "test_support.hpp"

namespace nucleo {
namespace {

using testing::asking;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::keys_of;
using ::testing::Pair;
using testing::RecordingHandler;
using ::testing::StartsWith;
using testing::text_of;

const FixedContentFormatter kNative(true, true);
const FixedContentFormatter kText(false, false);

// channel.4: "Turns are TurnRole::kUser or TurnRole::kAssistant, nothing else."
TEST(ChannelContract, OutgoingIsUserAndIncomingIsAssistant) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("q"));
    Message call;
    call.direction = Direction::kIncoming;
    call.blocks = {ToolUseBlock{"toolu_1", "search", R"({"q":"x"})"}};
    ctx.add_message(std::move(call));
    Message result;
    result.blocks = {ToolResultBlock{"toolu_1", {TextBlock{"found"}}, false}};
    ctx.add_message(std::move(result));
    ctx.add_message(Message::incoming_text("done"));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(p.turns.size(), 4U);
    EXPECT_EQ(p.turns[0].role, TurnRole::kUser);
    EXPECT_EQ(p.turns[1].role, TurnRole::kAssistant);
    EXPECT_EQ(p.turns[2].role, TurnRole::kUser);
    EXPECT_EQ(p.turns[3].role, TurnRole::kAssistant);
    EXPECT_EQ(p.turns[1].message_id, ctx.messages()[1].id);
    // "The main objective is the conversation's ONLY system content."
    for (const PreparedTurn& turn : p.turns) {
        for (const ContentBlock& b : turn.blocks) EXPECT_NE(testing::text_of(b), "t");
    }
}

// channel.5: "A message carrying any other role string is refused at the mapping (TurnRole::of),
// never silently relabelled."
TEST(ChannelContract, TurnRoleOfRefusesAnyOtherRoleNamingIt) {
    EXPECT_EQ(TurnRole::of("user"), TurnRole::kUser);
    EXPECT_EQ(TurnRole::of("assistant"), TurnRole::kAssistant);
    EXPECT_STREQ(TurnRole(TurnRole::kAssistant).name(), "assistant");
    for (const char* role : {"system", "tool", "User", ""}) {
        try {
            (void)TurnRole::of(role);
            FAIL() << "role accepted: " << role;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
            EXPECT_THAT(e.what(), HasSubstr(std::string("\"") + role + "\""));
        }
    }
}

// channel.10: "cacheMainObjective rides the prepared conversation as cacheSystem ... The flag
// decides; the mere existence of system content does not."
TEST(ChannelContract, CacheSystemFollowsCacheMainObjectiveTrueByDefault) {
    ConversationContext ctx;
    EXPECT_TRUE(ctx.cache_main_objective());
    ctx.put_main_objective("task", "t");
    EXPECT_TRUE(ctx.prepare_messages_for_llm(kNative, false).cache_system);
    ctx.set_cache_main_objective(false);
    EXPECT_FALSE(ctx.prepare_messages_for_llm(kNative, false).cache_system);
}

// channel.9: "The artifact registry is data, not instruction - it derives from tool results - so
// it rides a trailing user turn, never system."
// channel.9 with wire.191: the registry rides the last user turn as its last block, never the
// system content.
TEST(ChannelContract, ArtifactRegistryRidesTheLastUserTurn) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("q"));
    const std::string ref = ctx.artifacts().register_artifact("link:cite", R"({"url":"u"})");
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(p.turns.size(), 1U);
    const PreparedTurn& last = p.turns.back();
    EXPECT_EQ(last.role, TurnRole::kUser);
    EXPECT_EQ(last.message_id, ctx.messages().back().id);
    ASSERT_EQ(last.blocks.size(), 2U);
    EXPECT_EQ(text_of(last.blocks[0]), "q");
    EXPECT_THAT(text_of(last.blocks[1]), StartsWith("=== ARTIFACT REGISTRY ===\n"));
    EXPECT_THAT(text_of(last.blocks[1]), HasSubstr(ref));
    EXPECT_THAT(p.system_text(), ::testing::Not(HasSubstr("ARTIFACT")));
}

TEST(ChannelContract, NoRegistryTurnWhenTheRegistryIsEmpty) {
    ConversationContext ctx;
    ctx.add_message(Message::outgoing_text("q"));
    EXPECT_EQ(ctx.prepare_messages_for_llm(kNative, false).turns.size(), 1U);
}

// channel.7: "PojoBlock → ... → JsonBlock"; "Other blocks → pass
// through".
TEST(ChannelContract, PojoBlocksBecomeJsonBlocksAlsoInsideToolResultsAndTheHead) {
    ConversationContext ctx;
    ctx.put_main_objective("config", PojoBlock{"Config", R"({"mode":"strict"})"});
    Message call;
    call.direction = Direction::kIncoming;
    call.blocks = {ThinkingBlock{"hmm", "sig"}, ToolUseBlock{"t1", "search", "{}"}};
    ctx.add_message(Message::outgoing_text("q"));
    ctx.add_message(std::move(call));
    Message result;
    result.blocks = {ToolResultBlock{"t1", {PojoBlock{"Hit", R"({"id":1})"}}, false},
                     PojoBlock{"Note", R"({"n":2})"}};
    ctx.add_message(std::move(result));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_TRUE(p.system_blocks[0].is<JsonBlock>());
    EXPECT_EQ(p.system_blocks[0].get_if<JsonBlock>()->json, R"({"mode":"strict"})");
    EXPECT_EQ(p.turns[1].blocks[0], ContentBlock(ThinkingBlock{"hmm", "sig"}));
    const auto* tr = p.turns[2].blocks[0].get_if<ToolResultBlock>();
    ASSERT_NE(tr, nullptr);
    EXPECT_EQ(tr->content[0], ContentBlock(JsonBlock{R"({"id":1})"}));
    EXPECT_EQ(p.turns[2].blocks[1], ContentBlock(JsonBlock{R"({"n":2})"}));
    // The conversation itself keeps its PojoBlocks: the transformation is of the prepared copy.
    EXPECT_TRUE(ctx.messages()[2].blocks[1].is<PojoBlock>());
}

// channel.8: prepare_messages_for_llm(formatter, thinking_active) passes both signals to the
// response handler, and the shape of the answer declared is appended to the outgoing message.
TEST(ChannelContract, ResponseInstructionsOfTheLastOutgoingMessageAreAppendedToItsTurn) {
    auto earlier = std::make_shared<RecordingHandler>(false, "EARLIER");
    auto last = std::make_shared<RecordingHandler>(false, "Answer as JSON.");
    ConversationContext ctx;
    ctx.add_message(asking("q1", earlier));
    ctx.add_message(Message::incoming_text("a1"));
    ctx.add_message(asking("q2", last));
    const PreparedConversation native = ctx.prepare_messages_for_llm(kNative, true);
    EXPECT_THAT(last->calls, ElementsAre(Pair(true, true)));
    EXPECT_TRUE(earlier->calls.empty());
    ASSERT_EQ(native.turns[2].blocks.size(), 2U);
    EXPECT_EQ(text_of(native.turns[2].blocks[1]), "Answer as JSON.");
    EXPECT_EQ(native.turns[0].blocks.size(), 1U);
    ctx.prepare_messages_for_llm(kText, false);
    EXPECT_THAT(last->calls, ElementsAre(Pair(true, true), Pair(false, false)));
}

TEST(ChannelContract, EmptyResponseInstructionsAddNoBlock) {
    ConversationContext ctx;
    ctx.add_message(asking("q", std::make_shared<RecordingHandler>(false, "")));
    EXPECT_EQ(ctx.prepare_messages_for_llm(kNative, false).turns[0].blocks.size(), 1U);
}

// conversation.13: "at render, a conversation whose outgoing message carries a handler with
// uses_schema_notation() gets the legend under legend ... and a plain-prose conversation never
// carries it."
TEST(FrameworkSlots, LegendPresentIffAnOutgoingMessageUsesTheNotation) {
    ConversationContext prose;
    prose.put_main_objective("task", "t");
    prose.add_message(asking("q", std::make_shared<RecordingHandler>(false, "prose")));
    prose.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(prose.objective_slot("legend"), nullptr);

    ConversationContext typed;
    typed.put_main_objective("task", "t");
    typed.add_message(asking("q", std::make_shared<RecordingHandler>(true, "@type object")));
    const PreparedConversation p = typed.prepare_messages_for_llm(kNative, false);
    EXPECT_THAT(keys_of(typed.main_objective()), ElementsAre("task", "legend"));
    EXPECT_EQ(text_of(*typed.objective_slot("legend")), schema::notation_legend());
    EXPECT_EQ(p.system_text(), "t\n\n" + schema::notation_legend());
}

// conversation.16: "If the notation or a tool first appears after the freeze, its companion arrives
// as a stream message at the point of appearance."
TEST(FrameworkSlots, LegendFirstNeededAfterTheFreezeArrivesBeforeTheMessageThatNeedsIt) {
    ConversationContext ctx;
    ctx.put_main_objective("task", "t");
    ctx.add_message(Message::outgoing_text("q1"));
    ctx.add_message(Message::incoming_text("a1"));
    ctx.prepare_messages_for_llm(kNative, false);
    ctx.add_message(asking("q2", std::make_shared<RecordingHandler>(true, "@type object")));
    const PreparedConversation p = ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(ctx.objective_slot("legend"), nullptr);
    ASSERT_EQ(ctx.messages().size(), 4U);
    const Message& legend = ctx.messages()[2];
    EXPECT_TRUE(legend.app_authored);
    EXPECT_THAT(text_of(legend.blocks[0]), HasSubstr(schema::notation_legend()));
    EXPECT_EQ(text_of(ctx.messages()[3].blocks[0]), "q2");
    EXPECT_EQ(p.turns[2].role, TurnRole::kUser);
    // Not announced twice.
    ctx.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(ctx.messages().size(), 4U);
}

// conversation.23: first_user_utterance — "the first message a HUMAN sent"; stream companions are
// app-authored, so they never become a title.
TEST(FrameworkSlots, StreamCompanionsAreAppAuthoredAndNotTheUserUtterance) {
    ConversationContext ctx;
    ctx.prepare_messages_for_llm(kNative, false);
    ctx.add_tool(testing::tool("search"));
    ctx.add_message(Message::outgoing_text("the human question"));
    ctx.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(ctx.messages().size(), 3U);
    EXPECT_EQ(ctx.first_user_utterance(), "the human question");
}

}  // namespace
}  // namespace nucleo
