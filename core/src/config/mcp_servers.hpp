// nucleo.yaml `mcp_servers:` (mcp.40): how each MCP server is started, read like every other
// part of the config (unknown keys refused with file:line:column and key path).
#pragma once

#include <vector>

#include <yaml-cpp/emitter.h>

#include "config/yaml_reader.hpp"
#include "nucleo/config.hpp"

namespace nucleo::config_internal {

/// Reads `mcp_servers:` into `out`; a name set twice (in this file or an included one) is
/// refused naming both places.
void read_mcp_servers(const Reader& r, const YamlNode& n, std::vector<McpServerConfig>& out);

/// `mcp_servers:` as Config::redacted() shows it: the command and arguments, every env value
/// `***`.
void emit_mcp_servers(YAML::Emitter& out, const std::vector<McpServerConfig>& servers);

}  // namespace nucleo::config_internal
