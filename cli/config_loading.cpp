#include "config_loading.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <set>

#include "nucleo/errors.hpp"
#include "nucleo/plugin.h"

namespace nucleo::cli {

std::filesystem::path config_path(const Args& args) {
    if (auto given = args.get(kConfigOption)) {
        if (given->empty()) throw UsageError{"--config needs a file name"};
        return *given;
    }
    return nucleo::Config::default_path();
}

nucleo::Config load_config(const Args& args) {
    nucleo::Config config = nucleo::Config::load(config_path(args));
    for (const auto& folder : config.plugin_paths()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(folder, ec))
            std::cerr << "nucleo: warning: " << config.path().string()
                      << ": plugins.paths: no folder " << folder.string() << "\n";
    }
    return config;
}

namespace {

/// The config file and every file it includes, in reading order (each once).
void config_files(const std::filesystem::path& file, std::vector<std::filesystem::path>& out,
                  int depth = 0) {
    if (depth > 16 || std::find(out.begin(), out.end(), file) != out.end()) return;
    out.push_back(file);
    YAML::Node root;
    try {
        root = YAML::LoadFile(file.string());
    } catch (const YAML::Exception&) {
        return;  // Config::load has read it already; an include it refused cannot be here
    }
    if (!root.IsMap() || !root["include"]) return;
    const YAML::Node include = root["include"];
    auto add = [&](const YAML::Node& n) {
        if (!n.IsScalar()) return;
        std::filesystem::path p = n.Scalar();
        if (p.is_relative()) p = file.parent_path() / p;
        config_files(p, out, depth + 1);
    };
    if (include.IsSequence()) {
        for (const auto& n : include) add(n);
    } else {
        add(include);
    }
}

}  // namespace

std::vector<UnsetVariable> unset_variables(const nucleo::Config& config) {
    static const std::regex reference(R"(\$\{([A-Za-z_][A-Za-z0-9_]*)\})");
    std::vector<std::filesystem::path> files;
    config_files(config.path(), files);
    std::vector<UnsetVariable> out;
    for (const auto& file : files) {
        std::ifstream in(file);
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            const auto text = line.substr(0, line.find(" #"));
            if (text.find_first_not_of(' ') != std::string::npos && text[text.find_first_not_of(' ')] == '#')
                continue;
            for (std::sregex_iterator it(text.begin(), text.end(), reference), end; it != end; ++it) {
                const std::string name = (*it)[1];
                if (std::getenv(name.c_str()) != nullptr) continue;
                out.push_back({name, file.string() + ":" + std::to_string(n), n, file.string()});
            }
        }
    }
    return out;
}

void resolve_plugins(const nucleo::Config& config, const nucleo::PluginLoader& loader) {
    nucleo::check_plugins(config, loader);
}

const nucleo::ModelSpec& default_model(const nucleo::Config& config) {
    const auto& all = config.catalog().all();
    if (all.empty())
        throw nucleo::Error(nucleo::ErrorKind::kConfig,
                            config.path().string() + ": the model catalog is empty");
    for (const auto& m : all) {
        for (const auto& p : config.providers()) {
            if (p.name != m.provider) continue;
            if (!p.credentials.api_key.empty() || !p.credentials.access_key_id.empty()) return m;
        }
    }
    return all.front();
}

namespace {

// persistence.106: one store of the config, opened now; a refusal names where it was chosen,
// and the unset variables its options were written with.
nucleo::StoreInstance open_store(const nucleo::Config& config, const nucleo::PluginLoader& loader,
                                 const nucleo::PluginChoice& choice, const char* role) {
    const std::string where = choice.where.empty() ? config.path().string() : choice.where;
    std::optional<nucleo::Plugin> plugin;
    try {
        plugin.emplace(loader.load(choice.plugin));
    } catch (const nucleo::Error& e) {
        throw nucleo::Error(e.kind(), where + ": " + role + " (" + choice.plugin + "): " + e.what());
    }
    // abi.109: options refused by the plugin's schema name their own file:line.
    plugin->check_options(NUCLEO_FACTORY_STORE, choice.options_json, &choice.options_origin);
    try {
        // A refusal by create names the unset ${VAR}s its options were written with.
        return plugin->make_store(choice.options_json, &choice.options_origin);
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
