// nucleo-emulator's mid-conversation system messages (docs/emulator.md "Mid-conversation system
// messages and tool changes"): over HTTP, on the models of a catalog of the tests' own, a
// `role: "system"` message in `messages` is taken where its record lists `system_messages` and
// refused with the API's text where it does not (a model the catalog does not name keeps the rule
// book's answer); its placement, content, `clear_at` and `output_config` are checked with the
// API's texts; it keeps the user/assistant alternation, the rule book's places name the request as
// sent, count_tokens takes it, a cleared turn-scoped message counts nothing, and appending one
// neither diverges in cache diagnostics nor breaks a bound thinking block, while editing one does.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "mid_conversation_fixture.hpp"

namespace nucleo::emulator_test {
namespace {

long long tokens(std::size_t bytes) {
    return static_cast<long long>((bytes + 3) / 4);
}

/// The canonical bytes of a message with one plain ASCII text: its role object, then its text as
/// one text block (docs/emulator.md "Token counting").
std::size_t message_bytes(const std::string& role, const std::string& text) {
    return (R"({"role":")" + role + R"("})").size() +
           (R"({"type":"text","text":")" + text + R"("})").size();
}

const std::string kTurnScoped =
    R"({"role":"system","clear_at":"next_user_message","content":"Request independent reads together."})";
const std::string kNever =
    R"({"role":"system","clear_at":"never","content":"Request independent reads together."})";
const std::string kClearAtBeta = "mid-conversation-system-clear-at-2026-08-21";
const std::string kOutputConfigBeta = "mid-conversation-output-config-2026-07-01";
const std::string kToolUse =
    R"({"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}]})";
const std::string kToolResult =
    R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"12 passed"}]})";
/// A paused assistant turn: it ends in a server tool's result.
const std::string kPaused =
    R"({"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search",)"
    R"("input":{"query":"tides"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]})";

using SystemMessages = MidConversationEmulator;

TEST_F(SystemMessages, AfterTheLastUserTurnItIsAnsweredAndTheQuestionStaysTheUsers) {
    const HttpResult r = call(kMid, list({user("Why is the sky blue"), system_text("Be brief.")}));
    ASSERT_TRUE(answered(r));
    const auto d = parse(r.body);
    EXPECT_EQ(std::string(d["content"][0]["text"].GetString()),
              "This is the emulator's answer to: Why is the sky blue");
}

TEST_F(SystemMessages, KeepTheAlternationOfUserAndAssistantTurns) {
    // After a user turn and before the assistant's, and after tool results in an agentic loop.
    EXPECT_EQ(
        call(kMid, list({user("Hi"), system_text("Be brief."), assistant("Hello"), user("Go")}))
            .status,
        200);
    EXPECT_EQ(call(kMid,
                   list({user("Run the tests"), kToolUse, kToolResult,
                         system_text("The user also asked for the changelog."), assistant("Done"),
                         user("Thanks")}),
                   R"(,"tools":[)" + tool("lookup") + "]")
                  .status,
              200);
    // A run of system messages is one section.
    EXPECT_EQ(call(kMid, list({user("Hi"), system_text("One."), system_text("Two."),
                               assistant("Hello"), user("Go")}))
                  .status,
              200);
    // A user turn after a user turn is still the rule book's refusal, at the request's index.
    EXPECT_EQ(
        refusal(call(kMid, list({user("Hi"), system_text("One."), assistant("Hello"), user("Go"),
                                 user("Again")}))),
        R"(messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row)");
}

TEST_F(SystemMessages, AModelWhoseRecordLacksThemRefusesTheRole) {
    const std::string messages = list({user("Hi"), system_text("Be brief.")});
    EXPECT_EQ(refusal(call(kNeither, messages)),
              "messages.1: role 'system' is not supported on this model");
    const HttpResult counted = emu_->post(
        "/v1/messages/count_tokens",
        R"({"model":")" + kNeither + R"(","messages":)" + messages + "}", anthropic_headers());
    EXPECT_EQ(refusal(counted), "messages.1: role 'system' is not supported on this model");
}

TEST_F(SystemMessages, AModelTheCatalogDoesNotNameKeepsTheRuleBooksAnswer) {
    EXPECT_EQ(refusal(call("claude-emu", list({user("Hi"), system_text("Be brief.")}))),
              "messages.1.role: Input should be 'user' or 'assistant'");
}

TEST_F(SystemMessages, PlacementIsTheAPIs) {
    EXPECT_EQ(refusal(call(kMid, list({system_text("Be brief."), user("Hi")}))),
              "messages.0: use the top-level 'system' parameter for the initial system prompt" +
                  kDirectiveNote);
    // After an assistant turn: not even before a user turn (the API's own answer to user,
    // assistant, system, user).
    EXPECT_EQ(
        refusal(call(kMid, list({user("Hi"), assistant("Hello"), system_text("x"), user("ok")}))),
        "messages.2" + kMustFollow);
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), assistant("Hello"), system_text("x"),
                                       assistant("more")}))),
              "messages.2" + kMustFollow);
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), system_text("x"), user("ok")}))),
              "messages.1" + kMustPrecede);
    // A run is judged together: the first names what it follows, the last what it precedes.
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), assistant("Hello"), system_text("one"),
                                       system_text("two"), user("ok")}))),
              "messages.2" + kMustFollow);
    EXPECT_EQ(
        refusal(call(kMid, list({user("Hi"), system_text("one"), system_text("two"), user("ok")}))),
        "messages.2" + kMustPrecede);
    // Never between a tool_use and the tool_result that answers it.
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), kToolUse, system_text("x"), kToolResult}),
                           R"(,"tools":[)" + tool("lookup") + "]")),
              "messages.2" + kMustFollow);
}

TEST_F(SystemMessages, APausedAssistantTurnMayBeFollowedByOne) {
    EXPECT_EQ(call(kMid, list({user("Tides today"), kPaused, system_text("Cite the source."),
                               assistant("Continuing")}))
                  .status,
              200);
}

TEST_F(SystemMessages, ContentIsTextOrToolChanges) {
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), system_text("")}))),
              "messages.1: system content must contain at least one block");
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), system_blocks("")}))),
              "messages.1: system content must contain at least one block");
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), R"({"role":"system"})"}))),
              "messages.1: system content must contain at least one block");
    EXPECT_EQ(
        refusal(call(kMid,
                     list({user("Hi"),
                           system_blocks(R"({"type":"image","source":{"type":"base64",)"
                                         R"("media_type":"image/png","data":"iVBORw0KGgo="}})")}))),
        "messages.1: role 'system' supports text, tool_addition, and tool_removal blocks only");
    // Its text blocks keep the rule book's text checks.
    EXPECT_EQ(
        refusal(call(kMid, list({user("Hi"), system_blocks(R"({"type":"text","text":""})")}))),
        "messages: text content blocks must be non-empty");
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), system_text("   ")}))),
              "messages: text content blocks must contain non-whitespace text");
}

TEST_F(SystemMessages, TheRuleBooksPlacesNameTheRequestAsSent) {
    // The rule book reads the system message with the turn before it; its place is mapped back.
    EXPECT_EQ(refusal(call(kMid,
                           list({user("Hi"), system_text("Be brief."), kToolUse,
                                 R"({"role":"user","content":[{"type":"tool_result",)"
                                 R"("tool_use_id":"toolu_1","content":"r"},)"
                                 R"({"type":"tool_result","tool_use_id":"toolu_9",)"
                                 R"("content":"r"}]})"}),
                           R"(,"tools":[)" + tool("lookup") + "]")),
              "messages.3.content.1: unexpected `tool_use_id` found in `tool_result` blocks: "
              "toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the "
              "previous message.");
    // The turn that continues a paused one is read with it; its tool_use is named where it is.
    EXPECT_EQ(refusal(call(kMid, list({user("Tides"), kPaused, system_text("Cite."), kToolUse}),
                           R"(,"tools":[)" + tool("lookup") + "]")),
              "messages.3: `tool_use` ids were found without `tool_result` blocks immediately "
              "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block "
              "in the next message.");
}

TEST_F(SystemMessages, DirectiveOnlyMessagesStandAnywhereWithTheirBeta) {
    const std::string directive =
        R"({"role":"system","content":[],"output_config":{"effort":"low"}})";
    EXPECT_EQ(call(kMid, list({directive, user("Hi")}), "", {kOutputConfigBeta}).status, 200);
    EXPECT_EQ(call(kMid, list({user("Hi"), assistant("Hello"), directive, user("Go")}), "",
                   {kOutputConfigBeta})
                  .status,
              200);
    // Next to a message with content, the run follows the content rule.
    EXPECT_EQ(
        refusal(call(
            kMid, list({user("Hi"), assistant("Hello"), directive, system_text("x"), user("Go")}),
            "", {kOutputConfigBeta})),
        "messages.2" + kMustFollow);
    EXPECT_EQ(refusal(call(kMid, list({directive, user("Hi")}))),
              "messages.0.output_config: Extra inputs are not permitted");
}

TEST_F(SystemMessages, OutputConfigTakesAnEffortOnly) {
    const auto with = [](const std::string& oc) {
        return list({user("Hi"),
                     R"({"role":"system","content":"Think less.","output_config":)" + oc + "}"});
    };
    EXPECT_EQ(call(kMid, with(R"({"effort":"low"})"), "", {kOutputConfigBeta}).status, 200);
    EXPECT_EQ(refusal(call(kMid, with(R"({"effort":"huge"})"), "", {kOutputConfigBeta})),
              "messages.1.output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' "
              "or 'max'");
    EXPECT_EQ(
        refusal(call(kMid, with(R"({"format":{"type":"json_schema"}})"), "", {kOutputConfigBeta})),
        "messages.1.output_config.format: Extra inputs are not permitted");
    EXPECT_EQ(refusal(call(kMid, with("3"), "", {kOutputConfigBeta})),
              "messages.1.output_config: Input should be a valid dictionary");
}

TEST_F(SystemMessages, ClearAtHasThePagesTexts) {
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), kTurnScoped}))),
              "messages.1.clear_at: Extra inputs are not permitted");
    EXPECT_EQ(call(kMid, list({user("Hi"), kTurnScoped}), "", {kClearAtBeta}).status, 200);
    EXPECT_EQ(refusal(call(kMid, list({R"({"role":"user","content":"Hi","clear_at":"never"})"}), "",
                           {kClearAtBeta})),
              "messages.0.clear_at: clear_at is only permitted on role 'system' messages");
    EXPECT_EQ(refusal(call(
                  kMid, list({user("Hi"), R"({"role":"system","clear_at":"later","content":"x"})"}),
                  "", {kClearAtBeta})),
              "messages.1.clear_at: Input should be 'next_user_message' or 'never'");
    EXPECT_EQ(refusal(call(kMid,
                           list({user("Hi"), R"({"role":"system","clear_at":"next_user_message",)"
                                             R"("content":[)" +
                                                 add_by_value("lookup") + "]}"}),
                           "", {kClearAtBeta, kInlineToolsBeta})),
              "messages.1: a turn-scoped system message supports text blocks only (clear_at: "
              "'next_user_message')");
    EXPECT_EQ(refusal(call(kMid,
                           list({user("Hi"), R"({"role":"system","clear_at":"next_user_message",)"
                                             R"("content":"x","output_config":{"effort":"low"}})"}),
                           "", {kClearAtBeta, kOutputConfigBeta})),
              "messages.1: output_config is not permitted on a turn-scoped system message "
              "(clear_at: 'next_user_message')");
    EXPECT_EQ(refusal(call(kMid,
                           list({user("Hi"), R"({"role":"system","clear_at":"next_user_message",)"
                                             R"("content":[{"type":"text","text":"x",)"
                                             R"("cache_control":{"type":"ephemeral"}}]})"}),
                           "", {kClearAtBeta})),
              "messages.1.content.0: cache_control is not permitted on a turn-scoped system "
              "message (clear_at: 'next_user_message')");
    // Followed by a user message it is misplaced, not cleared.
    EXPECT_EQ(refusal(call(kMid, list({user("Hi"), kTurnScoped, user("Go")}), "", {kClearAtBeta})),
              "messages.1" + kMustPrecede);
}

TEST_F(SystemMessages, ATurnScopedMessageCountsNothingOnceAUserMessageFollowsIt) {
    const std::vector<std::string> b = {kClearAtBeta};
    // The last entry renders, as a message that is never cleared does.
    const long long question = count(kMid, list({user("Fix the test")}), "", b);
    const long long rendered = count(kMid, list({user("Fix the test"), kTurnScoped}), "", b);
    EXPECT_GT(rendered, question);
    EXPECT_EQ(rendered, count(kMid, list({user("Fix the test"), kNever}), "", b));
    // Once a user message follows, it stays in the array and adds no token.
    const long long later =
        count(kMid, list({user("Fix the test"), assistant("Reading"), user("Go")}), "", b);
    EXPECT_EQ(
        count(kMid, list({user("Fix the test"), kTurnScoped, assistant("Reading"), user("Go")}), "",
              b),
        later);
    EXPECT_GT(
        count(kMid, list({user("Fix the test"), kNever, assistant("Reading"), user("Go")}), "", b),
        later);
}

TEST_F(SystemMessages, CountTokensTakesTheSameMessages) {
    EXPECT_EQ(count(kMid, list({user("Why"), system_text("Be brief.")})),
              tokens(message_bytes("user", "Why") + message_bytes("system", "Be brief.")));
    const HttpResult misplaced =
        emu_->post("/v1/messages/count_tokens",
                   R"({"model":")" + kMid + R"(","messages":)" +
                       list({user("Hi"), assistant("Hello"), system_text("x"), user("ok")}) + "}",
                   anthropic_headers());
    EXPECT_EQ(refusal(misplaced), "messages.2" + kMustFollow);
}

TEST_F(SystemMessages, AnAppendedOneIsNoCacheDivergenceAnEditedOneIs) {
    const std::string first = list({user("Why is the sky blue")});
    const HttpResult r1 = call(kMid, first, R"(,"diagnostics":{"previous_message_id":null})");
    ASSERT_TRUE(answered(r1));
    const auto d1 = parse(r1.body);
    const std::string id1 = d1["id"].GetString();
    const std::vector<std::string> grown = {user("Why is the sky blue"), assistant("Scattering."),
                                            user("And at sunset"), system_text("Rule one.")};
    const HttpResult r2 =
        call(kMid, list(grown), R"(,"diagnostics":{"previous_message_id":")" + id1 + "\"}");
    ASSERT_TRUE(answered(r2));
    const auto d2 = parse(r2.body);
    EXPECT_TRUE(d2["diagnostics"].IsNull()) << str(d2["diagnostics"]);
    std::vector<std::string> edited = grown;
    edited[3] = system_text("Rule two.");
    const HttpResult r3 = call(
        kMid, list(edited),
        R"(,"diagnostics":{"previous_message_id":")" + std::string(d2["id"].GetString()) + "\"}");
    ASSERT_TRUE(answered(r3));
    const auto d3 = parse(r3.body);
    ASSERT_TRUE(d3["diagnostics"].IsObject()) << str(d3);
    const auto& reason = d3["diagnostics"]["cache_miss_reason"];
    EXPECT_STREQ(reason["type"].GetString(), "messages_changed");
    EXPECT_EQ(reason["cache_missed_input_tokens"].GetInt64(),
              tokens(message_bytes("system", "Rule one.")));
}

TEST_F(SystemMessages, AppendingOneKeepsABoundThinkingBlockEditingAnEarlierOneBreaksIt) {
    const std::string thinking =
        R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"})";
    const std::vector<std::string> asked = {user("Why is the sky blue"), system_text("Rule one.")};
    const HttpResult r = call(kBound, list(asked), thinking);
    ASSERT_TRUE(answered(r));
    const auto first = parse(r.body);
    ASSERT_STREQ(first["content"][0]["type"].GetString(), "thinking") << str(first);
    const std::string turn = R"({"role":"assistant","content":)" + str(first["content"]) + "}";
    // Appended after the block: taken.
    EXPECT_EQ(
        call(kBound,
             list({asked[0], asked[1], turn, user("And at sunset"), system_text("Rule two.")}),
             thinking)
            .status,
        200);
    // An earlier system message edited: the block is bound to a different conversation.
    const std::string refused = refusal(call(
        kBound, list({asked[0], system_text("Rule one, edited."), turn, user("And at sunset")}),
        thinking));
    EXPECT_TRUE(
        refused.starts_with("messages.2.content.0: The block is bound to a different conversation"))
        << refused;
}

}  // namespace
}  // namespace nucleo::emulator_test
