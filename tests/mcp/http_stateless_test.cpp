// The stateless revision 2026-07-28 over Streamable HTTP (mcp.50 to mcp.55), against the hostile
// fixture's `modern` mode (hostile_http_server.cpp), which refuses with HTTP 400 any POST whose
// headers do not mirror its body or whose `_meta` is not the revision's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "http_support.hpp"
#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

TEST(McpHttpStateless, AServerOfTheStatelessRevisionIsSpokenToWithItsHeadersAndNoSession) {
    mcp_test::HostileHttp f("modern");
    McpClient client(f.spec());
    // mcp.50: server/discover listed 2026-07-28 (the fixture refuses initialize).
    EXPECT_EQ(client.protocol_revision(), "2026-07-28");
    EXPECT_EQ(client.server_info_name(), "hostile-http-modern");
    EXPECT_TRUE(client.announces_list_changes());
    ASSERT_FALSE(client.list_tools().empty());
    client.ping();
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"hi"})").content), "echo: hi");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("sse_echo", "{}").content), "sse: done");
    // mcp.51: the revision, the method and the tool in headers, and no session although the
    // discover answer named one.
    EXPECT_THAT(mcp_test::text_of(client.call_tool("heard", "{}").content),
                HasSubstr("version=2026-07-28 session= deleted= method=tools/call name=heard"));
}

TEST(McpHttpStateless, AServerOfTheHandshakeRevisionsIsStillSpokenToWithASession) {
    mcp_test::HostileHttp f("well");
    McpClient client(f.spec());
    // mcp.50: its 400 to a server/discover without a session carried no JSON-RPC error answering
    // it: a server of the handshake revisions.
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_THAT(mcp_test::text_of(client.call_tool("heard", "{}").content),
                HasSubstr("version=2025-11-25 session=s1"));
}

TEST(McpHttpStateless, ListChangesArriveOnTheSubscriptionStream) {
    mcp_test::HostileHttp f("modern");
    McpClient client(f.spec());
    EXPECT_EQ(client.list_changes(), 0U);
    // mcp.52: `grow` announces on the subscriptions/listen stream, tagged with its id.
    client.call_tool("grow", "{}");
    std::uint64_t seen = 0;
    for (int i = 0; i < 100 && seen == 0; ++i) {
        seen = client.list_changes();
        if (seen == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(seen, 1U);
    std::vector<std::string> names;
    for (const auto& t : client.list_tools()) names.push_back(t.name);
    EXPECT_THAT(names, ::testing::Contains("extra_1"));
}

TEST(McpHttpStateless, ACallPastItsDeadlineIsCancelledByClosingItsStream) {
    mcp_test::HostileHttp f("modern");
    McpClient client(f.spec());
    const Error e = mcp_test::error_of(
        [&] { client.call_tool("slow", "{}", nullptr, std::chrono::milliseconds(200)); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile-http': tools/call 'slow': no answer "
                                    "within 200 ms"));
    // mcp.51: no notifications/cancelled was POSTed; the server answers the next call.
    EXPECT_EQ(mcp_test::text_of(client.call_tool("cancelled", "{}").content), "cancelled: ");
    EXPECT_TRUE(client.alive());
}

TEST(McpHttpStateless, ParametersTheSchemaAnnotatesAreMirroredInHeaders) {
    mcp_test::HostileHttp f("modern");
    McpClient client(f.spec());
    std::vector<std::string> names;
    for (const auto& t : client.list_tools()) names.push_back(t.name);
    // mcp.55: `badheader` annotates an array's items: its definition is invalid and left out.
    EXPECT_THAT(names, ::testing::Contains("region"));
    EXPECT_THAT(names, ::testing::Not(::testing::Contains("badheader")));
    // The fixture refuses the call (400, -32020) when Mcp-Param-Region is missing; a value that
    // is not a plain header value goes in Base64, an integer in decimal, an absent one not at all.
    EXPECT_EQ(mcp_test::text_of(
                  client
                      .call_tool("region",
                                 R"({"region":"us-west1","where":{"zone":"Hello, \u4e16\u754c"}})")
                      .content),
              "region=us-west1 zone==?base64?SGVsbG8sIOS4lueVjA==?= floor=");
    EXPECT_EQ(mcp_test::text_of(
                  client.call_tool("region", R"({"region":"eu","where":{"floor":-7}})").content),
              "region=eu zone= floor=-7");
}

TEST(McpHttpStateless, ADiscoverAnswerThatIsNotUtf8IsAProtocolError) {
    mcp_test::HostileHttp f("badutf8");
    const Error e = mcp_test::error_of([&] { McpClient client(f.spec()); });
    // mcp.54: garbage in a 2xx answer to the probe is the server's fault, not a sign of the
    // handshake revisions; the host goes on.
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile-http': sent a message that is not UTF-8"));
    EXPECT_THAT(e.what(), HasSubstr("during server/discover"));
}
