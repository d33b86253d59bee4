// The three provider dialects against a running nucleo-emulator, for the tests that check a
// compacted conversation is accepted on the wire (the encoders and the emulator's pairing rules).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compaction_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {

inline constexpr const char* kDialects[] = {"anthropic", "openai", "bedrock"};

/// A client of `plugin` (one of kDialects) pointed at `emulator`, one attempt per call.
inline std::unique_ptr<ProviderClient> dialect_client(const emulator_test::EmulatorProcess& emulator,
                                                      const std::string& plugin) {
    ProviderConfig config;
    config.name = plugin;
    config.plugin = plugin;
    config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
    // OpenAI's base URL ends in /v1 (the SDKs' OPENAI_BASE_URL convention).
    if (plugin == "openai") config.base_url += "/v1";
    config.credentials.api_key = "sk-test";
    config.credentials.access_key_id = "AKIDTEST";
    config.credentials.secret_access_key = "secret";
    config.credentials.region = "us-east-1";
    TransportOptions transport;
    transport.retry.max_attempts = 1;
    return std::make_unique<ProviderClient>(
        config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(plugin).make_provider(), transport);
}

/// Whether the dialect's plugin is built; fails the test when none of them is.
inline bool dialect_built(const std::string& plugin) {
    static const bool any =
        std::filesystem::exists(std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-anthropic.so");
    if (!any) ADD_FAILURE() << "no provider plugin is built: build anthropic openai bedrock";
    return std::filesystem::exists(std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + plugin +
                                   ".so");
}

/// One client per built dialect against one emulator, made once and reused call after call.
class DialectClients {
  public:
    explicit DialectClients(const emulator_test::EmulatorProcess& emulator) {
        for (const char* dialect : kDialects) {
            if (dialect_built(dialect)) clients_.emplace_back(dialect, dialect_client(emulator, dialect));
        }
    }

    /// The encoder of every built dialect accepts `c` and the emulator answers the call.
    void expect_accepted(const ConversationContext& c, ModelSpec model) const {
        for (const auto& [dialect, client] : clients_) {
            SCOPED_TRACE(dialect);
            ConversationContext copy = c;
            model.provider = dialect;
            // The encoder accepts it (a dialect refuses a request it cannot express) ...
            EXPECT_NO_THROW((void)client->build_request(copy, model));
            // ... and the emulator's pairing rules accept the call.
            try {
                const LLMResponse answer = client->call(copy, model);
                EXPECT_FALSE(answer.message.blocks.empty());
            } catch (const Error& e) {
                ADD_FAILURE() << "the emulator refused the compacted conversation: " << e.what();
            }
        }
    }

  private:
    std::vector<std::pair<std::string, std::unique_ptr<ProviderClient>>> clients_;
};

}  // namespace nucleo::compaction_test
