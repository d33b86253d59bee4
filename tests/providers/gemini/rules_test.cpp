// The gemini-generate rule book (docs/spec/gemini.md gemini.20-gemini.29) over bodies, and every
// body the plugin renders passing it and the audit's plan checks (gemini.28).
#include <gtest/gtest.h>

#include <string>

#include "gemini_support.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"

namespace nucleo::gemini_test {
namespace {

using contract::WireFamily;

std::string rule(const std::string& body) {
    const auto d = parse(body);
    const auto v = contract::check_request(WireFamily::kGeminiGenerate, d);
    return v ? v->rule : "none";
}

TEST(GeminiRules, TheFamilyHasItsName) {
    EXPECT_EQ(contract::wire_family_from_name("gemini-generate"), WireFamily::kGeminiGenerate);
    EXPECT_EQ(contract::wire_family_name(WireFamily::kGeminiGenerate), "gemini-generate");
}

TEST(GeminiRules, ContentsRolesPartsAndAlternation) {
    EXPECT_EQ(rule(R"({"contents":[]})"), "gemini.20");
    EXPECT_EQ(rule(R"({"contents":[{"role":"assistant","parts":[{"text":"x"}]}]})"), "gemini.21");
    EXPECT_EQ(rule(R"({"contents":[{"role":"user","parts":[]}]})"), "gemini.22");
    EXPECT_EQ(
        rule(
            R"({"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"}]}]})"),
        "gemini.23");
    EXPECT_EQ(
        rule(
            R"({"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]}]})"),
        "none");
}

TEST(GeminiRules, FunctionResponsesPairWithTheirCalls) {
    const std::string call =
        R"({"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"s"},{"functionCall":{"name":"g","args":{}}}]})";
    const std::string user = R"({"role":"user","parts":[{"text":"q"}]})";
    EXPECT_EQ(
        rule(R"({"contents":[)" + user + "," + call +
             R"(,{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]})"),
        "gemini.24");
    EXPECT_EQ(
        rule(
            R"({"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]})"),
        "gemini.24");
    EXPECT_EQ(
        rule(
            R"({"contents":[)" + user + "," + call +
            R"(,{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"g","response":{}}}]}]})"),
        "none");
}

TEST(GeminiRules, TheCurrentTurnsFirstCallOfEachStepCarriesItsSignature) {
    const std::string user = R"({"role":"user","parts":[{"text":"q"}]})";
    const std::string unsigned_call =
        R"({"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]})";
    const std::string response =
        R"({"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]})";
    const auto d = parse(R"({"contents":[)" + user + "," + unsigned_call + "," + response + "]}");
    const auto v = contract::check_request(WireFamily::kGeminiGenerate, d);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "gemini.26");
    EXPECT_NE(v->message.find("Function call is missing a thought_signature"), std::string::npos);
    // An earlier turn (a user text came after it) is not checked.
    EXPECT_EQ(rule(R"({"contents":[)" + user + "," + unsigned_call + "," + response +
                   R"(,{"role":"model","parts":[{"text":"ok"}]},)" + user + "]}"),
              "none");
}

TEST(GeminiRules, FunctionNamesAndThinkingLevels) {
    EXPECT_EQ(
        rule(
            R"({"tools":[{"functionDeclarations":[{"name":"9bad"}]}],"contents":[{"role":"user","parts":[{"text":"q"}]}]})"),
        "gemini.27");
    contract::ModelRules r;
    r.wire_model = "gemini-3.1-pro-preview";
    r.efforts = {"low", "medium", "high"};
    const auto ok = parse(R"({"generationConfig":{"thinkingConfig":{"thinkingLevel":"HIGH"}}})");
    EXPECT_FALSE(contract::check_model_request(WireFamily::kGeminiGenerate, ok, r));
    const auto bad =
        parse(R"({"generationConfig":{"thinkingConfig":{"thinkingLevel":"MINIMAL"}}})");
    const auto v = contract::check_model_request(WireFamily::kGeminiGenerate, bad, r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "gemini.29");
    EXPECT_EQ(v->status, 400);
}

TEST(GeminiRules, RenderedBodiesPassTheAuditWithThePlan) {
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
    const auto v = contract::audit_request(WireFamily::kGeminiGenerate, out, plan);
    EXPECT_FALSE(v) << v->line();
    // The plan checks: another budget, or a system text that is not in systemInstruction.
    plan.max_tokens = 1000;
    ASSERT_TRUE(contract::audit_request(WireFamily::kGeminiGenerate, out, plan));
    EXPECT_EQ(contract::audit_request(WireFamily::kGeminiGenerate, out, plan)->rule, "gemini.28");
    plan.max_tokens = 2048;
    plan.system_texts = {"Something else."};
    ASSERT_TRUE(contract::audit_request(WireFamily::kGeminiGenerate, out, plan));
    EXPECT_EQ(contract::audit_request(WireFamily::kGeminiGenerate, out, plan)->rule, "gemini.28");
}

}  // namespace
}  // namespace nucleo::gemini_test
