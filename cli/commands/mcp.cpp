// `nucleo mcp list | tools NAME [--json] [--config FILE]`: the MCP servers of nucleo.yaml
// `mcp_servers:` (mcp.40), and the tools one of them lists once started (mcp.7).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <iostream>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

namespace nucleo::cli {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

/// The command line a server is started with, as one line for people.
std::string command_line(const McpServerConfig& s) {
    if (!s.url.empty()) return redact_url(s.url);  // an HTTP server (mcp.48)
    std::string out = s.command;
    for (const auto& a : s.args) out += " " + a;
    return out;
}

/// The first line of a description: a table row stays one line.
std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

/// One compact JSON document on a line (docs/cli-json.md): {"schema_version": 1, ...body}.
template <typename Body>
void print_json(Body&& body) {
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    body(w);
    w.EndObject();
    std::cout << buffer.GetString() << '\n';
}

int list_servers(const Config& config, bool json) {
    if (json) {
        print_json([&](JsonWriter& w) {
            w.Key("servers");
            w.StartArray();
            for (const auto& s : config.mcp_servers()) {
                w.StartObject();
                w.Key("name");
                w.String(s.name);
                if (!s.url.empty()) {
                    // mcp.48: the URL without its userinfo, and the header names only.
                    w.Key("url");
                    w.String(redact_url(s.url));
                    w.Key("headers");
                    w.StartArray();
                    for (const auto& kv : s.headers) w.String(kv.first);
                    w.EndArray();
                    w.EndObject();
                    continue;
                }
                w.Key("command");
                w.String(s.command);
                w.Key("args");
                w.StartArray();
                for (const auto& a : s.args) w.String(a);
                w.EndArray();
                // The values may be tokens: only the names are shown.
                w.Key("env");
                w.StartArray();
                for (const auto& kv : s.env) w.String(kv.first);
                w.EndArray();
                w.EndObject();
            }
            w.EndArray();
        });
        return kExitOk;
    }
    if (config.mcp_servers().empty()) {
        std::cout << "no MCP servers in " << config.path().string() << " (mcp_servers:)\n";
        return kExitOk;
    }
    for (const auto& s : config.mcp_servers())
        std::cout << s.name << '\t' << command_line(s) << '\n';
    return kExitOk;
}

int list_tools(const Config& config, const std::string& name, bool json) {
    mcp::McpClient client(mcp::server_spec(config.mcp_server(name)));
    const std::vector<mcp::Tool> tools = client.list_tools();
    if (json) {
        print_json([&](JsonWriter& w) {
            w.Key("server");
            w.String(name);
            w.Key("protocol_revision");
            w.String(client.protocol_revision());
            w.Key("tools");
            w.StartArray();
            for (const auto& t : tools) {
                w.StartObject();
                w.Key("name");
                w.String(t.name);
                w.Key("description");
                w.String(t.description);
                w.Key("input_schema");
                w.RawValue(t.input_schema_json.data(), t.input_schema_json.size(),
                           rapidjson::kObjectType);
                w.EndObject();
            }
            w.EndArray();
        });
        return kExitOk;
    }
    std::cout << name << ": " << client.server_info_name() << ' ' << client.server_info_version()
              << ", protocol revision " << client.protocol_revision() << ", "
              << count_of(static_cast<std::int64_t>(tools.size()), "tool") << '\n';
    for (const auto& t : tools) std::cout << t.name << '\t' << first_line(t.description) << '\n';
    return kExitOk;
}

int run_mcp(const Args& args) {
    const auto& words = args.positionals();
    if (words.empty()) throw UsageError{"usage: nucleo mcp list | tools NAME"};
    const std::string& verb = words[0];
    if (verb == "list") {
        if (words.size() != 1) throw UsageError{"usage: nucleo mcp list"};
        return list_servers(load_config(args), args.has("json"));
    }
    if (verb == "tools") {
        if (words.size() != 2) throw UsageError{"usage: nucleo mcp tools NAME"};
        return list_tools(load_config(args), words[1], args.has("json"));
    }
    // cli.101: the misspelled verb, and what it was likely meant as.
    throw UsageError{unknown_word("verb", verb, {"list", "tools"}) + "; verbs: list, tools"};
}

}  // namespace

const CommandSpec& mcp_command() {
    static const CommandSpec spec{
        "mcp",
        "the MCP servers of the config: list them, or start one and list its tools",
        {json_option(), config_option()},
        "ARGS",
        "list | tools NAME",
        "list prints each server of mcp_servers: and its command (nothing is started).\n"
        "tools NAME starts that server, negotiates the protocol and prints its tools.",
        run_mcp};
    return spec;
}

}  // namespace nucleo::cli
