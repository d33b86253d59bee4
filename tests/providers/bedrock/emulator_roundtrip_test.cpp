// Real HTTP: each request the plugin encodes is sent by the core's HttpTransport (SigV4 signed
// through libcurl) to nucleo-emulator's /model/{id}/converse, which enforces Converse's request
// rules (alternation, blank text, toolUse/toolResult pairing, the cachePoint limit), and the
// emulator's answer is decoded by the plugin. Every body sent is also checked against the
// published schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "nucleo/transport.hpp"
#include "support.hpp"

namespace nucleo::bedrock_test {
namespace {

using emulator_test::EmulatorProcess;
using rapidjson::Value;

struct Answer {
    long status = 0;
    std::string headers_json;
    std::string body;
};

class BedrockEmulator : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        // A small minimum so the short fixtures are cacheable.
        emulator_ = new EmulatorProcess({"--min-cacheable", "8"});
    }
    static void TearDownTestSuite() {
        delete emulator_;
        emulator_ = nullptr;
    }

    static HttpTransport& transport() {
        static HttpTransport t = [] {
            TransportOptions o;
            o.retry.max_attempts = 1;  // faults must reach decode, not the retry loop
            o.sigv4 = AwsSigV4{};
            o.sigv4->region = "us-east-1";
            o.sigv4->access_key_id = "AKIDEXAMPLE";
            o.sigv4->secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
            return HttpTransport(o);
        }();
        return t;
    }

    /// Sends an encoded HTTP request document (optionally with its body replaced).
    Answer send(const rapidjson::Document& encoded, const std::vector<std::string>& extra = {},
                const std::string& body_override = "") {
        HttpRequest req;
        req.method = encoded["method"].GetString();
        req.url = emulator_->url(encoded["path"].GetString());
        for (const auto& h : encoded["headers"].GetObject()) {
            req.headers.emplace_back(h.name.GetString(), h.value.GetString());
        }
        for (const std::string& h : extra) {
            const auto colon = h.find(':');
            req.headers.emplace_back(h.substr(0, colon), h.substr(colon + 2));
        }
        req.body = body_override.empty() ? compact(encoded["body"]) : body_override;
        sent_.push_back(req.body);
        const HttpResponse r = transport().send(req);
        rapidjson::Document headers(rapidjson::kObjectType);
        for (const auto& [name, value] : r.headers) {
            std::string lower = name;
            std::transform(lower.begin(), lower.end(), lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            headers.AddMember(rapidjson::Value(lower.c_str(), headers.GetAllocator()),
                              rapidjson::Value(value.c_str(), headers.GetAllocator()),
                              headers.GetAllocator());
        }
        return {r.status, compact(headers), r.body};
    }

    rapidjson::Document call(const std::string& request,
                             const std::vector<std::string>& extra = {}) {
        const rapidjson::Document encoded = encode(request);
        const Answer a = send(encoded, extra);
        EXPECT_EQ(a.status, 200) << a.body;
        return parse(provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body));
    }

    Caught call_error(const std::string& request, const std::vector<std::string>& extra) {
        const rapidjson::Document encoded = encode(request);
        const Answer a = send(encoded, extra);
        return catch_error([&] {
            (void)provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body);
        });
    }

    void TearDown() override {
        // Every request body the suite produces is validated against the schema.
        if (!sent_.empty()) {
            EXPECT_EQ(validate_bodies(sent_), "");
        }
    }

    static std::string request(const std::string& name) {
        return read_file(fixture_dir("encode") / (name + ".request.json"));
    }

    static EmulatorProcess* emulator_;
    std::vector<std::string> sent_;
};

EmulatorProcess* BedrockEmulator::emulator_ = nullptr;

TEST_F(BedrockEmulator, AcceptsSystemBlocksWithACachePointAndAnswersTheQuestion) {
    const rapidjson::Document r = call(request("system_and_text"));
    ASSERT_EQ(r["blocks"].Size(), 1U);
    EXPECT_STREQ(r["blocks"][0]["text"].GetString(),
                 "This is the emulator's answer to: Where is order 42?");
    EXPECT_STREQ(r["stop_reason"].GetString(), "end_turn");
    EXPECT_GT(r["usage"]["output_tokens"].GetInt(), 0);
}

// Native toolConfig with paired toolUse/toolResult history: the emulator calls the first tool
// with arguments valid for its schema (the last turn is a user question).
TEST_F(BedrockEmulator, NativeToolsRoundTripToAToolCall) {
    const rapidjson::Document r = call(request("every_block_native"));
    EXPECT_STREQ(r["stop_reason"].GetString(), "tool_use");
    // The request asks for thinking, so the answer leads with it (wire.197), then the call.
    const Value& blocks = r["blocks"];
    ASSERT_GE(blocks.Size(), 1U);
    const Value& use = blocks[blocks.Size() - 1];
    EXPECT_STREQ(use["type"].GetString(), "tool_use");
    EXPECT_STREQ(use["name"].GetString(), "search_orders");
    EXPECT_EQ(std::string(use["id"].GetString()).rfind("tooluse_emu_", 0), 0U);
    EXPECT_STREQ(use["input"]["query"].GetString(), "Thanks");  // the question's last word
}

// tools.11: Converse's text dialect -- no toolConfig, so the emulator answers in text, and the
// request passes its alternation and blank-text rules.
TEST_F(BedrockEmulator, TextToolDialectIsAnsweredInText) {
    const rapidjson::Document r = call(request("text_tools"));
    EXPECT_STREQ(r["stop_reason"].GetString(), "end_turn");
    EXPECT_EQ(std::string(r["blocks"][0]["text"].GetString())
                  .rfind("This is the emulator's answer to: Result of call_search_orders_0_t3", 0),
              0U)
        << r["blocks"][0]["text"].GetString();
}

TEST_F(BedrockEmulator, FourCachePointsAreAccepted) {
    const rapidjson::Document r = call(request("four_breakpoints"));
    EXPECT_STREQ(r["stop_reason"].GetString(), "end_turn");
    EXPECT_GT(r["usage"]["cache_write_tokens"].GetInt(), 0);
}

// Merged same-role turns over ConverseStream: the emulator refuses non-alternating roles, and
// the answer comes back as an AWS event stream the plugin assembles.
TEST_F(BedrockEmulator, MergedTurnsStreamAndTheResultIsRead) {
    const rapidjson::Document r = call(request("merged_turns"));
    ASSERT_EQ(r["blocks"].Size(), 1U);
    EXPECT_STREQ(r["blocks"][0]["text"].GetString(),
                 "The tool lookup returned: to combine into one");
}

// The emulator's own ValidationException (not the plugin's) reaches the caller as an invalid
// argument carrying Bedrock's text: two user messages in a row, sent past the plugin.
TEST_F(BedrockEmulator, AProviderRefusalCarriesItsMessage) {
    const rapidjson::Document encoded = encode(request("system_and_text"));
    const std::string bad =
        R"({"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"user","content":[{"text":"b"}]}],)"
        R"("inferenceConfig":{"maxTokens":10}})";
    const Answer a = send(encoded, {}, bad);
    EXPECT_EQ(a.status, 400);
    const Caught c = catch_error(
        [&] { (void)provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body); });
    EXPECT_EQ(c.kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(c.message.find("ValidationException: A conversation must alternate between user "
                             "and assistant roles"),
              std::string::npos)
        << c.message;
}

TEST_F(BedrockEmulator, FaultsDecodeToTheirKinds) {
    const std::string req = request("system_and_text");
    EXPECT_EQ(call_error(req, {"x-emulator-fault: 429"}).kind, ErrorKind::kRateLimited);
    EXPECT_EQ(call_error(req, {"x-emulator-fault: 500"}).kind, ErrorKind::kOverloaded);
    EXPECT_EQ(call_error(req, {"x-emulator-fault: 529"}).kind, ErrorKind::kOverloaded);
    const Caught malformed = call_error(req, {"x-emulator-fault: malformed"});
    EXPECT_EQ(malformed.kind, ErrorKind::kProtocol);
    EXPECT_NE(malformed.message.find("the answer began: \""), std::string::npos);
    const rapidjson::Document cut = call(req, {"x-emulator-fault: truncate"});
    EXPECT_STREQ(cut["stop_reason"].GetString(), "max_tokens");
}

// caching.11: cache read tokens on the second call of a growing conversation -- the decoded
// split is the emulator's: call 1 writes the system prefix, call 2 (one exchange longer)
// reads exactly what call 1 wrote.
TEST_F(BedrockEmulator, TheSecondCallOfAGrowingConversationReadsTheCache) {
    std::string first = request("system_and_text");
    // A distinct system text so earlier tests' cache entries do not count.
    const std::string objective = "Answer customer questions about their orders.";
    first.replace(first.find(objective), objective.size(),
                  "Answer questions about orders, and be precise about dates.");
    const rapidjson::Document r1 = call(first);
    const int written = r1["usage"]["cache_write_tokens"].GetInt();
    EXPECT_GT(written, 0);
    EXPECT_EQ(r1["usage"]["cache_read_tokens"].GetInt(), 0);

    std::string second = first;
    const std::string last = R"({"type": "text", "text": "Where is order 42?"}]})";
    second.replace(second.find(last), last.size(),
                   last + R"(, {"role": "assistant", "message_id": "m2", "cache": false,)"
                          R"( "blocks": [{"type": "text", "text": "It shipped."}]},)"
                          R"( {"role": "user", "message_id": "m3", "cache": false,)"
                          R"( "blocks": [{"type": "text", "text": "When?"}]})");
    const rapidjson::Document r2 = call(second);
    EXPECT_EQ(r2["usage"]["cache_read_tokens"].GetInt(), written);
    EXPECT_EQ(r2["usage"]["cache_write_tokens"].GetInt(), 0);
    EXPECT_GT(r2["usage"]["input_tokens"].GetInt(), 0);
}

}  // namespace
}  // namespace nucleo::bedrock_test
