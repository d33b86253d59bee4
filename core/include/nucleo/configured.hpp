// What a host program needs to run on an operator's nucleo.yaml as the `nucleo` command does: the
// stores and the summarizer the config chooses, made from its plugins. With Config::load,
// Config::default_path() and Config::default_model() (config.1, config.2) and
// ProviderClient::from_config, a host opens exactly what the operator configured:
//
//   const nucleo::Config config = nucleo::Config::load(nucleo::Config::default_path());
//   const nucleo::PluginLoader loader(config.plugin_paths());
//   nucleo::ConfiguredStores stores = nucleo::open_configured_stores(config, loader);
//   nucleo::ConversationServiceOptions options;
//   options.persistent = std::move(stores.persistent);
//   options.session = std::move(stores.session);
//   nucleo::ConversationService service(std::move(options));
//
// examples/saved-agent is a whole program built on it.
#pragma once

#include <optional>
#include <string>

#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

namespace nucleo {

/// The stores a config chooses (`stores.persistent`, `stores.session`), opened.
struct ConfiguredStores {
    std::optional<PersistentStore> persistent;
    std::optional<SessionStore> session;
    /// "stores.persistent (sqlite) at FILE:LINE:COLUMN", or "" without one: where a message
    /// about the store can point the operator.
    std::string persistent_where;
};

/// persistence.106: opens both configured stores now, so a refused option or an unreachable
/// server fails at start, not at the first save. A plugin that is unknown, refuses its options
/// (abi.109) or cannot reach its server throws the error's own kind, its message starting with
/// the choice's "FILE:LINE:COLUMN: stores.ROLE (PLUGIN): ". A config without stores gives empty
/// optionals (conversations are then temporary or held in memory only).
[[nodiscard]] ConfiguredStores open_configured_stores(const Config& config,
                                                      const PluginLoader& loader);

/// The summarizer compaction uses: the config's `summarizer:` plugin with its options, else the
/// embedded `extractive` one. Throws as PluginLoader::load and Plugin::make_summarizer do, the
/// message of a configured one starting with its "FILE:LINE:COLUMN: summarizer (PLUGIN): ".
[[nodiscard]] SummarizerInstance make_configured_summarizer(const Config& config,
                                                            const PluginLoader& loader);

}  // namespace nucleo
