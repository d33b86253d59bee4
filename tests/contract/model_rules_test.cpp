// wire.176-wire.185: the per-model rules alone, over records written out here as the shipped
// catalog (config/models.yaml) has them; tests/emulator/emulator_catalog_test.cpp posts the same
// cases (model_cases.hpp) to nucleo-emulator reading the shipped catalog itself, so a record that
// drifts from these shows there.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <map>
#include <string>

#include "model_cases.hpp"
#include "nucleo/wire/model_rules.hpp"

namespace {

using nucleo::contract::check_model_available;
using nucleo::contract::check_model_request;
using nucleo::contract::ModelRules;
using nucleo::contract::ModelViolation;
using nucleo::contract::WireFamily;

const std::vector<std::string> kAllEfforts = {"low", "medium", "high", "xhigh", "max"};
const std::vector<std::string> kDisplay = {"summarized", "omitted"};

ModelRules claude(const char* id, std::vector<std::string> forms, bool effort, bool sampling,
                  bool prefill, bool forced) {
    ModelRules r;
    r.wire_model = id;
    r.forms = std::move(forms);
    if (effort) r.efforts = kAllEfforts;
    r.display = kDisplay;
    r.refuses_sampling = sampling;
    r.refuses_prefill = prefill;
    r.refuses_forced_tool_use = forced;
    return r;
}

ModelRules gpt(const char* id, std::vector<std::string> efforts, bool tools_with_reasoning = false) {
    ModelRules r;
    r.wire_model = id;
    r.efforts = std::move(efforts);
    r.refuses_tools_with_reasoning = tools_with_reasoning;
    return r;
}

/// The shipped records the cases name, by wire_model.
const std::map<std::string, ModelRules>& records() {
    static const std::map<std::string, ModelRules> all = [] {
        std::map<std::string, ModelRules> m;
        const auto add = [&m](ModelRules r) { m.emplace(r.wire_model, std::move(r)); };
        add(claude("claude-sonnet-5-5", {"adaptive", "between_tools"}, true, true, true, true));
        add(claude("claude-opus-5-5", {"adaptive"}, true, true, true, true));
        add(claude("claude-haiku-5-5", {"adaptive", "disabled"}, true, true, true, false));
        add(claude("claude-fable-5-2", {"adaptive"}, true, true, true, true));
        add(claude("claude-opus-5", {"adaptive", "disabled"}, true, true, true, false));
        add(claude("claude-sonnet-5", {"adaptive", "disabled"}, true, true, true, false));
        add(claude("claude-haiku-4-5-20251001", {"enabled", "disabled"}, false, false, false,
                   false));
        add(claude("us.anthropic.claude-sonnet-5-5", {"adaptive", "between_tools"}, true, true,
                   true, true));
        add(claude("us.anthropic.claude-haiku-5-5", {"adaptive", "disabled"}, true, true, true,
                   false));
        add(claude("global.anthropic.claude-haiku-4-5-20251001-v1:0", {"enabled", "disabled"},
                   false, false, false, false));
        add(gpt("gpt-6.1-terra", {"none", "low", "medium", "high", "xhigh", "max"}));
        add(gpt("gpt-6.1-sol", kAllEfforts, true));
        add(gpt("gpt-6-sol", {"none", "low", "medium", "high", "xhigh", "max"}, true));
        add(gpt("gpt-6-luna", {"none", "low", "medium", "high", "xhigh", "max"}, true));
        add(gpt("gpt-5.6-sol", {"none", "low", "medium", "high", "xhigh"}));
        add(gpt("gpt-4.1-2025-04-14", {}));
        return m;
    }();
    return all;
}

std::optional<ModelViolation> check(WireFamily family, const char* json, const ModelRules& rules) {
    rapidjson::Document d;
    d.Parse(json);
    EXPECT_FALSE(d.HasParseError()) << json;
    return check_model_request(family, d, rules);
}

class ModelRuleCase : public ::testing::TestWithParam<model_cases::Case> {};

TEST_P(ModelRuleCase, KeptBodyPassesAndBrokenBodyGetsTheProvidersAnswer) {
    const model_cases::Case& c = GetParam();
    const ModelRules& rules = records().at(c.model);
    const auto kept = check(c.family, c.keeps, rules);
    EXPECT_FALSE(kept) << c.rule << ": " << kept->line();
    const auto broken = check(c.family, c.breaks, rules);
    ASSERT_TRUE(broken) << c.rule;
    EXPECT_EQ(broken->rule, c.rule);
    EXPECT_EQ(broken->status, c.status);
    EXPECT_EQ(broken->error_type, c.type);
    EXPECT_EQ(broken->code, c.code);
    EXPECT_EQ(broken->message, c.text);
    EXPECT_EQ(broken->where, c.where);
    if (c.family == WireFamily::kOpenAIChat) {
        EXPECT_EQ(broken->param, "reasoning_effort");
    }
    if (c.takes_it != nullptr) {
        const auto other = check(c.family, c.breaks, records().at(c.takes_it));
        EXPECT_FALSE(other) << c.takes_it << ": " << other->line();
    }
}

INSTANTIATE_TEST_SUITE_P(Model, ModelRuleCase, ::testing::ValuesIn(model_cases::kCases),
                         [](const ::testing::TestParamInfo<model_cases::Case>& info) {
                             return std::string(info.param.name);
                         });

TEST(ModelRules, ARetiredModelIsNotFoundInEachFamilysWords) {
    ModelRules gone;
    gone.wire_model = "claude-sonnet-4-5-20250929";
    gone.status = "retired";
    rapidjson::Document body;
    body.Parse(R"({"messages":[]})");
    const auto a = check_model_request(WireFamily::kAnthropicMessages, body, gone);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->rule, "wire.185");
    EXPECT_EQ(a->status, 404);
    EXPECT_EQ(a->error_type, "not_found_error");
    EXPECT_EQ(a->message, "model: claude-sonnet-4-5-20250929");
    gone.wire_model = "gpt-4-turbo-preview";
    const auto o = check_model_available(WireFamily::kOpenAIChat, gone);
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status, 404);
    EXPECT_EQ(o->error_type, "invalid_request_error");
    EXPECT_EQ(o->code, "model_not_found");
    EXPECT_EQ(o->param, "");
    EXPECT_EQ(o->message,
              "The model `gpt-4-turbo-preview` does not exist or you do not have access to it.");
    const auto b = check_model_available(WireFamily::kBedrockConverse, gone);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->status, 404);
    EXPECT_EQ(b->error_type, "ResourceNotFoundException");
    EXPECT_EQ(b->message,
              "This model version has reached the end of its life. Please refer to the AWS "
              "documentation for more details.");
    EXPECT_FALSE(check_model_available(WireFamily::kUnknown, gone));
    // Before any other rule: a retired model's record has no rules left to judge a body by.
    gone.refuses_sampling = true;
    EXPECT_EQ(check(WireFamily::kAnthropicMessages, R"({"temperature":0.5})", gone)->rule,
              "wire.185");
}

TEST(ModelRules, ActiveAndDeprecatedModelsAreAvailable) {
    ModelRules r = records().at("gpt-4.1-2025-04-14");
    EXPECT_FALSE(check_model_available(WireFamily::kOpenAIChat, r));
    r.status = "deprecated";
    EXPECT_FALSE(check_model_available(WireFamily::kOpenAIChat, r));
    EXPECT_FALSE(check(WireFamily::kOpenAIChat, R"({"messages":[]})", r));
}

TEST(ModelRules, ARecordThatNamesNoFormsOrDisplayChecksNone) {
    ModelRules r;
    r.wire_model = "m";
    r.efforts = kAllEfforts;
    EXPECT_FALSE(check(WireFamily::kAnthropicMessages,
                       R"({"thinking":{"type":"enabled","budget_tokens":2048,"display":"x"}})", r));
    // A form the API does not know is the schema's business, not the model's.
    r.forms = {"adaptive"};
    EXPECT_FALSE(check(WireFamily::kAnthropicMessages, R"({"thinking":{"type":"sometimes"}})", r));
}

TEST(ModelRules, AnEmptyEffortListRefusesEveryEffort) {
    ModelRules r = records().at("claude-haiku-4-5-20251001");
    EXPECT_EQ(
        check(WireFamily::kAnthropicMessages, R"({"output_config":{"effort":"low"}})", r)->rule,
        "wire.178");
    EXPECT_FALSE(check(WireFamily::kAnthropicMessages, R"({"output_config":{"effort":null}})", r));
    EXPECT_FALSE(check(WireFamily::kAnthropicMessages, R"({"output_config":{}})", r));
}

TEST(ModelRules, TheLastOfARepeatedKeyCounts) {
    const ModelRules& r = records().at("claude-sonnet-5-5");
    EXPECT_FALSE(
        check(WireFamily::kAnthropicMessages, R"({"temperature":0.2,"temperature":1})", r));
    EXPECT_EQ(
        check(WireFamily::kAnthropicMessages, R"({"temperature":1,"temperature":0.2})", r)->message,
        "`temperature` is deprecated for this model.");
}

TEST(ModelRules, SamplingAtItsDefaultOrNullIsTaken) {
    const ModelRules& r = records().at("claude-sonnet-5-5");
    EXPECT_FALSE(
        check(WireFamily::kAnthropicMessages, R"({"temperature":1.0,"top_p":1,"top_k":null})", r));
    // A value that is not a number is not the default either.
    EXPECT_EQ(check(WireFamily::kAnthropicMessages, R"({"temperature":"1"})", r)->rule, "wire.179");
}

TEST(ModelRules, TheRulesRunInOrderFormFirst) {
    const ModelRules& r = records().at("claude-opus-5-5");
    const auto v =
        check(WireFamily::kAnthropicMessages,
              R"({"thinking":{"type":"disabled"},"temperature":0.3,"tool_choice":{"type":"any"},)"
              R"("messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]})",
              r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "wire.176");
    EXPECT_EQ(check(WireFamily::kAnthropicMessages,
                    R"({"temperature":0.3,"messages":[{"role":"user","content":"q"},)"
                    R"({"role":"assistant","content":"a"}]})",
                    r)
                  ->rule,
              "wire.179");
}

TEST(ModelRules, ConverseChecksNoAnthropicThinkingOnARecordWithoutForms) {
    // Amazon Nova's record: efforts, no forms. Its reasoningConfig is not checked, nor is an
    // Anthropic-shaped field it would not read.
    ModelRules nova = gpt("us.amazon.nova-2-lite-v1:0", {"low", "medium", "high"});
    EXPECT_FALSE(check(WireFamily::kBedrockConverse,
                       R"({"additionalModelRequestFields":{"reasoningConfig":{"type":"enabled",)"
                       R"("maxReasoningEffort":"max"}},"outputConfig":{"effort":"max"}})",
                       nova));
}

TEST(ModelRules, ConverseReadsTheEffortInsideTheModelsOwnFieldsToo) {
    const ModelRules& r = records().at("global.anthropic.claude-haiku-4-5-20251001-v1:0");
    const auto v =
        check(WireFamily::kBedrockConverse,
              R"({"additionalModelRequestFields":{"output_config":{"effort":"low"}}})", r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rule, "wire.183");
    EXPECT_EQ(v->where, "additionalModelRequestFields.output_config.effort");
}

TEST(ModelRules, OpenAiListsTwoValuesWithAnd) {
    const auto v =
        check(WireFamily::kOpenAIChat, R"({"reasoning_effort":"max"})", gpt("g", {"low", "high"}));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->message,
              "Unsupported value: 'reasoning_effort' does not support 'max' with this model. "
              "Supported values are: 'low' and 'high'.");
}

TEST(ModelRules, TheUnknownFamilyHasNone) {
    ModelRules r = records().at("claude-opus-5-5");
    EXPECT_FALSE(check(WireFamily::kUnknown, R"({"thinking":{"type":"disabled"}})", r));
    r.status = "retired";
    EXPECT_FALSE(check(WireFamily::kUnknown, R"({})", r));
}

}  // namespace
