// nucleo-gemini encode through the loader and the ABI (docs/spec/gemini.md gemini.1-gemini.8):
// the path, systemInstruction, merged roles, every part kind, function declarations,
// thinkingConfig from the record's mapping, thought signatures back on their own part, and the
// refusals.
#include <gtest/gtest.h>

#include <string>

#include "gemini_support.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::gemini_test {
namespace {

constexpr const char* kModel = "gemini-3.1-pro-preview";

ErrorKind encode_error(const std::string& req) {
    try {
        (void)provider().encode(req);
    } catch (const Error& e) {
        return e.kind();
    }
    ADD_FAILURE() << "encoded without an error";
    return ErrorKind::kInternal;
}

TEST(GeminiEncode, PathAndHeadNameTheModelAndTheStreamingMethod) {
    const std::string turns = R"([{"role":"user","blocks":[{"type":"text","text":"hi"}]}])";
    const auto plain = encode(request(turns));
    EXPECT_STREQ(plain["path"].GetString(),
                 "/v1beta/models/gemini-3.1-pro-preview:generateContent");
    EXPECT_STREQ(plain["method"].GetString(), "POST");
    EXPECT_STREQ(plain["headers"]["content-type"].GetString(), "application/json");
    const auto streamed = encode(request(turns, "[]", R"(,"stream":true)"));
    EXPECT_STREQ(streamed["path"].GetString(),
                 "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse");
    // The body never carries credentials (gemini.8: the core adds x-goog-api-key).
    EXPECT_EQ(provider().encode(request(turns)).find("goog"), std::string::npos);
}

TEST(GeminiEncode, SystemGoesToSystemInstructionAndAdjacentTurnsMerge) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"text","text":"a"}]},{"role":"user","blocks":[{"type":"text","text":"b"}]},)"
        R"({"role":"assistant","blocks":[{"type":"text","text":"c"},{"type":"text","text":"  "}]},)"
        R"({"role":"user","blocks":[{"type":"json","json":{"k":1}},{"type":"skill","name":"s","content":"do it"}]}])",
        R"([{"type":"text","text":"Be brief."},{"type":"text","text":"  "},{"type":"text","text":"Be kind."}])"));
    const auto& body = d["body"];
    EXPECT_EQ(compact(body["systemInstruction"]),
              R"({"parts":[{"text":"Be brief."},{"text":"Be kind."}]})");
    EXPECT_EQ(
        compact(body["contents"]),
        R"([{"role":"user","parts":[{"text":"a"},{"text":"b"}]},{"role":"model","parts":[{"text":"c"}]},)"
        R"({"role":"user","parts":[{"text":"{\"k\":1}"},{"text":"do it"}]}])");
    EXPECT_EQ(body["generationConfig"]["maxOutputTokens"].GetInt(), 2048);
    EXPECT_FALSE(body.HasMember("tools"));
}

TEST(GeminiEncode, EveryControlCharacterIsEscapedWhereverItSits) {
    // gemini.13: control characters among escapes and multi-byte text, at every alignment of the
    // string (where a vector scan takes over from a byte loop), are written as valid JSON and
    // read back byte for byte.
    std::string controls;
    for (char c = 1; c < 0x20; ++c) controls += std::string("[") + c + "]";
    for (std::size_t shift = 0; shift < 32; ++shift) {
        const std::string text = std::string(shift, 'x') +
                                 "quotes \" and \\; controls \x01\x07\x1b[0m\x1f\x7f; emoji "
                                 "\xf0\x9f\x98\x80 and more text after it: " +
                                 controls + " end";
        rapidjson::Document turns(rapidjson::kArrayType);
        auto& a = turns.GetAllocator();
        rapidjson::Value block(rapidjson::kObjectType);
        block.AddMember("type", "text", a);
        block.AddMember(
            "text",
            rapidjson::Value(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), a), a);
        rapidjson::Value blocks(rapidjson::kArrayType);
        blocks.PushBack(block, a);
        rapidjson::Value turn(rapidjson::kObjectType);
        turn.AddMember("role", "user", a);
        turn.AddMember("blocks", blocks, a);
        turns.PushBack(turn, a);
        const auto parts = provider().encode_parts(request(compact(turns)));
        std::size_t raw = 0;
        for (const char c : parts.body) raw += static_cast<unsigned char>(c) < 0x20 ? 1 : 0;
        ASSERT_EQ(raw, 0U) << "raw control bytes in the body at shift " << shift;
        const auto body = parse(parts.body);
        const auto& got = body["contents"][0]["parts"][0]["text"];
        EXPECT_EQ(std::string(got.GetString(), got.GetStringLength()), text) << shift;
    }
}

TEST(GeminiEncode, ImagesAndFilesAreInlineDataOrFileData) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="},)"
        R"({"type":"file","media_type":"application/pdf","name":"a.pdf","url":"https://example.com/a.pdf"}]}])"));
    EXPECT_EQ(
        compact(d["body"]["contents"][0]["parts"]),
        R"([{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},)"
        R"({"fileData":{"mimeType":"application/pdf","fileUri":"https://example.com/a.pdf"}}])");
}

TEST(GeminiEncode, ToolRoundTripsAsFunctionCallAndNamedFunctionResponse) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"text","text":"weather?"}]},)"
        R"({"role":"assistant","blocks":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},)"
        R"({"type":"tool_use","id":"toolu_2","name":"get_time","input":{}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny"},)"
        R"({"type":"image","media_type":"image/png","data":"AAAA"}]},)"
        R"({"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"no clock"}]}]}])",
        "[]", "",
        R"([{"name":"get_weather","description":"Weather by city.","schema":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}},)"
        R"({"name":"get_time","description":"","schema":{"type":"object"}}])"));
    const auto& body = d["body"];
    EXPECT_EQ(
        compact(body["tools"]),
        R"([{"functionDeclarations":[{"name":"get_weather","description":"Weather by city.","parametersJsonSchema":)"
        R"({"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}},)"
        R"({"name":"get_time","parametersJsonSchema":{"type":"object"}}]}])");
    // gemini.6: a call Gemini did not write gets the documented stand-in on the first call only.
    EXPECT_EQ(
        compact(body["contents"][1]),
        R"({"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},)"
        R"("thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"get_time","args":{}}}]})");
    EXPECT_EQ(
        compact(body["contents"][2]),
        R"({"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}},)"
        R"({"inlineData":{"mimeType":"image/png","data":"AAAA"}},)"
        R"({"functionResponse":{"name":"get_time","response":{"error":"no clock"}}}]})");
}

TEST(GeminiEncode, ThoughtSignaturesGoBackOnThePartTheyCameOn) {
    // What decode made of a signed call, a signed text, a signed empty final part and a signed
    // thought (gemini.6), sent back: each signature on its own part, the thought kept with it.
    const std::string sig =
        R"({"type":"provider_block","wire_family":"gemini-generate","block":{"type":"thought_signature","thoughtSignature":")";
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"text","text":"go"}]},{"role":"assistant","blocks":[)" +
        sig +
        R"(T1","on":"thought"}},{"type":"thinking","thinking":"plan"},{"type":"thinking","thinking":"unsigned summary"},)" +
        sig +
        R"(C1","on":"part"}},{"type":"tool_use","id":"gc_r_0","name":"f","input":{"a":1}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"gc_r_0","content":[{"type":"text","text":"ok"}]}]},)"
        R"({"role":"assistant","blocks":[)" +
        sig + R"(X1","on":"part"}},{"type":"text","text":"done"},)" + sig +
        R"(E1","on":"empty_text"}}]},{"role":"user","blocks":[{"type":"text","text":"thanks"}]}])"));
    const auto& contents = d["body"]["contents"];
    EXPECT_EQ(compact(contents[1]),
              R"({"role":"model","parts":[{"text":"plan","thought":true,"thoughtSignature":"T1"},)"
              R"({"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"C1"}]})");
    EXPECT_EQ(
        compact(contents[3]),
        R"({"role":"model","parts":[{"text":"done","thoughtSignature":"X1"},{"text":"","thoughtSignature":"E1"}]})");
}

TEST(GeminiEncode, ProviderBlocksOfAnotherFamilyAndOtherReasoningAreLeftOut) {
    const auto d = encode(request(
        R"([{"role":"user","blocks":[{"type":"text","text":"q"}]},{"role":"assistant","blocks":[)"
        R"({"type":"thinking","thinking":"claude thought","signature":"EqQBCkgI"},{"type":"redacted_thinking","data":"xx"},)"
        R"({"type":"provider_block","wire_family":"anthropic-messages","block":{"type":"server_tool_use","id":"s"}},)"
        R"({"type":"text","text":"a"}]}])"));
    EXPECT_EQ(compact(d["body"]["contents"][1]), R"({"role":"model","parts":[{"text":"a"}]})");
}

TEST(GeminiEncode, ThinkingConfigComesFromTheRecordsMapping) {
    const std::string turns = R"([{"role":"user","blocks":[{"type":"text","text":"hi"}]}])";
    // A thinking level (Gemini 3): the effort, in the wire's upper case, with thought summaries.
    auto d = encode(request(turns, "[]", "", "[]", kModel,
                            R"({"active":true,"budget_tokens":8192,"effort":"high"})"));
    EXPECT_EQ(compact(d["body"]["generationConfig"]["thinkingConfig"]),
              R"({"thinkingLevel":"HIGH","includeThoughts":true})");
    // A budget (the `enabled` form).
    d = encode(request(turns, "[]", "", "[]", kModel,
                       R"({"active":true,"budget_tokens":4096,"form":"enabled"})"));
    EXPECT_EQ(compact(d["body"]["generationConfig"]["thinkingConfig"]),
              R"({"thinkingBudget":4096,"includeThoughts":true})");
    // Off.
    d = encode(request(turns, "[]", "", "[]", kModel,
                       R"({"active":false,"budget_tokens":0,"form":"disabled"})"));
    EXPECT_EQ(compact(d["body"]["generationConfig"]["thinkingConfig"]), R"({"thinkingBudget":0})");
    // Nothing mapped: no thinkingConfig (the model's default).
    d = encode(request(turns));
    EXPECT_FALSE(d["body"]["generationConfig"].HasMember("thinkingConfig"));
    // options.include_thoughts false: no summaries asked for.
    const std::string off = request(turns, "[]", "", "[]", kModel,
                                    R"({"active":true,"budget_tokens":1,"effort":"low"})");
    std::string with_option = off;
    with_option.replace(with_option.find(R"("options":{})"), 12,
                        R"("options":{"include_thoughts":false})");
    d = encode(with_option);
    EXPECT_EQ(compact(d["body"]["generationConfig"]["thinkingConfig"]),
              R"({"thinkingLevel":"LOW","includeThoughts":false})");
}

TEST(GeminiEncode, RefusesWhatTheWireCannotCarry) {
    EXPECT_EQ(encode_error("not json"), ErrorKind::kInvalidArgument);
    EXPECT_EQ(encode_error(R"({"schema_version":1})"), ErrorKind::kInvalidArgument);
    // A turn with nothing Gemini takes.
    EXPECT_EQ(encode_error(request(R"([{"role":"user","blocks":[{"type":"text","text":"   "}]}])")),
              ErrorKind::kInvalidArgument);
    // A result whose call is unknown: Gemini names the function it answers.
    EXPECT_EQ(
        encode_error(request(
            R"([{"role":"user","blocks":[{"type":"tool_result","tool_use_id":"nope","content":[]}]}])")),
        ErrorKind::kInvalidArgument);
    // A model name that would leave its path segment.
    EXPECT_EQ(encode_error(request(R"([{"role":"user","blocks":[{"type":"text","text":"x"}]}])",
                                   "[]", "", "[]", "../v1/files")),
              ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace nucleo::gemini_test
