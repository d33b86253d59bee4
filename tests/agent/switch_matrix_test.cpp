// One conversation, any provider (conversation.110): a conversation begun on one dialect goes on
// on every other. For each ordered pair of the five dialects (Anthropic Messages, OpenAI Chat
// Completions, OpenAI Responses, Bedrock Converse, Gemini), a turn with a tool round and thinking
// on runs on the first, then a second turn with its own tool round on the second, through the
// shipped config and catalog, the real plugins and the real nucleo-emulator, which checks each
// request by the provider's rules (a block of another provider sent back, a tool result without
// its call, an id of the wrong form: each is an error there, as at the provider).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

#include "agent_support.hpp"
#include "nucleo/config.hpp"

namespace nucleo {
namespace {

using agent_test::LookupInput;

/// The dialect, its provider instance in the shipped config and a catalog model of it that thinks
/// and takes tools with its thinking on.
struct Seat {
    const char* dialect;
    const char* model;
};

const std::vector<Seat> kSeats = {
    {"anthropic", "claude-sonnet-5-5"},
    {"openai", "gpt-6-1-terra"},
    {"openai-responses", "gpt-6-1-terra-responses"},
    {"bedrock", "bedrock-claude-haiku-5-5"},
    {"gemini", "gemini-3-1-pro"},
};

/// The shipped config, every provider aimed at `port` as `nucleo ask --emulator` aims them.
Config shipped_config_at(int port) {
    const std::string base = "http://127.0.0.1:" + std::to_string(port);
    const std::vector<std::pair<const char*, std::string>> env = {
        {"ANTHROPIC_BASE_URL", base},
        {"ANTHROPIC_API_KEY", "sk-test"},
        {"OPENAI_BASE_URL", base + "/v1"},
        {"OPENAI_API_KEY", "sk-test"},
        {"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", base},
        {"AWS_ACCESS_KEY_ID", "AKIDTEST"},
        {"AWS_SECRET_ACCESS_KEY", "secret"},
        {"GOOGLE_GEMINI_BASE_URL", base},
        {"GEMINI_API_KEY", "test"},
    };
    for (const auto& [name, value] : env) ::setenv(name, value.c_str(), 1);
    return Config::load(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
}

class SwitchMatrix : public ::testing::TestWithParam<std::pair<Seat, Seat>> {
  protected:
    emulator_test::EmulatorProcess emulator_;
};

/// One turn on `seat` asking about `order`: a tool round, then the answer that quotes it.
TurnReport turn_on(const Config& config, const Seat& seat, ConversationContext& c,
                   const std::string& order, std::vector<std::string>& looked_up) {
    ProviderClient client =
        ProviderClient::from_config(config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}), seat.dialect);
    AgentOptions o;
    o.objective = "You look orders up.";
    Agent agent(client, config.catalog().find(seat.model), o);
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [&](const LookupInput& in) {
                                    looked_up.push_back(in.order_id);
                                    return "order " + in.order_id + " is in Oslo";
                                });
    return agent.run_turn(c, "Where is order " + order);
}

TEST_P(SwitchMatrix, AToolRoundWithThinkingThenAnotherOnTheOtherProvider) {
    const auto& [from, to] = GetParam();
    const Config config = shipped_config_at(emulator_.port());
    ConversationContext c("c-switch", "alice");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kDeep);  // thinking on, where the model thinks at all
    std::vector<std::string> looked_up;

    const TurnReport first = turn_on(config, from, c, "Z9", looked_up);
    ASSERT_EQ(first.end, TurnEnd::kFinalAnswer) << from.dialect;
    EXPECT_EQ(first.tool_calls, 1U) << from.dialect;
    EXPECT_NE(first.answer.find("order Z9 is in Oslo"), std::string::npos) << first.answer;

    const TurnReport second = turn_on(config, to, c, "Z10", looked_up);
    ASSERT_EQ(second.end, TurnEnd::kFinalAnswer) << from.dialect << " -> " << to.dialect;
    EXPECT_EQ(second.tool_calls, 1U);
    EXPECT_NE(second.answer.find("order Z10 is in Oslo"), std::string::npos) << second.answer;
    EXPECT_EQ(looked_up, (std::vector<std::string>{"Z9", "Z10"}));
    EXPECT_EQ(second.tool_errors, 0U);
}

std::vector<std::pair<Seat, Seat>> ordered_pairs() {
    std::vector<std::pair<Seat, Seat>> pairs;
    for (const Seat& a : kSeats)
        for (const Seat& b : kSeats)
            if (std::string(a.dialect) != b.dialect) pairs.emplace_back(a, b);
    return pairs;
}

std::string pair_name(const ::testing::TestParamInfo<std::pair<Seat, Seat>>& info) {
    std::string name = std::string(info.param.first.dialect) + "_to_" + info.param.second.dialect;
    for (char& ch : name)
        if (ch == '-') ch = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(FiveDialects, SwitchMatrix, ::testing::ValuesIn(ordered_pairs()),
                         pair_name);

}  // namespace
}  // namespace nucleo
