// nucleo-emulator's prompt caching at OpenAI's explicit breakpoints (caching.120-caching.124) on
// the models whose record in the shipped config/models.yaml says `caching.breakpoints: explicit`
// (gpt-5.6-sol, minimum 1,024 tokens), the refusal of those parameters on the models that cache
// automatically (gpt-4.1-2025-04-14), and Bedrock's cache writes split by TTL in
// usage.cacheDetails (caching.125). Every token figure is checked against the emulator's own
// count: the prompt_tokens of the request that is exactly the prefix in question.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"

namespace nucleo::emulator_test {
namespace {

const std::string kShippedCatalog = std::string(NUCLEO_SOURCE_DIR) + "/config/models.yaml";
const std::vector<std::string> kOpenAiAuth = {"authorization: Bearer test-key"};
const std::vector<std::string> kBedrockAuth = {"authorization: Bearer bedrock-api-key"};

constexpr const char* kExplicitModel = "gpt-5.6-sol";          // breakpoints: explicit
constexpr const char* kAutomaticModel = "gpt-4.1-2025-04-14";  // breakpoints: automatic
constexpr const char* kMark = R"(,"prompt_cache_breakpoint":{"mode":"explicit"})";

/// Deterministic prose of about `bytes` bytes (a quarter as many tokens).
std::string prose(std::size_t bytes, const std::string& topic) {
    std::string out;
    for (int i = 0; out.size() < bytes; ++i)
        out += "Clause " + std::to_string(i) + " on " + topic + ": keep the order number. ";
    return out;
}

/// A text content part, marked as a breakpoint when `mark`.
std::string part(const std::string& text, bool mark) {
    rapidjson::Value s(rapidjson::StringRef(text.data(), text.size()));
    return R"({"type":"text","text":)" + str(s) + (mark ? kMark : "") + "}";
}

/// A message of `role` whose content is `parts` (each from `part`).
std::string message(const std::string& role, const std::vector<std::string>& parts) {
    std::string content;
    for (const auto& p : parts) content += (content.empty() ? "" : ",") + p;
    return R"({"role":")" + role + R"(","content":[)" + content + "]}";
}

std::string body(const std::string& model, const std::vector<std::string>& messages,
                 const std::string& extra = "") {
    std::string list;
    for (const auto& m : messages) list += (list.empty() ? "" : ",") + m;
    return R"({"model":")" + model + R"(","messages":[)" + list + "]" + extra + "}";
}

const std::string kExplicitMode = R"(,"prompt_cache_options":{"mode":"explicit"})";

/// The long, stable head of every conversation (over the 1,024-token minimum) and its turns.
const std::string kSystem = prose(6000, "refunds");
std::string question(int n) {
    return "Question " + std::to_string(n) + ": " + prose(800, "parcel " + std::to_string(n));
}
std::string answer(int n) {
    return "Answer " + std::to_string(n) + ": the parcel is on its way.";
}

/// The conversation after `turns` questions: the system message, then each question and, before
/// the next one, its answer. Marks: the system message when `mark_system`, and each question
/// whose number is in `marked`.
std::vector<std::string> conversation(int turns, bool mark_system, const std::vector<int>& marked) {
    std::vector<std::string> out = {message("system", {part(kSystem, mark_system)})};
    for (int n = 1; n <= turns; ++n) {
        const bool mark = std::find(marked.begin(), marked.end(), n) != marked.end();
        out.push_back(message("user", {part(question(n), mark)}));
        if (n < turns) out.push_back(message("assistant", {part(answer(n), false)}));
    }
    return out;
}

/// The usage figures an OpenAI answer reports.
struct Usage {
    long long prompt = 0, cached = 0, written = 0;
    bool has_written = false;
};

Usage usage_of(const rapidjson::Value& u) {
    Usage out;
    out.prompt = u["prompt_tokens"].GetInt64();
    const auto& details = u["prompt_tokens_details"];
    out.cached = details["cached_tokens"].GetInt64();
    out.has_written = details.HasMember("cache_write_tokens");
    if (out.has_written) out.written = details["cache_write_tokens"].GetInt64();
    return out;
}

class EmulatorOpenAiBreakpoints : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        emu_ = std::make_unique<EmulatorProcess>(
            std::vector<std::string>{"--catalog", kShippedCatalog});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    static HttpResult post(const std::string& b) {
        return emu_->post("/v1/chat/completions", b, kOpenAiAuth);
    }
    /// The usage of an answer that must be a 200.
    static Usage call(const std::string& b) {
        const HttpResult r = post(b);
        EXPECT_EQ(r.status, 200) << r.body;
        const rapidjson::Document d = parse(r.body);
        if (r.status != 200 || !d.IsObject() || !d.HasMember("usage")) return {};
        return usage_of(d["usage"]);
    }
    /// The prompt tokens of `messages` on the explicit model, counted by the emulator: a request
    /// in explicit mode without a mark, which caches nothing.
    static long long prompt_tokens(const std::vector<std::string>& messages) {
        const Usage u = call(body(kExplicitModel, messages, kExplicitMode));
        EXPECT_EQ(u.cached + u.written, 0);
        return u.prompt;
    }

    static std::unique_ptr<EmulatorProcess> emu_;
};

std::unique_ptr<EmulatorProcess> EmulatorOpenAiBreakpoints::emu_;

// ---- caching.121-caching.123: reads and writes at breakpoints -------------------------------

TEST_F(EmulatorOpenAiBreakpoints,
       AGrowingConversationReadsThePreviousPrefixAtABreakpointAndWritesTheRest) {
    const long long p1 = prompt_tokens(conversation(1, false, {}));
    const long long p2 = prompt_tokens(conversation(2, false, {}));
    const long long p3 = prompt_tokens(conversation(3, false, {}));
    ASSERT_GE(p1, 1024);

    const Usage u1 = call(body(kExplicitModel, conversation(1, false, {1}), kExplicitMode));
    EXPECT_EQ(u1.prompt, p1);  // a mark is not part of the prompt it marks
    EXPECT_EQ(u1.cached, 0);
    ASSERT_TRUE(u1.has_written);
    EXPECT_EQ(u1.written, p1);

    const Usage u2 = call(body(kExplicitModel, conversation(2, false, {1, 2}), kExplicitMode));
    EXPECT_EQ(u2.prompt, p2);
    EXPECT_EQ(u2.cached, p1);
    EXPECT_EQ(u2.written, p2 - p1);

    // Streamed, the usage chunk says the same.
    const HttpResult streamed =
        post(body(kExplicitModel, conversation(3, false, {2, 3}),
                  kExplicitMode + R"(,"stream":true,"stream_options":{"include_usage":true})"));
    ASSERT_EQ(streamed.status, 200) << streamed.body;
    const auto events = parse_sse(streamed.body);
    ASSERT_GE(events.size(), 2u);
    const rapidjson::Document last = parse(events[events.size() - 2].second);
    ASSERT_TRUE(last.HasMember("usage") && last["usage"].IsObject()) << events.back().second;
    const Usage u3 = usage_of(last["usage"]);
    EXPECT_EQ(u3.prompt, p3);
    EXPECT_EQ(u3.cached, p2);
    EXPECT_EQ(u3.written, p3 - p2);

    // The same request again reads it all and writes nothing new.
    const Usage again = call(body(kExplicitModel, conversation(3, false, {2, 3}), kExplicitMode));
    EXPECT_EQ(again.cached, p3);
    ASSERT_TRUE(again.has_written);
    EXPECT_EQ(again.written, 0);
}

TEST_F(EmulatorOpenAiBreakpoints, WithoutAMarkExplicitModeCachesNothing) {
    for (int turns = 1; turns <= 3; ++turns) {
        const Usage u = call(body(kExplicitModel, conversation(turns, false, {}), kExplicitMode));
        EXPECT_EQ(u.cached, 0) << turns;
        EXPECT_EQ(u.written, 0) << turns;
    }
    const Usage same = call(body(kExplicitModel, conversation(3, false, {}), kExplicitMode));
    EXPECT_EQ(same.cached, 0);
    EXPECT_EQ(same.written, 0);
}

TEST_F(EmulatorOpenAiBreakpoints, AnUnmarkedPrefixIsNotMatched) {
    const long long head = prompt_tokens(conversation(0, false, {}));
    const long long p1 = prompt_tokens(conversation(1, false, {}));
    ASSERT_GE(head, 1024);
    EXPECT_EQ(call(body(kExplicitModel, conversation(1, false, {1}), kExplicitMode)).written, p1);
    // The breakpoint moved to the system message: call 1's prefix ends at no breakpoint of this
    // request, and the system message's prefix was never written.
    const Usage moved = call(body(kExplicitModel, conversation(1, true, {}), kExplicitMode));
    EXPECT_EQ(moved.cached, 0);
    EXPECT_EQ(moved.written, head);
    // The next turn without a mark on question 1 does not find it either (implicit mode: its only
    // breakpoints are the system message's, now cached, and the implicit one).
    const Usage next = call(body(kExplicitModel, conversation(2, true, {})));
    EXPECT_EQ(next.cached, head);
    EXPECT_EQ(next.written, prompt_tokens(conversation(2, false, {})) - head);
}

TEST_F(EmulatorOpenAiBreakpoints, AFifthMarkIsNotWrittenAndImplicitModeWritesThreeMarksAndItsOwn) {
    // One user message of five parts: the first over the minimum, each a breakpoint.
    const std::vector<std::string> texts = {prose(4400, "policy"), "Item two.", "Item three.",
                                            "Item four.", "Item five."};
    const auto parts = [&](const std::vector<bool>& marks) {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < texts.size(); ++i) out.push_back(part(texts[i], marks[i]));
        return std::vector<std::string>{message("user", out)};
    };
    const auto upto = [&](std::size_t n) {  // the prompt tokens through part n (1-based)
        std::vector<std::string> out;
        for (std::size_t i = 0; i < n; ++i) out.push_back(part(texts[i], false));
        return prompt_tokens({message("user", out)});
    };
    const long long t1 = upto(1), t2 = upto(2), t5 = upto(5);
    ASSERT_GE(t1, 1024);
    const Usage five =
        call(body(kExplicitModel, parts({true, true, true, true, true}), kExplicitMode));
    EXPECT_EQ(five.written, t5);
    // The first mark was the fifth from the end: not written. The second was.
    const Usage first =
        call(body(kExplicitModel, parts({true, false, false, false, false}), kExplicitMode));
    EXPECT_EQ(first.cached, 0);
    EXPECT_EQ(first.written, t1);  // written now
    const Usage second =
        call(body(kExplicitModel, parts({false, true, false, false, false}), kExplicitMode));
    EXPECT_EQ(second.cached, t2);
    EXPECT_EQ(second.written, 0);

    // Implicit mode: the implicit breakpoint (the whole prompt) and the latest three marks.
    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    const long long t4 = upto(4);
    const Usage implicit = call(body(kExplicitModel, parts({true, true, true, true, false}),
                                     R"(,"prompt_cache_options":{"mode":"implicit","ttl":"30m"})"));
    EXPECT_EQ(implicit.cached, 0);
    EXPECT_EQ(implicit.written, t5);
    EXPECT_EQ(
        call(body(kExplicitModel, parts({true, false, false, false, false}), kExplicitMode)).cached,
        0);
    EXPECT_EQ(
        call(body(kExplicitModel, parts({false, true, false, false, false}), kExplicitMode)).cached,
        t2);
    EXPECT_EQ(
        call(body(kExplicitModel, parts({false, false, false, true, false}), kExplicitMode)).cached,
        t4);
}

TEST_F(EmulatorOpenAiBreakpoints, OnlyTheLatestEightyBreakpointsAreMatched) {
    const std::string head = part(kSystem, true);
    const long long t1 =
        call(body(kExplicitModel, {message("user", {head})}, kExplicitMode)).written;
    ASSERT_GE(t1, 1024);
    // The head's mark followed by `later` marked parts (their own texts, so that no prefix past
    // the head is cached).
    const auto with_later = [&](int later, const std::string& tag) {
        std::vector<std::string> parts = {head};
        for (int i = 0; i < later; ++i) parts.push_back(part(tag + std::to_string(i), true));
        return body(kExplicitModel, {message("user", parts)}, kExplicitMode);
    };
    EXPECT_EQ(call(with_later(79, "a")).cached, t1);  // the 80th breakpoint from the end
    EXPECT_EQ(call(with_later(80, "b")).cached, 0);   // the 81st
}

TEST_F(EmulatorOpenAiBreakpoints, ImplicitModeIsTheDefaultAndWritesTheWholePrompt) {
    const long long p1 = prompt_tokens(conversation(1, false, {}));
    const Usage u1 = call(body(kExplicitModel, conversation(1, false, {})));
    EXPECT_EQ(u1.cached, 0);
    EXPECT_EQ(u1.written, p1);
    const Usage u2 = call(body(kExplicitModel, conversation(1, false, {})));
    EXPECT_EQ(u2.cached, p1);
    EXPECT_EQ(u2.written, 0);
    EXPECT_EQ(u2.prompt, p1);
}

TEST_F(EmulatorOpenAiBreakpoints, APrefixUnderTheMinimumIsNeitherWrittenNorRead) {
    const std::vector<std::string> short_one = {
        message("user", {part("A short question, well under 1,024 tokens.", true)})};
    for (int i = 0; i < 2; ++i) {
        const Usage u = call(body(kExplicitModel, short_one));
        EXPECT_EQ(u.cached, 0);
        EXPECT_EQ(u.written, 0);
        EXPECT_GT(u.prompt, 0);
    }
}

TEST_F(EmulatorOpenAiBreakpoints, AnEntryLivesThirtyMinutesFromItsLastRead) {
    const std::string b = body(kExplicitModel, conversation(1, false, {1}), kExplicitMode);
    const long long p1 = call(b).written;
    ASSERT_GE(p1, 1024);
    EXPECT_EQ(advance_clock(*emu_, 1799), 1799);
    EXPECT_EQ(call(b).cached, p1);
    EXPECT_EQ(advance_clock(*emu_, 1799), 3598);
    EXPECT_EQ(call(b).cached, p1);  // the read above renewed it
    EXPECT_EQ(advance_clock(*emu_, 1800), 5398);
    const Usage expired = call(b);
    EXPECT_EQ(expired.cached, 0);
    EXPECT_EQ(expired.written, p1);
}

// ---- caching.120, caching.124: the parameters and their refusals ----------------------------

struct Refused {
    std::string what;   ///< the case
    std::string body;   ///< the request
    std::string param;  ///< error.param, which the message names too
    std::string code;   ///< error.code ("" for null)
    std::string model;  ///< named in the message when not ""
};

std::vector<Refused> refused_cases() {
    const std::vector<std::string> three = {message("system", {part("Be brief.", false)}),
                                            message("user", {part("Hello", false)}),
                                            message("assistant", {part("Hi", false)})};
    const auto marked = [&](const std::string& marker) {
        std::vector<std::string> m = three;
        m.push_back(
            R"({"role":"user","content":[{"type":"text","text":"Again","prompt_cache_breakpoint":)" +
            marker + "}]}");
        return m;
    };
    const auto opts = [](const std::string& o) { return R"(,"prompt_cache_options":)" + o; };
    const std::string at = "messages[3].content[0].prompt_cache_breakpoint";
    return {
        {"options not an object", body(kExplicitModel, three, opts(R"("explicit")")),
         "prompt_cache_options", "invalid_type", ""},
        {"another mode", body(kExplicitModel, three, opts(R"({"mode":"always"})")),
         "prompt_cache_options.mode", "invalid_value", ""},
        {"another ttl", body(kExplicitModel, three, opts(R"({"ttl":"1h"})")),
         "prompt_cache_options.ttl", "invalid_value", ""},
        {"an unknown option", body(kExplicitModel, three, opts(R"({"mode":"explicit","size":4})")),
         "prompt_cache_options.size", "unknown_parameter", ""},
        {"a mark of another mode", body(kExplicitModel, marked(R"({"mode":"implicit"})")),
         at + ".mode", "invalid_value", ""},
        {"a mark that is not an object", body(kExplicitModel, marked("true")), at, "invalid_type",
         ""},
        {"a mark without its mode", body(kExplicitModel, marked("{}")), at + ".mode",
         "missing_required_parameter", ""},
        {"a mark with a ttl", body(kExplicitModel, marked(R"({"mode":"explicit","ttl":"30m"})")),
         at + ".ttl", "unknown_parameter", ""},
        {"a non-string cache key", body(kExplicitModel, three, R"(,"prompt_cache_key":7)"),
         "prompt_cache_key", "invalid_type", ""},
        {"options on an automatic model",
         body(kAutomaticModel, three, opts(R"({"mode":"explicit"})")), "prompt_cache_options",
         "unsupported_parameter", kAutomaticModel},
        {"a mark on an automatic model", body(kAutomaticModel, marked(R"({"mode":"explicit"})")),
         at, "unsupported_parameter", kAutomaticModel},
    };
}

TEST_F(EmulatorOpenAiBreakpoints, EachBrokenParameterIsA400NamingTheField) {
    for (const Refused& c : refused_cases()) {
        const HttpResult r = post(c.body);
        ASSERT_EQ(r.status, 400) << c.what << ": " << r.body;
        const rapidjson::Document d = parse(r.body);
        const auto& e = d["error"];
        EXPECT_STREQ(e["type"].GetString(), "invalid_request_error") << c.what;
        ASSERT_TRUE(e["param"].IsString()) << c.what << ": " << r.body;
        EXPECT_EQ(e["param"].GetString(), c.param) << c.what;
        const std::string text = e["message"].GetString();
        EXPECT_NE(text.find("'" + c.param + "'"), std::string::npos) << c.what << ": " << text;
        if (!c.model.empty()) {
            EXPECT_NE(text.find(c.model), std::string::npos) << c.what << ": " << text;
        }
        if (c.code.empty()) {
            EXPECT_TRUE(e["code"].IsNull()) << c.what;
        } else {
            EXPECT_EQ(e["code"].GetString(), c.code) << c.what;
        }
    }
}

TEST_F(EmulatorOpenAiBreakpoints, TheDocumentedFormsAreAccepted) {
    const std::vector<std::string> m = {message("user", {part("Hello", true)})};
    for (const std::string& extra :
         {std::string(R"(,"prompt_cache_options":{"mode":"explicit","ttl":"30m"})"),
          std::string(
              R"(,"prompt_cache_options":{"mode":"implicit"},"prompt_cache_retention":"24h")"),
          std::string(R"(,"prompt_cache_options":{"ttl":"30m"},"prompt_cache_retention":"24h")"),
          std::string(R"(,"prompt_cache_options":{},"prompt_cache_key":"user-42")"),
          std::string(R"(,"prompt_cache_key":null)")}) {
        const HttpResult r = post(body(kExplicitModel, m, extra));
        EXPECT_EQ(r.status, 200) << extra << ": " << r.body;
    }
    // A mark on an image part.
    const std::string image =
        R"({"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"},)"
        R"("prompt_cache_breakpoint":{"mode":"explicit"}},{"type":"text","text":"What is it?"}]})";
    const HttpResult r = post(body(kExplicitModel, {image}));
    EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(EmulatorOpenAiBreakpoints, AnAutomaticModelTakesTheKeyAndCachesAsBefore) {
    const std::vector<std::string> m = conversation(1, false, {});
    const std::string b = body(kAutomaticModel, m, R"(,"prompt_cache_key":"user-42")");
    const Usage first = call(b);
    EXPECT_EQ(first.cached, 0);
    EXPECT_FALSE(first.has_written);  // automatic caching reports no writes
    const Usage second = call(b);
    EXPECT_GE(second.cached, 1024);
    EXPECT_EQ(second.cached % 128, 0);
    EXPECT_FALSE(second.has_written);
    // A model the catalog has no record of keeps today's behaviour: the parameters pass.
    const HttpResult unknown = post(body("gpt-emu", conversation(1, false, {1}), kExplicitMode));
    EXPECT_EQ(unknown.status, 200) << unknown.body;
}

// ---- caching.125: Bedrock's cache writes by TTL ----------------------------------------------

HttpResult converse(const EmulatorProcess& emu, const std::string& b, bool stream = false) {
    return emu.post(std::string("/model/anthropic.claude-emu-v1:0/") +
                        (stream ? "converse-stream" : "converse"),
                    b, kBedrockAuth);
}

/// A Converse body: a long system text ending in a 1-hour cachePoint, and one user message whose
/// text ends in a 5-minute cachePoint when `point`.
std::string converse_body(const std::string& user_text, bool point) {
    rapidjson::Value sys(rapidjson::StringRef(kSystem.data(), kSystem.size()));
    rapidjson::Value usr(rapidjson::StringRef(user_text.data(), user_text.size()));
    return R"({"system":[{"text":)" + str(sys) +
           R"(},{"cachePoint":{"type":"default","ttl":"1h"}}],"messages":[{"role":"user","content":[{"text":)" +
           str(usr) + "}" + (point ? R"(,{"cachePoint":{"type":"default"}})" : "") + "]}]}";
}

TEST(EmulatorBedrockCacheDetails, TheWritesAreSplitByTheTtlOfTheirCachePoint) {
    EmulatorProcess emu;
    const HttpResult r1 = converse(emu, converse_body(question(1), true));
    ASSERT_EQ(r1.status, 200) << r1.body;
    const rapidjson::Document d1 = parse(r1.body);
    const auto& u1 = d1["usage"];
    ASSERT_TRUE(u1.HasMember("cacheDetails")) << r1.body;
    const auto& details = u1["cacheDetails"];
    ASSERT_EQ(details.Size(), 2u) << r1.body;
    EXPECT_STREQ(details[0]["ttl"].GetString(), "1h");  // 1h before 5m, as the API sorts them
    EXPECT_STREQ(details[1]["ttl"].GetString(), "5m");
    const long long hour = details[0]["inputTokens"].GetInt64();
    EXPECT_EQ(hour + details[1]["inputTokens"].GetInt64(), u1["cacheWriteInputTokens"].GetInt64());

    // The 1-hour part is the system's prefix: what a call that writes nothing reads back.
    const HttpResult r2 = converse(emu, converse_body("Another question", false));
    const rapidjson::Document d2 = parse(r2.body);
    EXPECT_EQ(d2["usage"]["cacheReadInputTokens"].GetInt64(), hour);
    EXPECT_EQ(d2["usage"]["cacheWriteInputTokens"].GetInt64(), 0);
    EXPECT_FALSE(d2["usage"].HasMember("cacheDetails")) << r2.body;

    // Streamed: the metadata event's usage, here only a 5-minute write after the 1-hour read.
    const HttpResult r3 = converse(emu, converse_body(question(2), true), true);
    ASSERT_EQ(r3.status, 200) << r3.body;
    const auto events = parse_event_stream(r3.body);
    ASSERT_FALSE(events.empty());
    ASSERT_EQ(events.back().first, "metadata");
    const rapidjson::Document meta = parse(events.back().second);
    const auto& u3 = meta["usage"];
    EXPECT_EQ(u3["cacheReadInputTokens"].GetInt64(), hour);
    ASSERT_TRUE(u3.HasMember("cacheDetails")) << events.back().second;
    ASSERT_EQ(u3["cacheDetails"].Size(), 1u);
    EXPECT_STREQ(u3["cacheDetails"][0]["ttl"].GetString(), "5m");
    EXPECT_EQ(u3["cacheDetails"][0]["inputTokens"].GetInt64(),
              u3["cacheWriteInputTokens"].GetInt64());
    EXPECT_GT(u3["cacheWriteInputTokens"].GetInt64(), 0);
}

}  // namespace
}  // namespace nucleo::emulator_test
