// JSON-RPC 2.0 as the MCP client writes and reads it (mcp.1): one message per line, read through
// the core's guarded parser with its depth limit, UTF-8 checked first (mcp.13).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace nucleo::mcp_internal {

/// A request line: {"jsonrpc":"2.0","id":ID,"method":METHOD,"params":PARAMS}. `params_json` is
/// trusted JSON text (written by the client, or checked before).
std::string request_line(std::int64_t id, std::string_view method, std::string_view params_json);
/// A notification line (no id); `params_json` empty: no params.
std::string notification_line(std::string_view method, std::string_view params_json);
/// A result line answering the server's request `id_json` (its id as compact JSON).
std::string result_line(std::string_view id_json, std::string_view result_json);
/// An error line answering the server's request `id_json`.
std::string error_line(std::string_view id_json, int code, std::string_view message);
/// `text` as a JSON string literal.
std::string json_string(std::string_view text);

/// One message the server sent.
struct Incoming {
    rapidjson::Document doc;
    enum class Kind { kResponse, kRequest, kNotification } kind = Kind::kNotification;
    std::optional<std::int64_t> id;  ///< a response's id when it is an integer
    std::string method;              ///< a request's or notification's
};

/// Reads one line. Throws Error(kProtocol) saying what is wrong (not UTF-8 at byte N, not JSON,
/// too deep, not a JSON-RPC 2.0 message).
Incoming parse_incoming(std::string_view line);

/// The message of a JSON-RPC error object ("code -32602: Unknown tool").
std::string describe_error(const rapidjson::Value& error);

}  // namespace nucleo::mcp_internal
