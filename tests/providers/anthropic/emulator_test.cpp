// nucleo-anthropic against the real nucleo-emulator over loopback HTTP (the emulator
// enforces the providers' documented request rules, so a body it accepts has the alternation,
// tool pairing, non-blank text and breakpoint count right). Each request is the plugin's own
// encode output; each answer goes back through the plugin's decode.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "support.hpp"

namespace nucleo::anthropic_test {
namespace {

using emulator_test::EmulatorProcess;
using emulator_test::HttpResult;

struct Call {
    std::string body;  // the wire body sent
    HttpResult answer;
};

/// Encodes `provider_request`, posts it with the request's own path and headers plus a key (the
/// core's job), and returns what was sent and what came back.
Call post(const EmulatorProcess& emu, const std::string& provider_request,
          const std::vector<std::string>& extra_headers = {}) {
    const rapidjson::Document http = parse(provider().encode(provider_request));
    std::vector<std::string> headers = {"x-api-key: test-key"};
    for (const auto& h : http["headers"].GetObject()) {
        headers.push_back(std::string(h.name.GetString()) + ": " + h.value.GetString());
    }
    headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
    Call call;
    call.body = compact(http["body"]);
    call.answer = emu.post(http["path"].GetString(), call.body, headers);
    return call;
}

std::string headers_json(const HttpResult& r) {
    std::string out = "{";
    for (const auto& [name, value] : r.headers) {
        if (out.size() > 1) out += ",";
        rapidjson::Value n(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
        rapidjson::Value v(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
        out += compact(n) + ":" + compact(v);
    }
    return out + "}";
}

rapidjson::Document decoded(const Call& call) {
    return parse(provider().decode(static_cast<int32_t>(call.answer.status),
                                   headers_json(call.answer), call.answer.body));
}

/// The bodies against the published schema. Called last in a test: without
/// ../shared/tools/validate_wire.py (a user's clone) the test's other checks have run and it is
/// reported as skipped, with the reason.
void expect_valid_wire(const std::vector<std::string>& bodies) {
    if (!wire_validator_present()) {
        GTEST_SKIP() << "../shared/tools/validate_wire.py is absent: these bodies were not "
                        "validated against the published schema";
    }
    const std::string problems = emulator_test::validate_wire("anthropic", bodies);
    EXPECT_EQ(problems, "") << problems;
}

class AnthropicEmulator : public ::testing::Test {
  protected:
    EmulatorProcess emu{{"--min-cacheable", "8"}};
};

// Every golden request is accepted (200) and its answer decodes to what the emulator promises:
// a call of the first declared tool with its required arguments when tools are declared and the
// last turn is the user's text, a text answer otherwise; a signed thinking block first when
// thinking is enabled.
TEST_F(AnthropicEmulator, AcceptsEveryGoldenRequestAndItsAnswerDecodes) {
    std::vector<std::string> bodies;
    for (const char* name : {"every_block", "merged_turns", "four_breakpoints", "blank_text",
                             "thinking_stream", "minimal", "escapes"}) {
        SCOPED_TRACE(name);
        const Call call =
            post(emu, read_file(fixtures() / "encode" / (std::string(name) + ".request.json")));
        bodies.push_back(call.body);
        ASSERT_EQ(call.answer.status, 200) << call.answer.body;
        const rapidjson::Document sent = parse(call.body);
        const rapidjson::Document out = decoded(call);
        EXPECT_EQ(std::string(out["model"].GetString()), sent["model"].GetString());
        const auto& blocks = out["blocks"];
        ASSERT_FALSE(blocks.Empty());
        rapidjson::SizeType first = 0;
        if (sent.HasMember("thinking")) {
            EXPECT_STREQ(blocks[0]["type"].GetString(), "thinking");
            EXPECT_GT(blocks[0]["signature"].GetStringLength(), 0u);
            first = 1;
        }
        // The emulator calls a tool when tools are declared and the last message is the user's
        // text rather than a tool result.
        const auto& last = sent["messages"][sent["messages"].Size() - 1];
        bool carries_result = false;
        for (const auto& b : last["content"].GetArray()) {
            carries_result = carries_result || std::string(b["type"].GetString()) == "tool_result";
        }
        const bool asks_tool = sent.HasMember("tools") && !carries_result;
        if (asks_tool) {
            EXPECT_STREQ(out["stop_reason"].GetString(), "tool_use");
            const auto& call_block = blocks[blocks.Size() - 1];
            ASSERT_STREQ(call_block["type"].GetString(), "tool_use");
            EXPECT_STREQ(call_block["name"].GetString(), sent["tools"][0]["name"].GetString());
            const auto& schema = sent["tools"][0]["input_schema"];
            if (schema.HasMember("required")) {
                for (const auto& r : schema["required"].GetArray()) {
                    EXPECT_TRUE(call_block["input"].HasMember(r.GetString())) << r.GetString();
                }
            }
        } else {
            EXPECT_STREQ(out["stop_reason"].GetString(), "end_turn");
            EXPECT_STREQ(blocks[first]["type"].GetString(), "text");
        }
        EXPECT_GT(out["usage"]["input_tokens"].GetInt64() +
                      out["usage"]["cache_read_tokens"].GetInt64() +
                      out["usage"]["cache_write_tokens"].GetInt64(),
                  0);
        EXPECT_GT(out["usage"]["output_tokens"].GetInt64(), 0);
    }
    expect_valid_wire(bodies);
}

TEST_F(AnthropicEmulator, ATextAnswerQuotesTheQuestion) {
    const Call call = post(emu, read_file(fixtures() / "encode" / "minimal.request.json"));
    ASSERT_EQ(call.answer.status, 200) << call.answer.body;
    const rapidjson::Document out = decoded(call);
    EXPECT_STREQ(out["blocks"][0]["text"].GetString(), "This is the emulator's answer to: Hi");
    EXPECT_STREQ(out["stop_reason"].GetString(), "end_turn");
}

/// A provider request with a long system block (cached) and the given turns and turn anchors.
std::string growing_request(const std::string& turns, const std::string& anchors, int marks,
                            bool stream = false) {
    std::string system(2000, 'x');
    for (std::size_t i = 0; i < system.size(); i += 10) system[i] = ' ';
    return R"({"schema_version":1,"model":{"id":"c","wire_model":"claude-emu"},"max_tokens":256,)"
           R"("stream":)" +
           std::string(stream ? "true" : "false") +
           R"(,"cache_ttl":"5m","prepared":{"system_blocks":[{"type":"text","text":")" + system +
           R"("}],"cache_system":true,"native_tools":true,"cache_plan":{"breakpoints":)" +
           std::to_string(marks) + R"(,"system_block":0,"turn_anchors":[)" + anchors +
           R"(]},"tool_definitions":[],"turns":[)" + turns + "]}}";
}

const std::string kTurn1 =
    R"({"role":"user","message_id":"m1","cache":true,"blocks":[{"type":"text","text":"First question about the long document above, with some words."}]})";
const std::string kTurn2 =
    R"({"role":"assistant","message_id":"m2","blocks":[{"type":"text","text":"First answer."}]},)"
    R"({"role":"user","message_id":"m3","cache":true,"blocks":[{"type":"text","text":"Second question."}]})";

// caching.7, caching.11: the second call of a growing conversation reads, from
// the cache, exactly the prefix the first call wrote — the rendered prefix is byte-stable.
TEST_F(AnthropicEmulator, TheSecondCallOfAGrowingConversationReadsWhatTheFirstWrote) {
    const Call one = post(emu, growing_request(kTurn1, R"({"turn":0,"block":0})", 2));
    ASSERT_EQ(one.answer.status, 200) << one.answer.body;
    const rapidjson::Document u1 = decoded(one);
    EXPECT_EQ(u1["usage"]["cache_read_tokens"].GetInt64(), 0);
    const std::int64_t written = u1["usage"]["cache_write_tokens"].GetInt64();
    EXPECT_GT(written, 500);  // the 2,000-byte system block and the first question

    const Call two = post(emu, growing_request(kTurn1 + "," + kTurn2,
                                               R"({"turn":0,"block":0},{"turn":2,"block":0})", 3));
    ASSERT_EQ(two.answer.status, 200) << two.answer.body;
    const rapidjson::Document u2 = decoded(two);
    EXPECT_EQ(u2["usage"]["cache_read_tokens"].GetInt64(), written);
    EXPECT_GT(u2["usage"]["cache_write_tokens"].GetInt64(), 0);
    expect_valid_wire({one.body, two.body});
}

// caching.106-108: a plan with the request-level marker and a 1-hour head renders a top-level
// cache_control and a "ttl":"1h" system mark; the emulator writes the whole request, the head at
// 1 hour, and decode reports that part apart as cache_write_1h_tokens; the next, longer call
// reads the whole first request back through the request-level marker.
TEST_F(AnthropicEmulator, TheRequestLevelMarkerAndTheOneHourHeadRoundTrip) {
    auto request = [](const std::string& turns) {
        std::string r = growing_request(turns, "", 2);
        const std::string plan_end = R"("turn_anchors":[]})";
        const auto at = r.find(plan_end);
        r.replace(at, plan_end.size(),
                  R"("turn_anchors":[],"automatic":true,"system_ttl":"1h"})");
        return r;
    };
    const Call one = post(emu, request(kTurn1));
    ASSERT_EQ(one.answer.status, 200) << one.answer.body;
    const rapidjson::Document sent = parse(one.body);
    ASSERT_TRUE(sent.HasMember("cache_control"));
    EXPECT_STREQ(sent["cache_control"]["type"].GetString(), "ephemeral");
    EXPECT_FALSE(sent["cache_control"].HasMember("ttl"));
    EXPECT_STREQ(sent["system"][0]["cache_control"]["ttl"].GetString(), "1h");
    const rapidjson::Document u1 = decoded(one);
    const std::int64_t written = u1["usage"]["cache_write_tokens"].GetInt64();
    const std::int64_t hour = u1["usage"]["cache_write_1h_tokens"].GetInt64();
    EXPECT_GT(hour, 400);       // the 2,000-byte system block
    EXPECT_LT(hour, written);   // the question is written at 5 minutes
    EXPECT_EQ(u1["usage"]["input_tokens"].GetInt64(), 0);

    const Call two = post(emu, request(kTurn1 + "," + kTurn2));
    ASSERT_EQ(two.answer.status, 200) << two.answer.body;
    const rapidjson::Document u2 = decoded(two);
    EXPECT_EQ(u2["usage"]["cache_read_tokens"].GetInt64(), written);
    EXPECT_FALSE(u2["usage"].HasMember("cache_write_1h_tokens"));  // the head was read
    expect_valid_wire({one.body, two.body});
}

// A streamed answer decodes to the same normalized response as the plain one.
TEST_F(AnthropicEmulator, AStreamedAnswerDecodesLikeThePlainOne) {
    const std::string tools_turn =
        R"({"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Weather in Oslo"}]})";
    auto request = [&](bool stream) {
        return R"({"schema_version":1,"model":{"id":"c","wire_model":"claude-emu"},"max_tokens":256,"stream":)" +
               std::string(stream ? "true" : "false") +
               R"(,"thinking":{"active":false},"prepared":{"tool_definitions":[{"name":"weather","description":"d","schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"turns":[)" +
               tools_turn + "]}}";
    };
    const Call plain = post(emu, request(false));
    const Call streamed = post(emu, request(true));
    ASSERT_EQ(plain.answer.status, 200);
    ASSERT_EQ(streamed.answer.status, 200);
    EXPECT_NE(streamed.answer.body.find("event: message_start"), std::string::npos);
    const rapidjson::Document a = decoded(plain);
    const rapidjson::Document b = decoded(streamed);
    EXPECT_EQ(compact(a["blocks"]), compact(b["blocks"]));
    EXPECT_STREQ(b["stop_reason"].GetString(), "tool_use");
    EXPECT_STREQ(b["blocks"][0]["input"]["city"].GetString(), "Oslo");
    EXPECT_EQ(compact(a["stop_reason"]), compact(b["stop_reason"]));
    expect_valid_wire({plain.body, streamed.body});
}

// The emulator's faults come back through decode as the mapped kinds (answers.30: 429 rate limited
// with retry-after, 529/5xx overloaded, a malformed body a protocol error, truncation max_tokens).
TEST_F(AnthropicEmulator, FaultsDecodeToTheirKinds) {
    const std::string request = read_file(fixtures() / "encode" / "minimal.request.json");
    struct Fault {
        const char* header;
        ErrorKind kind;
        const char* contains;
    };
    for (const Fault& f : {Fault{"429", ErrorKind::kRateLimited, "retry-after: 1"},
                           Fault{"529", ErrorKind::kOverloaded, "overloaded_error"},
                           Fault{"500", ErrorKind::kOverloaded, "api_error"},
                           Fault{"malformed", ErrorKind::kProtocol, "first bytes"}}) {
        SCOPED_TRACE(f.header);
        const Call call = post(emu, request, {std::string("x-emulator-fault: ") + f.header});
        ErrorKind kind = ErrorKind::kInternal;
        const std::string message = error_of([&] { (void)decoded(call); }, &kind);
        EXPECT_EQ(kind, f.kind) << message;
        EXPECT_NE(message.find(f.contains), std::string::npos) << message;
    }
    const Call cut = post(emu, request, {"x-emulator-fault: truncate"});
    ASSERT_EQ(cut.answer.status, 200);
    EXPECT_STREQ(decoded(cut)["stop_reason"].GetString(), "max_tokens");
}

// The emulator's own refusal text reaches the caller through decode (a body the plugin would
// never produce: five markers written by hand).
TEST_F(AnthropicEmulator, TheProvidersRefusalTextIsCarried) {
    std::string content;
    for (int i = 0; i < 5; ++i) {
        if (i > 0) content += ",";
        content += R"({"type":"text","text":"b)" + std::to_string(i) +
                   R"(","cache_control":{"type":"ephemeral"}})";
    }
    const std::string body =
        R"({"model":"claude-emu","max_tokens":10,"messages":[{"role":"user","content":[)" +
        content + "]}]}";
    HttpResult r =
        emu.post("/v1/messages", body, {"x-api-key: k", "anthropic-version: 2023-06-01"});
    ASSERT_EQ(r.status, 400);
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message = error_of(
        [&] { (void)provider().decode(static_cast<int32_t>(r.status), headers_json(r), r.body); },
        &kind);
    EXPECT_EQ(kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(message.find("A maximum of 4 blocks with cache_control may be provided. Found 5."),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace nucleo::anthropic_test
