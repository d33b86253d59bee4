// encode through the ABI: golden request documents (fixtures/encode/NAME.request.json ->
// NAME.expected.json), the cache plan rendered exactly, tool pairing in both tool dialects,
// merged turns, blank blocks, and the refusals. NUCLEO_UPDATE_GOLDEN=1 rewrites the expected
// files (review the diff before committing them).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support.hpp"

namespace nucleo::bedrock_test {
namespace {

using rapidjson::Value;

std::string request_of(const std::string& name) {
    return read_file(fixture_dir("encode") / (name + ".request.json"));
}

class GoldenEncode : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenEncode, MatchesTheExpectedHttpRequest) {
    const std::string name = GetParam();
    const rapidjson::Document actual = encode(request_of(name));
    ASSERT_TRUE(actual.IsObject());
    const auto expected_path = fixture_dir("encode") / (name + ".expected.json");
    if (std::getenv("NUCLEO_UPDATE_GOLDEN") != nullptr) write_file(expected_path, pretty(actual));
    const rapidjson::Document expected = parse(read_file(expected_path));
    EXPECT_TRUE(actual == expected) << "actual:\n"
                                    << pretty(actual) << "expected:\n"
                                    << pretty(expected);
}

// caching.1: a provider plugin cannot add, drop or move a breakpoint: the body carries exactly
// as many cachePoint blocks as the plan has marks.
TEST_P(GoldenEncode, RendersExactlyThePlannedBreakpoints) {
    const rapidjson::Document request = parse(request_of(GetParam()));
    const rapidjson::Document actual = encode(request_of(GetParam()));
    const Value& plan = request["prepared"]["cache_plan"];
    const std::size_t planned =
        plan["turn_anchors"].Size() + (plan["system_block"].IsNull() ? 0U : 1U);
    EXPECT_EQ(count_cache_points(actual["body"]), planned);
}

// channel.12: never a blank text block.
TEST_P(GoldenEncode, SendsNoBlankText) {
    const rapidjson::Document actual = encode(request_of(GetParam()));
    for (const std::string& text : texts(actual["body"])) {
        EXPECT_NE(text.find_first_not_of(" \t\r\n\v\f"), std::string::npos)
            << "blank text \"" << text << "\"";
    }
}

// Converse: "A conversation must alternate between user and assistant roles" and starts with
// a user message; channel.6: a tool_result always first in its user turn.
TEST_P(GoldenEncode, AlternatesRolesAndLeadsWithToolResults) {
    const rapidjson::Document actual = encode(request_of(GetParam()));
    const Value& messages = actual["body"]["messages"];
    ASSERT_GT(messages.Size(), 0U);
    EXPECT_STREQ(messages[0]["role"].GetString(), "user");
    for (rapidjson::SizeType i = 0; i < messages.Size(); ++i) {
        if (i > 0) {
            EXPECT_STRNE(messages[i]["role"].GetString(), messages[i - 1]["role"].GetString());
        }
        bool seen_other = false;
        for (const auto& block : messages[i]["content"].GetArray()) {
            const bool result = block.HasMember("toolResult");
            EXPECT_FALSE(result && seen_other) << "messages[" << i << "]: a toolResult after "
                                               << "another block";
            seen_other = seen_other || (!result && !block.HasMember("cachePoint"));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenEncode,
                         ::testing::ValuesIn(fixture_names("encode", ".request.json")),
                         [](const auto& info) { return info.param; });

// Every request body the suite produces is validated against the providers' published schemas,
// by ../shared/tools/validate_wire.py when that checkout is beside the project; on a user's clone
// the test is reported as skipped, with the reason.
TEST(BedrockWire, EveryGoldenBodyPassesThePublishedSchema) {
    if (!published_schema_validator_present()) {
        GTEST_SKIP() << "../shared/tools/validate_wire.py is absent: the golden Converse bodies "
                        "cannot be validated against the published schema";
    }
    std::vector<std::string> bodies;
    for (const std::string& name : fixture_names("encode", ".request.json")) {
        const rapidjson::Document actual = encode(request_of(name));
        bodies.push_back(compact(actual["body"]));
    }
    ASSERT_FALSE(bodies.empty());
    EXPECT_EQ(validate_bodies(bodies), "");
}

TEST(BedrockEncode, PercentEncodesTheModelIdAsTheAwsSdksDo) {
    const rapidjson::Document r = encode(request_of("system_and_text"));
    EXPECT_STREQ(r["method"].GetString(), "POST");
    EXPECT_STREQ(r["path"].GetString(),
                 "/model/global.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse");
    EXPECT_STREQ(r["headers"]["content-type"].GetString(), "application/json");

    std::string arn = request_of("system_and_text");
    const std::string id = "global.anthropic.claude-haiku-4-5-20251001-v1:0";
    arn.replace(arn.find(id), id.size(),
                "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x-v1:0");
    EXPECT_STREQ(encode(arn)["path"].GetString(),
                 "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus."
                 "x-v1%3A0/converse");
}

TEST(BedrockEncode, StreamingUsesConverseStreamAndAsksForTheEventStream) {
    const rapidjson::Document r = encode(request_of("merged_turns"));
    EXPECT_STREQ(r["path"].GetString(),
                 "/model/global.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse-stream");
    EXPECT_STREQ(r["headers"]["accept"].GetString(), "application/vnd.amazon.eventstream");
}

// caching.2, caching.7: at most 4 cache breakpoints per request -- a plan with
// 4 marks renders exactly 4, each right after its anchored block (never after the image).
TEST(BedrockEncode, FourMarksRenderFourCachePointsAfterTheirBlocks) {
    const rapidjson::Document r = encode(request_of("four_breakpoints"));
    const Value& body = r["body"];
    EXPECT_EQ(count_cache_points(body), 4U);
    const Value& system = body["system"];
    ASSERT_EQ(system.Size(), 3U);
    EXPECT_TRUE(system[2].HasMember("cachePoint"));
    EXPECT_STREQ(system[2]["cachePoint"]["ttl"].GetString(), "1h");  // cache_ttl "1h"
    const Value& first = body["messages"][0]["content"];
    ASSERT_EQ(first.Size(), 3U);
    EXPECT_TRUE(first[0].HasMember("image"));
    EXPECT_STREQ(first[1]["text"].GetString(), "First question about this picture.");
    EXPECT_TRUE(first[2].HasMember("cachePoint"));
    EXPECT_EQ(count_cache_points(body["messages"][6]), 0U);  // the fifth cached turn: no mark
}

TEST(BedrockEncode, FiveMarksAreRefusedNotTrimmed) {
    std::string req = request_of("four_breakpoints");
    const std::string anchors = R"({"turn": 4, "block": 0}])";
    req.replace(req.find(anchors), anchors.size(),
                R"({"turn": 4, "block": 0}, {"turn": 6, "block": 0}])");
    const Caught c = catch_error([&] { (void)provider().encode(req); });
    EXPECT_EQ(c.kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(c.message.find("5 breakpoints"), std::string::npos) << c.message;
}

// tools.11: in the text dialect (Bedrock Converse) tool definitions render as text where they
// sit in the conversation -- no toolConfig, calls and results as text.
TEST(BedrockEncode, TextToolDialectRendersCallsAndResultsAsText) {
    const rapidjson::Document r = encode(request_of("text_tools"));
    const Value& body = r["body"];
    EXPECT_FALSE(body.HasMember("toolConfig"));
    const Value& m = body["messages"];
    ASSERT_EQ(m.Size(), 5U);
    // The model's own envelope is kept and its parsed call is not written a second time.
    ASSERT_EQ(m[1]["content"].Size(), 1U);
    EXPECT_STREQ(m[1]["content"][0]["text"].GetString(),
                 R"({"tool_calls":[{"name":"search_orders","input":{"query":"42"}}]})");
    EXPECT_STREQ(m[2]["content"][0]["text"].GetString(),
                 "Result of call_search_orders_0_t1:\nOrder 42 shipped on Monday.\n{\"order\":42}");
    // Calls without their envelope text become one envelope.
    ASSERT_EQ(m[3]["content"].Size(), 1U);
    EXPECT_STREQ(m[3]["content"][0]["text"].GetString(),
                 R"({"tool_calls":[{"name":"search_orders","input":{"query":"43"}},)"
                 R"({"name":"search_orders","input":{"query":"44"}}]})");
    // The results lead the merged user message (the registry turn joins it, after them).
    const Value& last = m[4]["content"];
    ASSERT_EQ(last.Size(), 3U);
    EXPECT_STREQ(last[0]["text"].GetString(),
                 "Result of call_search_orders_0_t3 (error):\nNo such order.");
    EXPECT_STREQ(last[1]["text"].GetString(), "Result of call_search_orders_1_t3:\n(empty)");
    EXPECT_STREQ(last[2]["text"].GetString(), "Artifacts: none yet.");
    for (const auto& message : m.GetArray()) {
        for (const auto& block : message["content"].GetArray()) {
            EXPECT_FALSE(block.HasMember("toolUse") || block.HasMember("toolResult"));
        }
    }
}

TEST(BedrockEncode, NativeToolsUseToolConfigAndPairedBlocks) {
    const rapidjson::Document r = encode(request_of("every_block_native"));
    const Value& body = r["body"];
    const Value& tools = body["toolConfig"]["tools"];
    ASSERT_EQ(tools.Size(), 2U);
    EXPECT_STREQ(tools[0]["toolSpec"]["name"].GetString(), "search_orders");
    EXPECT_TRUE(tools[0]["toolSpec"]["inputSchema"]["json"].IsObject());
    EXPECT_FALSE(tools[1]["toolSpec"].HasMember("description"));  // empty: left out
    const Value& assistant = body["messages"][1]["content"];
    const Value& user = body["messages"][2]["content"];
    std::vector<std::string> uses, results;
    for (const auto& b : assistant.GetArray())
        if (b.HasMember("toolUse")) uses.emplace_back(b["toolUse"]["toolUseId"].GetString());
    for (const auto& b : user.GetArray())
        if (b.HasMember("toolResult"))
            results.emplace_back(b["toolResult"]["toolUseId"].GetString());
    EXPECT_EQ(uses, (std::vector<std::string>{"toolu_1", "toolu_2"}));
    EXPECT_EQ(results, uses);
    EXPECT_FALSE(user[0]["toolResult"].HasMember("status"));
    EXPECT_STREQ(user[1]["toolResult"]["status"].GetString(), "error");
    EXPECT_EQ(body["additionalModelRequestFields"]["thinking"]["budget_tokens"].GetInt(), 4096);
    EXPECT_EQ(body["inferenceConfig"]["maxTokens"].GetInt(), 8192);
}

// channel.6: consecutive same-role turns merged where the provider needs alternation, and a
// tool_result always first in its user turn; the anchors keep their blocks.
TEST(BedrockEncode, MergedTurnsKeepTheirAnchorsAndPutResultsFirst) {
    const rapidjson::Document r = encode(request_of("merged_turns"));
    const Value& m = r["body"]["messages"];
    ASSERT_EQ(m.Size(), 3U);
    const Value& first = m[0]["content"];  // turns 0 and 1; turn 1's empty text dropped
    ASSERT_EQ(first.Size(), 3U);
    EXPECT_STREQ(first[0]["text"].GetString(), "Hello.");
    EXPECT_TRUE(first[1].HasMember("cachePoint"));
    EXPECT_STREQ(first[2]["text"].GetString(), "What does 'merge' mean?");
    EXPECT_EQ(m[1]["content"].Size(), 2U);  // turns 2 and 3: text, toolUse
    const Value& last = m[2]["content"];    // turns 4 and 5: the result leads
    ASSERT_EQ(last.Size(), 3U);
    EXPECT_TRUE(last[0].HasMember("toolResult"));
    EXPECT_STREQ(last[1]["text"].GetString(), "(also, be quick)");
    // Turn 4's anchor is its blank block 1: the cachePoint stays where that block was.
    EXPECT_TRUE(last[2].HasMember("cachePoint"));
    // The blank system block is dropped.
    ASSERT_EQ(r["body"]["system"].Size(), 1U);
}

TEST(BedrockEncode, DocumentNamesFollowConverseCharacterRules) {
    const std::string base = request_of("system_and_text");
    const auto name_for = [&](const std::string& name) {
        std::string req = base;
        const std::string text = R"({"type": "text", "text": "Where is order 42?"})";
        rapidjson::Document n;
        n.SetString(name.c_str(), static_cast<rapidjson::SizeType>(name.size()), n.GetAllocator());
        req.replace(
            req.find(text), text.size(),
            text + R"(, {"type": "file", "media_type": "text/plain", "data": "aGk=", "name": )" +
                compact(n) + "}");
        const rapidjson::Document r = encode(req);
        return std::string(r["body"]["messages"][0]["content"][1]["document"]["name"].GetString());
    };
    EXPECT_EQ(name_for("report.txt"), "report");
    EXPECT_EQ(name_for("Q3 invoice_final.v2.pdf"), "Q3 invoice-final-v2");
    EXPECT_EQ(name_for("  a \t\n b  "), "a b");
    EXPECT_EQ(name_for("r\xC3\xA9sum\xC3\xA9 (draft) [v1]"), "r-sum- (draft) [v1]");
    EXPECT_EQ(name_for(""), "document-0-1");
    EXPECT_EQ(name_for(std::string(300, 'x')).size(), 200U);
}

struct Refusal {
    const char* name;
    const char* fixture;
    const char* from;
    const char* to;
    const char* says;
};

class Refusals : public ::testing::TestWithParam<Refusal> {};

TEST_P(Refusals, AreInvalidArgumentsNamingWhatAndWhere) {
    const Refusal& r = GetParam();
    std::string req = request_of(r.fixture);
    const auto at = req.find(r.from);
    ASSERT_NE(at, std::string::npos) << r.from;
    req.replace(at, std::string(r.from).size(), r.to);
    const Caught c = catch_error([&] { (void)provider().encode(req); });
    ASSERT_TRUE(c.thrown);
    EXPECT_EQ(c.kind, ErrorKind::kInvalidArgument) << c.message;
    EXPECT_NE(c.message.find(r.says), std::string::npos) << c.message;
}

INSTANTIATE_TEST_SUITE_P(
    Bedrock, Refusals,
    ::testing::Values(
        Refusal{"UrlImage", "every_block_native", R"("data": "iVBORw0KGgo=")",
                R"("url": "https://example.com/a.png")",
                "prepared.turns[0].blocks[1]: an image given by URL"},
        Refusal{"UrlFile", "every_block_native", R"("data": "JVBERi0xLjQ=")",
                R"("url": "https://example.com/a.pdf")",
                "prepared.turns[0].blocks[2]: an file given by URL"},
        Refusal{"ImageFormat", "every_block_native", R"("image/png")", R"("image/bmp")",
                "\"image/bmp\" has no Converse image format"},
        Refusal{"DocumentFormat", "every_block_native", R"("application/pdf")",
                R"("application/zip")", "\"application/zip\" has no Converse document format"},
        Refusal{"EmptyTurn", "four_breakpoints", R"([{"type": "text", "text": "First answer."}])",
                R"([{"type": "text", "text": "  "}])", "prepared.turns[1]: renders no content"},
        Refusal{"TurnWithoutBlocks", "four_breakpoints",
                R"([{"type": "text", "text": "First answer."}])", "[]",
                "prepared.turns[1]: renders no content"},
        Refusal{"AssistantFirst", "system_and_text", R"("role": "user")", R"("role": "assistant")",
                "must start with a user message"},
        Refusal{"SystemRole", "system_and_text", R"("role": "user")", R"("role": "system")",
                "\"system\" is not a Converse role"},
        Refusal{"ThinkingOffAnthropic", "text_tools",
                R"("thinking": {"active": false, "budget_tokens": 0)",
                R"("thinking": {"active": true, "budget_tokens": 2048)",
                "Amazon Nova takes a reasoning effort, not the \"enabled\" form"},
        Refusal{"DefinitionsInTextMode", "text_tools", R"("tool_definitions": [])",
                R"("tool_definitions": [{"name": "x", "schema": {"type": "object"}}])",
                "must be empty when prepared.native_tools is false"},
        Refusal{"NativeBlocksWithoutDefinitions", "text_tools", R"("native_tools": false)",
                R"("native_tools": true)", "Converse needs toolConfig"},
        Refusal{"AnchorOnBlankWithNothingBefore", "four_breakpoints",
                R"("text": "Second question.")", R"("text": " ")",
                "prepared.turns[2].blocks[0]: the cache breakpoint sits on a blank block"},
        Refusal{"AnchorOutsideTheTurns", "four_breakpoints", R"({"turn": 4, "block": 0})",
                R"({"turn": 9, "block": 0})", "turn_anchors[2]: no such turn"},
        Refusal{"UnknownBlock", "system_and_text", R"({"type": "text", "text": "Where)",
                R"({"type": "pojo", "text": "Where)", "block type \"pojo\" cannot be sent"},
        Refusal{"MissingMaxTokens", "system_and_text", R"("max_tokens": 1024)",
                R"("max_tokens": 0)", "max_tokens is 0"},
        Refusal{"BadTtl", "system_and_text", R"("cache_ttl": "5m")", R"("cache_ttl": "2d")",
                "cache_ttl: \"2d\""},
        Refusal{"NotJson", "system_and_text", R"("options": {})", R"("options": {)", "not JSON"}),
    [](const auto& info) { return std::string(info.param.name); });

// The anchor-on-a-blank refusal above is only for a blank with nothing before it in its
// message: with a block before it, the cachePoint stays in place (merged_turns shows it).
TEST(BedrockEncode, AnchorOnBlankSystemBlockWithNothingBeforeIsRefused) {
    std::string req = request_of("system_and_text");
    const std::string plan = R"("system_block": 2)";
    req.replace(req.find(plan), plan.size(), R"("system_block": 0)");
    const std::string text = R"("Answer customer questions about their orders.")";
    req.replace(req.find(text), text.size(), R"("")");
    const Caught c = catch_error([&] { (void)provider().encode(req); });
    EXPECT_EQ(c.kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(c.message.find("prepared.system_blocks[0]"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace nucleo::bedrock_test
