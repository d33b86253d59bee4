// McpClient against servers nobody on the project wrote: the official
// @modelcontextprotocol/server-everything and server-filesystem, pinned in scripts/npm-mcp and
// installed by scripts/fetch-mcp-servers. Skipped, saying so, only when they are not installed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

namespace {

ServerSpec everything(const std::string& script) {
    ServerSpec spec;
    spec.name = "everything";
    spec.command = {"node", script, "stdio"};
    return spec;
}

bool has_tool(const std::vector<Tool>& tools, const std::string& name) {
    return std::any_of(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == name; });
}

}  // namespace

TEST(McpInterop, EverythingInitializesListsAndAnnouncesItsListChange) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    McpClient client(everything(script));
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(client.server_info_name(), "mcp-servers/everything");
    EXPECT_TRUE(client.announces_list_changes());
    const std::vector<Tool> tools = client.list_tools();
    EXPECT_TRUE(has_tool(tools, "echo"));
    EXPECT_TRUE(has_tool(tools, "get-tiny-image"));
    // The server registers its capability-dependent tools once initialized and says so with
    // notifications/tools/list_changed, which it writes before answering the listing (mcp.8).
    EXPECT_GE(client.list_changes(), 1U);
    EXPECT_TRUE(has_tool(tools, "simulate-research-query"));
    client.ping();
}

TEST(McpInterop, EverythingEchoesAndSendsAnImage) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    McpClient client(everything(script));
    const CallResult echo = client.call_tool("echo", R"({"message":"hello MCP"})");
    EXPECT_FALSE(echo.is_error);
    EXPECT_THAT(mcp_test::text_of(echo.content), HasSubstr("hello MCP"));
    mcp_test::expect_png(client.call_tool("get-tiny-image", "{}"));
}

TEST(McpInterop, EverythingSeesTheConfiguredEnvironment) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    ServerSpec spec = everything(script);
    spec.env = {{"NUCLEO_MCP_PROBE", "probe-value-17"}};
    McpClient client(spec);
    const CallResult env = client.call_tool("get-env", "{}");
    EXPECT_THAT(mcp_test::text_of(env.content),
                HasSubstr(R"("NUCLEO_MCP_PROBE": "probe-value-17")"));
}

TEST(McpInterop, EverythingLongOperationIsCancelledAndTheServerGoesOn) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    McpClient client(everything(script));
    mcp_test::expect_long_operation_cancelled(client);
}

TEST(McpInterop, FilesystemListsAndReadsOnlyWhatItWasGiven) {
    MCP_REQUIRE_NPM_SERVER(script, "server-filesystem");
    std::string pattern =
        (std::filesystem::temp_directory_path() / "nucleo-mcp-fs-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    const std::filesystem::path dir = pattern;
    std::ofstream(dir / "note.txt") << "hello from nucleo\n";
    {
        ServerSpec spec;
        spec.name = "files";
        spec.command = {"node", script, std::filesystem::canonical(dir).string()};
        McpClient client(spec);
        const std::vector<Tool> tools = client.list_tools();
        EXPECT_TRUE(has_tool(tools, "list_directory"));
        EXPECT_TRUE(has_tool(tools, "read_text_file"));
        const std::string path = std::filesystem::canonical(dir).string();
        const CallResult listing =
            client.call_tool("list_directory", R"({"path":")" + path + R"("})");
        EXPECT_FALSE(listing.is_error);
        EXPECT_THAT(mcp_test::text_of(listing.content), HasSubstr("[FILE] note.txt"));
        const CallResult read =
            client.call_tool("read_text_file", R"({"path":")" + path + R"(/note.txt"})");
        EXPECT_THAT(mcp_test::text_of(read.content), HasSubstr("hello from nucleo"));
        // mcp.33: the server's refusal is the tool's error result, for the model to read.
        const CallResult outside =
            client.call_tool("read_text_file", R"({"path":"/etc/hostname"})");
        EXPECT_TRUE(outside.is_error);
    }
    std::filesystem::remove_all(dir);
}
