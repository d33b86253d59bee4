// Shared by the agent and streaming tests: the emulator, a ProviderClient per dialect over the
// real plugins, model entries, and a typed tool input.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <tuple>

#include "emulator_client.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/schema.hpp"
#include "nucleo/thinker.hpp"

namespace agent_test {

/// The typed input of the test tool: what an input struct like SearchInput is to search_documents.
struct LookupInput {
    std::string order_id;
};

}  // namespace agent_test

template <>
struct nucleo::Describe<agent_test::LookupInput> {
    static constexpr std::string_view name = "LookupInput";
    static auto fields() {
        return std::tuple(schema::field("order_id", &agent_test::LookupInput::order_id)
                              .required()
                              .description("The order's id"));
    }
};

namespace agent_test {

inline nucleo::ModelSpec model_for(const std::string& dialect, std::int64_t max_output = 1024) {
    nucleo::ModelSpec m;
    m.id = dialect + "-test";
    m.provider = dialect;
    m.wire_model = dialect == "openai"             ? "gpt-4o"
                   : dialect == "openai-responses" ? "gpt-6.1-terra"
                   : dialect == "bedrock"          ? "anthropic.claude-3-5-sonnet-20241022-v2:0"
                   : dialect == "gemini"           ? "gemini-3.1-pro-preview"
                                                   : "claude-sonnet-5-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = max_output;
    m.output_budget = {{nucleo::OutputSize::kShort, 512}};
    m.supports_caching = dialect == "anthropic" || dialect == "bedrock";
    m.native_tools = true;
    m.prices = {.input = 3.0, .output = 15.0, .cache_write = 3.75, .cache_read = 0.30};
    return m;
}

inline nucleo::ProviderClient client_for(const nucleo::emulator_test::EmulatorProcess& emulator,
                                         const std::string& dialect) {
    nucleo::ProviderConfig config;
    config.name = dialect;
    config.plugin = dialect;
    config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
    // OpenAI's base URL ends in /v1 (the SDKs' OPENAI_BASE_URL convention).
    if (dialect == "openai" || dialect == "openai-responses") config.base_url += "/v1";
    config.credentials.api_key = "sk-test";
    config.credentials.access_key_id = "AKIDTEST";
    config.credentials.secret_access_key = "secret";
    config.credentials.region = "us-east-1";
    nucleo::TransportOptions transport;
    transport.retry.max_attempts = 1;
    return {config,
            nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(dialect).make_provider(),
            transport};
}

/// An empty conversation with the seat's declarations: a short answer, no thinking.
inline nucleo::ConversationContext fresh(const std::string& id = "c-agent") {
    nucleo::ConversationContext c(id, "alice");
    c.set_output(nucleo::OutputSize::kShort);
    c.set_depth(nucleo::Depth::kImmediate);
    return c;
}

/// fresh() with an objective and the user's question about order 42: ready for a call.
inline nucleo::ConversationContext asked(const std::string& id) {
    nucleo::ConversationContext c = fresh(id);
    c.put_main_objective("task", "You answer questions about orders.");
    c.add_message(nucleo::Message::outgoing_text("Where is order 42?"));
    return c;
}

/// A thinker of alice's that only reads conversation `id` back from a store (a job of its own).
inline std::shared_ptr<nucleo::Thinker> reader_thinker(const std::string& id) {
    auto reader = std::make_shared<nucleo::Thinker>();
    reader->name = "Reader";
    reader->job_id = "reader-job";
    reader->user_id = "alice";
    reader->set_conversation_id(id);
    return reader;
}

/// Requests the emulator has answered so far (its /stats "total").
inline long requests_seen(const nucleo::emulator_test::EmulatorProcess& emulator) {
    const auto stats = emulator.get("/stats");
    const auto pos = stats.body.find("\"total\"");
    return pos == std::string::npos
               ? -1
               : std::stol(stats.body.substr(stats.body.find(':', pos) + 1));
}

}  // namespace agent_test
