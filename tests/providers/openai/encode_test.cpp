// nucleo-openai encode, through the loader and the ABI: golden request bodies for every block
// kind, the objective's channel, tool pairing, merged turns, the cache plan (nothing on a model
// that caches automatically; explicit breakpoints on GPT-5.6 and later), the refusals, and the
// published schema over every body.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nucleo/errors.hpp"
#include "openai_support.hpp"
#include "wire_marks.hpp"

namespace nucleo::openai_test {
namespace {

std::string encode(const std::string& request) {
    return provider().encode(request);
}

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

// ---- golden files: fixtures/encode/NAME.in.json → NAME.out.json -------------------------------

class EncodeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(EncodeGolden, RendersTheExpectedHttpRequest) {
    const auto dir = fixtures() / "encode";
    expect_golden(encode(read_file(dir / (GetParam() + ".in.json"))),
                  dir / (GetParam() + ".out.json"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EncodeGolden,
                         ::testing::ValuesIn(fixture_names("encode", ".in.json")),
                         [](const auto& info) { return info.param; });

TEST(OpenAiEncode, EveryBlockKindHasAGoldenFixture) {
    // Guards the golden set itself: each block kind of the conversation document appears.
    std::string all;
    for (const auto& name : fixture_names("encode", ".in.json")) {
        all += read_file(fixtures() / "encode" / (name + ".in.json"));
    }
    for (const char* kind : {"text", "json", "image", "file", "tool_use", "tool_result", "thinking",
                             "redacted_thinking", "skill"}) {
        EXPECT_NE(all.find(std::string("\"type\": \"") + kind + "\""), std::string::npos) << kind;
    }
}

// ---- the channel contract and the envelope ------------------------------------------------------

TEST(OpenAiEncode, ObjectiveIsOneLeadingSystemMessage) {
    // channel.3: "a provider without one expresses it as that provider
    // carries instructions (OpenAI: a leading role:system message)".
    const auto d = parse(encode(read_file(fixtures() / "encode" / "system_and_text.in.json")));
    const auto& messages = d["body"]["messages"];
    ASSERT_GE(messages.Size(), 2u);
    EXPECT_STREQ(messages[0]["role"].GetString(), "system");
    std::size_t systems = 0;
    for (const auto& m : messages.GetArray()) systems += m["role"] == "system" ? 1 : 0;
    EXPECT_EQ(systems, 1u);
}

TEST(OpenAiEncode, EnvelopeCarriesNoCredentials) {
    // docs/provider-abi-documents.md: "The plugin never adds credentials."
    const auto d = parse(encode(read_file(fixtures() / "encode" / "every_block.in.json")));
    EXPECT_STREQ(d["method"].GetString(), "POST");
    EXPECT_STREQ(d["path"].GetString(), "/chat/completions");
    for (const auto& h : d["headers"].GetObject()) {
        const std::string name = h.name.GetString();
        EXPECT_NE(name, "authorization");
        EXPECT_NE(name, "x-api-key");
    }
}

TEST(OpenAiEncode, CapabilitiesSayNativeToolsBearerAndExplicitCachingWithoutToolCallMarks) {
    const auto d = parse(provider().capabilities());
    EXPECT_EQ(d["schema_version"].GetInt(), 1);
    EXPECT_STREQ(d["dialect"].GetString(), "openai");
    EXPECT_TRUE(d["native_tools"].GetBool());
    // caching.118: GPT-5.6 and later take the core's plan; caching.119: a tool call takes no mark.
    EXPECT_TRUE(d["caching"].GetBool());
    EXPECT_EQ(d["max_cache_breakpoints"].GetInt(), 4);
    EXPECT_FALSE(d["cache_anchor_tool_use"].GetBool());
    // caching.133: an assistant message's text part takes a mark here (caching.119), so the
    // capability is left out, which means the plan may anchor an assistant turn.
    EXPECT_FALSE(d.HasMember("cache_anchor_assistant"));
    EXPECT_TRUE(d["streaming"].GetBool());
    EXPECT_STREQ(d["auth"].GetString(), "bearer");
}

// ---- cache plan: rendered exactly, which for OpenAI is no marker at all
// ---------------------------

TEST(OpenAiEncode, APlanWithFourMarksAddsNoMarkerAndChangesNoByte) {
    // docs/provider-abi-documents.md: "The plugin renders a breakpoint on exactly those blocks ...
    // and nowhere else." OpenAI caches prefixes automatically: the dialect has no marker, so it
    // renders zero of them, and the plan leaves the prefix bytes (what OpenAI caches on) alone.
    const std::string with_plan =
        read_file(fixtures() / "encode" / "cache_plan_four_marks.in.json");
    rapidjson::Document planned = parse(with_plan);
    ASSERT_EQ(planned["prepared"]["cache_plan"]["breakpoints"].GetInt(), 4);
    const std::string out = encode(with_plan);
    for (const char* marker :
         {"cache_control", "prompt_cache_breakpoint", "cachePoint", "ephemeral"}) {
        EXPECT_EQ(count(out, marker), 0u) << marker;
    }
    rapidjson::Document unplanned = parse(with_plan);
    auto& prepared = unplanned["prepared"];
    prepared["cache_plan"].SetNull();
    prepared["cache_system"].SetBool(false);
    for (auto& t : prepared["turns"].GetArray()) t["cache"].SetBool(false);
    EXPECT_EQ(encode(compact(unplanned)), out);
    // caching.6, caching.118: the same for a model that says it caches automatically.
    rapidjson::Document automatic = parse(with_plan);
    automatic["model"].AddMember("caching", "automatic", automatic.GetAllocator());
    EXPECT_EQ(encode(compact(automatic)), out);
}

// ---- explicit breakpoints (GPT-5.6 and later) ---------------------------------------------------

/// The four-mark fixture as the core writes it for a model with explicit breakpoints.
rapidjson::Document explicit_request(const char* caching = "explicit") {
    rapidjson::Document d =
        parse(read_file(fixtures() / "encode" / "cache_plan_four_marks.in.json"));
    d["model"]["wire_model"].SetString("gpt-6-luna");
    d["model"].AddMember("caching", rapidjson::StringRef(caching), d.GetAllocator());
    d.AddMember("cache_key", "conv-42", d.GetAllocator());
    return d;
}

TEST(OpenAiEncode, AnExplicitModelGetsTheMarksOnExactlyThePlannedParts) {
    // caching.119: the system message's part, m1's text, m3's text and m4's text (block 1; the
    // image before it carries nothing).
    rapidjson::Document out = parse(encode(compact(explicit_request())));
    const auto& body = out["body"];
    const std::string text = compact(body);
    EXPECT_EQ(count(text, "\"prompt_cache_breakpoint\":{\"mode\":\"explicit\"}"), 4u) << text;
    const auto& m = body["messages"];
    ASSERT_EQ(m.Size(), 4u);  // system, user m1, assistant m2, user m3+m4
    const auto marked = [](const rapidjson::Value& part) {
        return part.HasMember("prompt_cache_breakpoint");
    };
    ASSERT_TRUE(m[0]["content"].IsArray());
    EXPECT_TRUE(marked(m[0]["content"][0]));
    EXPECT_STREQ(m[0]["content"][0]["text"].GetString(),
                 "Standing instructions.\n\nTool guidance.");
    ASSERT_TRUE(m[1]["content"].IsArray());
    EXPECT_TRUE(marked(m[1]["content"][0]));
    // The assistant's text is a part too (caching.119: one form whether marked or not).
    ASSERT_TRUE(m[2]["content"].IsArray());
    EXPECT_FALSE(marked(m[2]["content"][0]));
    const auto& merged = m[3]["content"];
    ASSERT_EQ(merged.Size(), 3u);  // Document two., the image, Compare them.
    EXPECT_TRUE(marked(merged[0]));
    EXPECT_STREQ(merged[1]["type"].GetString(), "image_url");
    EXPECT_FALSE(marked(merged[1]));
    EXPECT_TRUE(marked(merged[2]));
    // caching.118: the plan is the only source of breakpoints, and the conversation keys routing.
    EXPECT_STREQ(body["prompt_cache_options"]["mode"].GetString(), "explicit");
    EXPECT_STREQ(body["prompt_cache_key"].GetString(), "conv-42");
}

TEST(OpenAiEncode, AMarkMovingChangesOnlyTheMarkNeverTheMessagesForm) {
    // caching.119: the history is byte-stable under moving marks: without the plan, the body is
    // the planned one less its marks.
    rapidjson::Document planned = parse(encode(compact(explicit_request())));
    test_support::strip_cache_marks(planned["body"]);
    rapidjson::Document request = explicit_request();
    request["prepared"]["cache_plan"].SetNull();
    const rapidjson::Document unplanned = parse(encode(compact(request)));
    EXPECT_EQ(compact(planned["body"]), compact(unplanned["body"]));
    EXPECT_EQ(count(compact(unplanned["body"]), "prompt_cache_breakpoint"), 0u);
}

TEST(OpenAiEncode, AnAutomaticModelGetsTheCacheKeyButNoMarksOrOptions) {
    const std::string body = compact(parse(encode(compact(explicit_request("automatic"))))["body"]);
    EXPECT_EQ(count(body, "prompt_cache_breakpoint"), 0u);
    EXPECT_EQ(count(body, "prompt_cache_options"), 0u);
    EXPECT_EQ(count(body, "\"prompt_cache_key\":\"conv-42\""), 1u);
    // "none": nothing about caching at all (OpenAI-compatible servers see nothing new).
    const std::string none = compact(parse(encode(compact(explicit_request("none"))))["body"]);
    EXPECT_EQ(count(none, "prompt_cache"), 0u);
}

TEST(OpenAiEncode, AToolResultAnchorMarksItsToolMessage) {
    rapidjson::Document d = explicit_request();
    const std::string turns =
        R"([{"role":"user","message_id":"u1","cache":false,"blocks":[{"type":"text","text":"Weather?"}]},)"
        R"({"role":"assistant","message_id":"a1","cache":false,"blocks":[{"type":"tool_use","id":"c1","name":"w","input":{}}]},)"
        R"({"role":"user","message_id":"u2","cache":false,"blocks":[{"type":"tool_result","tool_use_id":"c1","content":"Sunny"}]}])";
    rapidjson::Document t = parse(turns);
    d["prepared"]["turns"].CopyFrom(t, d.GetAllocator());
    rapidjson::Document plan =
        parse(R"({"breakpoints":2,"system_block":1,"turn_anchors":[{"turn":2,"block":0}]})");
    d["prepared"]["cache_plan"].CopyFrom(plan, d.GetAllocator());
    const rapidjson::Document out = parse(encode(compact(d)));
    const auto& tool = out["body"]["messages"][3];
    ASSERT_STREQ(tool["role"].GetString(), "tool");
    ASSERT_TRUE(tool["content"].IsArray());
    EXPECT_STREQ(tool["content"][0]["text"].GetString(), "Sunny");
    EXPECT_TRUE(tool["content"][0].HasMember("prompt_cache_breakpoint"));
}

TEST(OpenAiEncode, AnAnchorNoPartCanCarryIsRefusedNamingIt) {
    // caching.119: a tool call, or a system block that is not the last one sent, is refused.
    rapidjson::Document d = explicit_request();
    rapidjson::Document t = parse(
        R"([{"role":"user","message_id":"u1","cache":false,"blocks":[{"type":"text","text":"Weather?"}]},)"
        R"({"role":"assistant","message_id":"a1","cache":false,"blocks":[{"type":"tool_use","id":"c1","name":"w","input":{}}]}])");
    d["prepared"]["turns"].CopyFrom(t, d.GetAllocator());
    rapidjson::Document plan =
        parse(R"({"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":1,"block":0}]})");
    d["prepared"]["cache_plan"].CopyFrom(plan, d.GetAllocator());
    try {
        encode(compact(d));
        FAIL() << "an anchor on a tool call was rendered";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("turn 1 block 0 cannot carry a breakpoint"),
                  std::string::npos)
            << e.what();
    }
    rapidjson::Document s = explicit_request();
    s["prepared"]["cache_plan"]["system_block"].SetUint(0);
    try {
        encode(compact(s));
        FAIL() << "a system breakpoint inside the system message was rendered";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("system_block: 0 is not the last system block sent"),
                  std::string::npos)
            << e.what();
    }
}

// ---- rules every dialect keeps (channel.6, channel.12) ---------------------------------------

TEST(OpenAiEncode, ToolResultsLeadTheirMergedUserTurn) {
    // channel.6: a tool_result always first in its user turn. The text of m5 came before
    // the result in m6; the result still comes first, right after the call.
    const auto d = parse(encode(read_file(fixtures() / "encode" / "merged_turns.in.json")));
    const auto& m = d["body"]["messages"];
    ASSERT_EQ(m.Size(), 4u);
    EXPECT_STREQ(m[1]["role"].GetString(), "assistant");
    EXPECT_STREQ(m[2]["role"].GetString(), "tool");
    EXPECT_STREQ(m[3]["role"].GetString(), "user");
}

TEST(OpenAiEncode, MergedTurnsAlternate) {
    // channel.6: consecutive same-role turns merged where the provider needs alternation.
    for (const auto& name : fixture_names("encode", ".in.json")) {
        const auto d = parse(encode(read_file(fixtures() / "encode" / (name + ".in.json"))));
        std::string previous;
        for (const auto& m : d["body"]["messages"].GetArray()) {
            const std::string role = m["role"].GetString();
            if (role != "tool") {
                EXPECT_NE(role, previous) << name;
            }
            previous = role;
        }
    }
}

TEST(OpenAiEncode, NeverABlankTextPart) {
    // channel.12: never a blank text block.
    for (const auto& name : fixture_names("encode", ".in.json")) {
        const auto d = parse(encode(read_file(fixtures() / "encode" / (name + ".in.json"))));
        for (const auto& m : d["body"]["messages"].GetArray()) {
            if (!m.HasMember("content")) continue;
            const auto& c = m["content"];
            if (c.IsString()) {
                EXPECT_NE(std::string(c.GetString()).find_first_not_of(" \t\r\n"),
                          std::string::npos)
                    << name;
                continue;
            }
            for (const auto& part : c.GetArray()) {
                if (part["type"] != "text") continue;
                EXPECT_NE(std::string(part["text"].GetString()).find_first_not_of(" \t\r\n"),
                          std::string::npos)
                    << name;
            }
        }
    }
}

// ---- reasoning ---------------------------------------------------------------------------------

std::string with_thinking(bool active, long budget, const std::string& options = "{}") {
    rapidjson::Document d = parse(read_file(fixtures() / "encode" / "system_and_text.in.json"));
    d["thinking"]["active"].SetBool(active);
    d["thinking"]["budget_tokens"].SetInt64(budget);
    rapidjson::Document o = parse(options);
    d["options"].CopyFrom(o, d.GetAllocator());
    const auto out = parse(encode(compact(d)));
    return out["body"].HasMember("reasoning_effort") ? out["body"]["reasoning_effort"].GetString()
                                                     : "";
}

TEST(OpenAiEncode, ReasoningEffortFollowsTheThinkingBudgetOnlyWhenActive) {
    EXPECT_EQ(with_thinking(false, 30000), "");
    EXPECT_EQ(with_thinking(true, 1024), "low");
    EXPECT_EQ(with_thinking(true, 4096), "low");
    EXPECT_EQ(with_thinking(true, 4097), "medium");
    EXPECT_EQ(with_thinking(true, 16384), "medium");
    EXPECT_EQ(with_thinking(true, 16385), "high");
    EXPECT_EQ(with_thinking(true, 2000, R"({"reasoning_effort":"minimal"})"), "minimal");
}

// ---- refusals: named, never repaired ----------------------------------------------------------

struct Refusal {
    const char* name;
    std::string request;
    const char* says;
};

std::string one_turn(const std::string& blocks, const std::string& role = "user") {
    return provider_request(
        R"({"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Hi"}]},)"
        R"({"role":")" +
        role + R"(","message_id":"m2","blocks":)" + blocks + "}]}");
}

TEST(OpenAiEncode, RefusesWhatItCannotExpressNamingWhere) {
    const std::vector<Refusal> cases = {
        {"blank turn",
         one_turn(R"([{"type":"text","text":"  "},{"type":"text","text":""}])", "assistant"),
         "prepared.turns[1] (message \"m2\"): nothing left to send"},
        {"thinking-only turn",
         one_turn(R"([{"type":"thinking","thinking":"hm","signature":"s"}])", "assistant"),
         "prepared.turns[1] (message \"m2\"): nothing left to send"},
        {"file by url",
         one_turn(R"([{"type":"file","media_type":"application/pdf","url":"https://x/a.pdf"}])"),
         "prepared.turns[1] (message \"m2\").blocks[0]: a file by URL"},
        {"image in assistant turn",
         one_turn(R"([{"type":"image","media_type":"image/png","data":"AA=="}])", "assistant"),
         "prepared.turns[1] (message \"m2\").blocks[0]: an assistant message cannot carry"},
        {"tool_use in user turn",
         one_turn(R"([{"type":"tool_use","id":"c","name":"n","input":{}}])"),
         "a tool_use block in a user turn"},
        {"unknown block", one_turn(R"([{"type":"video","url":"x"}])"),
         "blocks[0]: block type \"video\" cannot be sent"},
        {"system role turn", one_turn(R"([{"type":"text","text":"x"}])", "system"),
         "prepared.turns[1] (message \"m2\").role: \"system\" is not a turn role"},
        {"image with both sources",
         one_turn(R"([{"type":"image","media_type":"image/png","data":"AA==","url":"https://x"}])"),
         "exactly one of \"data\" and \"url\""},
        {"no max_tokens",
         R"({"schema_version":1,"model":{"wire_model":"m"},"prepared":{"turns":[]}})",
         "max_tokens: missing"},
        {"no model", R"({"schema_version":1,"max_tokens":5,"prepared":{"turns":[]}})",
         "model: missing"},
        {"bad system_role",
         R"({"schema_version":1,"model":{"wire_model":"m"},"max_tokens":5,)"
         R"("options":{"system_role":"user"},"prepared":{"turns":[]}})",
         "options.system_role: \"user\""},
        {"other schema version", R"({"schema_version":2})", "schema_version: unsupported"},
        {"not JSON", R"({"schema_version":1,)", "provider request is not JSON"},
    };
    for (const auto& c : cases) {
        try {
            (void)encode(c.request);
            ADD_FAILURE() << c.name << ": encoded without a refusal";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << c.name << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos)
                << c.name << ": " << e.what();
        }
    }
}

// ---- the published schema over every body this suite produces ---------------------------------

TEST(OpenAiEncode, EveryRequestBodyOfTheSuiteIsValidAgainstThePublishedSchema) {
    std::vector<std::string> bodies;
    for (const auto& name : fixture_names("encode", ".in.json")) {
        bodies.push_back(body_of(encode(read_file(fixtures() / "encode" / (name + ".in.json")))));
    }
    // The bodies the emulator tests send (emulator_test.cpp builds them with the same helpers).
    for (const std::string& request :
         {tool_question_request(), tool_question_request(true),
          tool_result_request("call_emu_1", R"({"query":"42"})", "Order 42 shipped."),
          tool_result_request("call_emu_1", R"({"query":"42"})", "timeout", true),
          growing_request(0), growing_request(1), unanswered_call_request()}) {
        bodies.push_back(body_of(encode(request)));
    }
    expect_schema_valid(bodies);
}

// wire.121: a function's parameters are a JSON Schema of type "object". A schema without a type
// gets it (as the Anthropic dialect does), an empty one too; one of another type is refused.
TEST(OpenAiEncode, AToolSchemaWithoutATypeBecomesAnObjectSchema) {
    const std::string request =
        R"({"schema_version":1,"model":{"wire_model":"m"},"max_tokens":5,"prepared":{"native_tools":true,)"
        R"("tool_definitions":[{"name":"empty","schema":{}},)"
        R"({"name":"untyped","schema":{"properties":{"n":{"type":"integer"}}}}],)"
        R"("turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"hi"}]}]}})";
    const auto d = parse(encode(request));
    const auto& tools = d["body"]["tools"];
    ASSERT_EQ(tools.Size(), 2U);
    EXPECT_EQ(std::string(tools[0]["function"]["parameters"]["type"].GetString()), "object");
    EXPECT_EQ(std::string(tools[1]["function"]["parameters"]["type"].GetString()), "object");
    EXPECT_EQ(
        std::string(tools[1]["function"]["parameters"]["properties"]["n"]["type"].GetString()),
        "integer");
    std::string refused = R"({"name":"untyped","schema":{"properties":{"n":{"type":"integer"}}}})";
    std::string array_request = request;
    array_request.replace(array_request.find(refused), refused.size(),
                          R"({"name":"list","schema":{"type":"array"}})");
    try {
        (void)encode(array_request);
        ADD_FAILURE() << "a schema of type array was encoded";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        EXPECT_NE(std::string(e.what()).find("of type \"object\""), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace nucleo::openai_test
