// caching.133 end to end: a conversation on an explicit-breakpoint Responses model
// (gpt-6-sol-responses) that ends with the model's answer and has a host-marked assistant
// message, through ProviderClient, the shipped config, the real openai-responses plugin (which
// refuses a mark on assistant output: responses.6) and nucleo-emulator. Under every policy the
// call is answered, and the body's breakpoints are on input parts only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
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

TEST(ResponsesCacheAnchor, AConversationEndingWithTheAnswerIsSentWithItsMarksOnInputParts) {
    emulator_test::EmulatorProcess emulator;
    const Config config = shipped_config_at(emulator.port());
    ProviderClient client = ProviderClient::from_config(
        config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}), "openai-responses");
    const ModelSpec& model = config.catalog().find("gpt-6-sol-responses");
    ASSERT_EQ(model.cache_breakpoints, "explicit");
    // The shipped default (`sliding`, caching.130), then each policy named on the conversation.
    const std::vector<std::optional<CachePolicy>> policies = {
        std::nullopt, CachePolicy::kMarkedTurns, CachePolicy::kSliding};
    for (const auto& policy : policies) {
        const std::string name = policy ? to_string(*policy) : "default";
        SCOPED_TRACE(name);
        ConversationContext c = answered("c-anchor-" + name);
        c.set_cache_policy(policy);
        HttpRequest request;
        ASSERT_NO_THROW(request = client.build_request(c, model)) << "refused before the fix";
        const std::vector<std::string> marked = marked_parts(std::string(request.body.view()));
        // The system mark, on the developer message that carries the objective, and at least one
        // turn mark; none on assistant output, none over the limit (caching.2).
        ASSERT_GE(marked.size(), 2U);
        EXPECT_LE(marked.size(), 4U);
        EXPECT_EQ(marked.front(), "message:developer/input_text");
        for (const std::string& m : marked) {
            EXPECT_TRUE(m.ends_with("/input_text") || m.ends_with("/input_image") ||
                        m.ends_with("/input_file"))
                << m;
            EXPECT_EQ(m.find("assistant"), std::string::npos) << m;
        }
        LLMResponse answer;
        ASSERT_NO_THROW(answer = client.call(c, model));
        EXPECT_TRUE(answer.appended);
    }
}

}  // namespace
}  // namespace nucleo
