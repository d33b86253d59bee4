// The stateless revision 2026-07-28 over stdio (mcp.50 to mcp.55), against the hostile fixture
// (hostile_mcp_server.cpp): `modern` speaks it and refuses a request whose `_meta` is not the
// revision's; the other modes are servers of the handshake revisions, of neither, or of bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mcp/stateless.hpp"
#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

TEST(McpStateless, AServerOfTheStatelessRevisionIsSpokenToWithoutAHandshake) {
    McpClient client(mcp_test::hostile("modern"));
    // mcp.50: server/discover listed 2026-07-28; the fixture refuses initialize, so none was sent.
    EXPECT_EQ(client.protocol_revision(), "2026-07-28");
    EXPECT_EQ(client.protocol_revision(), std::string(kStatelessRevision));
    EXPECT_EQ(client.server_info_name(), "hostile-modern");
    EXPECT_EQ(client.server_info_version(), "2.0");
    EXPECT_TRUE(client.announces_list_changes());
    // mcp.51: the fixture refuses any request whose _meta lacks the revision, clientInfo or
    // clientCapabilities; these are answered.
    const std::vector<Tool> tools = client.list_tools();
    ASSERT_FALSE(tools.empty());
    EXPECT_EQ(tools.front().name, "echo");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"hi"})").content), "echo: hi");
    // mcp.53: the revision has no ping; server/discover stands for it.
    client.ping();
    EXPECT_TRUE(client.alive());
}

TEST(McpStateless, AServerThatDoesNotKnowDiscoverIsSpokenToWithTheHandshake) {
    McpClient client(mcp_test::hostile("well"));
    // mcp.50: -32601 to server/discover is a server of the handshake revisions.
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(client.server_info_name(), "hostile");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"hi"})").content), "echo: hi");
}

TEST(McpStateless, AServerThatEndsAtDiscoverIsStartedAgainAndInitialized) {
    McpClient client(mcp_test::hostile("exitprobe"));
    // mcp.50: it exited on server/discover; a fresh process was initialized.
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"back"})").content),
              "echo: back");
}

TEST(McpStateless, AServerThatExitsAtOnceIsStartedAgainOnlyOnce) {
    const Error e = mcp_test::error_of([] { McpClient client(mcp_test::hostile("exit")); });
    // mcp.50: the second process exited too, during initialize: given up, not started a third
    // time.
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(), HasSubstr("exited with status 3 during initialize"));
}

TEST(McpStateless, ADiscoverResultListingOnlyAHandshakeRevisionLeadsToTheHandshake) {
    McpClient client(mcp_test::hostile("listslegacy"));
    // mcp.50: the result lacks 2026-07-28 and names 2025-11-25: initialize, as `well` answers it.
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(client.server_info_name(), "hostile");
}

TEST(McpStateless, AServerThatSpeaksNeitherIsRefusedNamingWhatEachSpeaks) {
    const Error e = mcp_test::error_of([] { McpClient client(mcp_test::hostile("future")); });
    // mcp.50: its UnsupportedProtocolVersionError names 2027-01-01 only: nothing is common.
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_EQ(std::string(e.what()),
              "MCP server 'hostile': refused server/discover: code -32022: Unsupported protocol "
              "version (it speaks 2027-01-01); this client speaks 2026-07-28, 2025-11-25, "
              "2025-06-18, 2025-03-26");
}

TEST(McpStateless, ListChangesArriveOnTheSubscription) {
    McpClient client(mcp_test::hostile("modern"));
    EXPECT_EQ(client.list_changes(), 0U);
    // mcp.52: the fixture announces a change only on a subscriptions/listen subscription, tagged
    // with its id; mcp.8 counts it.
    client.call_tool("grow", R"({"text":""})");
    EXPECT_EQ(client.list_changes(), 1U);
    client.call_tool("drop", R"({"text":""})");
    EXPECT_EQ(client.list_changes(), 2U);
    std::vector<std::string> names;
    for (const auto& t : client.list_tools()) names.push_back(t.name);
    EXPECT_THAT(names, ::testing::Contains("extra_1"));
    EXPECT_THAT(names, ::testing::Not(::testing::Contains("echo")));
}

TEST(McpStateless, AResultAskingForInputIsRefusedAndTheServerStays) {
    McpClient client(mcp_test::hostile("modern"));
    const Error e = mcp_test::error_of([&] { client.call_tool("input", R"({"text":""})"); });
    // mcp.53: the client declares no capabilities, so it cannot give what input_required asks.
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile' answered tools/call 'input' with a "
                                    "request for input (resultType input_required)"));
    EXPECT_TRUE(client.alive());
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"on"})").content), "echo: on");
}

struct BadDiscover {
    const char* mode;
    const char* said;
};

class McpStatelessBadDiscover : public ::testing::TestWithParam<BadDiscover> {};

TEST_P(McpStatelessBadDiscover, IsAProtocolErrorNamingTheServer) {
    const Error e =
        mcp_test::error_of([] { McpClient client(mcp_test::hostile(GetParam().mode)); });
    // mcp.54: a bad discover result is the server's fault; the host goes on.
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile'"));
    EXPECT_THAT(e.what(), HasSubstr(GetParam().said));
}

INSTANTIATE_TEST_SUITE_P(
    Results, McpStatelessBadDiscover,
    ::testing::Values(
        BadDiscover{"noversions",
                    "answered server/discover with a result without supportedVersions"},
        BadDiscover{"badversions",
                    "answered server/discover with supportedVersions that is not an array"},
        BadDiscover{"badutf8", "a message that is not UTF-8 at byte"}),
    [](const auto& info) { return std::string(info.param.mode); });

TEST(McpStateless, AHeaderValueThatIsNotPlainIsSentInBase64) {
    using nucleo::mcp_internal::header_value;
    // mcp.51: the examples of 2026-07-28's Streamable HTTP "Value Encoding".
    EXPECT_EQ(header_value("us-west1"), "us-west1");
    EXPECT_EQ(header_value("Hello, \xE4\xB8\x96\xE7\x95\x8C"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
    EXPECT_EQ(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
    EXPECT_EQ(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
    EXPECT_EQ(header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
}
