// wire.101-wire.142: for every rule of the three families a body that keeps it (no violation) and
// one that breaks it (that rule, the provider's exact text); the cases are in wire_cases.hpp.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "contract/contract.hpp"
#include "wire_cases.hpp"

namespace {

using nucleo::contract::check_request;
using nucleo::contract::Scope;
using nucleo::contract::WireFamily;

std::optional<nucleo::contract::Violation> check(WireFamily f, const char* json,
                                                 Scope scope = Scope::kCore) {
    rapidjson::Document d;
    d.Parse(json);
    EXPECT_FALSE(d.HasParseError()) << json;
    return check_request(f, d, scope);
}

using wire_cases::Case;
using wire_cases::kCases;
constexpr WireFamily A = WireFamily::kAnthropicMessages;
constexpr WireFamily O = WireFamily::kOpenAIChat;
constexpr WireFamily B = WireFamily::kBedrockConverse;

class RuleBook : public ::testing::TestWithParam<Case> {};

TEST_P(RuleBook, KeptBodyPassesAndBrokenBodyIsRefusedWithTheProvidersText) {
    const Case& c = GetParam();
    const auto kept = check(c.family, c.keeps);
    EXPECT_FALSE(kept.has_value()) << c.rule << " kept body refused: " << kept->line();
    const auto refused = check(c.family, c.breaks);
    ASSERT_TRUE(refused.has_value()) << c.rule << " broken body passed";
    EXPECT_EQ(refused->rule, c.rule);
    EXPECT_EQ(refused->message, c.text);
    EXPECT_EQ(refused->where, c.where);
    EXPECT_EQ(refused->line().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Wire, RuleBook, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             std::string name = info.param.rule;
                             for (char& ch : name)
                                 if (ch == '.') ch = '_';
                             return name;
                         });

TEST(RuleBook, CoreOnlyRuleIsLeftToTheProviderScope) {
    // wire.123: OpenAI itself accepts a later system message; only the core's scope refuses it.
    const char* body = R"({"messages":[{"role":"user","content":"hi"},{"role":"system","content":"s"}]})";
    EXPECT_FALSE(check(O, body, Scope::kProvider).has_value());
    EXPECT_TRUE(check(O, body, Scope::kCore).has_value());
}

TEST(RuleBook, UnknownFamilyHasNoFamilyRules) {
    EXPECT_FALSE(check(WireFamily::kUnknown, R"({"messages":[{"role":"system"}]})").has_value());
    EXPECT_EQ(nucleo::contract::wire_family_from_name("nope"), WireFamily::kUnknown);
    for (WireFamily f : {A, O, B})
        EXPECT_EQ(nucleo::contract::wire_family_from_name(nucleo::contract::wire_family_name(f)), f);
}

TEST(RuleBook, OpenAIToolNameOverSixtyFourCharactersIsRefusedWithTheLengthText) {
    const std::string name(65, 'a');
    const std::string body = R"({"tools":[{"type":"function","function":{"name":")" + name +
                             R"(","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]})";
    const auto v = check(O, body.c_str());
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->message, "Invalid 'tools[0].function.name': string too long. Expected a string "
                          "with maximum length 64, but got a string with length 65 instead.");
}

TEST(RuleBook, AnthropicSizeLimitIsThePublishedOne) {
    EXPECT_FALSE(nucleo::contract::check_size(A, 32U * 1000U * 1000U).has_value());
    const auto v = nucleo::contract::check_size(A, 32U * 1000U * 1000U + 1U);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->rule, "wire.115");
    EXPECT_EQ(v->message, "Request exceeds the maximum allowed number of bytes.");
    EXPECT_FALSE(nucleo::contract::check_size(O, 64U * 1000U * 1000U).has_value());
}

}  // namespace
