// Tools from Model Context Protocol servers (docs/spec/mcp.md).
//
// McpClient speaks JSON-RPC 2.0 to one MCP server started as a child process (the stdio
// transport): it negotiates the protocol revision, lists the server's tools, calls them with a
// timeout and cancellation, and follows the server's list changes. Every failure of the server
// (it does not start, dies, hangs, answers garbage or too much) is an nucleo::Error naming the
// server and what happened (mcp.10); the host is never taken down.
//
// attach_mcp_server makes a client's tools tools of an Agent (mcp.20 to mcp.26).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {

class Agent;
struct McpServerConfig;

namespace mcp {

/// mcp.2, mcp.50: the protocol revisions this client speaks, newest first. The first is the
/// stateless revision (kStatelessRevision), asked for with `server/discover`; the others are the
/// handshake revisions, the newest of which is asked for in `initialize` when the server does not
/// speak the stateless one.
inline constexpr std::array<std::string_view, 4> kProtocolRevisions = {"2026-07-28", "2025-11-25",
                                                                       "2025-06-18", "2025-03-26"};
/// mcp.50: the revision without a handshake (per-request `_meta`, `server/discover`).
inline constexpr std::string_view kStatelessRevision = kProtocolRevisions.front();

/// mcp.34: the size past which a tool's text result is kept as an artifact.
inline constexpr std::size_t kArtifactBytes = 8 * 1024;

/// How to reach one MCP server: a command started over stdio, or the URL of a Streamable HTTP
/// endpoint (mcp.42), exactly one of them.
struct ServerSpec {
    /// The server's name in errors, log lines and namespaced tool names (`name__tool`, mcp.21):
    /// `^[A-Za-z0-9_-]{1,32}$`.
    std::string name;
    /// argv: the program (looked up on PATH when it has no slash) and its arguments.
    std::vector<std::string> command;
    /// Variables set for the server on top of the host's environment (mcp.5).
    std::vector<std::pair<std::string, std::string>> env;
    /// The Streamable HTTP endpoint (http:// or https://); empty for a stdio server.
    std::string url;
    /// Headers sent with every HTTP request (a bearer token, mcp.48).
    std::vector<std::pair<std::string, std::string>> headers;
};

/// The spec of a server configured under nucleo.yaml `mcp_servers:` (mcp.40): its name, its
/// command and args as argv, its env.
ServerSpec server_spec(const McpServerConfig& config);

/// Bounds of one client (mcp.11 to mcp.14).
struct ClientLimits {
    /// Start, `server/discover` and `initialize` together (mcp.50).
    std::chrono::milliseconds start_timeout{20'000};
    /// A `tools/list` page, a ping.
    std::chrono::milliseconds request_timeout{10'000};
    /// A `tools/call`, unless the call names its own.
    std::chrono::milliseconds call_timeout{60'000};
    /// One JSON-RPC message (one line of the server's output).
    std::size_t max_message_bytes = 16u << 20;
    /// Tools over all pages of one listing, and pages of one listing.
    std::size_t max_tools = 2'000;
    std::size_t max_pages = 100;
};

/// One tool as the server describes it. The schemas are compact JSON text.
struct Tool {
    std::string name;
    std::string title;
    std::string description;
    std::string input_schema_json;
    std::string output_schema_json;  ///< empty when the server gave none
};

/// What one `tools/call` returned (mcp.30 to mcp.33): the content as blocks (text, images,
/// embedded resources as text, `structuredContent` as a JsonBlock when no text stands for it).
struct CallResult {
    std::vector<ContentBlock> content;
    bool is_error = false;
};

/// A connection to one MCP server, over stdio or Streamable HTTP. Construction starts the server
/// (or opens the session) and runs the initialization; destruction ends it, its whole process
/// group with it (mcp.6), or the HTTP session (mcp.49). Calls from several threads are served one
/// at a time.
class McpClient {
  public:
    /// Starts and initializes the server. Throws Error(kTransport) when it cannot be started, dies
    /// or stays silent; kProtocol when it answers what MCP does not allow or no revision of
    /// kProtocolRevisions.
    explicit McpClient(ServerSpec spec, ClientLimits limits = {});
    ~McpClient();
    McpClient(const McpClient&) = delete;
    McpClient& operator=(const McpClient&) = delete;

    [[nodiscard]] const std::string& name() const noexcept;
    /// The negotiated revision (one of kProtocolRevisions; kStatelessRevision: no handshake,
    /// mcp.50).
    [[nodiscard]] const std::string& protocol_revision() const noexcept;
    /// serverInfo.name and .version as the server sent them.
    [[nodiscard]] const std::string& server_info_name() const noexcept;
    [[nodiscard]] const std::string& server_info_version() const noexcept;
    /// Whether the server declared `tools.listChanged` (and, in the stateless revision,
    /// acknowledged the subscription to it, mcp.52).
    [[nodiscard]] bool announces_list_changes() const noexcept;
    /// False once the server died or was given up on (mcp.15); every call then throws.
    [[nodiscard]] bool alive() const noexcept;

    /// Every tool over all pages (mcp.7).
    std::vector<Tool> list_tools();
    /// Calls a tool with `arguments_json` (a JSON object). A timeout or `cancel` firing sends
    /// `notifications/cancelled` and throws Error(kTransport) (mcp.12). `timeout` zero: the
    /// limits' call_timeout.
    CallResult call_tool(std::string_view name, std::string_view arguments_json,
                         const CancellationToken* cancel = nullptr,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
    /// A `ping` answered within request_timeout, else throws. The stateless revision has no ping:
    /// `server/discover` is asked instead (mcp.53).
    void ping();
    /// Reads what the server sent while no request was waiting (notifications, its requests),
    /// without blocking, and returns how many `notifications/tools/list_changed` arrived since the
    /// client started (mcp.8).
    std::uint64_t list_changes();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Declares `client`'s tools as tools of `agent` (mcp.20): the list is read again before each
/// round once the server said it changed, new tools arrive as late tools (tools.4), a tool the
/// server removed is refused when called (mcp.23), and a failing server gives the model a tool
/// error (mcp.24). The agent keeps the client alive. A text result over `artifact_bytes` (0:
/// never) is kept whole in the conversation's artifact registry, and the model reads its
/// reference (mcp.34).
void attach_mcp_server(Agent& agent, std::shared_ptr<McpClient> client,
                       std::size_t artifact_bytes = kArtifactBytes);

}  // namespace mcp
}  // namespace nucleo
