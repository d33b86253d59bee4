// nucleo-openai-responses encode through the loader (docs/spec/openai-responses.md
// responses.1-responses.8): the route and head, instructions and input items, media parts, tool
// calls and outputs, reasoning items sent back to their family only, strict tools, the cache
// plan's marks on explicit models, reasoning, store and include.
#include <gtest/gtest.h>

#include <string>

#include "nucleo/errors.hpp"
#include "responses_support.hpp"

namespace nucleo::responses_test {
namespace {

const std::string kUserHi = R"([{"role":"user","blocks":[{"type":"text","text":"Hi"}]}])";

std::string with_options(std::string req, const std::string& options) {
    const std::string at = R"("options":{})";
    req.replace(req.find(at), at.size(), R"("options":)" + options);
    return req;
}

ErrorKind encode_error(const std::string& req) {
    try {
        (void)provider().encode(req);
    } catch (const Error& e) {
        return e.kind();
    }
    ADD_FAILURE() << "encoded without an error";
    return ErrorKind::kInternal;
}

TEST(ResponsesEncode, PostsToResponsesWithInstructionsAndTheDefaults) {
    const auto d = encode(request(
        kUserHi,
        R"([{"type":"text","text":"Be brief."},{"type":"text","text":"  "},{"type":"skill","content":"Skill."}])"));
    EXPECT_STREQ(d["method"].GetString(), "POST");
    EXPECT_STREQ(d["path"].GetString(), "/responses");
    EXPECT_EQ(compact(d["headers"]), R"({"content-type":"application/json"})");
    const auto& b = d["body"];
    EXPECT_STREQ(b["model"].GetString(), "gpt-6-sol");
    EXPECT_STREQ(b["instructions"].GetString(), "Be brief.\n\nSkill.");
    EXPECT_EQ(
        compact(b["input"]),
        R"([{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]}])");
    EXPECT_EQ(b["max_output_tokens"].GetInt(), 2048);
    EXPECT_FALSE(b["store"].GetBool());
    EXPECT_EQ(compact(b["include"]), R"(["reasoning.encrypted_content"])");
    EXPECT_FALSE(b.HasMember("stream"));
    EXPECT_FALSE(b.HasMember("reasoning"));
    EXPECT_FALSE(b.HasMember("prompt_cache_key"));
    // No system blocks: no instructions. Streaming: stream true and the accept header.
    const auto s = encode(request(kUserHi, "[]", R"(,"stream":true)"));
    EXPECT_FALSE(s["body"].HasMember("instructions"));
    EXPECT_TRUE(s["body"]["stream"].GetBool());
    EXPECT_STREQ(s["headers"]["accept"].GetString(), "text/event-stream");
}

TEST(ResponsesEncode, OptionsStorePathAndSummary) {
    const auto d = encode(
        with_options(request(kUserHi),
                     R"({"store":true,"path":"/v1/responses","reasoning_summary":"detailed"})"));
    EXPECT_STREQ(d["path"].GetString(), "/v1/responses");
    EXPECT_TRUE(d["body"]["store"].GetBool());
    EXPECT_FALSE(d["body"].HasMember("include"));
    EXPECT_EQ(encode_error(with_options(request(kUserHi), R"({"store":"yes"})")),
              ErrorKind::kInvalidArgument);
    EXPECT_EQ(encode_error(with_options(request(kUserHi), R"({"path":"responses"})")),
              ErrorKind::kInvalidArgument);
}

TEST(ResponsesEncode, ReasoningFromTheEffortTheCoreChose) {
    std::string req = request(kUserHi);
    const std::string off = R"("thinking":{"active":false,"budget_tokens":0})";
    req.replace(req.find(off), off.size(),
                R"("thinking":{"active":true,"budget_tokens":16384,"effort":"medium"})");
    EXPECT_EQ(compact(encode(req)["body"]["reasoning"]), R"({"effort":"medium","summary":"auto"})");
    std::string none = request(kUserHi);
    none.replace(none.find(off), off.size(),
                 R"("thinking":{"active":false,"budget_tokens":0,"effort":"none"})");
    EXPECT_EQ(compact(encode(none)["body"]["reasoning"]), R"({"effort":"none"})");
}

TEST(ResponsesEncode, ToolCallsOutputsAndAssistantText) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"text","text":"weather?"}]},)"
        R"({"role":"assistant","blocks":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Looking."},)"
        R"({"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}]},)"
        R"({"role":"user","blocks":[{"type":"text","text":"and now?"},{"type":"tool_result","tool_use_id":"call_1","is_error":true,)"
        R"("content":[{"type":"text","text":"down"},{"type":"json","json":{"a":1}}]}]}])"));
    EXPECT_EQ(
        compact(d["body"]["input"]),
        R"([{"type":"message","role":"user","content":[{"type":"input_text","text":"weather?"}]},)"
        R"({"type":"message","role":"assistant","content":"Looking."},)"
        R"({"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},)"
        R"({"type":"function_call_output","call_id":"call_1","output":"Error: down\n{\"a\":1}"},)"
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"and now?"}]}])");
    // An empty result never goes blank.
    const auto e = encode(request(
        R"([{"role":"assistant","blocks":[{"type":"tool_use","id":"c","name":"f","input":{}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"c","content":[]}]}])"));
    EXPECT_STREQ(e["body"]["input"][1]["output"].GetString(), "(empty result)");
}

TEST(ResponsesEncode, ImagesAndFilesAsInputParts) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"image","media_type":"image/png","data":"QUJD"},)"
        R"({"type":"image","media_type":"image/png","url":"https://x/i.png"},)"
        R"({"type":"file","media_type":"application/pdf","data":"JVBE"},)"
        R"({"type":"file","media_type":"application/pdf","data":"JVBE","name":"r.pdf"},)"
        R"({"type":"file","media_type":"application/pdf","url":"https://x/f.pdf"}]}])"));
    EXPECT_EQ(
        compact(d["body"]["input"][0]["content"]),
        R"([{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,QUJD"},)"
        R"({"type":"input_image","detail":"auto","image_url":"https://x/i.png"},)"
        R"({"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"file.pdf"},)"
        R"({"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"r.pdf"},)"
        R"({"type":"input_file","file_url":"https://x/f.pdf"}])");
    // A result's image makes its output a list of parts.
    const auto r = encode(request(
        R"([{"role":"assistant","blocks":[{"type":"tool_use","id":"c","name":"f","input":{}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"see"},)"
        R"({"type":"image","media_type":"image/png","data":"QUJD"}]}]}])"));
    EXPECT_EQ(
        compact(r["body"]["input"][1]["output"]),
        R"([{"type":"input_text","text":"see"},{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,QUJD"}])");
    EXPECT_EQ(
        encode_error(request(
            R"([{"role":"assistant","blocks":[{"type":"image","media_type":"image/png","data":"QUJD"}]}])")),
        ErrorKind::kInvalidArgument);
}

TEST(ResponsesEncode, TurnsLeftWithNothingAreRefused) {
    EXPECT_EQ(encode_error(request(R"([{"role":"user","blocks":[{"type":"text","text":"  "}]}])")),
              ErrorKind::kInvalidArgument);
    EXPECT_EQ(encode_error(request("[]")), ErrorKind::kInvalidArgument);
    EXPECT_EQ(encode_error(request(R"([{"role":"system","blocks":[{"type":"text","text":"x"}]}])")),
              ErrorKind::kInvalidArgument);
    EXPECT_EQ(encode_error("{\"prepared\":"), ErrorKind::kInvalidArgument);
}

TEST(ResponsesEncode, StrictOnlyWhereTheSchemaAllowsIt) {
    const auto d = encode(request(
        kUserHi, "[]", "",
        R"([{"name":"ok","description":"d","schema":{"type":"object","properties":{"a":{"type":"string"},)"
        R"("b":{"type":"object","properties":{"c":{"type":["integer","null"]}},"required":["c"],"additionalProperties":false}},)"
        R"("required":["a","b"],"additionalProperties":false}},)"
        R"({"name":"optional","schema":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}},)"
        R"({"name":"open","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},)"
        R"({"name":"nested_open","schema":{"type":"object","properties":{"b":{"type":"object","properties":{}}},"required":["b"],"additionalProperties":false}},)"
        R"({"name":"unsupported","schema":{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}},"required":["a"],"additionalProperties":false}},)"
        R"({"name":"none"}])"));
    const auto& tools = d["body"]["tools"];
    ASSERT_EQ(tools.Size(), 6U);
    EXPECT_STREQ(tools[0]["type"].GetString(), "function");
    EXPECT_STREQ(tools[0]["description"].GetString(), "d");
    EXPECT_TRUE(tools[0]["strict"].GetBool());
    for (rapidjson::SizeType i = 1; i < 6; ++i)
        EXPECT_FALSE(tools[i]["strict"].GetBool()) << tools[i]["name"].GetString();
    EXPECT_FALSE(tools[1].HasMember("description"));
    EXPECT_EQ(compact(tools[5]["parameters"]), R"({"type":"object","properties":{}})");
}

std::string reasoning_block(const std::string& model) {
    return R"({"type":"provider_block","wire_family":"openai-responses","block":{"type":"reasoning_item","model":")" +
           model +
           R"(","item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"E"}}})";
}

TEST(ResponsesEncode, ReasoningItemsGoBackAsTheyCameToTheirFamilyOnly) {
    const std::string turns =
        R"([{"role":"user","blocks":[{"type":"text","text":"q"}]},{"role":"assistant","blocks":[)" +
        reasoning_block("gpt-6-sol-2026-10-01") +
        R"(,{"type":"thinking","thinking":"s"},{"type":"text","text":"a"}]},{"role":"user","blocks":[{"type":"text","text":"more"}]}])";
    const auto same = encode(request(turns));
    EXPECT_EQ(
        compact(same["body"]["input"][1]),
        R"({"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"E"})");
    EXPECT_EQ(same["body"]["input"].Size(), 4U);
    const auto other = encode(request(turns, "[]", "", "[]", R"("wire_model":"gpt-6-luna")"));
    EXPECT_EQ(other["body"]["input"].Size(), 3U);
    EXPECT_STREQ(other["body"]["input"][1]["role"].GetString(), "assistant");
    // Another family's provider block is never sent.
    std::string gemini = turns;
    gemini.replace(gemini.find("openai-responses"), 16, "gemini-generate");
    EXPECT_EQ(encode(request(gemini))["body"]["input"].Size(), 3U);
}

TEST(ResponsesEncode, TheCachePlanIsWrittenOnExplicitModelsOnly) {
    const std::string turns =
        R"([{"role":"user","blocks":[{"type":"text","text":"q"}]},)"
        R"({"role":"assistant","blocks":[{"type":"tool_use","id":"c","name":"f","input":{}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"r"}]}]}])";
    const std::string plan =
        R"({"breakpoints":3,"system_block":0,"turn_anchors":[{"turn":0,"block":0},{"turn":2,"block":0}]})";
    const std::string system = R"([{"type":"text","text":"Sys."}])";
    const auto d = encode(request(turns, system, R"(,"cache_key":"conv-1")", "[]",
                                  R"("wire_model":"gpt-6-sol","caching":"explicit")", plan));
    const auto& b = d["body"];
    EXPECT_FALSE(b.HasMember("instructions"));
    const std::string mark = R"("prompt_cache_breakpoint":{"mode":"explicit"})";
    EXPECT_EQ(
        compact(b["input"][0]),
        R"({"type":"message","role":"developer","content":[{"type":"input_text","text":"Sys.",)" +
            mark + "}]}");
    EXPECT_EQ(compact(b["input"][1]["content"]),
              R"([{"type":"input_text","text":"q",)" + mark + "}]");
    EXPECT_EQ(compact(b["input"][3]["output"]),
              R"([{"type":"input_text","text":"r",)" + mark + "}]");
    EXPECT_EQ(compact(b["prompt_cache_options"]), R"({"mode":"explicit"})");
    EXPECT_STREQ(b["prompt_cache_key"].GetString(), "conv-1");
    // An automatic model: the key only, no mark, instructions as usual.
    const auto a = encode(request(turns, system, R"(,"cache_key":"conv-1")", "[]",
                                  R"("wire_model":"gpt-5","caching":"automatic")", plan));
    EXPECT_STREQ(a["body"]["instructions"].GetString(), "Sys.");
    EXPECT_EQ(provider()
                  .encode(request(turns, system, "", "[]",
                                  R"("wire_model":"gpt-5","caching":"automatic")", plan))
                  .find("prompt_cache"),
              std::string::npos);
    // An anchor on assistant output or a call is refused, never moved.
    EXPECT_EQ(
        encode_error(request(
            turns, system, "", "[]", R"("wire_model":"gpt-6-sol","caching":"explicit")",
            R"({"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":1,"block":0}]})")),
        ErrorKind::kInvalidArgument);
    EXPECT_EQ(
        encode_error(request(
            turns, system, "", "[]", R"("wire_model":"gpt-6-sol","caching":"explicit")",
            R"({"breakpoints":1,"system_block":null,"turn_anchors":[{"turn":0,"block":7}]})")),
        ErrorKind::kInvalidArgument);
}

TEST(ResponsesEncode, CapabilitiesNameTheFamilyAndBearerAuth) {
    const auto caps = parse(provider().capabilities());
    EXPECT_STREQ(caps["wire_family"].GetString(), "openai-responses");
    EXPECT_STREQ(caps["auth"].GetString(), "bearer");
    EXPECT_TRUE(caps["provider_blocks"].GetBool());
    EXPECT_FALSE(caps["cache_anchor_tool_use"].GetBool());
    EXPECT_FALSE(caps["cache_anchor_assistant"].GetBool());  // caching.133
}

TEST(ResponsesEncode, ControlCharactersAreEscapedAtEveryAlignment) {
    for (std::size_t pad = 0; pad < 40; ++pad) {
        const std::string text = std::string(pad, 'a') + "\\u0001\\u001f" + std::string(40, 'b');
        const std::string body =
            provider()
                .encode_parts(request(R"([{"role":"user","blocks":[{"type":"text","text":")" +
                                      text + R"("}]}])"))
                .body;
        for (const char c : body) ASSERT_GE(static_cast<unsigned char>(c), 0x20) << "pad " << pad;
    }
}

// responses.13: the plugin's own escaper writes the bytes RapidJSON's Writer writes (this test's
// Writer is the byte-at-a-time one): every control byte, quotes, backslashes, '/', DEL and UTF-8,
// in short strings (one reserved span) and long ones (the run scan), at every alignment, in texts,
// a call's input, a json block, a tool result and the system text.
TEST(ResponsesEncode, TheBodyIsWhatRapidJsonsWriterWritesBack) {
    std::string tricky;
    for (int c = 1; c < 0x20; ++c) tricky.push_back(static_cast<char>(c));
    tricky += "\"\\/\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x99\x82 end";
    auto quoted = [](const std::string& raw) {
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        w.String(raw.data(), static_cast<rapidjson::SizeType>(raw.size()));
        return std::string(b.GetString(), b.GetSize());
    };
    for (std::size_t pad = 0; pad < 80; pad += 7) {
        const std::string text = quoted(std::string(pad, 'a') + tricky + std::string(pad, 'b'));
        const std::string turns =
            R"([{"role":"user","blocks":[{"type":"text","text":)" + text +
            R"(},{"type":"json","json":{"k":)" + text +
            R"(}}]},{"role":"assistant","blocks":[{"type":"text","text":)" + text +
            R"(},{"type":"tool_use","id":"c1","name":"f","input":{"q":)" + text +
            R"(}}]},{"role":"user","blocks":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":)" +
            text + R"(}]}]}])";
        const std::string body =
            provider()
                .encode_parts(request(turns, R"([{"type":"text","text":)" + text + "}]"))
                .body;
        ASSERT_EQ(body, compact(parse(body))) << "pad " << pad;
    }
}

}  // namespace
}  // namespace nucleo::responses_test
