// The stores and summarizer a config chooses, made from its plugins (nucleo/configured.hpp).
#include "nucleo/configured.hpp"

#include <utility>

#include "nucleo/errors.hpp"
#include "nucleo/plugin.h"

namespace nucleo {
namespace {

/// "FILE:LINE:COLUMN" of a choice, else the config's file.
std::string where_of(const Config& config, const PluginChoice& choice) {
    return choice.where.empty() ? config.path().string() : choice.where;
}

/// Runs `make`, prefixing an error with where the choice was made and what it is.
template <class Make>
auto made_at(const Config& config, const PluginChoice& choice, const char* role, Make&& make) {
    try {
        return make();
    } catch (const Error& e) {
        throw Error(e.kind(), where_of(config, choice) + ": " + role + " (" + choice.plugin +
                                  "): " + e.what());
    }
}

// persistence.106: one store of the config, opened now.
StoreInstance open_store(const Config& config, const PluginLoader& loader,
                         const PluginChoice& choice, const char* role) {
    const Plugin plugin = made_at(config, choice, role, [&] { return loader.load(choice.plugin); });
    // abi.109: options refused by the plugin's schema name their own file:line.
    plugin.check_options(NUCLEO_FACTORY_STORE, choice.options_json, &choice.options_origin);
    // A refusal by create names the unset ${VAR}s its options were written with.
    return made_at(config, choice, role,
                   [&] { return plugin.make_store(choice.options_json, &choice.options_origin); });
}

}  // namespace

ConfiguredStores open_configured_stores(const Config& config, const PluginLoader& loader) {
    ConfiguredStores out;
    if (const auto& choice = config.persistent_store()) {
        out.persistent.emplace(open_store(config, loader, *choice, "stores.persistent"));
        out.persistent_where =
            "stores.persistent (" + choice->plugin + ") at " + where_of(config, *choice);
    }
    if (const auto& choice = config.session_store())
        out.session.emplace(open_store(config, loader, *choice, "stores.session"));
    return out;
}

SummarizerInstance make_configured_summarizer(const Config& config, const PluginLoader& loader) {
    const auto& choice = config.summarizer();
    if (!choice) return loader.load("extractive").make_summarizer("{}");
    const Plugin plugin = made_at(config, *choice, "summarizer",
                                  [&] { return load_summarizer_plugin(loader, *choice); });
    plugin.check_options(NUCLEO_FACTORY_SUMMARIZER, choice->options_json, &choice->options_origin);
    return made_at(config, *choice, "summarizer", [&] {
        return plugin.make_summarizer(choice->options_json, &choice->options_origin);
    });
}

}  // namespace nucleo
