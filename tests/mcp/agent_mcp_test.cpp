// An MCP server's tools as an Agent's (mcp.20 to mcp.26), against the real nucleo-emulator: the
// emulator calls the first declared tool with the question's last word (docs/emulator.md), and
// `tool-cycle` walks the declared tools in turn.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "agent_support.hpp"
#include "http_support.hpp"
#include "mcp_support.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"
#include "sqlite_service.hpp"

using namespace nucleo;
using namespace agent_test;
using ::testing::HasSubstr;

namespace {

std::vector<const ToolResultBlock*> results_in(const ConversationContext& c) {
    std::vector<const ToolResultBlock*> out;
    for (const auto& m : c.messages()) {
        for (const auto& b : m.blocks) {
            if (const auto* r = b.get_if<ToolResultBlock>()) out.push_back(r);
        }
    }
    return out;
}

std::string text_in(const ToolResultBlock& r) {
    return mcp_test::text_of(r.content);
}

class McpAgent : public ::testing::Test {
  protected:
    AgentOptions options(const std::string& fault = {}) const {
        AgentOptions o;
        o.objective = "You use the tools you are given.";
        if (!fault.empty()) o.extra_headers = {{"x-emulator-fault", fault}};
        return o;
    }

    std::shared_ptr<mcp::McpClient> hostile(const std::string& mode, const std::string& first) {
        return std::make_shared<mcp::McpClient>(mcp_test::hostile(mode, first));
    }

    /// One turn on a fresh conversation `c` of an agent with the fixture server (its tools
    /// `first` listed first), the emulator scripted by `fault`; the turn must end answered.
    TurnReport turn(ConversationContext& c, const std::string& fault, const std::string& first,
                    const std::string& question, const std::string& mode = "well") {
        Agent agent(client_, model_, options(fault));
        mcp::attach_mcp_server(agent, hostile(mode, first));
        const TurnReport r = agent.run_turn(c, question);
        EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
        return r;
    }

    nucleo::emulator_test::EmulatorProcess emulator_;
    ProviderClient client_ = client_for(emulator_, "anthropic");
    ModelSpec model_ = model_for("anthropic");
};

}  // namespace

TEST_F(McpAgent, ServerToolsAreCalledAndTheirBlocksReachTheConversation) {
    ConversationContext c = fresh();
    const TurnReport r = turn(c, "tool-rounds=2,tool-cycle", "echo,image", "Say parrot");
    EXPECT_EQ(r.tool_calls, 2U);
    EXPECT_EQ(r.tool_errors, 0U);
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 2U);
    EXPECT_EQ(text_in(*results[0]), "echo: parrot");
    // mcp.30: the image result is an image block of the tool result.
    ASSERT_EQ(results[1]->content.size(), 2U);
    EXPECT_NE(results[1]->content[1].get_if<ImageBlock>(), nullptr);
    // Every listed tool is declared at the first render, in the server's order.
    ASSERT_GE(c.declared_tools().size(), 15U);
    EXPECT_EQ(c.declared_tools()[0].definition.name, "echo");
}

TEST_F(McpAgent, ANameTakenByAHostToolIsNamespaced) {
    Agent agent(client_, model_, options());
    agent.add_tool<LookupInput>("lookup_order", "Looks an order up by id.",
                                [](const LookupInput& in) { return "host: " + in.order_id; });
    mcp::attach_mcp_server(agent, hostile("collide", ""));
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Where is order Z9");
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    // mcp.21: the host's tool keeps its name and is called; the server's is
    // `hostile__lookup_order`.
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(text_in(*results[0]), "host: Z9");
    std::vector<std::string> names;
    for (const auto& d : c.declared_tools()) names.push_back(d.definition.name);
    EXPECT_THAT(names, ::testing::Contains("lookup_order"));
    EXPECT_THAT(names, ::testing::Contains("hostile__lookup_order"));
    EXPECT_THAT(names, ::testing::Contains("echo"));  // no collision, no prefix
}

TEST_F(McpAgent, AListChangeAfterTheFirstRenderDeclaresTheNewToolAsALateTool) {
    ConversationContext c = fresh();
    const TurnReport r = turn(c, "", "grow", "Grow please");
    ASSERT_EQ(r.rounds, 2);
    // mcp.22: `grow` announced a list change; before round 2 the list was read again and extra_1
    // went out as a late tool: a message of the conversation carries it, the head does not.
    EXPECT_EQ(c.announced_in("grow"), std::optional<std::string>("head"));
    const std::optional<std::string> where = c.announced_in("extra_1");
    ASSERT_TRUE(where.has_value());
    EXPECT_NE(*where, "head");
}

TEST_F(McpAgent, AListChangeOfAStatelessServerDeclaresTheNewToolAsALateTool) {
    ConversationContext c = fresh();
    const TurnReport r = turn(c, "", "grow", "Grow please", "modern");
    ASSERT_EQ(r.rounds, 2);
    // mcp.52, mcp.22: the change came on the subscriptions/listen subscription; extra_1 went out
    // as a late tool, as from a server of the handshake revisions.
    EXPECT_EQ(c.announced_in("grow"), std::optional<std::string>("head"));
    const std::optional<std::string> where = c.announced_in("extra_1");
    ASSERT_TRUE(where.has_value());
    EXPECT_NE(*where, "head");
}

TEST_F(McpAgent, AListChangeEveryCallDeclaresOneLateToolPerRound) {
    ConversationContext c = fresh();
    const TurnReport r = turn(c, "tool-rounds=3", "grow", "Grow thrice");
    EXPECT_EQ(r.tool_calls, 3U);
    EXPECT_EQ(r.tool_errors, 0U);
    // mcp.22: each call changed the list; each new tool went out before the next round, at its
    // own point, in a message of its own.
    std::set<std::string> carriers;
    for (const char* tool : {"extra_1", "extra_2", "extra_3"}) {
        const std::optional<std::string> where = c.announced_in(tool);
        ASSERT_TRUE(where.has_value()) << tool;
        EXPECT_NE(*where, "head") << tool;
        carriers.insert(*where);
    }
    EXPECT_EQ(carriers.size(), 3U);
}

TEST_F(McpAgent, AToolTheServerRemovedIsRefusedAndStaysDeclared) {
    ConversationContext c = fresh();
    const TurnReport r = turn(c, "tool-rounds=2,tool-cycle", "drop,echo", "Drop it");
    EXPECT_EQ(r.tool_calls, 2U);
    EXPECT_EQ(r.tool_errors, 1U);
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 2U);
    EXPECT_EQ(text_in(*results[0]), "echo removed");
    // mcp.23: echo was called after its removal: an error result, and still declared.
    EXPECT_TRUE(results[1]->is_error);
    EXPECT_THAT(text_in(*results[1]), HasSubstr("tool 'echo' was removed by MCP server 'hostile'"));
    EXPECT_EQ(c.announced_in("echo"), std::optional<std::string>("head"));
}

TEST_F(McpAgent, AServerThatCrashesMidTurnIsAToolErrorAndTheTurnGoesOn) {
    Agent agent(client_, model_, options());
    auto server = hostile("well", "crash");
    mcp::attach_mcp_server(agent, server);
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Crash now");
    // mcp.24: the model reads the failure; the turn ends with its answer.
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.tool_errors, 1U);
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_TRUE(results[0]->is_error);
    EXPECT_THAT(
        text_in(*results[0]),
        HasSubstr("MCP server 'hostile': was killed by signal 6 during tools/call 'crash'"));
    EXPECT_THAT(r.answer, HasSubstr("reported an error"));
    EXPECT_FALSE(server->alive());
    // The next turn goes on without the server's tools, which stay declared and are refused.
    const TurnReport next = agent.run_turn(c, "Again");
    EXPECT_EQ(next.end, TurnEnd::kFinalAnswer);
    const auto after = results_in(c);
    ASSERT_EQ(after.size(), 2U);
    EXPECT_TRUE(after[1]->is_error);
    EXPECT_THAT(text_in(*after[1]), HasSubstr("tool 'crash' cannot be called: MCP server 'hostile' "
                                              "is not running: was killed by signal 6"));
}

/// The hostile HTTP fixture, its tools `first` listed first, as server "remote".
mcp::ServerSpec remote(std::unique_ptr<mcp_test::ServerProcess>& process,
                       const std::string& first) {
    mcp::ServerSpec spec;
    spec.name = "remote";
    spec.url = mcp_test::start_hostile_http(process, "well", first);
    EXPECT_FALSE(spec.url.empty());
    return spec;
}

TEST_F(McpAgent, AnHttpServersBadAnswerIsAToolErrorAndTheTurnGoesOn) {
    std::unique_ptr<mcp_test::ServerProcess> process;
    auto server = std::make_shared<mcp::McpClient>(remote(process, "fail500"));
    Agent agent(client_, model_, options());
    mcp::attach_mcp_server(agent, server);
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Fail now");
    // mcp.24, mcp.42: the model reads the failure naming the server; the server stays.
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.tool_errors, 1U);
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_TRUE(results[0]->is_error);
    EXPECT_THAT(text_in(*results[0]),
                HasSubstr("MCP server 'remote': answered HTTP 500: internal trouble during "
                          "tools/call 'fail500'"));
    EXPECT_TRUE(server->alive());
}

TEST_F(McpAgent, AnHttpServersListChangeInItsAnswerStreamDeclaresALateTool) {
    std::unique_ptr<mcp_test::ServerProcess> process;
    Agent agent(client_, model_, options());
    mcp::attach_mcp_server(agent, std::make_shared<mcp::McpClient>(remote(process, "grow_sse")));
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Grow please");
    ASSERT_EQ(r.rounds, 2);
    // mcp.44, mcp.22: the announcement came in the call's event stream before its answer; before
    // round 2 extra_1 went out as a late tool.
    EXPECT_EQ(c.announced_in("grow_sse"), std::optional<std::string>("head"));
    const std::optional<std::string> where = c.announced_in("extra_1");
    ASSERT_TRUE(where.has_value());
    EXPECT_NE(*where, "head");
}

TEST_F(McpAgent, ALargeTextResultIsKeptWholeAsAnArtifact) {
    std::unique_ptr<mcp_test::ServerProcess> process;
    Agent agent(client_, model_, options());
    mcp::attach_mcp_server(agent, std::make_shared<mcp::McpClient>(remote(process, "long")));
    ConversationContext c = fresh();
    const TurnReport r = agent.run_turn(c, "Long please");
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_EQ(r.tool_errors, 0U);
    // mcp.34: past kArtifactBytes the text went to the registry; the result carries a note and
    // the artifact, which the registry holds whole.
    const auto results = results_in(c);
    ASSERT_EQ(results.size(), 1U);
    ASSERT_EQ(results[0]->content.size(), 2U);
    EXPECT_THAT(text_in(*results[0]), HasSubstr("bytes of text, kept whole as an artifact"));
    ASSERT_NE(results[0]->content[1].get_if<PojoBlock>(), nullptr);
    ASSERT_EQ(c.artifacts().all_artifacts().size(), 1U);
    const Artifact& a = c.artifacts().all_artifacts().front();
    EXPECT_EQ(a.type, "mcp:text");
    EXPECT_THAT(a.value_json, HasSubstr(R"("server":"remote","tool":"long")"));
    EXPECT_THAT(a.value_json, HasSubstr("line 0 of the long result"));
    EXPECT_GT(a.value_json.size(), mcp::kArtifactBytes);
    // Under the threshold a text stays a text block.
    std::unique_ptr<mcp_test::ServerProcess> second;
    ConversationContext small = fresh();
    Agent plain(client_, model_, options());
    mcp::attach_mcp_server(plain, std::make_shared<mcp::McpClient>(remote(second, "echo")),
                           mcp::kArtifactBytes);
    plain.run_turn(small, "Echo please");
    EXPECT_TRUE(small.artifacts().all_artifacts().empty());
}

TEST_F(McpAgent, ALargeTextArtifactIsSavedAndRestored) {
    std::unique_ptr<mcp_test::ServerProcess> process;
    const std::string path = store_test::temp_sqlite_path();
    std::string id;
    std::string saved;
    {
        auto service = sqlite_service(path);
        Agent agent(client_, model_, options());
        mcp::attach_mcp_server(agent, std::make_shared<mcp::McpClient>(remote(process, "long")));
        auto thinker = agent.make_thinker("alice", OutputSize::kShort);
        id = thinker->mint_conversation_id();
        EXPECT_EQ(agent.run_turn(*service, thinker, "Long please").end, TurnEnd::kFinalAnswer);
    }
    // mcp.34, artifacts.10: a new service reads the artifact back whole, with its reference.
    auto reader = reader_thinker(id);
    auto fresh_service = sqlite_service(path);
    auto restored = fresh_service->obtain_conversation(reader).get();
    ASSERT_EQ(restored->artifacts().all_artifacts().size(), 1U);
    const Artifact& a = restored->artifacts().all_artifacts().front();
    EXPECT_EQ(a.type, "mcp:text");
    EXPECT_THAT(a.value_json, HasSubstr("of the long result"));
    EXPECT_NE(restored->artifacts().get(a.ref), nullptr);
    fresh_service->release(*reader);
    std::filesystem::remove(path);
}

TEST_F(McpAgent, SeveralRoundsOfEverythingAreSavedAndRestored) {
    MCP_REQUIRE_NPM_SERVER(script, "server-everything");
    mcp::ServerSpec spec;
    spec.name = "everything";
    spec.command = {"node", script, "stdio"};
    const std::string path = store_test::temp_sqlite_path();
    std::string id;
    {
        auto service = sqlite_service(path);
        Agent agent(client_, model_, options("tool-rounds=3"));
        mcp::attach_mcp_server(agent, std::make_shared<mcp::McpClient>(spec));
        auto thinker = agent.make_thinker("alice", OutputSize::kShort);
        id = thinker->mint_conversation_id();
        const TurnReport r = agent.run_turn(*service, thinker, "Please echo walrus");
        EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
        EXPECT_EQ(r.rounds, 4);
        EXPECT_EQ(r.tool_calls, 3U);
        EXPECT_EQ(r.tool_errors, 0U);
    }
    // A restarted process: a new service over the same file, a new agent and a new server.
    auto service = sqlite_service(path);
    Agent agent(client_, model_, options("tool-rounds=3"));
    mcp::attach_mcp_server(agent, std::make_shared<mcp::McpClient>(spec));
    auto thinker = agent.make_thinker("alice", OutputSize::kShort);
    thinker->set_conversation_id(id);
    const TurnReport r = agent.run_turn(*service, thinker, "And echo seal");
    EXPECT_EQ(r.end, TurnEnd::kFinalAnswer);
    EXPECT_THAT(r.answer, HasSubstr("seal"));

    auto reader = reader_thinker(id);
    auto fresh_service = sqlite_service(path);
    auto restored = fresh_service->obtain_conversation(reader).get();
    const auto results = results_in(*restored);
    ASSERT_GE(results.size(), 4U);
    EXPECT_THAT(text_in(*results[0]), HasSubstr("walrus"));
    EXPECT_THAT(text_in(*results.back()), HasSubstr("seal"));
    EXPECT_EQ(restored->declared_tools()[0].definition.name, "echo");
    fresh_service->release(*reader);
    std::filesystem::remove(path);
}
