// nucleo-openai decode, through the loader and the ABI: real response shapes (fixtures written
// after the API reference: chat.completion objects, chat.completion.chunk streams, error bodies)
// → the normalized response; every error kind; bodies that are not JSON, are cut off or lack a
// field → kProtocol naming what, with the status and the first bytes, never a crash.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "nucleo/errors.hpp"
#include "openai_support.hpp"

namespace nucleo::openai_test {
namespace {

constexpr const char* kJsonHeaders = R"({"content-type":"application/json"})";
constexpr const char* kSseHeaders = R"({"content-type":"text/event-stream; charset=utf-8"})";

std::string decode(int status, const std::string& body, const char* headers = kJsonHeaders) {
    return provider().decode(status, headers, body);
}

/// Decodes and returns the error it must raise.
Error decode_error(int status, const std::string& body, const char* headers = kJsonHeaders) {
    try {
        const std::string out = decode(status, body, headers);
        ADD_FAILURE() << "decoded without an error: " << out;
    } catch (const Error& e) {
        return e;
    }
    return Error(ErrorKind::kInternal, "no error");
}

// ---- golden: fixtures/decode/NAME.body.json | NAME.sse → NAME.out.json --------------------------

class DecodeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeGolden, DecodesToTheNormalizedResponse) {
    const auto dir = fixtures() / "decode";
    const bool sse = fs::exists(dir / (GetParam() + ".sse"));
    const std::string body = read_file(dir / (GetParam() + (sse ? ".sse" : ".body.json")));
    expect_golden(decode(200, body, sse ? kSseHeaders : kJsonHeaders),
                  dir / (GetParam() + ".out.json"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeGolden,
                         ::testing::ValuesIn(fixture_names("decode", ".out.json")),
                         [](const auto& info) { return info.param; });

TEST(OpenAiDecode, UsageSplitsCachedTokensOutOfPromptTokens) {
    // docs/provider-abi-documents.md: "a dialect whose provider reports a total that includes
    // cached tokens (OpenAI prompt_tokens) subtracts cached_tokens so every dialect reports the
    // same split". text.body.json: prompt_tokens 2006 of which 1920 cached.
    const auto d = parse(decode(200, read_file(fixtures() / "decode" / "text.body.json")));
    EXPECT_EQ(d["usage"]["input_tokens"].GetInt64(), 2006 - 1920);
    EXPECT_EQ(d["usage"]["cache_read_tokens"].GetInt64(), 1920);
    EXPECT_EQ(d["usage"]["cache_write_tokens"].GetInt64(), 0);
}

TEST(OpenAiDecode, CacheWritesAreSplitOutOfPromptTokensWholeAndStreamed) {
    // caching.117: GPT-5.6 and later report the written part in prompt_tokens_details; it is
    // neither uncached input nor read, and prompt_tokens holds all three.
    const std::string usage =
        R"("usage":{"prompt_tokens":10000,"completion_tokens":7,"total_tokens":10007,)"
        R"("prompt_tokens_details":{"cached_tokens":6000,"cache_write_tokens":3500}})";
    const std::string whole =
        R"({"id":"c","object":"chat.completion","model":"gpt-6-luna","choices":[{"index":0,)"
        R"("message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],)" +
        usage + "}";
    const std::string stream =
        R"(data: {"id":"c","object":"chat.completion.chunk","model":"gpt-6-luna","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]})"
        "\n\n"
        R"(data: {"id":"c","object":"chat.completion.chunk","model":"gpt-6-luna","choices":[],)" +
        usage + "}\n\ndata: [DONE]\n\n";
    for (const auto& [body, headers] :
         {std::pair{whole, kJsonHeaders}, std::pair{stream, kSseHeaders}}) {
        const auto d = parse(decode(200, body, headers));
        EXPECT_EQ(d["usage"]["input_tokens"].GetInt64(), 500) << body;
        EXPECT_EQ(d["usage"]["cache_read_tokens"].GetInt64(), 6000);
        EXPECT_EQ(d["usage"]["cache_write_tokens"].GetInt64(), 3500);
    }
    // A written count above what is left is cut to it: never a negative input.
    std::string over = whole;
    over.replace(over.find("3500"), 4, "9999");
    const auto d = parse(decode(200, over));
    EXPECT_EQ(d["usage"]["input_tokens"].GetInt64(), 0);
    EXPECT_EQ(d["usage"]["cache_write_tokens"].GetInt64(), 4000);
}

TEST(OpenAiDecode, ATruncatedToolCallIsRecognizable) {
    // budget.9: a tool call cut off by truncation is never handed to a tool: the core
    // sees max_tokens, and the cut arguments survive verbatim instead of a made-up input.
    const auto d =
        parse(decode(200, read_file(fixtures() / "decode" / "truncated_tool_call.body.json")));
    EXPECT_STREQ(d["stop_reason"].GetString(), "max_tokens");
    ASSERT_EQ(d["blocks"].Size(), 1u);
    EXPECT_STREQ(d["blocks"][0]["input"]["_raw"].GetString(), R"({"title":"Quarterly re)");
}

TEST(OpenAiDecode, StreamedAndWholeAnswersAgree) {
    const auto streamed =
        parse(decode(200, read_file(fixtures() / "decode" / "stream_text.sse"), kSseHeaders));
    EXPECT_STREQ(streamed["blocks"][0]["text"].GetString(), "Hello there!");
    // Without a content-type the `data:` framing is still recognised.
    const auto sniffed =
        parse(decode(200, read_file(fixtures() / "decode" / "stream_text.sse"), "{}"));
    EXPECT_TRUE(sniffed == streamed);
}

// ---- error answers, mapped by status, carrying the provider's message ---------------------------

TEST(OpenAiDecode, ErrorBodiesMapToTheirKindsWithTheProvidersMessage) {
    struct Case {
        int status;
        const char* file;
        ErrorKind kind;
        const char* says;
    };
    const std::vector<Case> cases = {
        {429, "error_429.json", ErrorKind::kRateLimited, "Rate limit reached for gpt-4.1"},
        // answers.104: code context_length_exceeded is a context overflow, whatever the status.
        {400, "error_400.json", ErrorKind::kContextOverflow,
         "maximum context length is 128000 tokens"},
        {401, "error_401.json", ErrorKind::kConfig, "Incorrect API key provided"},
        {404, "error_404.json", ErrorKind::kNotFound, "The model `gpt-9` does not exist"},
        {500, "error_500.json", ErrorKind::kOverloaded, "The server had an error"},
        {503, "error_503.json", ErrorKind::kOverloaded, "currently overloaded"},
        {529, "error_503.json", ErrorKind::kOverloaded, "currently overloaded"},
        {413, "error_400.json", ErrorKind::kContextOverflow, "maximum context length"},
        {422, "error_400.json", ErrorKind::kContextOverflow, "maximum context length"},
        {400, "error_401.json", ErrorKind::kInvalidArgument, "Incorrect API key"},
        {403, "error_401.json", ErrorKind::kConfig, "Incorrect API key"},
    };
    for (const auto& c : cases) {
        const Error e = decode_error(c.status, read_file(fixtures() / "decode" / c.file));
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), c.kind) << c.status << ": " << what;
        EXPECT_NE(what.find(c.says), std::string::npos) << what;
        EXPECT_NE(what.find("HTTP " + std::to_string(c.status)), std::string::npos) << what;
    }
    // The type and code ride along: they tell a rate limit from an exhausted quota.
    const Error limited = decode_error(429, read_file(fixtures() / "decode" / "error_429.json"));
    EXPECT_NE(std::string(limited.what()).find("code rate_limit_exceeded"), std::string::npos);
}

TEST(OpenAiDecode, AnErrorStatusWithAForeignBodyQuotesIt) {
    const Error e = decode_error(502, "<html><body>502 Bad Gateway</body></html>", "{}");
    EXPECT_EQ(e.kind(), ErrorKind::kOverloaded);
    EXPECT_NE(std::string(e.what()).find("\"<html><body>502 Bad Gateway"), std::string::npos)
        << e.what();
}

TEST(OpenAiDecode, CompatibleServersErrorShapesKeepTheirMessage) {
    // Ollama: {"error": "text"}; vLLM: top-level {"object":"error","message",...}.
    EXPECT_NE(std::string(decode_error(404, R"({"error":"model \"llama9\" not found"})").what())
                  .find("model \"llama9\" not found"),
              std::string::npos);
    const Error vllm = decode_error(
        400,
        R"({"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400})");
    EXPECT_EQ(vllm.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(vllm.what()).find("max_tokens is too large"), std::string::npos);
}

// ---- bad 2xx bodies: kProtocol naming what, the status and the first bytes --------------------

TEST(OpenAiDecode, BadBodiesAreProtocolErrorsQuotingTheFirstBytes) {
    const std::string text = read_file(fixtures() / "decode" / "text.body.json");
    const auto without = [&](const char* key) {
        rapidjson::Document d = parse(text);
        d.RemoveMember(key);
        return compact(d);
    };
    rapidjson::Document no_finish = parse(text);
    no_finish["choices"][0].RemoveMember("finish_reason");
    rapidjson::Document no_call_id =
        parse(read_file(fixtures() / "decode" / "tool_calls.body.json"));
    no_call_id["choices"][0]["message"]["tool_calls"][0].RemoveMember("id");
    rapidjson::Document negative = parse(text);
    negative["usage"]["completion_tokens"].SetInt(-5);
    rapidjson::Document as_string = parse(text);
    as_string["usage"]["prompt_tokens"].SetString("134");
    struct Case {
        const char* name;
        std::string body;
        const char* headers;
        const char* says;
    };
    const std::vector<Case> cases = {
        {"html", "<html>Service Unavailable</html>", kJsonHeaders, "is not JSON"},
        {"cut off", text.substr(0, text.size() * 2 / 3), kJsonHeaders, "is not JSON"},
        {"empty", "", kJsonHeaders, "is not JSON"},
        {"array", "[]", kJsonHeaders, "is not a JSON object"},
        {"no choices", without("choices"), kJsonHeaders, "lacks choices[0]"},
        {"no usage", without("usage"), kJsonHeaders, "lacks usage"},
        {"negative count", compact(negative), kJsonHeaders, "completion_tokens -5"},
        {"count as a string", compact(as_string), kJsonHeaders, "lacks usage.prompt_tokens"},
        {"no finish_reason", compact(no_finish), kJsonHeaders, "lacks choices[0].finish_reason"},
        {"call without id", compact(no_call_id), kJsonHeaders,
         "lacks choices[0].message.tool_calls[0].id"},
        {"stream cut off", read_file(fixtures() / "decode" / "stream_cut_off.sse"), kSseHeaders,
         "cut off"},
        {"stream without usage", read_file(fixtures() / "decode" / "stream_no_usage.sse"),
         kSseHeaders, "lacks usage"},
        {"stream garbage", "data: {\"choices\":[{\"delta\":\n\n", kSseHeaders,
         "stream event 1 that is not a JSON object"},
    };
    for (const auto& c : cases) {
        const Error e = decode_error(200, c.body, c.headers);
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kProtocol) << c.name << ": " << what;
        EXPECT_NE(what.find(c.says), std::string::npos) << c.name << ": " << what;
        EXPECT_NE(what.find("HTTP 200"), std::string::npos) << c.name << ": " << what;
        // The quote escapes '"' and '\\', and shows control bytes as \xNN: one line.
        std::string start;
        for (const char ch : c.body.substr(0, 20)) {
            const auto u = static_cast<unsigned char>(ch);
            if (ch == '"' || ch == '\\') start += '\\';
            if (u < 0x20) {
                static constexpr char kHex[] = "0123456789abcdef";
                start += std::string("\\x") + kHex[u >> 4U] + kHex[u & 0xFU];
            } else {
                start += ch;
            }
        }
        EXPECT_NE(what.find("body starts: \"" + start), std::string::npos)
            << c.name << ": " << what;
    }
}

TEST(OpenAiDecode, AQuotedBodyIsAtMost200Bytes) {
    const std::string huge = "x" + std::string(5000, 'y');
    const std::string what = decode_error(200, huge).what();
    EXPECT_NE(what.find("\"x" + std::string(199, 'y') + "\"..."), std::string::npos);
    EXPECT_EQ(what.find(std::string(200, 'y')), std::string::npos);
}

TEST(OpenAiDecode, AnErrorInsideAStreamKeepsItsMessage) {
    const Error e = decode_error(
        200,
        "data: {\"error\":{\"message\":\"The server had an error while processing your request.\","
        "\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
        kSseHeaders);
    EXPECT_EQ(e.kind(), ErrorKind::kOverloaded);
    EXPECT_NE(std::string(e.what()).find("The server had an error"), std::string::npos);
}

}  // namespace
}  // namespace nucleo::openai_test
