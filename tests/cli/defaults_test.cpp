// A host program that declares nothing gets the config's defaults (budget.102); a host that opts
// out keeps "no default" (budget.103). The wire request is built, not sent.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "nucleo/budget.hpp"
#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

Config config_with(const std::string& defaults) {
    return Config::parse("providers:\n  a: {plugin: anthropic, base_url: 'http://127.0.0.1:9', api_key: k}\n"
                         "models:\n"
                         "  - {id: m, provider: a, wire_model: w, grade: SMALL, max_context_tokens: 100000,\n"
                         "     max_output_tokens: 8000, output_budget: {SHORT: 100, MEDIUM: 2000, LONG: 4000,\n"
                         "     EXTENDED: 8000}, prices: {input: 1, output: 2}}\n" +
                             defaults,
                         "defaults-test.yaml");
}

int max_tokens_of(ProviderClient& client, const ModelSpec& model) {
    ConversationContext conversation("c-host");
    conversation.add_message(Message::outgoing_text("Hello"));
    const HttpRequest request = client.build_request(conversation, model, {}, /*redact_secrets=*/true);
    rapidjson::Document body;
    body.Parse(request.body.c_str());
    return body["max_tokens"].GetInt();
}

TEST(DeclarationDefaults, AHostThatDeclaresNothingGetsImmediateAndMedium) {
    const Config config = config_with("");
    EXPECT_EQ(config.defaults().depth, Depth::kImmediate);
    ProviderClient client = ProviderClient::from_config(config, PluginLoader(config.plugin_paths()), "a");
    EXPECT_EQ(max_tokens_of(client, config.catalog().find("m")), 2000);
}

TEST(DeclarationDefaults, TheConfigChoosesThemAndTheConversationStillWins) {
    const Config config = config_with("defaults: {output: LONG}\n");
    ProviderClient client = ProviderClient::from_config(config, PluginLoader(config.plugin_paths()), "a");
    const ModelSpec& model = config.catalog().find("m");
    EXPECT_EQ(max_tokens_of(client, model), 4000);
    ConversationContext declared("c-declared");
    declared.set_output(OutputSize::kShort);
    declared.add_message(Message::outgoing_text("Hello"));
    rapidjson::Document body;
    body.Parse(client.build_request(declared, model, {}, true).body.c_str());
    EXPECT_EQ(body["max_tokens"].GetInt(), 100);
}

TEST(DeclarationDefaults, AHostThatOptsOutKeepsNoDefault) {
    const Config config = config_with("");
    ProviderClient client = ProviderClient::from_config(config, PluginLoader(config.plugin_paths()), "a");
    client.set_declaration_defaults({});
    EXPECT_THROW(max_tokens_of(client, config.catalog().find("m")), UncorrectableLLMException);

    const Config none = config_with("defaults: {output: none, depth: none}\n");
    EXPECT_FALSE(none.defaults().output.has_value());
    EXPECT_FALSE(none.defaults().depth.has_value());
    ProviderClient opted_out = ProviderClient::from_config(none, PluginLoader(none.plugin_paths()), "a");
    EXPECT_THROW(max_tokens_of(opted_out, none.catalog().find("m")), UncorrectableLLMException);
}

}  // namespace
}  // namespace nucleo
