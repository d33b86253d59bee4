#include "config/mcp_servers.hpp"

#include <algorithm>

namespace nucleo::config_internal {
namespace {

bool server_name_ok(std::string_view name) {
    return !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

}  // namespace

void read_mcp_servers(const Reader& r, const YamlNode& n, std::vector<McpServerConfig>& out) {
    r.expect_map(n, "mcp_servers");
    for (const auto& [key, value] : n.entries()) {
        const std::string& name = r.key_of(key, "mcp_servers");
        const std::string path = child("mcp_servers", name);
        // mcp.21: the name goes into tool names (`name__tool`).
        if (!server_name_ok(name))
            r.fail(key.mark(), path, "a server name is 1 to 32 of A-Z, a-z, 0-9, '_' and '-'");
        const auto twice = std::find_if(out.begin(), out.end(),
                                        [&](const McpServerConfig& s) { return s.name == name; });
        if (twice != out.end())
            r.fail(key.mark(), path, "set twice (also at " + twice->where + ")");
        r.expect_map(value, path, {"command", "args", "env", "url", "headers"});
        McpServerConfig server;
        server.name = name;
        server.where = r.where(value.mark());
        // mcp.48: a server is a command (stdio) or a URL (Streamable HTTP), exactly one.
        const bool has_command = Reader::present(Reader::get(value, "command"));
        const bool has_url = Reader::present(Reader::get(value, "url"));
        if (has_command && has_url)
            r.fail(Reader::get(value, "url").mark(), child(path, "url"),
                   "command and url are both set; a server is one or the other");
        if (has_url) {
            server.url = r.name(value, "url", path);
            if (server.url.rfind("http://", 0) != 0 && server.url.rfind("https://", 0) != 0)
                r.fail(Reader::get(value, "url").mark(), child(path, "url"),
                       "expected an http:// or https:// URL, got " + quote(redact_url(server.url)));
            for (const char* stdio_only : {"args", "env"})
                if (const YamlNode n = Reader::get(value, stdio_only); Reader::present(n))
                    r.fail(n.mark(), child(path, stdio_only),
                           "only a command (stdio) server has " + std::string(stdio_only));
        } else {
            server.command = r.name(value, "command", path);
            if (const YamlNode n = Reader::get(value, "headers"); Reader::present(n))
                r.fail(n.mark(), child(path, "headers"), "only a url (HTTP) server has headers");
        }
        if (const YamlNode headers = Reader::get(value, "headers"); Reader::present(headers)) {
            r.expect_map(headers, child(path, "headers"));
            for (const auto& [k, v] : headers.entries()) {
                const std::string& header = r.key_of(k, child(path, "headers"));
                // A header value may be a token (Authorization: Bearer …): never quoted.
                server.headers.emplace_back(
                    header, r.string(v, child(child(path, "headers"), header), true));
            }
        }
        if (const YamlNode args = Reader::get(value, "args"); Reader::present(args)) {
            if (!args.is_sequence())
                r.fail(args.mark(), child(path, "args"),
                       "expected a list of strings, got " + describe(args));
            std::size_t i = 0;
            for (const YamlNode& a : args.items())
                server.args.push_back(r.string(a, element(child(path, "args"), i++)));
        }
        if (const YamlNode env = Reader::get(value, "env"); Reader::present(env)) {
            r.expect_map(env, child(path, "env"));
            for (const auto& [k, v] : env.entries()) {
                const std::string& var = r.key_of(k, child(path, "env"));
                // An environment value may be a token: never quoted in a refusal.
                server.env.emplace_back(var, r.string(v, child(child(path, "env"), var), true));
            }
        }
        out.push_back(std::move(server));
    }
}

void emit_mcp_servers(YAML::Emitter& out, const std::vector<McpServerConfig>& servers) {
    if (servers.empty()) return;
    out << YAML::Key << "mcp_servers" << YAML::Value << YAML::BeginMap;
    for (const auto& s : servers) {
        out << YAML::Key << s.name << YAML::Value << YAML::BeginMap;
        if (!s.url.empty()) {
            out << YAML::Key << "url" << YAML::Value << redact_url(s.url);
            if (!s.headers.empty()) {
                out << YAML::Key << "headers" << YAML::Value << YAML::BeginMap;
                for (const auto& [k, v] : s.headers) out << YAML::Key << k << YAML::Value << "***";
                out << YAML::EndMap;
            }
            out << YAML::EndMap;
            continue;
        }
        out << YAML::Key << "command" << YAML::Value << s.command;
        out << YAML::Key << "args" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& a : s.args) out << redact_url(a);
        out << YAML::EndSeq;
        if (!s.env.empty()) {
            out << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
            for (const auto& [k, v] : s.env) out << YAML::Key << k << YAML::Value << "***";
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
}

}  // namespace nucleo::config_internal

namespace nucleo {

const McpServerConfig& Config::mcp_server(std::string_view name) const {
    std::string known;
    for (const auto& s : mcp_servers_) {
        if (s.name == name) return s;
        known += (known.empty() ? "" : ", ") + s.name;
    }
    throw Error(ErrorKind::kNotFound,
                "no MCP server " + config_internal::quote(name) + " in " + path_.string() +
                    " (mcp_servers: " + (known.empty() ? "none" : known) + ")");
}

}  // namespace nucleo
