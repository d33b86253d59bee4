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

}  // namespace nucleo::cli
