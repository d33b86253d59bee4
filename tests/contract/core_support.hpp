// Shared by the tests that drive the core against the real nucleo-emulator: a Claude catalog
// entry and the emulator's request count (its /stats), which a refusal before sending leaves at 0.
#pragma once

#include <string>

#include "emulator_client.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::contract_test {

/// A Claude entry served by `provider` (Sonnet 5's wire model); `thinking` gives it Sonnet 5's
/// thinking record (adaptive or disabled; STANDARD sends adaptive with effort medium and books a
/// 2,048-token budget).
inline ModelSpec claude(const std::string& provider, bool thinking = false) {
    ModelSpec m;
    m.id = "claude-test";
    m.provider = provider;
    m.wire_model = "claude-sonnet-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = 16000;
    m.output_budget = {{OutputSize::kShort, 1024}};
    if (thinking) {
        m.thinking.forms = {ThinkingForm::kAdaptive, ThinkingForm::kDisabled};
        m.thinking.efforts = {"low", "medium", "high", "xhigh", "max"};
        m.thinking.depth = {{Depth::kImmediate, {DepthThinking::Kind::kDisabled, {}}},
                            {Depth::kStandard, {DepthThinking::Kind::kEffort, "medium"}}};
        m.thinking_budget = {{Depth::kStandard, 2048}};
    }
    m.supports_caching = true;
    m.native_tools = true;
    m.min_cacheable_tokens = 1024;
    m.cache_ttl_1h = true;
    return m;
}

/// The requests the emulator has answered since it started (/stats "total").
inline long requests_seen(const emulator_test::EmulatorProcess& emulator) {
    const auto stats = emulator.get("/stats");
    const auto pos = stats.body.find("\"total\"");
    return pos == std::string::npos ? -1 : std::stol(stats.body.substr(stats.body.find(':', pos) + 1));
}

/// A client of `plugin` (loaded from `plugin_dir`, provider named after it) against the emulator.
inline ProviderClient emulator_client(const emulator_test::EmulatorProcess& emulator,
                                      const std::string& plugin, const std::string& plugin_dir,
                                      const std::string& options_json = "{}") {
    ProviderConfig config;
    config.name = plugin;
    config.plugin = plugin;
    config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
    config.credentials.api_key = "sk-test-secret";
    config.options_json = options_json;
    PluginLoader loader({plugin_dir});
    return {config, loader.load(plugin).make_provider(config.options_json), TransportOptions{}};
}

}  // namespace nucleo::contract_test
