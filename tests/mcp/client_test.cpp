// McpClient against a hostile server of our own (hostile_mcp_server.cpp): every misbehaviour is
// an Error naming the server and what happened, bounded in time and memory (mcp.10 to mcp.15).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mcp_support.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using namespace nucleo::mcp;
using ::testing::HasSubstr;

TEST(McpClient, NegotiatesTheNewestRevisionAndReadsTheServersDeclarations) {
    McpClient client(mcp_test::hostile("well"));
    EXPECT_EQ(client.name(), "hostile");
    // mcp.2, mcp.50: the fixture does not know server/discover and answers initialize with the
    // revision asked for, the newest handshake revision.
    EXPECT_EQ(client.protocol_revision(), std::string(kProtocolRevisions[1]));
    EXPECT_EQ(client.server_info_name(), "hostile");
    EXPECT_EQ(client.server_info_version(), "1.0");
    EXPECT_TRUE(client.announces_list_changes());
    EXPECT_TRUE(client.alive());
    client.ping();
}

TEST(McpClient, ARevisionItDoesNotSpeakIsRefusedByName) {
    const Error e = mcp_test::error_of([] { McpClient client(mcp_test::hostile("old")); });
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile'"));
    EXPECT_THAT(e.what(), HasSubstr("'2024-11-05'"));
    EXPECT_THAT(e.what(), HasSubstr("2025-11-25, 2025-06-18, 2025-03-26"));
}

TEST(McpClient, ListsEveryPageInOrder) {
    McpClient client(mcp_test::hostile("paged"));
    const std::vector<Tool> tools = client.list_tools();
    std::vector<std::string> names;
    for (const auto& t : tools) names.push_back(t.name);
    EXPECT_EQ(names, (std::vector<std::string>{"echo", "image", "structured", "fails", "hang",
                                               "crash", "deep", "bad_utf8", "huge", "garbage",
                                               "grow", "cancelled", "drop", "spawn", "asks"}));
    EXPECT_EQ(tools[0].description, "The echo tool.");
    EXPECT_THAT(tools[0].input_schema_json, HasSubstr(R"("required":["text"])"));
}

TEST(McpClient, TenThousandToolsAreRefusedOverTheLimitAndListedUnderIt) {
    {
        McpClient client(mcp_test::hostile("many"));
        const Error e = mcp_test::error_of([&] { client.list_tools(); });
        EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
        EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile' lists more than 2000 tools"));
        EXPECT_TRUE(client.alive());  // a listing refused is not a server given up
    }
    ClientLimits roomy;
    roomy.max_tools = 20'000;
    McpClient client(mcp_test::hostile("many"), roomy);
    const std::vector<Tool> tools = client.list_tools();
    ASSERT_EQ(tools.size(), 10'000U);
    EXPECT_EQ(tools.back().name, "t9999");
}

TEST(McpClient, ResultsBecomeBlocks) {
    McpClient client(mcp_test::hostile("well"));
    const CallResult echo = client.call_tool("echo", R"({"text":"hi"})");
    EXPECT_FALSE(echo.is_error);
    EXPECT_EQ(mcp_test::text_of(echo.content), "echo: hi");

    // mcp.30: an image is an image block.
    const CallResult image = client.call_tool("image", "{}");
    ASSERT_EQ(image.content.size(), 2U);
    const auto* png = image.content[1].get_if<ImageBlock>();
    ASSERT_NE(png, nullptr);
    EXPECT_EQ(png->media_type, "image/png");
    EXPECT_EQ(png->data, "iVBORw0KGgo=");

    // mcp.32: structuredContent without content is the JSON itself.
    const CallResult structured = client.call_tool("structured", "{}");
    ASSERT_EQ(structured.content.size(), 1U);
    const auto* json = structured.content[0].get_if<JsonBlock>();
    ASSERT_NE(json, nullptr);
    EXPECT_EQ(json->json, R"({"temperature":21.5})");

    // mcp.33: isError is an error result, not an exception.
    const CallResult fails = client.call_tool("fails", "{}");
    EXPECT_TRUE(fails.is_error);
    EXPECT_EQ(mcp_test::text_of(fails.content), "the disk is full");
}

TEST(McpClient, AnUnknownToolIsTheServersRefusalAndTheServerStays) {
    McpClient client(mcp_test::hostile("well"));
    const Error e = mcp_test::error_of([&] { client.call_tool("nope", "{}"); });
    EXPECT_EQ(e.kind(), ErrorKind::kProtocol);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile' refused tools/call 'nope': code -32602"));
    EXPECT_TRUE(client.alive());
    EXPECT_EQ(mcp_test::text_of(client.call_tool("echo", R"({"text":"still"})").content),
              "echo: still");
}

TEST(McpClient, ArgumentsThatAreNotAnObjectAreRefusedBeforeSending) {
    McpClient client(mcp_test::hostile("well"));
    const Error e = mcp_test::error_of([&] { client.call_tool("echo", "[1]"); });
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("not a JSON object"));
    EXPECT_TRUE(client.alive());
}

TEST(McpClient, AHangingCallTimesOutAndTheServerIsToldItWasCancelled) {
    McpClient client(mcp_test::hostile("well"));
    const Error e = mcp_test::error_of(
        [&] { client.call_tool("hang", "{}", nullptr, std::chrono::milliseconds(200)); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(),
                HasSubstr("MCP server 'hostile': tools/call 'hang': no answer within 200 ms"));
    // mcp.12: the server got notifications/cancelled for that request (id 3: server/discover was
    // 1, initialize 2), and answers the next call.
    EXPECT_TRUE(client.alive());
    EXPECT_EQ(mcp_test::text_of(client.call_tool("cancelled", "{}").content), "3");
}

TEST(McpClient, ACancelledTokenCancelsTheCall) {
    McpClient client(mcp_test::hostile("well"));
    CancellationToken cancel;
    cancel.cancel();
    const Error e = mcp_test::error_of([&] { client.call_tool("hang", "{}", &cancel); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(), HasSubstr("tools/call 'hang': cancelled"));
    const CallResult seen = client.call_tool("cancelled", "{}");
    EXPECT_EQ(mcp_test::text_of(seen.content), "3");  // mcp.50: after server/discover, initialize
}

// mcp.15: what follows gives the server up: the error names it and what it did, the server is
// killed, and every later call is refused with the reason.
struct GivenUp {
    std::string tool;
    ErrorKind kind;
    std::string says;
};

class McpClientGivesUp : public ::testing::TestWithParam<GivenUp> {};

TEST_P(McpClientGivesUp, AndSaysWhy) {
    ClientLimits limits;
    limits.max_message_bytes = 1u << 20;  // the 1 GB answer is cut at 1 MiB
    McpClient client(mcp_test::hostile("well"), limits);
    const Error e = mcp_test::error_of([&] { client.call_tool(GetParam().tool, "{}"); });
    EXPECT_EQ(e.kind(), GetParam().kind);
    EXPECT_THAT(e.what(), HasSubstr("MCP server 'hostile': "));
    EXPECT_THAT(e.what(), HasSubstr(GetParam().says));
    EXPECT_THAT(e.what(), HasSubstr("during tools/call '" + GetParam().tool + "'"));
    EXPECT_FALSE(client.alive());
    const Error later = mcp_test::error_of([&] { client.call_tool("echo", R"({"text":"x"})"); });
    EXPECT_EQ(later.kind(), ErrorKind::kTransport);
    EXPECT_THAT(later.what(), HasSubstr("MCP server 'hostile' is not running: "));
    EXPECT_THAT(later.what(), HasSubstr(GetParam().says));
}

INSTANTIATE_TEST_SUITE_P(
    Hostile, McpClientGivesUp,
    ::testing::Values(GivenUp{"crash", ErrorKind::kTransport, "was killed by signal 6"},
                      GivenUp{"deep", ErrorKind::kProtocol, "a message that is not JSON"},
                      GivenUp{"bad_utf8", ErrorKind::kProtocol,
                              "a message that is not UTF-8 at byte"},
                      GivenUp{"huge", ErrorKind::kProtocol, "sent a message over 1048576 bytes"},
                      GivenUp{"garbage", ErrorKind::kProtocol, "a message that is not JSON"}),
    [](const auto& info) { return info.param.tool; });

TEST(McpClient, ASilentServerFailsToStartWithinTheBound) {
    ClientLimits limits;
    limits.start_timeout = std::chrono::milliseconds(300);
    const Error e =
        mcp_test::error_of([&] { McpClient client(mcp_test::hostile("silent"), limits); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(),
                HasSubstr("MCP server 'hostile': gave no answer within 300 ms to initialize"));
}

TEST(McpClient, AServerThatExitsAtOnceSaysHow) {
    const Error e = mcp_test::error_of([] { McpClient client(mcp_test::hostile("exit")); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(),
                HasSubstr("MCP server 'hostile': exited with status 3 during initialize"));
}

TEST(McpClient, ACommandThatDoesNotExistIsAStartError) {
    ServerSpec spec;
    spec.name = "ghost";
    spec.command = {"nucleo-no-such-mcp-server"};
    const Error e = mcp_test::error_of([&] { McpClient client(spec); });
    EXPECT_EQ(e.kind(), ErrorKind::kTransport);
    EXPECT_THAT(e.what(),
                HasSubstr("MCP server 'ghost': cannot start 'nucleo-no-such-mcp-server'"));
}

TEST(McpClient, ABadNameIsRefusedBeforeAnythingStarts) {
    ServerSpec spec;
    spec.name = "has space";
    spec.command = {HOSTILE_MCP_SERVER};
    const Error e = mcp_test::error_of([&] { McpClient client(spec); });
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("'has space'"));
}

TEST(McpClient, EveryListChangeIsCounted) {
    McpClient client(mcp_test::hostile("well"));
    EXPECT_EQ(client.list_changes(), 0U);
    client.call_tool("grow", "{}");
    client.call_tool("grow", "{}");
    // mcp.8: both notifications came before their call's answer.
    EXPECT_EQ(client.list_changes(), 2U);
    const std::vector<Tool> tools = client.list_tools();
    EXPECT_EQ(tools[tools.size() - 2].name, "extra_1");
    EXPECT_EQ(tools.back().name, "extra_2");
}

TEST(McpClient, TheServersStderrGoesToTheLogUnderItsName) {
    std::vector<std::string> lines;
    const log::Level before = log::level();
    log::set_level(log::Level::kInfo);
    log::set_sink([&](log::Level level, std::string_view, std::string_view message) {
        if (level == log::Level::kInfo) lines.emplace_back(message);
    });
    {
        // The fixture writes its stderr line before it reads anything, so the line is in the
        // pipe before the answer to initialize is (mcp.4).
        McpClient client(mcp_test::hostile("well"));
    }
    log::set_sink({});
    log::set_level(before);
    EXPECT_THAT(lines, ::testing::Contains(
                           "MCP server 'hostile': hostile MCP server started in mode well"));
}

TEST(McpClient, ClosingKillsTheServersWholeProcessGroup) {
    int pidfd = -1;
    {
        McpClient client(mcp_test::hostile("well"));
        // The server starts a child of its own, which waits forever in the server's group.
        const pid_t child = std::stoi(mcp_test::text_of(client.call_tool("spawn", "{}").content));
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
        ASSERT_GE(pidfd, 0);
        pollfd alive{pidfd, POLLIN, 0};
        ASSERT_EQ(::poll(&alive, 1, 0), 0);  // still running while the client lives
    }
    // mcp.6: the close killed the group, the child with it: its pidfd turns readable when it
    // exits (bounded, so a child left running fails the test instead of hanging it).
    pollfd ended{pidfd, POLLIN, 0};
    EXPECT_EQ(::poll(&ended, 1, 10'000), 1);
    ::close(pidfd);
}

TEST(McpClient, TheServersRequestsAreAnswered) {
    McpClient client(mcp_test::hostile("well"));
    // mcp.9: a ping gets an empty result; roots/list, a client feature this client does not
    // offer, gets "method not found". The fixture answers the call only after both answers.
    EXPECT_EQ(mcp_test::text_of(client.call_tool("asks", "{}").content), R"("s1"={} "s2"=-32601)");
}
