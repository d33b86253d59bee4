#include "config_loading.hpp"

#include "nucleo/errors.hpp"

namespace nucleo::cli {

std::filesystem::path config_path(const Args& args) {
    if (auto given = args.get(kConfigOption)) {
        if (given->empty()) throw UsageError{"--config needs a file name"};
        return *given;
    }
    return nucleo::Config::default_path();
}

nucleo::Config load_config(const Args& args) {
    return nucleo::Config::load(config_path(args));
}

namespace {

// persistence.106: one store of the config, opened now; a refusal names where it was chosen.
nucleo::StoreInstance open_store(const nucleo::Config& config, const nucleo::PluginLoader& loader,
                                 const nucleo::PluginChoice& choice, const char* role) {
    const std::string where = choice.where.empty() ? config.path().string() : choice.where;
    try {
        return loader.load(choice.plugin).make_store(choice.options_json);
    } catch (const nucleo::Error& e) {
        throw nucleo::Error(e.kind(), where + ": " + role + " (" + choice.plugin + "): " + e.what());
    }
}

}  // namespace

ConfiguredStores open_stores(const nucleo::Config& config, const nucleo::PluginLoader& loader) {
    ConfiguredStores out;
    if (const auto& choice = config.persistent_store()) {
        out.persistent.emplace(open_store(config, loader, *choice, "stores.persistent"));
        out.persistent_where = "stores.persistent (" + choice->plugin + ") at " +
                               (choice->where.empty() ? config.path().string() : choice->where);
    }
    if (const auto& choice = config.session_store()) {
        out.session.emplace(open_store(config, loader, *choice, "stores.session"));
    }
    return out;
}

}  // namespace nucleo::cli
