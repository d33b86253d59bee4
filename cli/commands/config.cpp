// `nucleo config [--config FILE] [--check] [--json]`: the loaded config after ${VAR} expansion
// and includes, as YAML with every secret shown as `***` (a secret never reaches a log or an
// error message). Which file was read is the first line, so the lookup order can be checked.
//
// The config is checked whole first: every plugin it names is loaded (one that cannot be is an
// error at its file:line, exit 2), a `plugins.paths` folder that does not exist and every unset
// ${VAR} without a default are warnings on stderr naming file and line. --check prints one line
// ("FILE: ok, ...") instead of the config.
// --json prints the same content as one JSON document (docs/cli-json.md): quoted YAML scalars
// stay strings, plain ones that read as a number, true/false or null take that type.
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::cli {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void scalar_to_json(const YAML::Node& node, JsonWriter& w) {
    const std::string& text = node.Scalar();
    if (node.Tag() == "!") {  // quoted in the YAML: a string whatever it reads as
        w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
        return;
    }
    if (text == "true" || text == "false") {
        w.Bool(text == "true");
        return;
    }
    if (text == "null" || text == "~") {
        w.Null();
        return;
    }
    char* end = nullptr;
    const long long whole = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && *end == '\0') {
        w.Int64(whole);
        return;
    }
    const double real = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0') {
        w.Double(real);
        return;
    }
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
}

void yaml_to_json(const YAML::Node& node, JsonWriter& w) {
    switch (node.Type()) {
        case YAML::NodeType::Map:
            w.StartObject();
            for (const auto& kv : node) {
                const std::string key = kv.first.Scalar();
                w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
                yaml_to_json(kv.second, w);
            }
            w.EndObject();
            return;
        case YAML::NodeType::Sequence:
            w.StartArray();
            for (const auto& item : node) yaml_to_json(item, w);
            w.EndArray();
            return;
        case YAML::NodeType::Scalar: scalar_to_json(node, w); return;
        default: w.Null(); return;
    }
}

int run_config(const Args& args) {
    const Config config = load_config(args);
    // Named first, so they are on screen when a plugin refuses the empty value they left.
    for (const UnsetVariable& v : unset_variables(config)) {
        std::cerr << "nucleo config: warning: " << v.where << ": ${" << v.name
                  << "} is unset, so it expands to \"\"\n";
    }
    // abi.112: every plugin loads and its options match its schema.
    resolve_plugins(config, PluginLoader(config.plugin_paths()));
    if (args.has("check")) {
        const std::size_t plugins = config.providers().size() + (config.persistent_store() ? 1 : 0) +
                                    (config.session_store() ? 1 : 0) + (config.summarizer() ? 1 : 0);
        std::cout << config.path().string() << ": ok, "
                  << count_of(static_cast<std::int64_t>(config.catalog().all().size()), "model") << ", "
                  << count_of(static_cast<std::int64_t>(plugins), "plugin choice") << " resolved\n";
        return kExitOk;
    }
    const std::string yaml = config.redacted();
    if (!args.has("json")) {
        std::cout << yaml;
        return kExitOk;
    }
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    yaml_to_json(YAML::Load(yaml), w);
    std::cout << buf.GetString() << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& config_command() {
    static const CommandSpec spec{
        "config",
        "print the config with secrets shown as ***",
        {config_option(),
         {"--check", "", "check the config whole (plugins resolved, unset ${VAR}s named) and print one line"},
         json_option()},
        "",
        "",
        "Prints the config after ${VAR} expansion and includes; the first line names the file "
        "read.",
        run_config};
    return spec;
}

}  // namespace nucleo::cli
