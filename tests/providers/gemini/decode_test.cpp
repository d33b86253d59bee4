// nucleo-gemini decode and decode_event through the loader (docs/spec/gemini.md
// gemini.9-gemini.13): usage split, finish reasons, signatures kept as provider blocks, streamed
// answers merged, error bodies mapped, and hostile bodies (cut at every byte, deep, invalid UTF-8,
// wrong types, negative counts) giving a normalized answer or a protocol error, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "gemini_support.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::gemini_test {
namespace {

constexpr const char* kJson = R"({"content-type":"application/json"})";
constexpr const char* kSse = R"({"content-type":"text/event-stream"})";

std::string answer(
    const std::string& parts, const std::string& finish = "STOP",
    const std::string& usage =
        R"({"promptTokenCount":100,"cachedContentTokenCount":60,"candidatesTokenCount":7,"thoughtsTokenCount":20})") {
    return R"({"candidates":[{"content":{"role":"model","parts":)" + parts +
           R"(},"finishReason":")" + finish + R"("}],"usageMetadata":)" + usage +
           R"(,"modelVersion":"gemini-3.1-pro-preview","responseId":"r1"})";
}

rapidjson::Document decode(const std::string& body, const char* headers = kJson) {
    return parse(provider().decode(200, headers, body));
}

ErrorKind decode_error(int status, const std::string& body, const char* headers = kJson) {
    try {
        (void)provider().decode(status, headers, body);
    } catch (const Error& e) {
        return e.kind();
    }
    ADD_FAILURE() << "decoded without an error";
    return ErrorKind::kInternal;
}

TEST(GeminiDecode, UsageSplitsCachedTokensOutAndCountsThoughtsAsOutput) {
    const auto d = decode(answer(R"([{"text":"hi"}])"));
    EXPECT_EQ(
        compact(d["usage"]),
        R"({"input_tokens":40,"output_tokens":27,"cache_read_tokens":60,"cache_write_tokens":0})");
    EXPECT_STREQ(d["model"].GetString(), "gemini-3.1-pro-preview");
    EXPECT_STREQ(d["response_id"].GetString(), "r1");
    EXPECT_STREQ(d["stop_reason"].GetString(), "end_turn");
}

TEST(GeminiDecode, FinishReasonsMapToTheNormalizedStopReasons) {
    const std::pair<const char*, const char*> cases[] = {{"STOP", "end_turn"},
                                                         {"MAX_TOKENS", "max_tokens"},
                                                         {"SAFETY", "content_filter"},
                                                         {"RECITATION", "content_filter"},
                                                         {"BLOCKLIST", "content_filter"},
                                                         {"PROHIBITED_CONTENT", "content_filter"},
                                                         {"MALFORMED_FUNCTION_CALL", "other"},
                                                         {"OTHER", "other"},
                                                         {"SOMETHING_NEW", "other"}};
    for (const auto& [finish, stop] : cases)
        EXPECT_STREQ(decode(answer(R"([{"text":"x"}])", finish))["stop_reason"].GetString(), stop)
            << finish;
    // A call answered with STOP is a tool use.
    EXPECT_STREQ(
        decode(answer(R"([{"functionCall":{"name":"f","args":{}}}])"))["stop_reason"].GetString(),
        "tool_use");
}

TEST(GeminiDecode, SignaturesAreProviderBlocksBeforeTheirPart) {
    const auto d = decode(answer(
        R"([{"text":"thinking it over","thought":true},{"functionCall":{"name":"f","args":{"a":[1,2]}},"thoughtSignature":"SIG"},)"
        R"({"functionCall":{"name":"g","id":"given-id","args":{}}}])"));
    EXPECT_EQ(
        compact(d["blocks"]),
        R"([{"type":"thinking","thinking":"thinking it over"},)"
        R"({"type":"provider_block","wire_family":"gemini-generate","block":{"type":"thought_signature","thoughtSignature":"SIG","on":"part"}},)"
        R"({"type":"tool_use","id":"gc_r1_0","name":"f","input":{"a":[1,2]}},)"
        R"({"type":"tool_use","id":"given-id","name":"g","input":{}}])");
}

TEST(GeminiDecode, AStreamedAnswerIsMergedIntoOneAnswer) {
    const std::string body =
        "data: "
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hel\"}]}}],"
        "\"responseId\":\"s\"}\r\n\r\n"
        "data: "
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"lo\"}]}}],"
        "\"responseId\":\"s\"}\r\n\r\n"
        "data: "
        "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\","
        "\"thoughtSignature\":\"Z\"}]},"
        "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":5,"
        "\"candidatesTokenCount\":2}}\r\n\r\n";
    const auto d = decode(body, kSse);
    EXPECT_EQ(
        compact(d["blocks"]),
        R"([{"type":"provider_block","wire_family":"gemini-generate","block":{"type":"thought_signature","thoughtSignature":"Z","on":"part"}},)"
        R"({"type":"text","text":"Hello"}])");
    EXPECT_EQ(d["usage"]["output_tokens"].GetInt(), 2);
    // Cut anywhere before its end: a protocol error or an answer, never a crash; cut before the
    // finishReason's event closes, always an error.
    for (std::size_t k = 0; k < body.size(); ++k) {
        try {
            (void)provider().decode(200, kSse, body.substr(0, k));
            EXPECT_GE(k, body.size() - 4) << "answered a stream cut at " << k;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kProtocol) << k;
        }
    }
}

TEST(GeminiDecode, ErrorBodiesMapByStatusWithTheProvidersText) {
    const std::string body =
        R"({"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED"}})";
    try {
        (void)provider().decode(429, kJson, body);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kRateLimited);
        EXPECT_NE(
            std::string(e.what()).find("RESOURCE_EXHAUSTED: You exceeded your current quota."),
            std::string::npos)
            << e.what();
    }
    EXPECT_EQ(
        decode_error(400, R"({"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}})"),
        ErrorKind::kInvalidArgument);
    EXPECT_EQ(
        decode_error(403, R"({"error":{"code":403,"message":"no","status":"PERMISSION_DENIED"}})"),
        ErrorKind::kConfig);
    EXPECT_EQ(decode_error(404, "not json"), ErrorKind::kNotFound);
    EXPECT_EQ(decode_error(
                  503, R"({"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}})"),
              ErrorKind::kOverloaded);
    // An error inside a 200 stream keeps its own code.
    EXPECT_EQ(decode_error(200,
                           "data: "
                           "{\"error\":{\"code\":429,\"message\":\"quota\",\"status\":\"RESOURCE_"
                           "EXHAUSTED\"}}\n\n",
                           kSse),
              ErrorKind::kRateLimited);
}

TEST(GeminiDecode, HostileBodiesGiveAnAnswerOrAProtocolError) {
    const std::string whole = answer(
        R"([{"text":"ok","thoughtSignature":"S"},{"functionCall":{"name":"f","args":{"x":1}}}])");
    for (std::size_t k = 0; k < whole.size(); ++k)
        EXPECT_EQ(decode_error(200, whole.substr(0, k)), ErrorKind::kProtocol) << "cut at " << k;
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
    EXPECT_EQ(decode_error(200, deep), ErrorKind::kProtocol);
    EXPECT_EQ(decode_error(200, std::string(100000, '[')), ErrorKind::kProtocol);
    EXPECT_EQ(decode_error(200, answer("[{\"text\":\"\xff\xfe\"}]")), ErrorKind::kProtocol);
    EXPECT_EQ(decode_error(200, R"({"kit":"no candidates"})"), ErrorKind::kProtocol);
    // Wrong types and negative counts read as nothing and 0.
    const auto d = decode(
        R"({"candidates":[{"content":{"parts":[{"text":5},{"functionCall":"x"},7]},"finishReason":"STOP"}],)"
        R"("usageMetadata":{"promptTokenCount":-5,"candidatesTokenCount":"3","thoughtsTokenCount":-1}})");
    EXPECT_EQ(compact(d["blocks"]), "[]");
    EXPECT_EQ(
        compact(d["usage"]),
        R"({"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0})");
}

TEST(GeminiDecodeEvent, ChunksGiveTextThinkingCallAndUsageDeltas) {
    const std::string out = provider().decode_event(
        "",
        R"({"candidates":[{"content":{"parts":[{"text":"hm","thought":true},{"text":"Hi"},{"functionCall":{"name":"f","args":{"q":1}}}]}}],)"
        R"("usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"candidatesTokenCount":2}})");
    EXPECT_EQ(
        out,
        R"({"schema_version":1,"deltas":[{"type":"thinking","index":0,"thinking":"hm"},{"type":"text","index":1,"text":"Hi"},)"
        R"({"type":"tool_use","index":2,"id":"","name":"f"},{"type":"tool_input","index":2,"partial_json":"{\"q\":1}"},)"
        R"({"type":"usage","usage":{"input_tokens":6,"output_tokens":2,"cache_read_tokens":4,"cache_write_tokens":0}}]})");
    EXPECT_EQ(provider().decode_event("", "{\"candidates\":"), "");
    EXPECT_EQ(provider().decode_event("", std::string(100000, '[')), "");
    EXPECT_EQ(provider().decode_event("", R"({"error":{"code":500}})"), "");
}

}  // namespace
}  // namespace nucleo::gemini_test
