// McpClient over Streamable HTTP against a hostile server of our own (hostile_http_server.cpp):
// the session, JSON and event-stream answers, resumption, expiry, the GET stream, and every
// misbehaviour an Error naming the server while the server stays usable (mcp.42 to mcp.49).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "http_support.hpp"
#include "mcp/sse.hpp"
#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

using mcp_test::http_spec;
using Fixture = mcp_test::HostileHttp;

TEST(McpHttp, InitializesAndAnswersWithJsonAndEventStreams) {
    Fixture f;
    ServerSpec spec = http_spec(f.url);
    spec.headers = {{"Authorization", "Bearer t0k-42"}};
    McpClient client(spec);
    EXPECT_EQ(client.protocol_revision(), "2025-11-25");
    EXPECT_EQ(client.server_info_name(), "hostile-http");
    EXPECT_TRUE(client.announces_list_changes());
    const std::vector<Tool> tools = client.list_tools();
    ASSERT_FALSE(tools.empty());
    EXPECT_EQ(tools.front().name, "echo");
    client.ping();
    // mcp.44: a JSON answer, and an event stream carrying a notification before the answer.
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"hi"})").content), "echo: hi");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("sse_echo", "{}").content), "sse: done");
    // mcp.43, mcp.48: the configured header and the negotiated revision on every request.
    EXPECT_THAT(mcp_test::text_of(client.call_tool("heard", "{}").content),
                HasSubstr("authorization=Bearer t0k-42 version=2025-11-25"));
}

TEST(McpHttp, EveryBadAnswerFailsItsCallNamingTheServerAndTheServerStays) {
    Fixture f;
    ClientLimits limits;
    limits.max_message_bytes = 64 * 1024;
    McpClient client(http_spec(f.url), limits);
    struct Case {
        const char* tool;
        ErrorKind kind;
        const char* says;
    };
    const Case cases[] = {
        {"fail500", ErrorKind::kTransport, "answered HTTP 500: internal trouble"},
        {"html", ErrorKind::kTransport, "content type 'text/html'"},
        {"cutdead", ErrorKind::kTransport, "no event id to resume it from"},
        {"huge", ErrorKind::kProtocol, "an answer over 65536 bytes"},
        {"huge_event", ErrorKind::kProtocol, "an event over 65536 bytes"},
        {"garbage", ErrorKind::kProtocol, "sent "},
        {"bad400", ErrorKind::kTransport, "answered HTTP 400: {\"jsonrpc\""},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.tool);
        const Error e = mcp_test::error_of([&] { client.call_tool(c.tool, "{}"); });
        EXPECT_EQ(e.kind(), c.kind);
        EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile-http'"));
        EXPECT_THAT(e.what(), HasSubstr(c.says));
        EXPECT_THAT(e.what(), HasSubstr(std::string("during tools/call '") + c.tool + "'"));
    }
    // mcp.44: a 400 whose JSON body is the error answering the call is the server's refusal.
    const Error refused = mcp_test::error_of([&] { client.call_tool("refuse400", "{}"); });
    EXPECT_EQ(refused.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(refused.what(), HasSubstr("MCP server 'hostile-http' refused tools/call "
                                          "'refuse400': code -32602: Invalid arguments"));
    // mcp.42: a failed exchange is not a dead server.
    EXPECT_TRUE(client.alive());
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"after"})").content),
              "echo: after");
}

TEST(McpHttp, ASilentCallTimesOutOrIsCancelledAndTheServerIsTold) {
    Fixture f;
    McpClient client(http_spec(f.url));
    const Error late = mcp_test::error_of(
        [&] { client.call_tool("slow", "{}", nullptr, std::chrono::milliseconds(300)); });
    EXPECT_EQ(late.kind(), ErrorKind::kTransport);
    EXPECT_THAT(late.what(), HasSubstr("tools/call 'slow': no answer within 300 ms"));
    CancellationToken cancel;
    cancel.cancel();
    const Error cancelled = mcp_test::error_of([&] { client.call_tool("slow", "{}", &cancel); });
    EXPECT_THAT(cancelled.what(), HasSubstr("tools/call 'slow': cancelled"));
    // mcp.12: both were cancelled with notifications/cancelled, POSTed (ids 3 and 4: 1 was
    // server/discover, mcp.50, and 2 initialize).
    EXPECT_EQ(mcp_test::text_of(client.call_tool("cancelled", "{}").content), "cancelled: 3,4");
}

TEST(McpHttp, AStreamCutBeforeTheAnswerIsResumedFromItsLastEventId) {
    Fixture f;
    McpClient client(http_spec(f.url));
    // mcp.45: the stream named event id cut-3 (request 3, after server/discover and initialize)
    // and ended; a GET with Last-Event-ID got the answer.
    EXPECT_EQ(mcp_test::text_of(client.call_tool("cut", "{}").content), "resumed after cut-3");
}

TEST(McpHttp, AnExpiredSessionIsInitializedAgainAndTheRequestSentAgain) {
    Fixture f;
    McpClient client(http_spec(f.url));
    // mcp.47: `expire` answered 404 in session s1; the client initialized s2 and asked again.
    EXPECT_EQ(mcp_test::text_of(client.call_tool("expire", "{}").content), "session s2");
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"x"})").content), "echo: x");
}

TEST(McpHttp, ASessionEndedAgainAtOnceGivesTheServerUp) {
    Fixture f;
    McpClient client(http_spec(f.url));
    const Error e = mcp_test::error_of([&] { client.call_tool("expire_always", "{}"); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(),
                HasSubstr("MCP server 'hostile-http': ended the new session too, at once, "
                          "during tools/call 'expire_always'"));
    // mcp.47, mcp.15: once only; then the client is given up on.
    EXPECT_FALSE(client.alive());
    EXPECT_THAT(mcp_test::error_of([&] { client.ping(); }).what(), HasSubstr("is not running"));
}

TEST(McpHttp, ANewSessionThatCannotBeBegunGivesTheServerUp) {
    Fixture f;
    McpClient client(http_spec(f.url));
    const Error e = mcp_test::error_of([&] { client.call_tool("expire_refuse", "{}"); });
    // mcp.47: the session ended, and the initialize of a new one was answered HTTP 500.
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile-http': could not begin a new session: "
                                    "answered HTTP 500: no more sessions"));
    EXPECT_FALSE(client.alive());
    EXPECT_THAT(mcp_test::error_of([&] { client.ping(); }).what(),
                HasSubstr("is not running: could not begin a new session"));
}

TEST(McpHttp, ANewSessionRefusedByAServerNowOfTheStatelessRevisionSaysSoOnce) {
    Fixture f;
    McpClient client(http_spec(f.url));
    const Error e = mcp_test::error_of([&] { client.call_tool("expire_upgrade", "{}"); });
    // mcp.47, mcp.2: the server's name is said once, in front of the refusal of initialize.
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_EQ(std::string(e.what()),
              "MCP server 'hostile-http': could not begin a new session: refused initialize: "
              "code -32022: Unsupported protocol version (it speaks 2026-07-28)");
    EXPECT_FALSE(client.alive());
}

TEST(McpHttp, ASessionIdThatIsNotVisibleAsciiIsNotSentBack) {
    Fixture f("badid");
    McpClient client(http_spec(f.url));
    // mcp.43: the server named "s 1"; the client speaks to it without a session.
    const std::string heard = mcp_test::text_of(client.call_tool("heard", "{}").content);
    EXPECT_THAT(heard, HasSubstr("version=2025-11-25 session= deleted="));
}

TEST(McpHttp, ClosingTheClientEndsItsSessionWithDelete) {
    Fixture f;
    { McpClient first(http_spec(f.url)); }
    McpClient second(http_spec(f.url));
    // mcp.49: the first client's session s1 was ended with DELETE.
    EXPECT_THAT(mcp_test::text_of(second.call_tool("heard", "{}").content),
                HasSubstr("deleted=s1;"));
}

TEST(McpHttp, TheServersGetStreamCarriesItsListChanges) {
    Fixture f("listen");
    McpClient client(http_spec(f.url));
    EXPECT_EQ(client.list_changes(), 0U);
    EXPECT_EQ(mcp_test::text_of(client.call_tool("grow", "{}").content), "grew extra_1");
    // mcp.46: the announcement comes on the GET stream, beside the calls; read it within a
    // bounded number of round trips.
    for (int i = 0; i < 200 && client.list_changes() == 0; ++i) client.ping();
    EXPECT_EQ(client.list_changes(), 1U);
    const std::vector<Tool> tools = client.list_tools();
    EXPECT_EQ(tools.back().name, "extra_1");
}

TEST(McpHttp, AUrlThatIsNotHttpOrAServerNotListeningIsRefusedByName) {
    const Error scheme =
        mcp_test::error_of([] { McpClient client(http_spec("ftp://127.0.0.1/mcp")); });
    EXPECT_EQ(scheme.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(scheme.what(), HasSubstr("is not http:// or https://"));
    ServerSpec both = http_spec("http://127.0.0.1:1/mcp");
    both.command = {"true"};
    EXPECT_EQ(mcp_test::error_of([&] { McpClient client(both); }).kind(),
              ErrorKind::kInvalidArgument);
    const Error refused = mcp_test::error_of([] {
        McpClient client(
            http_spec("http://127.0.0.1:" + std::to_string(mcp_test::free_port()) + "/mcp"));
    });
    EXPECT_EQ(refused.kind(), ErrorKind::kTransport);
    EXPECT_THAT(refused.what(), HasSubstr("MCP server 'hostile-http'"));
    EXPECT_THAT(refused.what(), HasSubstr("during initialize"));
}

TEST(McpSse, EventsAreReadAcrossChunksWhateverTheLineEnds) {
    mcp_internal::SseReader reader(64);
    std::vector<std::string> data;
    std::vector<std::string> ids;
    const auto on_event = [&](mcp_internal::SseEvent& e) {
        data.push_back(e.data);
        ids.push_back(e.id.value_or("-"));
        return true;
    };
    // mcp.44: LF, CR LF and CR end lines; an event may be split anywhere between chunks; a
    // comment and an event without data (a priming event) are nothing to the reader, but its id
    // and the retry count.
    for (const char* chunk : {": keep-alive\n\nid: p1\nretry: 250\ndata:\n\n", "data: {\"a\"",
                              ":1}\r", "\nid: e2\r\n\r\ndata: x\rdata: y\r\r"})
        ASSERT_TRUE(reader.feed(chunk, on_event));
    EXPECT_EQ(data, (std::vector<std::string>{R"({"a":1})", "x\ny"}));
    EXPECT_EQ(ids, (std::vector<std::string>{"e2", "-"}));
    EXPECT_EQ(reader.last_event_id(), std::optional<std::string>("e2"));
    EXPECT_EQ(reader.retry_ms(), std::optional<long>(250));
    // Past the bound, one event or one line, the reader refuses.
    EXPECT_FALSE(reader.feed("data: " + std::string(100, 'z') + "\n\n", on_event));
}
