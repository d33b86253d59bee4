// nucleo-anthropic encode, through the loader and the C ABI (channel.3-13, caching.7).
//
// Golden request bodies: fixtures/encode/NAME.request.json (a provider request as the core sends
// it, docs/provider-abi-documents.md) must encode to fixtures/encode/NAME.http.json, byte for byte
// once both are compact. NUCLEO_UPDATE_GOLDEN=1 rewrites the expected files from the plugin's
// output (review the diff before committing it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "support.hpp"

namespace nucleo::anthropic_test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> golden_names() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(fixtures() / "encode")) {
        const std::string file = entry.path().filename().string();
        const std::string suffix = ".request.json";
        if (file.size() > suffix.size() && file.ends_with(suffix)) {
            names.push_back(file.substr(0, file.size() - suffix.size()));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string text_of(const rapidjson::Value& block) {
    return block.HasMember("text") ? block["text"].GetString() : "";
}

bool blank(const std::string& s) {
    return s.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
}

/// channel.6, channel.12, checked on every body: alternating roles from a user turn, never a blank
/// text block (also inside tool results and the system), tool results first in their message.
void expect_dialect_rules(const rapidjson::Value& body, const std::string& name) {
    if (body.HasMember("system")) {
        for (const auto& b : body["system"].GetArray()) {
            EXPECT_FALSE(blank(text_of(b))) << name << ": a blank system block";
        }
    }
    const auto& messages = body["messages"].GetArray();
    ASSERT_FALSE(messages.Empty()) << name;
    std::string previous;
    for (rapidjson::SizeType i = 0; i < messages.Size(); ++i) {
        const std::string role = messages[i]["role"].GetString();
        EXPECT_NE(role, previous) << name << ": messages " << i - 1 << " and " << i
                                  << " share the role " << role;
        previous = role;
        const auto& content = messages[i]["content"].GetArray();
        EXPECT_FALSE(content.Empty()) << name << ": message " << i << " is empty";
        bool seen_other = false;
        for (const auto& block : content) {
            const std::string type = block["type"].GetString();
            if (type == "text") {
                EXPECT_FALSE(blank(text_of(block))) << name << ": blank text";
            }
            if (type == "tool_result") {
                EXPECT_FALSE(seen_other)
                    << name << ": message " << i << " has a tool_result after another block";
                if (block.HasMember("content")) {
                    for (const auto& inner : block["content"].GetArray()) {
                        if (std::string(inner["type"].GetString()) == "text") {
                            EXPECT_FALSE(blank(text_of(inner)))
                                << name << ": blank text in a result";
                        }
                    }
                }
            } else {
                seen_other = true;
            }
        }
    }
    EXPECT_EQ(std::string(messages[0]["role"].GetString()), "user") << name;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, EncodesToTheExpectedHttpRequest) {
    const std::string name = GetParam();
    const std::string request = read_file(fixtures() / "encode" / (name + ".request.json"));
    const rapidjson::Document actual = parse(provider().encode(request));
    const fs::path expected_file = fixtures() / "encode" / (name + ".http.json");
    if (std::getenv("NUCLEO_UPDATE_GOLDEN") != nullptr) write_file(expected_file, pretty(actual));
    const rapidjson::Document expected = parse(read_file(expected_file));
    EXPECT_EQ(compact(actual), compact(expected)) << "golden " << expected_file;
    ASSERT_TRUE(actual.IsObject() && actual.HasMember("body"));
    expect_dialect_rules(actual["body"], name);
}

// caching.1: a provider plugin cannot add, drop or move a breakpoint — the body carries exactly
// as many cache_control markers as the plan has marks (positions are pinned by the goldens).
TEST_P(Golden, RendersExactlyThePlannedBreakpoints) {
    const std::string name = GetParam();
    const std::string request = read_file(fixtures() / "encode" / (name + ".request.json"));
    const rapidjson::Document in = parse(request);
    int planned = 0;
    const auto& prepared = in["prepared"];
    if (prepared.HasMember("cache_plan")) {
        const auto& plan = prepared["cache_plan"];
        planned =
            static_cast<int>(plan["turn_anchors"].Size()) + (plan["system_block"].IsNull() ? 0 : 1);
        EXPECT_EQ(planned, plan["breakpoints"].GetInt())
            << "fixture " << name << " is inconsistent";
    }
    const rapidjson::Document body = parse(encode_body(request));
    EXPECT_EQ(count_cache_control(body), planned) << name;
}

// The plugin copies strings that need no escaping as their original bytes (encode.cpp, Source);
// the result must be byte for byte what RapidJSON's Writer writes, escapes included — the cache
// prefix is keyed by these bytes.
TEST_P(Golden, TheBytesAreExactlyWhatTheWriterWrites) {
    const std::string name = GetParam();
    const std::string out =
        provider().encode(read_file(fixtures() / "encode" / (name + ".request.json")));
    EXPECT_EQ(compact(parse(out)), out);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden, ::testing::ValuesIn(golden_names()),
                         [](const auto& info) { return info.param; });

TEST(AnthropicEncode, CapabilitiesDescribeANativeToolCachingDialect) {
    const rapidjson::Document caps = parse(provider().capabilities());
    EXPECT_EQ(caps["schema_version"].GetInt(), 1);
    EXPECT_STREQ(caps["dialect"].GetString(), "anthropic");
    EXPECT_TRUE(caps["native_tools"].GetBool());
    EXPECT_TRUE(caps["caching"].GetBool());
    EXPECT_TRUE(caps["streaming"].GetBool());
    EXPECT_EQ(caps["max_cache_breakpoints"].GetInt(), 4);
    EXPECT_TRUE(caps["automatic_caching"].GetBool());  // caching.106
    EXPECT_STREQ(caps["auth"].GetString(), "x-api-key");
}

TEST(AnthropicEncode, TheRequestLineAndHeadersNeverCarryCredentials) {
    const rapidjson::Document http =
        parse(provider().encode(read_file(fixtures() / "encode" / "minimal.request.json")));
    EXPECT_STREQ(http["method"].GetString(), "POST");
    EXPECT_STREQ(http["path"].GetString(), "/v1/messages");
    EXPECT_STREQ(http["headers"]["anthropic-version"].GetString(), "2023-06-01");
    EXPECT_STREQ(http["headers"]["content-type"].GetString(), "application/json");
    EXPECT_FALSE(http["headers"].HasMember("x-api-key"));
    EXPECT_FALSE(http["headers"].HasMember("anthropic-beta"));
    // No catalog wire name: the model id is the wire name.
    EXPECT_STREQ(http["body"]["model"].GetString(), "claude-haiku-4-5");
}

// channel.6: consecutive same-role turns merged where the provider needs alternation, a
// tool_result always first in its user turn, and the cache anchors follow their blocks into
// the merged message.
TEST(AnthropicEncode, MergedTurnsLeadWithToolResultsAndKeepTheirAnchors) {
    const rapidjson::Document body =
        parse(encode_body(read_file(fixtures() / "encode" / "merged_turns.request.json")));
    const auto& messages = body["messages"];
    ASSERT_EQ(messages.Size(), 5u);  // [u,u] [a] [u,u,u] [a,a] [u,u]
    const auto& merged = messages[2]["content"];
    ASSERT_EQ(merged.Size(), 4u);
    EXPECT_STREQ(merged[0]["tool_use_id"].GetString(), "toolu_oslo");
    EXPECT_STREQ(merged[1]["tool_use_id"].GetString(), "toolu_rome");
    EXPECT_TRUE(merged[1]["is_error"].GetBool());
    EXPECT_FALSE(merged[0].HasMember("is_error"));
    // Turn 3 block 0 and turn 5 block 1 were anchored: both texts, now at positions 2 and 3.
    EXPECT_EQ(text_of(merged[2]), "Both calls are running.");
    EXPECT_TRUE(merged[2].HasMember("cache_control"));
    EXPECT_EQ(text_of(merged[3]), "Rome failed; answer for Oslo.");
    EXPECT_TRUE(merged[3].HasMember("cache_control"));
    EXPECT_FALSE(merged[0].HasMember("cache_control"));
    EXPECT_FALSE(merged[1].HasMember("cache_control"));
    // The two assistant turns, in order, and the trailing registry turn joined to the last user.
    EXPECT_EQ(messages[3]["content"].Size(), 2u);
    EXPECT_EQ(text_of(messages[4]["content"][1]), "Artifacts: none.");
    EXPECT_EQ(count_cache_control(body), 2);
}

// caching.2: Anthropic allows 4 cache breakpoints per request. A plan with
// 4 marks renders exactly 4, each with the configured TTL.
TEST(AnthropicEncode, AFourMarkPlanRendersExactlyFourWithTheOneHourTtl) {
    const rapidjson::Document body =
        parse(encode_body(read_file(fixtures() / "encode" / "four_breakpoints.request.json")));
    EXPECT_EQ(count_cache_control(body), 4);
    const auto& system = body["system"];
    EXPECT_FALSE(system[0].HasMember("cache_control"));
    EXPECT_STREQ(system[1]["cache_control"]["ttl"].GetString(), "1h");
    // The image of turn 0 is not anchored: the plan names its text block.
    EXPECT_FALSE(body["messages"][0]["content"][0].HasMember("cache_control"));
    EXPECT_STREQ(body["messages"][0]["content"][1]["cache_control"]["type"].GetString(),
                 "ephemeral");
    // m7 asked for caching too, but the plan had no breakpoint left for it.
    EXPECT_FALSE(body["messages"][6]["content"][0].HasMember("cache_control"));
}

TEST(AnthropicEncode, ThinkingStreamAndBetaFlagsWhenAsked) {
    const rapidjson::Document http =
        parse(provider().encode(read_file(fixtures() / "encode" / "thinking_stream.request.json")));
    EXPECT_STREQ(http["body"]["thinking"]["type"].GetString(), "enabled");
    EXPECT_EQ(http["body"]["thinking"]["budget_tokens"].GetInt(), 4096);
    EXPECT_EQ(http["body"]["max_tokens"].GetInt(), 12288);
    EXPECT_TRUE(http["body"]["stream"].GetBool());
    EXPECT_STREQ(http["headers"]["anthropic-beta"].GetString(),
                 "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14");
    EXPECT_FALSE(http["body"].HasMember("system"));  // no system blocks, no system field
}

// --- refusals: never sent, named -------------------------------------------------------------

std::string request_with(const std::string& prepared, const std::string& top = "") {
    return R"({"schema_version":1,"model":{"id":"c","wire_model":"claude-x"},"max_tokens":2048)" +
           top + R"(,"prepared":)" + prepared + "}";
}

const std::string kUserHi =
    R"({"role":"user","message_id":"m1","blocks":[{"type":"text","text":"hi"}]})";

const std::string kDefinition =
    R"({"type":"tool_definition","name":"fetch","description":"Fetches a page.","schema":{"type":"object","properties":{"url":{"type":"string"}}}})";

// tools.103: a late tool's definition leaves the user message and follows it as a system message
// of tool additions; `tools` is unchanged and the beta that takes a definition by value is asked.
TEST(AnthropicEncode, ALateToolIsAToolAdditionAfterItsUserMessage) {
    const std::string request = request_with(
        R"({"cache_plan":{"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":2,"block":0}]},"tool_definitions":[{"name":"search","schema":{"type":"object"}}],"turns":[)" +
            kUserHi +
            R"(,{"role":"assistant","message_id":"a1","blocks":[{"type":"text","text":"hello"}]},{"role":"user","message_id":"t1","blocks":[{"type":"text","text":"Additional tools now available: fetch"},)" +
            kDefinition +
            R"(]},{"role":"user","message_id":"q2","blocks":[{"type":"text","text":"fetch it"}]}]})",
        R"(,"options":{"anthropic_beta":["interleaved-thinking-2025-05-14"]})");
    const rapidjson::Document http = parse(provider().encode(request));
    const auto& body = http["body"];
    ASSERT_EQ(body["tools"].Size(), 1U);
    EXPECT_STREQ(body["tools"][0]["name"].GetString(), "search");
    const auto& messages = body["messages"];
    ASSERT_EQ(messages.Size(), 4U);
    EXPECT_STREQ(messages[2]["role"].GetString(), "user");
    ASSERT_EQ(messages[2]["content"].Size(), 2U) << "the definition left the user message";
    EXPECT_TRUE(messages[2]["content"][0].HasMember("cache_control"));
    EXPECT_EQ(text_of(messages[2]["content"][1]), "fetch it");
    const auto& system = messages[3];
    EXPECT_STREQ(system["role"].GetString(), "system");
    ASSERT_EQ(system["content"].Size(), 1U);
    const auto& addition = system["content"][0];
    EXPECT_STREQ(addition["type"].GetString(), "tool_addition");
    EXPECT_STREQ(addition["tool"]["type"].GetString(), "tool_definition");
    EXPECT_STREQ(addition["tool"]["definition"]["name"].GetString(), "fetch");
    EXPECT_STREQ(addition["tool"]["definition"]["description"].GetString(), "Fetches a page.");
    EXPECT_STREQ(addition["tool"]["definition"]["input_schema"]["type"].GetString(), "object");
    EXPECT_STREQ(http["headers"]["anthropic-beta"].GetString(),
                 "interleaved-thinking-2025-05-14,inline-tools-2026-09-15");
    EXPECT_EQ(count_cache_control(body), 1);
}

// wire.211: a thread continue sends its turns with `thread` and the beta, and leaves `tools` out
// (the provider's thread holds them); a create keeps them.
TEST(AnthropicEncode, AThreadContinueLeavesToolsOutAndACreateKeepsThem) {
    const std::string prepared =
        R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"tool_definitions":[{"name":"search","schema":{"type":"object"}}],"turns":[)" +
        kUserHi + "]}";
    const rapidjson::Document continued = parse(provider().encode(
        request_with(prepared, R"(,"thread":{"type":"continue","previous_message_id":"msg_1"})")));
    EXPECT_FALSE(continued["body"].HasMember("tools"));
    EXPECT_STREQ(continued["body"]["thread"]["type"].GetString(), "continue");
    EXPECT_STREQ(continued["body"]["thread"]["previous_message_id"].GetString(), "msg_1");
    EXPECT_STREQ(continued["headers"]["anthropic-beta"].GetString(), "message-threads-2026-08-12");

    const rapidjson::Document created = parse(provider().encode(request_with(
        prepared,
        R"(,"thread":{"type":"create"},"options":{"anthropic_beta":"message-threads-2026-08-12"})")));
    ASSERT_EQ(created["body"]["tools"].Size(), 1U);
    EXPECT_EQ(compact(created["body"]["thread"]), R"({"type":"create"})");
    EXPECT_STREQ(created["headers"]["anthropic-beta"].GetString(), "message-threads-2026-08-12")
        << "the beta is named once";

    const rapidjson::Document none = parse(provider().encode(request_with(prepared)));
    EXPECT_FALSE(none["body"].HasMember("thread"));
    EXPECT_FALSE(none["headers"].HasMember("anthropic-beta"));
}

// caching.106, caching.107: the request-level marker is the body's cache_control; the 1-hour
// head is the system block's; the tail keeps the request's TTL (5 minutes here).
TEST(AnthropicEncode, TheRequestLevelMarkerAndTheOneHourHead) {
    const std::string request = request_with(
        R"({"system_blocks":[{"type":"text","text":"s"}],"cache_plan":{"breakpoints":3,"system_block":0,"automatic":true,"system_ttl":"1h","turn_anchors":[{"turn":0,"block":0}]},"turns":[)" +
            kUserHi + "]}",
        R"(,"cache_ttl":"5m")");
    const rapidjson::Document http = parse(provider().encode(request));
    const auto& body = http["body"];
    EXPECT_STREQ(body["cache_control"]["type"].GetString(), "ephemeral");
    EXPECT_FALSE(body["cache_control"].HasMember("ttl"));
    EXPECT_STREQ(body["system"][0]["cache_control"]["ttl"].GetString(), "1h");
    EXPECT_STREQ(body["messages"][0]["content"][0]["cache_control"]["type"].GetString(),
                 "ephemeral");
    EXPECT_FALSE(body["messages"][0]["content"][0]["cache_control"].HasMember("ttl"));
}

struct Refusal {
    const char* name;
    std::string request;
    std::vector<std::string> contains;
};

void PrintTo(const Refusal& r, std::ostream* os) {
    *os << r.name;
}

std::vector<Refusal> refusals() {
    return {
        {"five_marks",
         request_with(
             R"({"system_blocks":[{"type":"text","text":"s"}],"cache_plan":{"breakpoints":5,"system_block":0,"turn_anchors":[{"turn":0,"block":0},{"turn":1,"block":0},{"turn":2,"block":0},{"turn":3,"block":0}]},"turns":[)" +
             kUserHi + "," + kUserHi + "," + kUserHi + "," + kUserHi + "]}"),
         {"5 breakpoints", "at most 4"}},
        {"automatic_over_four",  // caching.106: the request-level marker counts
         request_with(
             R"({"system_blocks":[{"type":"text","text":"s"}],"cache_plan":{"breakpoints":5,"system_block":0,"automatic":true,"turn_anchors":[{"turn":0,"block":0},{"turn":1,"block":0},{"turn":2,"block":0}]},"turns":[)" +
             kUserHi + "," + kUserHi + "," + kUserHi + "]}"),
         {"5 breakpoints", "at most 4"}},
        {"system_ttl_unknown",  // caching.107
         request_with(
             R"({"system_blocks":[{"type":"text","text":"s"}],"cache_plan":{"breakpoints":1,"system_block":0,"system_ttl":"2h","turn_anchors":[]},"turns":[)" +
             kUserHi + "]}"),
         {"system_ttl", "\"1h\""}},
        {"plan_count_mismatch",
         request_with(
             R"({"cache_plan":{"breakpoints":2,"system_block":null,"turn_anchors":[{"turn":0,"block":0}]},"turns":[)" +
             kUserHi + "]}"),
         {"breakpoints does not match", "1 marks"}},
        {"duplicate_anchor",
         request_with(
             R"({"cache_plan":{"breakpoints":2,"system_block":null,"turn_anchors":[{"turn":0,"block":0},{"turn":0,"block":0}]},"turns":[)" +
             kUserHi + "]}"),
         {"turn 0 block 0 twice"}},
        {"anchor_out_of_range",
         request_with(
             R"({"cache_plan":{"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":0,"block":3}]},"turns":[)" +
             kUserHi + "]}"),
         {"turn 0 block 3", "does not exist"}},
        {"system_anchor_out_of_range",
         request_with(
             R"({"system_blocks":[],"cache_plan":{"breakpoints":1,"system_block":0,"turn_anchors":[]},"turns":[)" +
             kUserHi + "]}"),
         {"system_block is 0", "0 system blocks"}},
        {"tool_definition_in_an_assistant_turn",  // tools.103
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
             kUserHi +
             R"(,{"role":"assistant","message_id":"a1","blocks":[{"type":"text","text":"x"},)" +
             kDefinition + "]}]}"),
         {"prepared.turns[1] (message \"a1\").blocks[1]", "assistant turn cannot declare"}},
        {"anchor_on_tool_definition",  // tools.103
         request_with(
             R"({"cache_plan":{"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":0,"block":1}]},"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"q"},)" +
             kDefinition + "]}]}"),
         {"prepared.turns[0] (message \"m1\").blocks[1]", "\"tool_definition\" block"}},
        {"only_tool_definitions",  // tools.103
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[{"role":"user","message_id":"m1","blocks":[)" +
             kDefinition + "]}]}"),
         {"prepared.turns[0] (message \"m1\")", "nothing but tool definitions"}},
        {"thread_not_an_object",  // wire.211
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
                 kUserHi + "]}",
             R"(,"thread":"continue")"),
         {"thread is not an object"}},
        {"thread_type_unknown",  // wire.211
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
                 kUserHi + "]}",
             R"(,"thread":{"type":"resume"})"),
         {"thread.type"}},
        {"thread_continue_without_id",  // wire.211
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
                 kUserHi + "]}",
             R"(,"thread":{"type":"continue"})"),
         {"thread.previous_message_id", "non-empty string"}},
        {"thread_create_with_id",  // wire.211
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
                 kUserHi + "]}",
             R"(,"thread":{"type":"create","previous_message_id":"msg_1"})"),
         {"thread.previous_message_id", "a create continues nothing"}},
        {"thread_extra_member",  // wire.211
         request_with(
             R"({"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},"turns":[)" +
                 kUserHi + "]}",
             R"(,"thread":{"type":"create","ttl":"1h"})"),
         {"thread.ttl"}},
        {"anchor_on_blank_text",
         request_with(
             R"({"cache_plan":{"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":0,"block":0}]},"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"  "},{"type":"text","text":"q"}]}]})"),
         {"prepared.turns[0] (message \"m1\").blocks[0]", "blank text block"}},
        {"anchor_on_blank_system_block",
         request_with(
             R"({"system_blocks":[{"type":"text","text":""}],"cache_plan":{"breakpoints":1,"system_block":0,"turn_anchors":[]},"turns":[)" +
             kUserHi + "]}"),
         {"prepared.system_blocks[0]", "blank"}},
        {"anchor_on_thinking",
         request_with(
             R"({"cache_plan":{"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":1,"block":0}]},"turns":[)" +
             kUserHi +
             R"(,{"role":"assistant","message_id":"m2","blocks":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"}]}]})"),
         {"prepared.turns[1] (message \"m2\").blocks[0]",
          "\"thinking\" block, which cannot carry one"}},
        {"blank_turn_is_named",
         request_with(
             R"({"turns":[)" + kUserHi +
             R"(,{"role":"assistant","message_id":"m2","blocks":[{"type":"text","text":" \n "},{"type":"text","text":""}]}]})"),
         {"prepared.turns[1] (message \"m2\")", "never sent blank"}},
        {"turn_without_blocks",
         request_with(R"({"turns":[{"role":"user","message_id":"m9","blocks":[]}]})"),
         {"prepared.turns[0] (message \"m9\")", "no content"}},
        {"no_turns", request_with(R"({"turns":[]})"), {"prepared.turns is empty"}},
        {"system_role",
         request_with(
             R"({"turns":[{"role":"system","message_id":"m1","blocks":[{"type":"text","text":"x"}]}]})"),
         {"the role \"system\""}},
        {"unknown_block",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"pojo","type_name":"T","value":{}}]}]})"),
         {"blocks[0]", "\"pojo\" block cannot be sent in a turn"}},
        {"image_in_system",
         request_with(
             R"({"system_blocks":[{"type":"image","media_type":"image/png","data":"AA=="}],"turns":[)" +
             kUserHi + "]}"),
         {"prepared.system_blocks[0]", "the system takes text only"}},
        {"base64_bmp_image",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"image","media_type":"image/bmp","data":"Qk0="}]}]})"),
         {"blocks[0]", "not image/bmp"}},
        {"base64_zip_document",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"file","media_type":"application/zip","name":"a.zip","data":"UEsDBA=="}]}]})"),
         {"not application/zip"}},
        {"image_with_data_and_url",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"image","media_type":"image/png","data":"AA==","url":"https://x/y.png"}]}]})"),
         {"exactly one of the strings \"data\" and \"url\""}},
        {"text_file_not_base64",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"file","media_type":"text/plain","data":"not base64!"}]}]})"),
         {"\"data\" is not base64"}},
        {"tool_use_input_not_object",
         request_with(
             R"({"turns":[)" + kUserHi +
             R"(,{"role":"assistant","message_id":"m2","blocks":[{"type":"tool_use","id":"t","name":"n","input":[1]}]}]})"),
         {"prepared.turns[1] (message \"m2\").blocks[0]", "\"input\" must be an object"}},
        {"text_without_text",
         request_with(
             R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text"}]}]})"),
         {"blocks[0] lacks the string \"text\""}},
        {"schema_of_another_type",
         request_with(
             R"({"tool_definitions":[{"name":"t","description":"d","schema":{"type":"array"}}],"turns":[)" +
             kUserHi + "]}"),
         {"tool \"t\"", "type \"object\""}},
        {"thinking_budget_not_below_max_tokens",
         request_with(R"({"turns":[)" + kUserHi + "]}",
                      R"(,"thinking":{"active":true,"budget_tokens":2048})"),
         {"budget_tokens is 2048 and max_tokens is 2048"}},
        {"thinking_budget_below_1024",
         request_with(R"({"turns":[)" + kUserHi + "]}",
                      R"(,"thinking":{"active":true,"budget_tokens":512})"),
         {"budget_tokens is 512 and max_tokens is 2048", ">= 1024"}},
        {"cache_ttl",
         request_with(R"({"turns":[)" + kUserHi + "]}", R"(,"cache_ttl":"10m")"),
         {"cache_ttl: \"10m\" is not a cache TTL"}},
        {"not_json", "{\"model\":", {"not JSON"}},
        {"no_prepared",
         R"({"schema_version":1,"model":{"id":"c"},"max_tokens":5})",
         {"prepared: missing"}},
        {"no_max_tokens",
         R"({"schema_version":1,"model":{"id":"c"},"prepared":{}})",
         {"max_tokens: missing"}},
        {"zero_max_tokens",
         R"({"schema_version":1,"model":{"id":"c"},"max_tokens":0,"prepared":{"turns":[)" +
             kUserHi + "]}}",
         {"max_tokens is 0"}},
        {"schema_version_2",
         R"({"schema_version":2,"model":{"id":"c"},"max_tokens":5,"prepared":{}})",
         {"schema_version: unsupported"}},
    };
}

class Refused : public ::testing::TestWithParam<Refusal> {};

TEST_P(Refused, WithInvalidArgumentNamingWhatAndWhere) {
    const Refusal& r = GetParam();
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message = error_of([&] { (void)provider().encode(r.request); }, &kind);
    ASSERT_FALSE(message.empty()) << r.name << " was encoded";
    EXPECT_EQ(kind, ErrorKind::kInvalidArgument) << message;
    for (const std::string& part : r.contains) {
        EXPECT_NE(message.find(part), std::string::npos)
            << "\"" << part << "\" not in: " << message;
    }
}

INSTANTIATE_TEST_SUITE_P(Requests, Refused, ::testing::ValuesIn(refusals()),
                         [](const auto& info) { return std::string(info.param.name); });

// Every request body this suite produces is checked against the published CreateMessageParams
// schema (../shared/specs/anthropic-openapi.yml) by ../shared/tools/validate_wire.py. That
// checkout exists beside the project's own workplace only: on a user's clone the test is reported
// as skipped, with the reason (ctest counts it under "Skipped").
TEST(AnthropicEncode, EveryGoldenBodyIsValidAgainstThePublishedSchema) {
    if (!wire_validator_present()) {
        GTEST_SKIP() << "../shared/tools/validate_wire.py is not present next to the repository: "
                        "the bodies cannot be validated against the published schema";
    }
    std::vector<std::string> bodies;
    for (const std::string& name : golden_names()) {
        bodies.push_back(encode_body(read_file(fixtures() / "encode" / (name + ".request.json"))));
    }
    const std::string problems = emulator_test::validate_wire("anthropic", bodies);
    EXPECT_EQ(problems, "") << problems;
}

}  // namespace
}  // namespace nucleo::anthropic_test
