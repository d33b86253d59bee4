// McpClient over Streamable HTTP against a server nobody on the project wrote:
// @modelcontextprotocol/server-everything (pinned in scripts/npm-mcp), started with
// `streamableHttp` on a port the test found free. Its answers are event streams with event ids
// (it keeps an event store), and it offers the GET stream. Skipped, saying so, only when the
// server is not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "http_support.hpp"
#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

namespace {

/// server-everything over HTTP for one test.
struct Everything {
    std::unique_ptr<mcp_test::ServerProcess> process;
    ServerSpec spec;
    explicit Everything(const std::string& script) {
        const int port = mcp_test::free_port();
        process = std::make_unique<mcp_test::ServerProcess>(
            std::vector<std::string>{"node", script, "streamableHttp"},
            std::vector<std::string>{"PORT=" + std::to_string(port)});
        // Node starts in well under a second here; 600 tries of 50 ms bound a slow machine.
        EXPECT_TRUE(mcp_test::wait_for_port(port, 600)) << "server-everything did not listen";
        spec.name = "everything";
        spec.url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
    }
};

bool has_tool(const std::vector<Tool>& tools, const std::string& name) {
    return std::any_of(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == name; });
}

}  // namespace

TEST(McpHttpInterop, EverythingInitializesListsAndAnnouncesItsListChangeOnItsGetStream) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    Everything server(script);
    McpClient client(server.spec);
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(client.server_info_name(), "mcp-servers/everything");
    EXPECT_TRUE(client.announces_list_changes());
    // mcp.46: the server registers its capability-dependent tools once initialized and announces
    // them on the GET stream, opened before notifications/initialized; read within a bounded
    // number of round trips.
    for (int i = 0; i < 200 && client.list_changes() == 0; ++i) client.ping();
    EXPECT_GE(client.list_changes(), 1U);
    const std::vector<Tool> tools = client.list_tools();
    EXPECT_TRUE(has_tool(tools, "echo"));
    EXPECT_TRUE(has_tool(tools, "get-sum"));
    EXPECT_TRUE(has_tool(tools, "get-tiny-image"));
    EXPECT_TRUE(has_tool(tools, "simulate-research-query"));
}

TEST(McpHttpInterop, EverythingEchoesAddsAndSendsAnImage) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    Everything server(script);
    McpClient client(server.spec);
    const CallResult echo = client.call_tool("echo", R"({"message":"hello over HTTP"})");
    EXPECT_FALSE(echo.is_error);
    EXPECT_THAT(mcp_test::text_of(echo.content), HasSubstr("hello over HTTP"));
    EXPECT_THAT(mcp_test::text_of(client.call_tool("get-sum", R"({"a":19,"b":23})").content),
                HasSubstr("42"));
    mcp_test::expect_png(client.call_tool("get-tiny-image", "{}"));
}

TEST(McpHttpInterop, EverythingLongOperationIsCancelledAndTheSessionGoesOn) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    Everything server(script);
    McpClient client(server.spec);
    mcp_test::expect_long_operation_cancelled(client);
}
