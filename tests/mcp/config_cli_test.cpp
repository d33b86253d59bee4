// nucleo.yaml `mcp_servers:` (mcp.40) and `nucleo mcp list | tools NAME` (mcp.41) against the
// hostile fixture server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli_run.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

using namespace nucleo;
using ::testing::HasSubstr;

namespace {

Config parse(const std::string& yaml) {
    return Config::parse(yaml, "nucleo.yaml");
}

std::string refusal(const std::string& yaml) {
    try {
        parse(yaml);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        return e.what();
    }
    ADD_FAILURE() << "accepted:\n" << yaml;
    return {};
}

}  // namespace

TEST(McpConfig, ServersAreReadWithTheirVariablesExpanded) {
    ::setenv("NUCLEO_MCP_TEST_DIR", "/srv/notes", 1);
    ::setenv("NUCLEO_MCP_TEST_TOKEN", "tok-123", 1);
    const Config config = parse(R"(
mcp_servers:
  files:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", "${NUCLEO_MCP_TEST_DIR}"]
  search:
    command: search-server
    env:
      API_TOKEN: ${NUCLEO_MCP_TEST_TOKEN}
)");
    ASSERT_EQ(config.mcp_servers().size(), 2U);
    const McpServerConfig& files = config.mcp_server("files");
    EXPECT_EQ(files.command, "npx");
    EXPECT_EQ(files.args, (std::vector<std::string>{"-y", "@modelcontextprotocol/server-filesystem",
                                                    "/srv/notes"}));
    EXPECT_EQ(files.where, "nucleo.yaml:4:5");
    const mcp::ServerSpec spec = mcp::server_spec(config.mcp_server("search"));
    EXPECT_EQ(spec.name, "search");
    EXPECT_EQ(spec.command, std::vector<std::string>{"search-server"});
    ASSERT_EQ(spec.env.size(), 1U);
    EXPECT_EQ(spec.env[0], (std::pair<std::string, std::string>{"API_TOKEN", "tok-123"}));
    // The token is a secret: the redacted config shows its name, never its value.
    EXPECT_THAT(config.redacted(), HasSubstr("API_TOKEN: \"***\""));
    EXPECT_THAT(config.redacted(), ::testing::Not(HasSubstr("tok-123")));
}

TEST(McpConfig, WhatIsWrongIsRefusedWithItsPlace) {
    EXPECT_THAT(refusal("mcp_servers:\n  files:\n    command: x\n    cmd: y\n"),
                HasSubstr("nucleo.yaml:4:5: mcp_servers.files.cmd: unknown key (known keys: "
                          "command, args, env, url, headers)"));
    EXPECT_THAT(refusal("mcp_servers:\n  files:\n    args: [a]\n"),
                HasSubstr("nucleo.yaml:3:5: mcp_servers.files.command: required value missing"));
    EXPECT_THAT(refusal("mcp_servers:\n  files:\n    command: x\n    args: a b\n"),
                HasSubstr("mcp_servers.files.args: expected a list of strings"));
    EXPECT_THAT(refusal("mcp_servers:\n  my.files:\n    command: x\n"),
                HasSubstr("nucleo.yaml:2:3: mcp_servers.my.files: a server name is 1 to 32 of"));
}

TEST(McpConfig, AnHttpServerIsAUrlWithHeadersWhoseValuesAreSecrets) {
    ::setenv("NUCLEO_MCP_TEST_BEARER", "bearer-secret-9", 1);
    const Config config = parse(R"(
mcp_servers:
  remote:
    url: https://mcp.example.com/mcp
    headers:
      Authorization: Bearer ${NUCLEO_MCP_TEST_BEARER}
      X-Team: nucleo
)");
    const mcp::ServerSpec spec = mcp::server_spec(config.mcp_server("remote"));
    EXPECT_EQ(spec.url, "https://mcp.example.com/mcp");
    EXPECT_TRUE(spec.command.empty());
    ASSERT_EQ(spec.headers.size(), 2U);
    EXPECT_EQ(spec.headers[0],
              (std::pair<std::string, std::string>{"Authorization", "Bearer bearer-secret-9"}));
    // mcp.48: header values are secrets.
    EXPECT_THAT(config.redacted(), HasSubstr("Authorization: \"***\""));
    EXPECT_THAT(config.redacted(), ::testing::Not(HasSubstr("bearer-secret-9")));
    EXPECT_THAT(refusal("mcp_servers:\n  r:\n    url: http://x/mcp\n    command: y\n"),
                HasSubstr("nucleo.yaml:3:10: mcp_servers.r.url: command and url are both set"));
    EXPECT_THAT(refusal("mcp_servers:\n  r:\n    url: ftp://x/mcp\n"),
                HasSubstr("mcp_servers.r.url: expected an http:// or https:// URL"));
    EXPECT_THAT(refusal("mcp_servers:\n  r:\n    url: http://x/mcp\n    env: {A: b}\n"),
                HasSubstr("nucleo.yaml:4:10: mcp_servers.r.env: only a command (stdio) server"));
    EXPECT_THAT(refusal("mcp_servers:\n  r:\n    command: x\n    headers: {A: b}\n"),
                HasSubstr("mcp_servers.r.headers: only a url (HTTP) server has headers"));
    EXPECT_THAT(refusal("mcp_servers:\n  r:\n    url: http://x/mcp\n    header: {A: b}\n"),
                HasSubstr("nucleo.yaml:4:5: mcp_servers.r.header: unknown key"));
}

TEST(McpConfig, AServerNotConfiguredIsNotFoundWithTheNamesThatAre) {
    const Config config = parse("mcp_servers:\n  files:\n    command: x\n");
    try {
        (void)config.mcp_server("filez");
        FAIL() << "found";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        EXPECT_THAT(e.what(), HasSubstr(R"(no MCP server "filez")"));
        EXPECT_THAT(e.what(), HasSubstr("(mcp_servers: files)"));
    }
}

class McpCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "nucleo-mcp-cli-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        config_ = (dir_ / "nucleo.yaml").string();
        // The shipped config gives the providers and models `chat --emulator` needs.
        std::ofstream(config_) << "include: " << NUCLEO_SOURCE_DIR << "/config/nucleo.yaml\n"
                               << "mcp_servers:\n  hostile:\n    command: " << HOSTILE_MCP_SERVER
                               << "\n    args: [paged]\n  silent:\n    command: "
                               << HOSTILE_MCP_SERVER << "\n    args: [exit]\n";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    test_support::CliRun nucleo(const std::string& args, const std::string& input = {}) const {
        // The shipped config's store is the user's: a chat here saves into the test's folder.
        return test_support::run_command((input.empty() ? "" : "printf '" + input + "' | ") +
                                         "NUCLEO_SQLITE_PATH='" + (dir_ / "chat.db").string() +
                                         "' '" + NUCLEO_CLI + "' " + args + " --config '" +
                                         config_ + "'");
    }

    std::filesystem::path dir_;
    std::string config_;
};

TEST_F(McpCommand, ListNamesTheConfiguredServers) {
    const auto run = nucleo("mcp list");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_THAT(run.out, HasSubstr("hostile\t" + std::string(HOSTILE_MCP_SERVER) + " paged\n"));
    EXPECT_THAT(run.out, HasSubstr("silent\t"));
    const auto json = nucleo("mcp list --json");
    EXPECT_EQ(json.status, 0) << json.err;
    EXPECT_THAT(json.out, HasSubstr(R"("name":"hostile")"));
    EXPECT_THAT(json.out, HasSubstr(R"("args":["paged"])"));
}

TEST_F(McpCommand, ToolsStartsTheServerAndListsEveryPage) {
    const auto run = nucleo("mcp tools hostile");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_THAT(run.out,
                HasSubstr("hostile: hostile 1.0, protocol revision 2025-11-25, 15 tools\n"));
    EXPECT_THAT(run.out, HasSubstr("echo\tThe echo tool.\n"));
    EXPECT_THAT(run.out, HasSubstr("drop\tThe drop tool.\n"));
    const auto json = nucleo("mcp tools hostile --json");
    EXPECT_EQ(json.status, 0) << json.err;
    EXPECT_THAT(json.out, HasSubstr(R"("protocol_revision":"2025-11-25")"));
    EXPECT_THAT(json.out, HasSubstr(R"("input_schema":{"type":"object")"));
}

TEST_F(McpCommand, AServerThatFailsOrIsNotConfiguredIsAnErrorNamingIt) {
    const auto failed = nucleo("mcp tools silent");
    EXPECT_NE(failed.status, 0);
    EXPECT_THAT(failed.err,
                HasSubstr("MCP server 'silent': exited with status 3 during initialize"));
    const auto missing = nucleo("mcp tools nope");
    EXPECT_NE(missing.status, 0);
    EXPECT_THAT(missing.err, HasSubstr(R"(no MCP server "nope")"));
    const auto verb = nucleo("mcp tool hostile");
    EXPECT_NE(verb.status, 0);
    EXPECT_THAT(verb.err, HasSubstr("tools"));
}

TEST_F(McpCommand, ChatGivesTheModelTheNamedServersTools) {
    // mcp.40: the emulator calls the first declared tool, the server's first (paged mode: echo).
    const auto run = nucleo("chat --emulator --mcp hostile", "Say hello\\n");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_THAT(run.out, HasSubstr("The tool echo returned: echo: hello"));
    EXPECT_THAT(run.err, HasSubstr("[tool echo {\"text\":\"hello\"}] ok"));
    EXPECT_TRUE(std::filesystem::exists(dir_ / "chat.db"));
    const auto failed = nucleo("chat --emulator --mcp silent", "Say hello\\n");
    EXPECT_NE(failed.status, 0);
    EXPECT_THAT(failed.err,
                HasSubstr("MCP server 'silent': exited with status 3 during initialize"));
}
