// The stateless revision 2026-07-28 as the client writes and reads it (mcp.50 to mcp.55): the
// `_meta` every request carries, the headers that mirror it over Streamable HTTP, the
// `server/discover` result, and the result types. Also what the server declares of itself, read
// the same way from an `initialize` answer and from a `server/discover` one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/transport.hpp"

namespace nucleo::mcp_internal {

/// 2026-07-28's UnsupportedProtocolVersionError (schema/2026-07-28/schema.ts:
/// UNSUPPORTED_PROTOCOL_VERSION).
inline constexpr int kUnsupportedProtocolVersion = -32022;

/// The `_meta` keys of a request and of a notification (schema.ts RequestMetaObject,
/// NotificationMetaObject, ResultMetaObject).
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

/// What a server declares of itself (mcp.3, mcp.50).
struct ServerDeclarations {
    bool has_tools = false;
    bool list_changed = false;
    std::string name;
    std::string version;
};

/// `capabilities.tools` and its `listChanged`, and the `name` and `version` of `info` (null: none
/// given). Members of another type are read as absent.
ServerDeclarations read_declarations(const rapidjson::Value& capabilities,
                                     const rapidjson::Value* info);

/// mcp.51: `params_json` (an object written by the client, or empty for none) with the
/// revision's `_meta` first: the protocol version, clientInfo nucleo and empty clientCapabilities.
std::string with_request_meta(std::string_view params_json);

/// mcp.51: the headers that mirror a request over Streamable HTTP: `Mcp-Method`, and `Mcp-Name`
/// when `name` is given (tools/call), Base64-encoded (`=?base64?…?=`) when it is not a plain
/// header value.
HttpHeaders request_headers(std::string_view method, std::optional<std::string_view> name);

/// mcp.51: `value` as a header value: itself when it is visible ASCII and spaces with none at
/// either end and not in the sentinel's form, else the sentinel around its Base64.
std::string header_value(std::string_view value);

/// mcp.55: one `x-mcp-header` annotation of a tool's input schema: the header's name part
/// (`Mcp-Param-{name}`) and the chain of `properties` keys leading to the annotated parameter.
struct ParamHeader {
    std::string name;
    std::vector<std::string> path;
};

/// mcp.55: the annotations of `input_schema`. Throws Error(kProtocol) saying why the tool
/// definition is invalid (an annotation that is not a token, named twice, on a parameter that is
/// not a string, integer or boolean, or not reachable through `properties` alone).
std::vector<ParamHeader> param_headers(const rapidjson::Value& input_schema);

/// mcp.55: the `Mcp-Param-{name}` headers of a call's `arguments`, appended to `out`; a
/// parameter absent, null or of another type is left out.
void add_param_headers(const std::vector<ParamHeader>& annotated, const rapidjson::Value& arguments,
                       HttpHeaders& out);

/// mcp.50, mcp.54: the revisions a `server/discover` result lists, and its declarations. Throws
/// Error(kProtocol) saying what is wrong ("without supportedVersions", …).
std::vector<std::string> read_discover_result(const rapidjson::Value& result,
                                              ServerDeclarations& out);

/// mcp.50: the revisions an UnsupportedProtocolVersionError's `data.supported` names (strings
/// only; empty when there is none).
std::vector<std::string> supported_revisions(const rapidjson::Value& error);

/// mcp.53: nullopt when `result` is complete (`resultType` "complete", or absent as from a
/// handshake server); else why it is not ("asked for input (input_required) …").
std::optional<std::string> incomplete_result(const rapidjson::Value& result);

}  // namespace nucleo::mcp_internal
