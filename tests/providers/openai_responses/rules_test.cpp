// The openai-responses rule book (docs/spec/openai-responses.md responses.20-responses.29) over
// bodies, and every body the plugin renders passing it and the audit's plan checks
// (responses.28, wire.213).
#include <gtest/gtest.h>

#include <string>

#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"
#include "responses_support.hpp"

namespace nucleo::responses_test {
namespace {

using contract::WireFamily;

std::string rule(const std::string& body) {
    const auto d = parse(body);
    const auto v = contract::check_request(WireFamily::kOpenAIResponses, d);
    return v ? v->rule : "none";
}

const std::string kUser = R"({"type":"message","role":"user","content":"q"})";
const std::string kCall = R"({"type":"function_call","call_id":"c1","name":"f","arguments":"{}"})";
const std::string kOutput = R"({"type":"function_call_output","call_id":"c1","output":"r"})";

std::string body(const std::string& items, const std::string& extra = "") {
    return R"({"model":"gpt-6-sol","input":[)" + items + "]" + extra + "}";
}

TEST(ResponsesRules, TheFamilyHasItsName) {
    EXPECT_EQ(contract::wire_family_from_name("openai-responses"), WireFamily::kOpenAIResponses);
    EXPECT_EQ(contract::wire_family_name(WireFamily::kOpenAIResponses), "openai-responses");
}

TEST(ResponsesRules, ModelInputAndFieldTypes) {
    EXPECT_EQ(rule(R"({"input":"q"})"), "responses.20");
    EXPECT_EQ(rule(R"({"model":"m"})"), "responses.20");
    EXPECT_EQ(rule(R"({"model":"m","input":[]})"), "responses.20");
    EXPECT_EQ(rule(R"({"model":"m","input":"q"})"), "none");
    EXPECT_EQ(rule(body(kUser)), "none");
    EXPECT_EQ(rule(body(kUser, R"(,"instructions":5)")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"store":"no")")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"max_output_tokens":8)")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"max_output_tokens":"8")")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"include":[1])")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"reasoning":{"effort":3})")), "responses.21");
    EXPECT_EQ(rule(body(kUser, R"(,"prompt_cache_key":["k"])")), "responses.21");
}

TEST(ResponsesRules, ItemsHaveTheirFields) {
    EXPECT_EQ(rule(body(R"({"type":"message","role":"tool","content":"q"})")), "responses.22");
    EXPECT_EQ(rule(body(R"({"type":"message","role":"user"})")), "responses.22");
    EXPECT_EQ(rule(body(R"({"type":"message","role":"user","content":5})")), "responses.21");
    EXPECT_EQ(rule(body(R"({"type":"function_call","call_id":"c","name":"f"})")), "responses.22");
    EXPECT_EQ(rule(body(R"({"type":"reasoning","id":"rs"})")), "responses.22");
    EXPECT_EQ(rule(body("7")), "responses.21");
}

TEST(ResponsesRules, OutputsAnswerEarlierCallsAndEveryCallIsAnswered) {
    const auto d = parse(body(kUser + "," + kOutput));
    const auto v = contract::check_request(WireFamily::kOpenAIResponses, d);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "responses.23");
    EXPECT_EQ(v->message, "No tool call found for function call output with call_id c1.");
    EXPECT_EQ(rule(body(kUser + "," + kOutput + "," + kCall)), "responses.23");
    EXPECT_EQ(rule(body(kUser + "," + kCall)), "responses.24");
    EXPECT_EQ(rule(body(kUser + "," + kCall + "," + kOutput)), "none");
}

TEST(ResponsesRules, UnstoredReasoningComesBackEncrypted) {
    const std::string bare = R"({"type":"reasoning","id":"rs_1","summary":[]})";
    EXPECT_EQ(rule(body(kUser + "," + bare, R"(,"store":false)")), "responses.25");
    EXPECT_EQ(rule(body(kUser + "," + bare)), "none");
    EXPECT_EQ(
        rule(body(
            kUser + R"(,{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"E"})",
            R"(,"store":false)")),
        "none");
}

TEST(ResponsesRules, ToolNamesAndTheRecordsEfforts) {
    EXPECT_EQ(
        rule(body(kUser, R"(,"tools":[{"type":"function","name":"bad name","parameters":{}}])")),
        "responses.27");
    EXPECT_EQ(rule(body(kUser, R"(,"tools":[{"type":"function","name":"ok","strict":"yes"}])")),
              "responses.21");
    contract::ModelRules r;
    r.wire_model = "gpt-6-sol";
    r.efforts = {"none", "low", "medium", "high"};
    EXPECT_FALSE(contract::check_model_request(
        WireFamily::kOpenAIResponses, parse(body(kUser, R"(,"reasoning":{"effort":"low"})")), r));
    const auto v = contract::check_model_request(
        WireFamily::kOpenAIResponses, parse(body(kUser, R"(,"reasoning":{"effort":"max"})")), r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "responses.29");
    EXPECT_EQ(v->status, 400);
    // Tools with reasoning are this API's to take, even on a model that refuses them on Chat.
    r.refuses_tools_with_reasoning = true;
    EXPECT_FALSE(contract::check_model_request(
        WireFamily::kOpenAIResponses,
        parse(body(kUser,
                   R"(,"reasoning":{"effort":"low"},"tools":[{"type":"function","name":"f"}])")),
        r));
}

TEST(ResponsesRules, RenderedBodiesPassTheAuditWithThePlan) {
    const std::string req = request(
        R"([{"role":"user","blocks":[{"type":"text","text":"weather?"}]},)"
        R"({"role":"assistant","blocks":[{"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris"}}]},)"
        R"({"role":"user","blocks":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"sunny"}]}]}])",
        R"([{"type":"text","text":"Be brief."}])", "",
        R"([{"name":"get_weather","description":"d","schema":{"type":"object"}}])");
    const auto parts = provider().encode_parts(req);
    contract::OutgoingRequest out;
    out.method = "POST";
    const auto head = parse(parts.head);
    out.path = head["path"].GetString();
    out.body = parts.body;
    contract::CallPlan plan;
    plan.max_tokens = 2048;
    plan.system_texts = {"Be brief."};
    const auto v = contract::audit_request(WireFamily::kOpenAIResponses, out, plan);
    EXPECT_FALSE(v) << v->line();
    plan.max_tokens = 1000;
    ASSERT_TRUE(contract::audit_request(WireFamily::kOpenAIResponses, out, plan));
    EXPECT_EQ(contract::audit_request(WireFamily::kOpenAIResponses, out, plan)->rule,
              "responses.28");
    plan.max_tokens = 2048;
    plan.system_texts = {"Something else."};
    ASSERT_TRUE(contract::audit_request(WireFamily::kOpenAIResponses, out, plan));
    EXPECT_EQ(contract::audit_request(WireFamily::kOpenAIResponses, out, plan)->rule,
              "responses.28");
    // On an explicit model the system content is the leading developer message.
    const auto explicit_parts = provider().encode_parts(
        request(R"([{"role":"user","blocks":[{"type":"text","text":"q"}]}])",
                R"([{"type":"text","text":"Be brief."}])", "", "[]",
                R"("wire_model":"gpt-6-sol","caching":"explicit")",
                R"({"breakpoints":1,"system_block":0,"turn_anchors":[]})"));
    out.body = explicit_parts.body;
    plan.system_texts = {"Be brief."};
    const auto e = contract::audit_request(WireFamily::kOpenAIResponses, out, plan);
    EXPECT_FALSE(e) << e->line();
}

}  // namespace
}  // namespace nucleo::responses_test
