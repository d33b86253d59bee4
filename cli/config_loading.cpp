#include "config_loading.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>

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
    auto check = [&](const std::string& plugin, const std::string& where, const std::string& path) {
        try {
            (void)loader.load(plugin);
        } catch (const nucleo::Error& e) {
            throw nucleo::Error(nucleo::ErrorKind::kPlugin,
                                (where.empty() ? config.path().string() : where) + ": " + path +
                                    ": " + e.what());
        }
    };
    for (const auto& p : config.providers()) check(p.plugin, p.where, "providers." + p.name + ".plugin");
    if (const auto& c = config.persistent_store()) check(c->plugin, c->where, "stores.persistent");
    if (const auto& c = config.session_store()) check(c->plugin, c->where, "stores.session");
    if (const auto& c = config.summarizer()) check(c->plugin, c->where, "summarizer");
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

/// The unset ${VAR}s written inside the YAML block that starts on `where`'s line (the choice's
/// own line and the more indented lines under it), as "; ${A} (FILE:LINE) is unset".
std::string unset_note(const nucleo::Config& config, const std::string& where) {
    // where = FILE:LINE:COLUMN
    const auto last = where.rfind(':');
    const auto second = last == std::string::npos ? std::string::npos : where.rfind(':', last - 1);
    if (second == std::string::npos) return "";
    const std::string file = where.substr(0, second);
    const int start = std::atoi(where.substr(second + 1, last - second - 1).c_str());
    const auto column = static_cast<std::size_t>(std::atoi(where.substr(last + 1).c_str()));
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    if (start < 1 || start > static_cast<int>(lines.size())) return "";
    auto indent = [](const std::string& l) { return l.find_first_not_of(' '); };
    // A block mapping starts at its line's first key: its siblings below belong to it. A node
    // that starts after a key on its line (`persistent: {...}`) owns only more indented lines.
    const auto base = indent(lines[start - 1]);
    const bool block = base != std::string::npos && column == base + 1;
    int end = start;
    while (end < static_cast<int>(lines.size())) {
        const auto i = indent(lines[end]);
        if (i != std::string::npos && lines[end][i] != '#' && (block ? i < base : i <= base)) break;
        ++end;
    }
    std::string note;
    for (const UnsetVariable& v : unset_variables(config)) {
        if (v.file == file && v.line >= start && v.line <= end)
            note += "; ${" + v.name + "} (" + v.where + ") is unset";
    }
    return note;
}

// persistence.106: one store of the config, opened now; a refusal names where it was chosen,
// and the unset variables its options were written with.
nucleo::StoreInstance open_store(const nucleo::Config& config, const nucleo::PluginLoader& loader,
                                 const nucleo::PluginChoice& choice, const char* role) {
    const std::string where = choice.where.empty() ? config.path().string() : choice.where;
    try {
        return loader.load(choice.plugin).make_store(choice.options_json);
    } catch (const nucleo::Error& e) {
        throw nucleo::Error(e.kind(), where + ": " + role + " (" + choice.plugin + "): " + e.what() +
                                          unset_note(config, where));
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
