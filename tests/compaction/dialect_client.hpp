// A provider client of an in-tree dialect for tests that only build requests (nothing is sent),
// with the per-turn encode cache (caching.110) on or off.
#pragma once

#include <string>

#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {

inline ProviderClient client_of(const std::string& plugin, bool cache) {
    ProviderConfig config;
    config.name = plugin;
    config.plugin = plugin;
    config.base_url = "http://127.0.0.1:9";  // never contacted: requests are only built
    ProviderClient client(config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(plugin).make_provider());
    client.set_turn_fragment_cache(cache);
    return client;
}

}  // namespace nucleo::compaction_test
