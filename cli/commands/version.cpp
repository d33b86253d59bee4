// `nucleo version [--json]` (also `nucleo --version`): the library's version and the plugin ABI
// it speaks.
#include <iostream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "nucleo/version.hpp"

namespace nucleo::cli {
namespace {

int run_version(const Args& args) {
    if (!args.has("json")) {
        std::cout << "nucleo " << nucleo::version() << " (plugin ABI " << NUCLEO_PLUGIN_ABI_MAJOR
                  << "." << NUCLEO_PLUGIN_ABI_MINOR << ")\n";
        return kExitOk;
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("version");
    w.String(nucleo::version());
    w.Key("plugin_abi");
    w.StartObject();
    w.Key("major");
    w.Uint(NUCLEO_PLUGIN_ABI_MAJOR);
    w.Key("minor");
    w.Uint(NUCLEO_PLUGIN_ABI_MINOR);
    w.EndObject();
    w.EndObject();
    std::cout << buf.GetString() << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& version_command() {
    static const CommandSpec spec{"version", "print the version of nucleo", {json_option()}, "",
                                  "", "", run_version};
    return spec;
}

}  // namespace nucleo::cli
