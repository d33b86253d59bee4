// decode through the ABI: Converse answer shapes (fixtures/decode, written after the API
// reference's ConverseResponse and error shapes), each error kind, malformed and cut-off bodies,
// and ConverseStream event streams built here with zlib's CRC32 (an implementation independent
// of the plugin's).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

namespace nucleo::bedrock_test {
namespace {

using rapidjson::Value;

class DecodeFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeFixture, DecodesAsExpected) {
    const rapidjson::Document f = parse(read_file(fixture_dir("decode") / (GetParam() + ".json")));
    ASSERT_TRUE(f.IsObject());
    const int status = f["status"].GetInt();
    const std::string headers = compact(f["headers"]);
    const std::string body =
        f.HasMember("body_text") ? f["body_text"].GetString() : compact(f["body"]);
    if (f.HasMember("expected")) {
        const rapidjson::Document actual = parse(provider().decode(status, headers, body));
        EXPECT_TRUE(actual == f["expected"]) << "actual:\n"
                                             << pretty(actual) << "expected:\n"
                                             << pretty(f["expected"]);
        return;
    }
    const Caught c = catch_error([&] { (void)provider().decode(status, headers, body); });
    ASSERT_TRUE(c.thrown) << "decoded without an error";
    EXPECT_STREQ(to_string(c.kind), f["error"]["kind"].GetString()) << c.message;
    EXPECT_NE(c.message.find(f["error"]["says"].GetString()), std::string::npos) << c.message;
    // err->http_status is set: the loader prints it.
    EXPECT_NE(c.message.find("(HTTP " + std::to_string(status) + ")"), std::string::npos)
        << c.message;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeFixture,
                         ::testing::ValuesIn(fixture_names("decode", ".json")),
                         [](const auto& info) { return info.param; });

TEST(BedrockDecode, QuotesAtMost200BytesOfALongBadBody) {
    const std::string body = "x" + std::string(1000, 'y');
    const Caught c = catch_error([&] { (void)provider().decode(200, "{}", body); });
    EXPECT_EQ(c.kind, ErrorKind::kProtocol);
    EXPECT_NE(c.message.find("\"x" + std::string(199, 'y') + "\"..."), std::string::npos)
        << c.message;
    EXPECT_EQ(c.message.find(std::string(200, 'y')), std::string::npos);
}

TEST(BedrockDecode, EmptyBodyIsAProtocolError) {
    const Caught c = catch_error([&] { (void)provider().decode(200, "{}", ""); });
    EXPECT_EQ(c.kind, ErrorKind::kProtocol);
    EXPECT_NE(c.message.find("the answer began: \"\""), std::string::npos) << c.message;
}

// ---- ConverseStream (application/vnd.amazon.eventstream) -----------------------------------

void put32(std::string& s, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        s.push_back(static_cast<char>((v >> shift) & 0xFF));
}

std::string header(const std::string& name, const std::string& value) {
    std::string h;
    h.push_back(static_cast<char>(name.size()));
    h += name;
    h.push_back(7);  // string
    h.push_back(static_cast<char>((value.size() >> 8) & 0xFF));
    h.push_back(static_cast<char>(value.size() & 0xFF));
    return h + value;
}

std::uint32_t crc(const std::string& s) {
    return static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::string frame(const std::string& event, const std::string& payload,
                  const std::string& message_type = "event") {
    std::string headers = header(":event-type", event) +
                          header(":content-type", "application/json") +
                          header(":message-type", message_type);
    if (message_type == "exception") {
        headers = header(":exception-type", event) + header(":content-type", "application/json") +
                  header(":message-type", message_type);
    }
    std::string out;
    put32(out, static_cast<std::uint32_t>(16 + headers.size() + payload.size()));
    put32(out, static_cast<std::uint32_t>(headers.size()));
    put32(out, crc(out));
    out += headers + payload;
    put32(out, crc(out));
    return out;
}

const char* kStreamHeaders = R"({"content-type":"application/vnd.amazon.eventstream"})";

std::string tool_call_stream() {
    return frame("messageStart", R"({"role":"assistant"})") +
           frame("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Let me "}})") +
           frame("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"check."}})") +
           frame("contentBlockStop", R"({"contentBlockIndex":0})") +
           frame(
               "contentBlockStart",
               R"({"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"lookup"}}})") +
           frame("contentBlockDelta",
                 R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"word\":"}}})") +
           frame("contentBlockDelta",
                 R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"merge\"}"}}})") +
           frame("contentBlockStop", R"({"contentBlockIndex":1})") +
           frame("messageStop", R"({"stopReason":"tool_use"})") +
           frame(
               "metadata",
               R"({"usage":{"inputTokens":50,"outputTokens":20,"totalTokens":1094,"cacheReadInputTokens":1024,"cacheWriteInputTokens":0},"metrics":{"latencyMs":80}})");
}

TEST(BedrockDecodeStream, AssemblesTheEventsIntoOneResponse) {
    const rapidjson::Document actual =
        parse(provider().decode(200, kStreamHeaders, tool_call_stream()));
    const rapidjson::Document expected =
        parse(R"({"schema_version":1,"blocks":[{"type":"text","text":"Let me check."},)"
              R"({"type":"tool_use","id":"tooluse_1","name":"lookup","input":{"word":"merge"}}],)"
              R"("stop_reason":"tool_use","usage":{"input_tokens":50,"output_tokens":20,)"
              R"("cache_read_tokens":1024,"cache_write_tokens":0}})");
    EXPECT_TRUE(actual == expected) << pretty(actual);
}

TEST(BedrockDecodeStream, ReasoningDeltasBecomeAThinkingBlock) {
    const std::string stream =
        frame("messageStart", R"({"role":"assistant"})") +
        frame("contentBlockDelta",
              R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Think"}}})") +
        frame("contentBlockDelta",
              R"({"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"sig"}}})") +
        frame("contentBlockDelta", R"({"contentBlockIndex":1,"delta":{"text":"Answer"}})") +
        frame("messageStop", R"({"stopReason":"end_turn"})") +
        frame("metadata", R"({"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}})");
    const rapidjson::Document actual = parse(provider().decode(200, kStreamHeaders, stream));
    ASSERT_EQ(actual["blocks"].Size(), 2U);
    EXPECT_STREQ(actual["blocks"][0]["type"].GetString(), "thinking");
    EXPECT_STREQ(actual["blocks"][0]["thinking"].GetString(), "Think");
    EXPECT_STREQ(actual["blocks"][0]["signature"].GetString(), "sig");
    EXPECT_STREQ(actual["blocks"][1]["text"].GetString(), "Answer");
}

TEST(BedrockDecodeStream, ACutOffStreamIsAProtocolError) {
    const std::string whole = tool_call_stream();
    const Caught mid_frame = catch_error(
        [&] { (void)provider().decode(200, kStreamHeaders, whole.substr(0, whole.size() - 7)); });
    EXPECT_EQ(mid_frame.kind, ErrorKind::kProtocol) << mid_frame.message;
    EXPECT_NE(mid_frame.message.find("cut off or corrupt"), std::string::npos);

    const std::string no_metadata =
        frame("messageStart", R"({"role":"assistant"})") +
        frame("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hi"}})") +
        frame("messageStop", R"({"stopReason":"end_turn"})");
    const Caught c =
        catch_error([&] { (void)provider().decode(200, kStreamHeaders, no_metadata); });
    EXPECT_EQ(c.kind, ErrorKind::kProtocol);
    EXPECT_NE(c.message.find("no metadata event"), std::string::npos) << c.message;
}

TEST(BedrockDecodeStream, ACorruptCrcIsAProtocolError) {
    std::string stream = tool_call_stream();
    stream[40] = static_cast<char>(stream[40] ^ 0x01);
    const Caught c = catch_error([&] { (void)provider().decode(200, kStreamHeaders, stream); });
    EXPECT_EQ(c.kind, ErrorKind::kProtocol);
    EXPECT_NE(c.message.find("message CRC"), std::string::npos) << c.message;
}

TEST(BedrockDecodeStream, AnExceptionEventMapsLikeAnErrorAnswer) {
    const std::string stream =
        frame("messageStart", R"({"role":"assistant"})") +
        frame("throttlingException", R"({"message":"Too many tokens, please wait."})", "exception");
    const Caught c = catch_error([&] { (void)provider().decode(200, kStreamHeaders, stream); });
    EXPECT_EQ(c.kind, ErrorKind::kRateLimited);
    EXPECT_NE(c.message.find("Too many tokens, please wait."), std::string::npos) << c.message;
}

TEST(BedrockDecodeStream, ATruncatedToolCallComesBackWithoutItsHalfInput) {
    const std::string stream =
        frame("contentBlockStart",
              R"({"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"lookup"}}})") +
        frame("contentBlockDelta",
              R"({"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"word\":\"me"}}})") +
        frame("messageStop", R"({"stopReason":"max_tokens"})") +
        frame("metadata", R"({"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}})");
    const rapidjson::Document actual = parse(provider().decode(200, kStreamHeaders, stream));
    EXPECT_STREQ(actual["stop_reason"].GetString(), "max_tokens");
    EXPECT_TRUE(actual["blocks"][0]["input"].IsObject());
    EXPECT_EQ(actual["blocks"][0]["input"].MemberCount(), 0U);
}

}  // namespace
}  // namespace nucleo::bedrock_test
