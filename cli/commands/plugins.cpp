// `nucleo plugins [--json] [--config FILE] [--path FILE.so|DIR] [--check [--timeout SECONDS]]
// [NAME|FILE.so ...]` (abi.20, abi.21): lists each plugin found on the search path -- name,
// version, ABI major.minor, factories, file. --check loads each one in a child process
// (abi.105), so a plugin that crashes or hangs in init is reported with its signal or timeout
// (10 s by default) and the listing goes on.
//
// --config FILE searches that config's `plugins.paths` first, as every command reading it does;
// --path FILE.so checks that one file; --path DIR puts DIR first on the search path. Positional arguments load those plugins only, by name or by file.
// A plugin that a provider of the config runs with `isolation: process` is listed from a helper
// process (abi.130), so a crash or a hang in its init is reported like a refusal.
// A plugin that is refused prints its one-line reason on stderr; the good ones are still listed
// and the command exits 2 (bad input).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/plugin_check.hpp"
#include "config_loading.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::cli {
namespace {

namespace fs = std::filesystem;

std::string abi_of(const PluginInfo& info) {
    return std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor);
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
    return out.empty() ? "-" : out;
}

void print_json(const std::vector<PluginInfo>& plugins) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("plugins");
    w.StartArray();
    for (const auto& p : plugins) {
        w.StartObject();
        w.Key("name");
        w.String(p.name);
        w.Key("version");
        w.String(p.version);
        w.Key("abi");
        w.String(abi_of(p));
        w.Key("abi_major");
        w.Uint(p.abi_major);
        w.Key("abi_minor");
        w.Uint(p.abi_minor);
        w.Key("factories");
        w.StartArray();
        for (const auto& f : p.factories) w.String(f);
        w.EndArray();
        w.Key("file");
        w.String(p.file.string());
        w.Key("description");
        w.String(p.description);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

void print_table(const std::vector<PluginInfo>& plugins) {
    std::size_t wn = 4, wv = 7, wf = 9;
    for (const auto& p : plugins) {
        wn = std::max(wn, p.name.size());
        wv = std::max(wv, p.version.size());
        wf = std::max(wf, joined(p.factories).size());
    }
    auto row = [&](const std::string& n, const std::string& v, const std::string& a,
                   const std::string& f, const std::string& file) {
        std::cout << n << std::string(wn - n.size() + 2, ' ') << v
                  << std::string(wv - v.size() + 2, ' ') << a
                  << std::string(a.size() < 5 ? 6 - a.size() : 1, ' ') << f
                  << std::string(wf - f.size() + 2, ' ') << file << "\n";
    };
    row("NAME", "VERSION", "ABI", "FACTORIES", "FILE");
    for (const auto& p : plugins) {
        row(p.name, p.version, abi_of(p), joined(p.factories), p.file.string());
    }
}

/// abi.130: the provider instance of `config` that runs the plugin `target` with `isolation: process`,
/// if any; such a plugin is listed from a helper process, as it runs, so its init never runs here.
const ProviderConfig* isolated_provider(const Config& config, const PluginLoader& loader, const std::string& target) {
    std::error_code ec;
    fs::path file;
    try {
        file = loader.locate(target);
    } catch (const Error&) {
        return nullptr;  // loading it refuses it, naming the folders searched
    }
    for (const auto& p : config.providers()) {
        if (!p.process_isolation) continue;
        try {
            if (fs::equivalent(loader.locate(p.plugin), file, ec)) return &p;
        } catch (const Error&) {
        }
    }
    return nullptr;
}

int run_plugins(const Args& args) {
    const std::chrono::milliseconds timeout = timeout_option(args);
    // A child checking one plugin searches where this command does. `--path FILE.so` is not
    // passed on: the child is given that file as its one target already, and with both it would
    // list the file twice and its listing would not be the one plugin checked (abi.134).
    std::vector<std::string> child_options;
    if (auto v = args.get("config")) child_options.insert(child_options.end(), {"--config", *v});
    std::error_code not_a_folder;
    if (auto v = args.get("path"); v && fs::is_directory(*v, not_a_folder))
        child_options.insert(child_options.end(), {"--path", *v});
    std::vector<fs::path> config_paths;
    std::optional<Config> config;
    if (args.has(kConfigOption)) {
        config.emplace(load_config(args));
        config_paths = config->plugin_paths();
    }
    std::vector<std::string> targets = args.positionals();
    if (auto path = args.get("path")) {
        std::error_code ec;
        if (fs::is_directory(*path, ec)) {
            config_paths.insert(config_paths.begin(), fs::path(*path));
        } else {
            targets.push_back(*path);  // a file: check that one (missing files are refused too)
        }
    }
    const PluginLoader loader(config_paths);
    if (targets.empty()) {
        for (const auto& file : loader.discover()) targets.push_back(file.string());
    }

    std::vector<PluginInfo> found;
    bool refused = false;
    for (const auto& target : targets) {
        if (args.has("check")) {
            PluginCheck checked = check_in_child(target, child_options, timeout);
            if (checked.info) {
                found.push_back(std::move(*checked.info));
            } else {
                std::cerr << "nucleo plugins: " << checked.failure << "\n";
                refused = true;
            }
            continue;
        }
        try {
            const ProviderConfig* isolated = config ? isolated_provider(*config, loader, target) : nullptr;
            found.push_back((isolated != nullptr ? load_provider_plugin(loader, *isolated) : loader.load(target)).info());
        } catch (const Error& e) {
            std::cerr << "nucleo plugins: " << e.what() << "\n";
            refused = true;
        }
    }
    if (args.has("json")) {
        print_json(found);
    } else if (!found.empty()) {
        print_table(found);
    }
    return refused ? kExitBadInput : kExitOk;
}

}  // namespace

const CommandSpec& plugins_command() {
    static const CommandSpec spec{
        "plugins",
        "list the plugins on the search path, or check some",
        {json_option(),
         {"--path", "FILE.so|DIR", "check that plugin file, or search DIR first"},
         {"--config", "FILE", "search the config's plugins.paths first"},
         {"--check", "", "load each plugin in a child process: a crash or a hang is reported"},
         {"--timeout", "SECONDS", "with --check, how long a plugin may take to load (default 10)"}},
        "TARGETS",
        "plugin names or files to load (default: every plugin on the search path)",
        "A plugin that is refused prints its reason on stderr; the others are still listed and "
        "the exit status is 2.",
        run_plugins};
    return spec;
}

}  // namespace nucleo::cli
