// `nucleo config [--config FILE] [--json]`: the loaded config after ${VAR} expansion and includes,
// as YAML with every secret shown as `***` (a secret never reaches a log or an error
// message). Which file was read is the first line, so the lookup order can be checked.
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
    const std::string yaml = load_config(args).redacted();
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
        {config_option(), json_option()},
        "",
        "",
        "Prints the config after ${VAR} expansion and includes; the first line names the file "
        "read.",
        run_config};
    return spec;
}

}  // namespace nucleo::cli
