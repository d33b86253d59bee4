// nucleo-emulator's mid-conversation tool changes (docs/emulator.md "Mid-conversation system
// messages and tool changes"): over HTTP, the tool_addition and tool_removal blocks of a system
// message change the tools the reply may call from that point on (`tools` first, then additions
// in order), with the betas and on the models that take them; every refusal names its block
// (`messages.I.content.J`), with `error.details.error_code` where the API sets one. Adding a tool
// that way keeps the cached prefix, which changing `tools` does not.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "mid_conversation_fixture.hpp"

namespace nucleo::emulator_test {
namespace {

using ToolChanges = MidConversationEmulator;

/// The name of the tool the answer calls, "" when it answers in text.
std::string called(const HttpResult& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200) return "";
    const auto d = parse(r.body);
    for (const auto& b : d["content"].GetArray()) {
        if (std::string(b["type"].GetString()) == "tool_use") return b["name"].GetString();
    }
    return "";
}

std::string tools(const std::vector<std::string>& names) {
    std::vector<std::string> defs;
    for (const auto& n : names) defs.push_back(tool(n));
    return R"(,"tools":)" + list(defs);
}

const std::vector<std::string> kInline = {kInlineToolsBeta};
const std::string kQuestion = R"({"role":"user","content":"Look up the tides"})";
const std::string kUnresolvedCode = "tool_reference_unresolved";

/// The `error.details.error_code` of a 400 ("" when it has none).
std::string error_code(const HttpResult& r) {
    const auto d = parse(r.body);
    if (!d.HasMember("error") || !d["error"].HasMember("details")) return "";
    return d["error"]["details"]["error_code"].GetString();
}

TEST_F(ToolChanges, AnAdditionByValueMakesTheToolCallable) {
    const std::string messages = list({kQuestion, system_blocks(add_by_value("tides"))});
    const HttpResult forced =
        call(kMid, messages,
             tools({"weather"}) + R"(,"tool_choice":{"type":"tool","name":"tides"})", kInline);
    ASSERT_EQ(called(forced), "tides");
    EXPECT_EQ(str(parse(forced.body)["content"][0]["input"]), R"({"q":"tides"})");
    // Unforced, the first offered tool: `tools` comes first.
    EXPECT_EQ(called(call(kMid, messages, tools({"weather"}), kInline)), "weather");
}

TEST_F(ToolChanges, TheOfferedToolsAreToolsThenAdditionsMinusRemovals) {
    EXPECT_EQ(called(call(kMid,
                          list({kQuestion,
                                system_blocks(remove_tool("weather") + "," + add_by_value("tides") +
                                              "," + add_by_value("moon"))}),
                          tools({"weather"}), kInline)),
              "tides");
    // A removed tool added back comes after the others.
    EXPECT_EQ(called(call(kMid,
                          list({kQuestion, system_blocks(remove_tool("weather") + "," +
                                                         add_by_reference("weather"))}),
                          tools({"weather", "tides"}), {kToolChangesBeta})),
              "tides");
    // Availability follows the conversation: a removal, then an addition in a later message.
    const std::string later =
        list({user("Hi"), system_blocks(remove_tool("weather")), assistant("Hello"), kQuestion,
              system_blocks(add_by_reference("weather"))});
    EXPECT_EQ(called(call(kMid, later, tools({"weather", "tides"}), {kToolChangesBeta})), "tides");
    EXPECT_EQ(called(call(kMid, later,
                          tools({"weather", "tides"}) +
                              R"(,"tool_choice":{"type":"tool","name":"weather"})",
                          {kToolChangesBeta})),
              "weather");
}

TEST_F(ToolChanges, ANewDefinitionReplacesTheToolWhereItStands) {
    const HttpResult r = call(kMid, list({kQuestion, system_blocks(add_by_value("weather"))}),
                              tools({"weather", "tides"}), kInline);
    ASSERT_EQ(called(r), "weather");
    // The new schema's required `q` is filled: the definition of `tools` was replaced.
    EXPECT_EQ(str(parse(r.body)["content"][0]["input"]), R"({"q":"tides"})");
}

TEST_F(ToolChanges, EachNeedsItsBeta) {
    const std::string by_reference = list({kQuestion, system_blocks(add_by_reference("weather"))});
    EXPECT_EQ(refusal(call(kMid, by_reference, tools({"weather"}))),
              "messages.1.content.0: tool_addition requires the anthropic-beta header "
              "\"mid-conversation-tool-changes-2026-07-01\" or \"inline-tools-2026-09-15\"");
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, system_blocks(remove_tool("weather"))}),
                           tools({"weather"}))),
              "messages.1.content.0: tool_removal requires the anthropic-beta header "
              "\"mid-conversation-tool-changes-2026-07-01\" or \"inline-tools-2026-09-15\"");
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, system_blocks(add_by_value("tides"))}),
                           tools({"weather"}), {kToolChangesBeta})),
              "messages.1.content.0: a tool_definition requires the anthropic-beta header "
              "\"inline-tools-2026-09-15\"");
    // inline-tools also covers references.
    EXPECT_EQ(call(kMid, by_reference, tools({"weather"}), {kToolChangesBeta}).status, 200);
    EXPECT_EQ(call(kMid, by_reference, tools({"weather"}), kInline).status, 200);
}

TEST_F(ToolChanges, AModelWhoseRecordLacksThemRefusesThem) {
    EXPECT_EQ(refusal(call(kSystemOnly, list({kQuestion, system_blocks(remove_tool("weather"))}),
                           tools({"weather"}), kInline)),
              "messages.1.content.0: tool_removal is not supported on this model");
    EXPECT_EQ(
        call(kSystemOnly, list({kQuestion, system_text("Be brief.")}), tools({"weather"})).status,
        200);
}

TEST_F(ToolChanges, TheyAreBlocksOfSystemMessagesOnly) {
    EXPECT_EQ(refusal(call(kMid,
                           list({R"({"role":"user","content":[{"type":"text","text":"Hi"},)" +
                                 add_by_reference("weather") + "]}"}),
                           tools({"weather"}), kInline)),
              "messages.0.content.1: tool_addition blocks are only accepted in role 'system' "
              "messages");
}

TEST_F(ToolChanges, AnAdditionByReferenceNamesAToolOfToolsOrOneDefinedEarlier) {
    const HttpResult unknown =
        call(kMid, list({kQuestion, system_blocks(add_by_reference("tides"))}), tools({"weather"}),
             kInline);
    EXPECT_EQ(refusal(unknown),
              "messages.1.content.0.tool: tool_reference 'tides' names no tool of `tools` nor one "
              "defined earlier in `messages`");
    EXPECT_EQ(error_code(unknown), kUnresolvedCode);
    // Defined by value, withdrawn, then offered again by reference.
    EXPECT_EQ(called(call(kMid,
                          list({kQuestion,
                                system_blocks(add_by_value("tides") + "," + remove_tool("tides") +
                                              "," + add_by_reference("tides"))}),
                          "", kInline)),
              "tides");
}

TEST_F(ToolChanges, ARemovalNamesAToolOfferedAtThatPoint) {
    const HttpResult unknown = call(kMid, list({kQuestion, system_blocks(remove_tool("tides"))}),
                                    tools({"weather"}), kInline);
    EXPECT_EQ(refusal(unknown),
              "messages.1.content.0.tool: tool_reference 'tides' names no tool offered at this "
              "point of the conversation");
    EXPECT_EQ(error_code(unknown), kUnresolvedCode);
    EXPECT_EQ(
        refusal(call(kMid,
                     list({user("Hi"), system_blocks(remove_tool("weather")), assistant("Hello"),
                           kQuestion, system_blocks(remove_tool("weather"))}),
                     tools({"weather"}), kInline)),
        "messages.4.content.0.tool: tool_reference 'weather' names no tool offered at this "
        "point of the conversation");
}

TEST_F(ToolChanges, AToolUseOfAToolNotOfferedIsNotChecked) {
    const std::string use =
        R"({"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"tides","input":{}}]})";
    const std::string result =
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"High at 6"}]})";
    EXPECT_EQ(call(kMid, list({kQuestion, use, result}), tools({"weather"})).status, 200);
    EXPECT_EQ(call(kMid, list({kQuestion, system_blocks(remove_tool("weather")), use, result}),
                   tools({"weather"}), kInline)
                  .status,
              200);
}

TEST_F(ToolChanges, ADefinitionIsAValidTool) {
    const auto refused = [](const std::string& block) {
        return refusal(call(kMid, list({kQuestion, system_blocks(block)}), tools({"weather"}),
                            {kInlineToolsBeta, "mcp-client-2026-09-15"}));
    };
    const auto definition = [](const std::string& def) {
        return R"({"type":"tool_addition","tool":{"type":"tool_definition","definition":)" + def +
               "}}";
    };
    const std::string at = "messages.1.content.0";
    EXPECT_EQ(refused(R"({"type":"tool_addition"})"), at + ".tool: Field required");
    EXPECT_EQ(refused(R"({"type":"tool_addition","tool":{"type":"tool_name","name":"x"}})"),
              at + ".tool.type: Input should be 'tool_reference', 'mcp_tool_reference', "
                   "'mcp_toolset_reference' or 'tool_definition'");
    EXPECT_EQ(
        refused(R"({"type":"tool_removal","tool":{"type":"tool_definition","definition":{}}})"),
        at + ".tool.type: Input should be 'tool_reference', 'mcp_tool_reference' or "
             "'mcp_toolset_reference'");
    EXPECT_EQ(refused(R"({"type":"tool_addition","tool":{"type":"tool_definition"}})"),
              at + ".tool.definition: Field required");
    EXPECT_EQ(refused(definition(R"({"input_schema":{"type":"object"}})")),
              at + ".tool.definition.name: Field required");
    EXPECT_EQ(refused(definition(R"({"name":"look up","input_schema":{"type":"object"}})")),
              at + ".tool.definition.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
    EXPECT_EQ(refused(definition(R"({"name":"tides"})")),
              at + ".tool.definition.input_schema: Field required");
    EXPECT_EQ(refused(definition(R"({"name":"tides","input_schema":{"type":"string"}})")),
              at + ".tool.definition.input_schema.type: Input should be 'object'");
    EXPECT_EQ(refused(definition(R"({"type":"computer_20250124","name":"computer",)"
                                 R"("display_width_px":1024,"display_height_px":768})")),
              at + ".tool.definition: a tool of type 'computer_20250124' cannot be defined in a "
                   "message yet; declare it in `tools` and add it by reference");
}

TEST_F(ToolChanges, ANameHeldByAToolOfAnotherTypeConflicts) {
    const std::string search = R"(,"tools":[{"type":"web_search_20250305","name":"web_search"}])";
    const auto define = [&](const std::string& def) {
        return call(kMid,
                    list({kQuestion, system_blocks(R"({"type":"tool_addition","tool":{"type":)"
                                                   R"("tool_definition","definition":)" +
                                                   def + "}}")}),
                    search, kInline);
    };
    const HttpResult conflict = define(R"({"name":"web_search","input_schema":{"type":"object"}})");
    EXPECT_EQ(refusal(conflict),
              "messages.1.content.0.tool.definition.name: the name 'web_search' is held by an "
              "available tool of another type");
    EXPECT_EQ(error_code(conflict), "tool_name_conflict");
    // A newer version of the same server tool is the same type.
    EXPECT_EQ(define(R"({"type":"web_search_20260209","name":"web_search"})").status, 200);
}

TEST_F(ToolChanges, CacheMarksGoOnTheBlockOrInTheDefinition) {
    const std::string def_mark =
        R"({"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"tides",)"
        R"("input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}}})";
    const std::string block_mark =
        R"({"type":"tool_addition","cache_control":{"type":"ephemeral"},"tool":{"type":)"
        R"("tool_definition","definition":{"name":"tides","input_schema":{"type":"object"}}}})";
    const std::string both =
        R"({"type":"tool_addition","cache_control":{"type":"ephemeral"},"tool":{"type":)"
        R"("tool_definition","definition":{"name":"tides","input_schema":{"type":"object"},)"
        R"("cache_control":{"type":"ephemeral"}}}})";
    const std::string deferred =
        R"({"type":"tool_addition","cache_control":{"type":"ephemeral"},"tool":{"type":)"
        R"("tool_definition","definition":{"name":"tides","input_schema":{"type":"object"},)"
        R"("defer_loading":true}}})";
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, system_blocks(both)}), "", kInline)),
              "messages.1.content.0: cache_control goes on the tool_addition block or in its "
              "definition, not both");
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, system_blocks(deferred)}), "", kInline)),
              "messages.1.content.0.tool.definition: a deferred tool (defer_loading: true) "
              "cannot carry cache_control");
    // Either place is one mark of the request's four, and leaves the bytes as they are.
    const std::string marked_question =
        R"({"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},)"
        R"({"type":"text","text":"b","cache_control":{"type":"ephemeral"}},)"
        R"({"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]})";
    const std::string marked_tools =
        R"(,"tools":[{"name":"weather","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}])";
    EXPECT_EQ(refusal(call(kMid, list({marked_question, system_blocks(def_mark)}), marked_tools,
                           kInline)),
              "A maximum of 4 blocks with cache_control may be provided. Found 5.");
    EXPECT_EQ(call(kMid, list({marked_question, system_blocks(add_by_value("tides"))}),
                   marked_tools, kInline)
                  .status,
              200);
    const long long in_definition =
        count(kMid, list({kQuestion, system_blocks(def_mark)}), "", kInline);
    EXPECT_EQ(count(kMid, list({kQuestion, system_blocks(block_mark)}), "", kInline),
              in_definition);
}

TEST_F(ToolChanges, McpReferencesNameAToolset) {
    const std::string servers =
        R"(,"mcp_servers":[{"type":"url","url":"https://mcp.example.com/calendar","name":"calendar"}])";
    const std::vector<std::string> betas = {kInlineToolsBeta, "mcp-client-2026-09-15"};
    const std::string toolset =
        R"({"type":"tool_addition","tool":{"type":"tool_definition","definition":)"
        R"({"type":"mcp_toolset","mcp_server_name":"calendar"}}})";
    const std::string remove_listed =
        R"({"type":"tool_removal","tool":{"type":"mcp_tool_reference","server_name":"calendar","name":"list_events"}})";
    EXPECT_EQ(call(kMid, list({kQuestion, system_blocks(toolset + "," + remove_listed)}),
                   servers + tools({"weather"}), betas)
                  .status,
              200);
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, system_blocks(toolset)}), servers, kInline)),
              "messages.1.content.0.tool.definition: an mcp_toolset definition requires the "
              "anthropic-beta header \"mcp-client-2026-09-15\"");
    const HttpResult unknown = call(
        kMid,
        list({kQuestion, system_blocks(R"({"type":"tool_addition","tool":{"type":)"
                                       R"("mcp_toolset_reference","server_name":"calendar"}})")}),
        servers, betas);
    EXPECT_EQ(refusal(unknown),
              "messages.1.content.0.tool: mcp_toolset_reference 'calendar' names no MCP toolset "
              "of `tools` nor one defined earlier in `messages`");
    EXPECT_EQ(error_code(unknown), kUnresolvedCode);
    EXPECT_EQ(error_code(call(kMid, list({kQuestion, system_blocks(toolset)}), "", betas)),
              kUnresolvedCode);
}

TEST_F(ToolChanges, NoneRightAfterAPausedTurn) {
    const std::string paused =
        R"({"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":)"
        R"("web_search","input":{"query":"tides"}},{"type":"web_search_tool_result",)"
        R"("tool_use_id":"srvtoolu_1","content":[]}]})";
    EXPECT_EQ(refusal(call(kMid, list({kQuestion, paused, system_blocks(remove_tool("weather"))}),
                           tools({"weather"}), kInline)),
              "messages.2.content.0: tool_removal is not accepted immediately after a paused "
              "assistant turn; resume the paused turn first");
}

TEST_F(ToolChanges, AddingAToolKeepsTheCachedPrefixChangingToolsDoesNot) {
    const std::string question =
        R"({"role":"user","content":")" + std::string(400, 'q') + R"( about the tides"})";
    const std::string cached = R"(,"cache_control":{"type":"ephemeral"})";
    const long long first_prompt = count(kMid, list({question}), tools({"weather"}));
    const HttpResult first = call(
        kMid, list({question}), tools({"weather"}) + cached + R"(,"tool_choice":{"type":"none"})");
    ASSERT_TRUE(answered(first));
    const auto d1 = parse(first.body);
    ASSERT_EQ(d1["usage"]["cache_creation_input_tokens"].GetInt64(), first_prompt) << first.body;
    const std::string answer_turn = R"({"role":"assistant","content":)" + str(d1["content"]) + "}";
    // The same messages, the answer, a user turn, then a system message that adds `tides`.
    const HttpResult second = call(
        kMid,
        list({question, answer_turn, user("And tomorrow"), system_blocks(add_by_value("tides"))}),
        tools({"weather"}) + cached + R"(,"tool_choice":{"type":"tool","name":"tides"})", kInline);
    ASSERT_EQ(called(second), "tides");
    EXPECT_EQ(parse(second.body)["usage"]["cache_read_input_tokens"].GetInt64(), first_prompt)
        << second.body;
    // The same tool added to `tools` instead: the prefix changed from its start.
    const HttpResult changed = call(kMid, list({question, answer_turn, user("And tomorrow")}),
                                    tools({"weather", "tides"}) + cached, kInline);
    ASSERT_TRUE(answered(changed));
    EXPECT_EQ(parse(changed.body)["usage"]["cache_read_input_tokens"].GetInt64(), 0)
        << changed.body;
}

}  // namespace
}  // namespace nucleo::emulator_test
