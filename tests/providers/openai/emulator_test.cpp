// nucleo-openai against nucleo-emulator over real HTTP: requests the plugin encodes go through the
// core's transport to the emulator, which enforces OpenAI's request rules (tool_calls answered by
// tool messages, tool messages answering a call), and its replies come back through decode. The
// emulator judges from outside, so an encoding mistake shows up as the provider's own 400.
#include <gtest/gtest.h>

#include <string>

#include "nucleo/errors.hpp"
#include "nucleo/transport.hpp"
#include "openai_support.hpp"

namespace nucleo::openai_test {
namespace {

struct Answer {
    long status = 0;
    std::string body;
    std::string headers_json;
};

class OpenAiOverEmulator : public ::testing::Test {
  protected:
    emulator_test::EmulatorProcess emulator;
    HttpTransport transport{[] {
        TransportOptions o;
        o.retry.max_attempts = 1;  // faults must reach decode, not be retried away
        return o;
    }()};

    /// Encodes through the plugin, adds what the core adds (base URL, bearer credentials) and
    /// sends. `fault` asks the emulator for one (docs/emulator.md "Faults").
    Answer send(const std::string& provider_request, const std::string& fault = "") {
        const rapidjson::Document http = parse(provider().encode(provider_request));
        HttpRequest request;
        request.method = http["method"].GetString();
        request.url =
            emulator.url(std::string("/v1") + http["path"].GetString());  // base URL ends in /v1
        for (const auto& h : http["headers"].GetObject()) {
            request.headers.emplace_back(h.name.GetString(), h.value.GetString());
        }
        request.headers.emplace_back("authorization", "Bearer test-key");
        if (!fault.empty()) request.headers.emplace_back("x-emulator-fault", fault);
        request.body = compact(http["body"]);
        const HttpResponse response = transport.send(request);
        rapidjson::Document headers(rapidjson::kObjectType);
        for (const auto& [name, value] : response.headers) {
            std::string lower = name;
            for (char& c : lower)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            headers.AddMember(rapidjson::Value(lower.c_str(), headers.GetAllocator()),
                              rapidjson::Value(value.c_str(), headers.GetAllocator()),
                              headers.GetAllocator());
        }
        return {response.status, response.body, compact(headers)};
    }

    rapidjson::Document call(const std::string& provider_request) {
        const Answer a = send(provider_request);
        EXPECT_EQ(a.status, 200) << a.body;
        return parse(provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body));
    }

    Error call_error(const std::string& provider_request, const std::string& fault = "") {
        const Answer a = send(provider_request, fault);
        try {
            const std::string out =
                provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body);
            ADD_FAILURE() << "decoded without an error: " << out;
        } catch (const Error& e) {
            return e;
        }
        return Error(ErrorKind::kInternal, "no error");
    }
};

TEST_F(OpenAiOverEmulator, EveryGoldenRequestIsAccepted) {
    for (const auto& name : fixture_names("encode", ".in.json")) {
        // The emulator serves OpenAI's own path: a fixture's options.path (a compatible server's
        // route) is left out here and pinned by its golden file instead.
        rapidjson::Document request = parse(read_file(fixtures() / "encode" / (name + ".in.json")));
        request["options"].RemoveMember("path");
        const Answer a = send(compact(request));
        EXPECT_EQ(a.status, 200) << name << ": " << a.body;
        EXPECT_NO_THROW(
            (void)provider().decode(static_cast<int32_t>(a.status), a.headers_json, a.body))
            << name;
    }
}

TEST_F(OpenAiOverEmulator, ATextAnswerDecodes) {
    const auto d = call(read_file(fixtures() / "encode" / "system_and_text.in.json"));
    ASSERT_EQ(d["blocks"].Size(), 1u);
    EXPECT_STREQ(d["blocks"][0]["text"].GetString(),
                 "This is the emulator's answer to: Where is order 42?");
    EXPECT_STREQ(d["stop_reason"].GetString(), "end_turn");
    EXPECT_STREQ(d["model"].GetString(), "gpt-4.1-2025-04-14");
    EXPECT_GT(d["usage"]["input_tokens"].GetInt64(), 0);
    EXPECT_GT(d["usage"]["output_tokens"].GetInt64(), 0);
}

TEST_F(OpenAiOverEmulator, AToolLoopRoundTrips) {
    // Round 1: the emulator calls the declared tool; its string argument is the question's last
    // word (docs/emulator.md "Replies").
    const auto first = call(tool_question_request());
    EXPECT_STREQ(first["stop_reason"].GetString(), "tool_use");
    ASSERT_EQ(first["blocks"].Size(), 1u);
    const auto& use = first["blocks"][0];
    EXPECT_STREQ(use["type"].GetString(), "tool_use");
    EXPECT_STREQ(use["name"].GetString(), "search_orders");
    EXPECT_STREQ(use["input"]["query"].GetString(), "42");
    // Round 2: the decoded call and its result go back; the emulator accepts the pairing only if
    // the tool message answers the call id right after the assistant message.
    const auto second = call(
        tool_result_request(use["id"].GetString(), compact(use["input"]), "Order 42 shipped."));
    EXPECT_STREQ(second["stop_reason"].GetString(), "end_turn");
    EXPECT_STREQ(second["blocks"][0]["text"].GetString(),
                 "The tool search_orders returned: Order 42 shipped.");
    // An is_error result reaches the model as an error.
    const auto failed = call(tool_result_request(use["id"].GetString(), compact(use["input"]),
                                                 "lookup timed out", true));
    EXPECT_NE(std::string(failed["blocks"][0]["text"].GetString()).find("Error: lookup timed out"),
              std::string::npos)
        << failed["blocks"][0]["text"].GetString();
}

TEST_F(OpenAiOverEmulator, AStreamedAnswerDecodesLikeTheWholeOne) {
    const auto whole = call(tool_question_request(false));
    const auto streamed = call(tool_question_request(true));
    EXPECT_TRUE(whole["blocks"] == streamed["blocks"]) << pretty(whole["blocks"]) << "\n"
                                                       << pretty(streamed["blocks"]);
    EXPECT_TRUE(whole["usage"] == streamed["usage"]);
    EXPECT_STREQ(streamed["stop_reason"].GetString(), "tool_use");
}

TEST_F(OpenAiOverEmulator, ATruncatedToolCallStopsAtMaxTokensWithItsRawArguments) {
    const Answer a = send(tool_question_request(), "truncate");
    ASSERT_EQ(a.status, 200) << a.body;
    const auto d = parse(provider().decode(200, a.headers_json, a.body));
    EXPECT_STREQ(d["stop_reason"].GetString(), "max_tokens");
    ASSERT_EQ(d["blocks"].Size(), 1u);
    EXPECT_TRUE(d["blocks"][0]["input"].HasMember("_raw")) << pretty(d);
}

TEST_F(OpenAiOverEmulator, FaultsDecodeToTheirKinds) {
    const std::string request = read_file(fixtures() / "encode" / "system_and_text.in.json");
    const Error limited = call_error(request, "429");
    EXPECT_EQ(limited.kind(), ErrorKind::kRateLimited) << limited.what();
    EXPECT_NE(std::string(limited.what()).find("Rate limit reached"), std::string::npos);
    EXPECT_NE(std::string(limited.what()).find("HTTP 429"), std::string::npos);
    EXPECT_EQ(call_error(request, "500").kind(), ErrorKind::kOverloaded);
    const Error overloaded = call_error(request, "529");
    EXPECT_EQ(overloaded.kind(), ErrorKind::kOverloaded);
    EXPECT_NE(std::string(overloaded.what()).find("HTTP 503"), std::string::npos);
    const Error malformed = call_error(request, "malformed");
    EXPECT_EQ(malformed.kind(), ErrorKind::kProtocol) << malformed.what();
    EXPECT_NE(std::string(malformed.what()).find("body starts: \""), std::string::npos);
}

TEST_F(OpenAiOverEmulator, AnUnansweredCallIsRefusedWithTheProvidersText) {
    const Error e = call_error(unanswered_call_request());
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("An assistant message with 'tool_calls' must be followed "
                                         "by tool messages responding to each 'tool_call_id'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("call_x"), std::string::npos);
}

TEST_F(OpenAiOverEmulator, TheSecondCallOfAGrowingConversationReadsTheCache) {
    // OpenAI caches automatically from 1,024 tokens: the prefix of call 1 is read by call 2, and
    // the decoded split keeps prompt_tokens = input_tokens + cache_read_tokens.
    const auto first = call(growing_request(0));
    EXPECT_EQ(first["usage"]["cache_read_tokens"].GetInt64(), 0);
    const auto second = call(growing_request(1));
    const auto& usage = second["usage"];
    EXPECT_GE(usage["cache_read_tokens"].GetInt64(), 1024);
    EXPECT_GT(usage["input_tokens"].GetInt64(), 0);
    EXPECT_EQ(usage["cache_write_tokens"].GetInt64(), 0);
    const auto total = usage["input_tokens"].GetInt64() + usage["cache_read_tokens"].GetInt64();
    EXPECT_GT(total, first["usage"]["input_tokens"].GetInt64());
}

/// growing_request for GPT-6 Luna, whose record takes explicit breakpoints (caching.118), with
/// the plan `sliding` makes: the system block, then the last turn and each earlier user turn.
std::string explicit_growing_request(int rounds) {
    rapidjson::Document d = parse(growing_request(rounds));
    auto& a = d.GetAllocator();
    d["model"]["wire_model"].SetString("gpt-6-luna");
    d["model"].AddMember("caching", "explicit", a);
    d.AddMember("cache_key", "conversation-7", a);
    rapidjson::Value plan(rapidjson::kObjectType);
    rapidjson::Value anchors(rapidjson::kArrayType);
    const rapidjson::SizeType turns = d["prepared"]["turns"].Size();
    for (rapidjson::SizeType t = turns >= 5 ? turns - 5 : 0; t < turns; t += 2) {  // user turns
        rapidjson::Value anchor(rapidjson::kObjectType);
        anchor.AddMember("turn", t, a);
        anchor.AddMember("block", 0, a);
        anchors.PushBack(anchor, a);
    }
    plan.AddMember("breakpoints", anchors.Size() + 1, a);
    plan.AddMember("system_block", 0, a);
    plan.AddMember("turn_anchors", anchors, a);
    d["prepared"].AddMember("cache_plan", plan, a);
    return compact(d);
}

TEST_F(OpenAiOverEmulator, GptSixCachesAtTheCoresBreakpointsAndReportsItsWrites) {
    // caching.117-119 against the emulator's explicit breakpoints (caching.120-123): the first
    // call writes the prefix at its marks and reports the write, the next reads it back at the
    // mark the first put on its last turn, and the decoded split (input + read + written) is the
    // whole prompt.
    const auto first = call(explicit_growing_request(0));
    EXPECT_EQ(first["usage"]["cache_read_tokens"].GetInt64(), 0);
    EXPECT_GE(first["usage"]["cache_write_tokens"].GetInt64(), 1024);
    const auto second = call(explicit_growing_request(1));
    const auto& usage = second["usage"];
    EXPECT_EQ(usage["cache_read_tokens"].GetInt64(),
              first["usage"]["cache_write_tokens"].GetInt64())
        << "the read is exactly the prefix written at call 1's last mark";
    EXPECT_GT(usage["cache_write_tokens"].GetInt64(), 0)
        << "the new turns are written at the new mark";
    // The whole prompt of call 2 is call 1's plus the new turns: nothing is counted twice.
    const auto all = [](const rapidjson::Value& u) {
        return u["input_tokens"].GetInt64() + u["cache_read_tokens"].GetInt64() +
               u["cache_write_tokens"].GetInt64();
    };
    EXPECT_GT(all(usage), all(first["usage"]));
    EXPECT_LT(all(usage), all(first["usage"]) + 64) << "one short exchange was added";
}

TEST_F(OpenAiOverEmulator, AModelThatCachesByItselfGetsNoBreakpointAndIsNotRefused) {
    // caching.6, caching.118: the same plan to GPT-4.1 (automatic) adds no mark or cache option,
    // which the model would refuse (caching.124); it still caches on its own.
    rapidjson::Document d = parse(explicit_growing_request(1));
    d["model"]["wire_model"].SetString("gpt-4.1-2025-04-14");
    d["model"]["caching"].SetString("automatic");
    const auto answer = call(compact(d));
    EXPECT_EQ(answer["usage"]["cache_write_tokens"].GetInt64(), 0);
}

}  // namespace
}  // namespace nucleo::openai_test
