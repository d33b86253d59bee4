// What the fixture servers (hostile_mcp_server.cpp, hostile_http_server.cpp) check of a request of
// the stateless revision 2026-07-28 (docs/spec/mcp.md, mcp.51): its `_meta` names the revision,
// the client's capabilities and the client (nucleo).
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace mcp_fixture {

/// What is wrong with a request's `_meta` (2026-07-28's RequestMetaObject), or empty.
inline std::string meta_fault(const rapidjson::Value& params) {
    if (!params.IsObject() || !params.HasMember("_meta") || !params["_meta"].IsObject())
        return "no _meta";
    const rapidjson::Value& meta = params["_meta"];
    const char* version = "io.modelcontextprotocol/protocolVersion";
    if (!meta.HasMember(version) || !meta[version].IsString() ||
        std::string(meta[version].GetString()) != "2026-07-28")
        return "no protocolVersion 2026-07-28 in _meta";
    const char* caps = "io.modelcontextprotocol/clientCapabilities";
    if (!meta.HasMember(caps) || !meta[caps].IsObject()) return "no clientCapabilities in _meta";
    const char* info = "io.modelcontextprotocol/clientInfo";
    if (!meta.HasMember(info) || !meta[info].IsObject() || !meta[info].HasMember("name") ||
        !meta[info]["name"].IsString() || std::string(meta[info]["name"].GetString()) != "nucleo")
        return "no clientInfo naming nucleo in _meta";
    return {};
}

}  // namespace mcp_fixture
