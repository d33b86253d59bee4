// The ThinkingResponse handler, schema stripping and thinking_active (tools.13,
// tools.20-22).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "nucleo/errors.hpp"
#include "nucleo/thinking.hpp"
#include "nucleo/thinking_response.hpp"
#include "types.hpp"

namespace nucleo::test {
namespace {

bool has_property(const std::string& notation, const std::string& name) {
    return notation.find(name + ": @type") != std::string::npos;
}

struct Strip {
    bool native;
    bool thinking;
};

class SchemaStripping : public ::testing::TestWithParam<Strip> {};

TEST_P(SchemaStripping, DropsToolCallsWhenNativeAndReasoningWhenThinking) {
    // tools.20: "tool_calls is dropped when native tool calling is available" and "reasoning is
    // dropped when thinkingActive is true ... The typed answer POJO's own nested reasoning is
    // dropped with it".
    const auto [native, thinking] = GetParam();
    const ThinkingResponseHandler<Verdict> handler;
    const std::string text = handler.response_instructions(native, thinking);
    EXPECT_EQ(has_property(text, "tool_calls"), !native) << text;
    EXPECT_EQ(has_property(text, "reasoning"), !thinking) << text;
    EXPECT_EQ(has_property(text, "rationale"), !thinking) << text;  // answer's own reasoning
    EXPECT_EQ(has_property(text, "why"), !thinking) << text;        // ... nested deeper too
    EXPECT_TRUE(has_property(text, "answer")) << text;
    EXPECT_TRUE(has_property(text, "decision")) << text;
    EXPECT_TRUE(has_property(text, "claim")) << text;

    // The JSON Schema style strips the same fields.
    const ThinkingResponseHandler<Verdict> plain(SchemaStyle::kJsonSchema);
    const std::string instructions = plain.response_instructions(native, thinking);
    const std::string json = instructions.substr(instructions.find('{'));
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    ASSERT_FALSE(doc.HasParseError()) << json;
    const auto& props = doc["properties"];
    EXPECT_EQ(props.HasMember("tool_calls"), !native);
    EXPECT_EQ(props.HasMember("reasoning"), !thinking);
    EXPECT_EQ(props["answer"]["properties"].HasMember("rationale"), !thinking);
    EXPECT_EQ(props["answer"]["properties"]["findings"]["items"]["properties"].HasMember("why"),
              !thinking);
    // A stripped required field leaves `required` too.
    const auto& finding = props["answer"]["properties"]["findings"]["items"];
    bool why_required = false;
    for (const auto& r : finding["required"].GetArray()) {
        why_required = why_required || std::string(r.GetString()) == "why";
    }
    EXPECT_EQ(why_required, !thinking);
}

INSTANTIATE_TEST_SUITE_P(AllFour, SchemaStripping,
                         ::testing::Values(Strip{false, false}, Strip{false, true},
                                           Strip{true, false}, Strip{true, true}),
                         [](const auto& info) {
                             return std::string(info.param.native ? "Native" : "TextTools") +
                                    (info.param.thinking ? "Thinking" : "NoThinking");
                         });

TEST(ThinkingResponseHandler, NotationStyleAsksForTheLegendJsonSchemaStyleDoesNot) {
    // conversation.13: "a conversation whose outgoing message carries a handler with
    // uses_schema_notation() gets the legend".
    EXPECT_TRUE(ThinkingResponseHandler<Verdict>().uses_schema_notation());
    EXPECT_FALSE(ThinkingResponseHandler<Verdict>(SchemaStyle::kJsonSchema).uses_schema_notation());
    EXPECT_EQ(ThinkingResponseHandler<Verdict>(SchemaStyle::kJsonSchema)
                  .response_instructions(false, false)
                  .find("@type"),
              std::string::npos);
}

TEST(ThinkingMode, ThinkingActiveIsDepthNotImmediateAndAPositiveBudget) {
    // tools.21: "thinking_active(model, depth) - the same predicate that gates the
    // request-time thinking config".
    ModelSpec model;
    model.thinking_budget[Depth::kImmediate] = 4096;  // ignored: IMMEDIATE is thinking off
    model.thinking_budget[Depth::kStandard] = 2048;
    model.thinking_budget[Depth::kDeep] = 0;
    EXPECT_FALSE(thinking_active(model, Depth::kImmediate));
    EXPECT_TRUE(thinking_active(model, Depth::kStandard));
    EXPECT_FALSE(thinking_active(model, Depth::kDeep));
    EXPECT_FALSE(thinking_active(ModelSpec{}, Depth::kStandard));  // no budget booked at all

    EXPECT_EQ(reasoning_reserved(model, Depth::kImmediate), 0);
    EXPECT_EQ(reasoning_reserved(model, Depth::kStandard), 2048);
    EXPECT_EQ(reasoning_reserved(model, Depth::kDeep), 0);
}

TEST(ThinkingResponseHandler, ParsesAnAnswerInsideAJsonFence) {
    const ThinkingResponseHandler<Verdict> handler;
    const auto parsed = handler.parse(
        "Here is my answer:\n```json\n"
        R"({"reasoning":"looked twice","answer":{"rationale":"r","decision":"ship",)"
        R"("findings":[{"claim":"c1","why":"w1"}]}})"
        "\n```\nThanks.");
    ASSERT_TRUE(parsed.answer.has_value());
    EXPECT_EQ(parsed.answer->decision, "ship");
    EXPECT_EQ(parsed.answer->rationale, "r");
    ASSERT_EQ(parsed.answer->findings.size(), 1u);
    EXPECT_EQ(parsed.answer->findings[0].why, "w1");
    EXPECT_EQ(parsed.reasoning, "looked twice");
    EXPECT_TRUE(parsed.tool_calls.empty());

    // Bare JSON, and JSON after a sentence without a fence.
    EXPECT_EQ(handler.parse(R"(  {"answer":{"decision":"a"}} )").answer->decision, "a");
    EXPECT_EQ(handler.parse(R"(Sure. {"answer":{"decision":"b"}})").answer->decision, "b");
}

TEST(ThinkingResponseHandler, ParsesTextToolCallsWithRuntimeMintedIds) {
    // tools.13: "a call parsed out of the text gets an id minted by the runtime from the tool's
    // name and its place in the turn, so its result can be recorded against it".
    const ThinkingResponseHandler<Verdict> handler;
    const auto parsed = handler.parse(
        R"({"reasoning":"need data","tool_calls":[)"
        R"({"name":"search","input":{"query":"x","max_results":3}},{"name":"fetch","input":{}},)"
        R"({"name":"search","input":{"query":"y"}}]})");
    EXPECT_FALSE(parsed.answer.has_value());
    ASSERT_EQ(parsed.tool_calls.size(), 3u);
    EXPECT_EQ(parsed.tool_calls[0].id, "call_search_0");
    EXPECT_EQ(parsed.tool_calls[1].id, "call_fetch_1");
    EXPECT_EQ(parsed.tool_calls[2].id, "call_search_2");
    EXPECT_EQ(parsed.tool_calls[0].name, "search");
    EXPECT_EQ(parsed.tool_calls[0].input_json, R"({"query":"x","max_results":3})");
    EXPECT_EQ(parsed.tool_calls[1].input_json, "{}");
    // The input of a call reads as the tool's own input type.
    const auto input = schema::from_json<SearchInput>(parsed.tool_calls[0].input_json);
    EXPECT_EQ(input.maxResults, 3);
}

TEST(ThinkingResponseHandler, MintedIdsAreDeterministicByNameAndPlace) {
    EXPECT_EQ(mint_tool_call_id("search", 0), mint_tool_call_id("search", 0));
    EXPECT_NE(mint_tool_call_id("search", 0), mint_tool_call_id("search", 1));
    EXPECT_NE(mint_tool_call_id("search", 0), mint_tool_call_id("fetch", 0));
    EXPECT_EQ(mint_tool_call_id("web.search v2", 4), "call_web_search_v2_4");
    const std::string long_id = mint_tool_call_id(std::string(200, 'n'), 12);
    EXPECT_EQ(long_id.size(), 64u);
    EXPECT_EQ(long_id.substr(long_id.size() - 3), "_12");
}

TEST(ThinkingResponseHandler, StrippedRequiredReasoningMayBeMissingFromTheAnswer) {
    // Finding.why is required AND marked reasoning: a thinking model never saw it.
    const ThinkingResponseHandler<Verdict> handler;
    const auto parsed =
        handler.parse(R"({"answer":{"decision":"d","findings":[{"claim":"only claim"}]}})");
    ASSERT_TRUE(parsed.answer.has_value());
    EXPECT_EQ(parsed.answer->findings.at(0).claim, "only claim");
    EXPECT_EQ(parsed.answer->findings.at(0).why, "");
}

TEST(ThinkingResponseHandler, ParsingAMessageResolvesReasoningToTheThinkingBlock) {
    // tools.22: the envelope's prose reasoning is discarded when a native thinking block came
    // back.
    const ThinkingResponseHandler<Verdict> handler;
    Message m;
    m.direction = Direction::kIncoming;
    m.blocks = {ThinkingBlock{"native thoughts", "sig"},
                TextBlock{R"({"reasoning":"prose","answer":{"decision":"go"}})"},
                ToolUseBlock{"toolu_01", "search", R"({"query":"q"})"}};
    const auto parsed = handler.parse(m);
    EXPECT_EQ(parsed.reasoning, "native thoughts");
    ASSERT_TRUE(parsed.answer.has_value());
    EXPECT_EQ(parsed.answer->decision, "go");
    ASSERT_EQ(parsed.tool_calls.size(), 1u);
    EXPECT_EQ(parsed.tool_calls[0].id, "toolu_01");  // the provider's id is kept

    // A native tool turn with no text is not a parse error.
    Message tools_only;
    tools_only.direction = Direction::kIncoming;
    tools_only.blocks = {ToolUseBlock{"toolu_02", "fetch", "{}"}};
    const auto only = handler.parse(tools_only);
    EXPECT_FALSE(only.answer.has_value());
    ASSERT_EQ(only.tool_calls.size(), 1u);
    EXPECT_EQ(only.tool_calls[0].id, "toolu_02");

    // Narration before a native call is not an answer and not an error...
    Message narrated;
    narrated.direction = Direction::kIncoming;
    narrated.blocks = {TextBlock{"Let me look that up."}, ToolUseBlock{"toolu_03", "fetch", "{}"}};
    const auto told = handler.parse(narrated);
    EXPECT_FALSE(told.answer.has_value());
    ASSERT_EQ(told.tool_calls.size(), 1u);
    // ...but the same prose without any call is: the model owed an answer.
    Message prose_only;
    prose_only.direction = Direction::kIncoming;
    prose_only.blocks = {TextBlock{"Let me look that up."}};
    EXPECT_THROW((void)handler.parse(prose_only), Error);
}

TEST(ThinkingResponseHandler, ATextModeAnswerInAConversationYieldsEachCallOnceUnderItsMintedId) {
    // tools.101: ProviderClient keeps the model's text and appends the calls it parsed from it,
    // under ids unique across the conversation; parsing that message gives each call once, under
    // that id, so a result recorded against it answers exactly one call.
    const ThinkingResponseHandler<Verdict> handler;
    Message m;
    m.direction = Direction::kIncoming;
    m.blocks = {TextBlock{R"({"reasoning":"need data","tool_calls":[)"
                          R"({"name":"search","input":{"query":"x"}},{"name":"fetch","input":{}}]})"},
                ToolUseBlock{mint_tool_call_id("search", 0, 3), "search", R"({"query":"x"})"},
                ToolUseBlock{mint_tool_call_id("fetch", 1, 3), "fetch", "{}"}};
    const auto parsed = handler.parse(m);
    ASSERT_EQ(parsed.tool_calls.size(), 2u);
    EXPECT_EQ(parsed.tool_calls[0].id, "call_search_0_t3");
    EXPECT_EQ(parsed.tool_calls[1].id, "call_fetch_1_t3");
    EXPECT_EQ(parsed.reasoning, "need data");
}

TEST(ThinkingResponseHandler, ConversationIdsStayWithin64CharactersAndKeepTheirTurn) {
    const std::string id = mint_tool_call_id(std::string(100, 'n'), 12, 4567);
    EXPECT_EQ(id.size(), 64u);
    EXPECT_EQ(id.substr(id.size() - 9), "_12_t4567");
    EXPECT_NE(mint_tool_call_id("search", 0, 1), mint_tool_call_id("search", 0, 3));
}

TEST(ThinkingResponseHandler, AnswerWithoutJsonIsAProtocolError) {
    const ThinkingResponseHandler<Verdict> handler;
    try {
        (void)handler.parse("I cannot answer that.");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
        EXPECT_NE(std::string(e.what()).find("I cannot answer that."), std::string::npos);
    }
    try {
        (void)handler.parse(R"({"answer":{"findings":"none"}})");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("$.answer.decision"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace nucleo::test
