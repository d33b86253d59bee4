// caching.133 end to end: a conversation on an explicit-breakpoint Responses model
// (gpt-6-sol-responses) that ends with the model's answer and has a host-marked assistant
// message, through ProviderClient, the shipped config, the real openai-responses plugin (which
// refuses a mark on assistant output: responses.6) and nucleo-emulator. Under every policy the
// call is answered, and the body's breakpoints are on input parts only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "emulator_client.hpp"
#include "nucleo/config.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

/// The shipped config, the OpenAI instances aimed at the emulator as `nucleo ask --emulator`
/// aims them.
Config shipped_config_at(int port) {
    ::setenv("OPENAI_BASE_URL", ("http://127.0.0.1:" + std::to_string(port) + "/v1").c_str(), 1);
    ::setenv("OPENAI_API_KEY", "sk-test", 1);
    return Config::load(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
}

/// An objective well past the model's 1,024-token minimum (caching.105), then q1, the model's
/// a1 (marked `cache` by the host), q2 and the model's a2: the request ends with the answer.
ConversationContext answered(const std::string& id) {
    ConversationContext c(id, "alice");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);  // no reasoning: a request may end with the model's turn
    std::string objective;
    for (int i = 0; i < 400; ++i) objective += "Rule " + std::to_string(i) + ": answer briefly. ";
    c.put_main_objective("task", objective);
    c.add_message(Message::outgoing_text("Where is order 42?"));
    Message a1 = Message::incoming_text("Order 42 is in Oslo.");
    a1.cache = true;
    c.add_message(std::move(a1));
    c.add_message(Message::outgoing_text("And order 43?"));
    c.add_message(Message::incoming_text("Order 43 is in Bergen."));
    return c;
}

/// What carries a prompt_cache_breakpoint in the body: "<item type>/<part type>" a mark.
std::vector<std::string> marked_parts(const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    EXPECT_FALSE(d.HasParseError());
    std::vector<std::string> marked;
    if (d.HasParseError() || !d.HasMember("input")) return marked;
    for (const auto& item : d["input"].GetArray()) {
        const std::string type = item.HasMember("type") ? item["type"].GetString() : "message";
        const std::string who =
            type == "message" ? std::string("message:") + item["role"].GetString() : type;
        if (item.HasMember("prompt_cache_breakpoint")) marked.push_back(who + "/(item)");
        for (const char* parts : {"content", "output"}) {
            if (!item.HasMember(parts) || !item[parts].IsArray()) continue;
            for (const auto& part : item[parts].GetArray())
                if (part.IsObject() && part.HasMember("prompt_cache_breakpoint"))
                    marked.push_back(who + "/" + part["type"].GetString());
        }
    }
    return marked;
}

/// A policy named on the conversation (nullopt: the shipped default, `sliding`: caching.130) and
/// the marks its plan puts on the turns.
struct Case {
    std::optional<CachePolicy> policy;
    std::size_t turn_marks;
};

void PrintTo(const Case& c, std::ostream* os) {
    *os << (c.policy ? to_string(*c.policy) : "the shipped default") << ", " << c.turn_marks
        << " turn marks";
}

class ResponsesCacheAnchor : public ::testing::TestWithParam<Case> {};

TEST_P(ResponsesCacheAnchor, AConversationEndingWithTheAnswerIsSentWithItsMarksOnInputParts) {
    emulator_test::EmulatorProcess emulator;
    const Config config = shipped_config_at(emulator.port());
    ProviderClient client = ProviderClient::from_config(
        config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}), "openai-responses");
    const ModelSpec& model = config.catalog().find("gpt-6-sol-responses");
    ASSERT_EQ(model.cache_breakpoints, "explicit");
    ConversationContext c = answered("c-anchor");
    c.set_cache_policy(GetParam().policy);
    HttpRequest request;
    ASSERT_NO_THROW(request = client.build_request(c, model))
        << "the plan put a mark on assistant output";
    const std::vector<std::string> marked = marked_parts(std::string(request.body.view()));
    // The system mark, on the developer message that carries the objective, then the turn marks:
    // `seed` moves a1's to q1 (caching.133); `sliding` puts its newest on q2 instead of a2 and
    // the older on q1. None on assistant output, none over the limit (caching.2).
    ASSERT_EQ(marked.size(), 1 + GetParam().turn_marks);
    EXPECT_EQ(marked.front(), "message:developer/input_text");
    for (std::size_t i = 1; i < marked.size(); ++i) EXPECT_EQ(marked[i], "message:user/input_text");
    LLMResponse answer;
    ASSERT_NO_THROW(answer = client.call(c, model));
    EXPECT_TRUE(answer.appended);
    EXPECT_GT(answer.cache_creation_input_tokens(), 0) << "the marks wrote nothing (caching.123)";
}

INSTANTIATE_TEST_SUITE_P(Policies, ResponsesCacheAnchor,
                         ::testing::Values(Case{std::nullopt, 2},
                                           Case{CachePolicy::kMarkedTurns, 1},
                                           Case{CachePolicy::kSliding, 2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             return std::string(info.param.policy ? to_string(*info.param.policy)
                                                                  : "shipped_default");
                         });

}  // namespace
}  // namespace nucleo
