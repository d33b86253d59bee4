// answers.110, answers.111: answer blocks Nucleo does not model come back. Through ProviderClient,
// the real Anthropic plugin and the real nucleo-emulator (a canned answer, header
// x-emulator-reply, holding every block kind of the SDK's answer union that the conversation
// document does not model, and one no SDK has yet): each is kept verbatim and in order, survives
// the conversation document (what a store saves) and a restore, is sent back unchanged on the next
// request to the same wire family, which the emulator then answers, and is left out, counted, of a
// request to another provider, which its emulator answers too.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent_support.hpp"
#include "canned_reply.hpp"
#include "nucleo/document.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;
using agent_test::model_for;

/// Every kind of @anthropic-ai/sdk's BetaContentBlock union (resources/beta/messages/messages.ts)
/// other than text, thinking, redacted_thinking and tool_use, each in the SDK's shape, then a kind
/// no SDK has (a later API's), then text. The order is the answer's and must survive.
const std::vector<std::string> kProviderBlocks = {
    R"({"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"order 42"},"caller":{"type":"direct"}})",
    R"({"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://example.com/42","title":"Order 42","encrypted_content":"ZW5jMQ==","page_age":null}],"caller":{"type":"direct"}})",
    R"({"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"web_fetch_tool_result_error","error_code":"url_not_accessible"}})",
    R"({"type":"code_execution_tool_result","tool_use_id":"srvtoolu_03","content":{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0,"content":[]}})",
    R"({"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_04","content":{"type":"bash_code_execution_result","stdout":"ok","stderr":"","return_code":0,"content":[]}})",
    R"({"type":"text_editor_code_execution_tool_result","tool_use_id":"srvtoolu_05","content":{"type":"text_editor_code_execution_view_result","content":"x = 1","file_type":"text","num_lines":1,"start_line":1,"total_lines":1}})",
    R"({"type":"tool_search_tool_result","tool_use_id":"srvtoolu_06","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"lookup"}]}})",
    R"({"type":"mcp_tool_use","id":"mcptoolu_01","name":"lookup","server_name":"orders","input":{"id":42}})",
    R"({"type":"mcp_tool_result","tool_use_id":"mcptoolu_01","is_error":false,"content":[{"type":"text","text":"shipped","citations":null}]})",
    R"({"type":"container_upload","file_id":"file_01"})",
    R"({"type":"compaction","content":"We agreed on order 42.","encrypted_content":null,"signature":"c2lnbmF0dXJl"})",
    R"({"type":"fallback","from":{"model":"claude-opus-5-5"},"to":{"model":"claude-sonnet-5-5"},"trigger":{"category":null,"type":"refusal"}})",
    R"({"type":"mcp_tool_listing","mcp_server_name":"orders","tools":[{"name":"lookup","input_schema":{"type":"object"},"description":"Looks an order up."}]})",
    R"({"type":"advisor_tool_result","tool_use_id":"srvtoolu_07","content":{"type":"advisor_result","stop_reason":"end_turn","text":"Check the carrier first."}})",
    R"({"type":"hologram","frames":[{"n":1,"deep":{"a":[true,null,1.5,"\u00e9\n"]}}]})",
};

std::string canned_answer(const std::vector<std::string>& blocks, const std::string& stop) {
    std::string content = "[";
    for (const std::string& b : blocks) content += b + ",";
    content += R"({"type":"text","text":"Order 42 shipped.","citations":null}])";
    return R"({"id":"msg_blocks_01","type":"message","role":"assistant","model":"claude-sonnet-5-5",)"
           R"("content":)" +
           content + R"(,"stop_reason":")" + stop +
           R"(","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":12}})";
}

CallOptions canned(const std::string& body) {
    CallOptions o;
    o.extra_headers = canned::reply(body);
    return o;
}

rapidjson::Document parsed(std::string_view json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    EXPECT_FALSE(d.HasParseError()) << json;
    return d;
}

/// A value with every "cache_control" member taken out (the plan may mark any turn).
void strip_cache_marks(rapidjson::Value& v) {
    if (v.IsObject()) {
        v.RemoveMember("cache_control");
        for (auto& m : v.GetObject()) strip_cache_marks(m.value);
    } else if (v.IsArray()) {
        for (auto& e : v.GetArray()) strip_cache_marks(e);
    }
}

class ProviderBlocks : public ::testing::Test {
  protected:
    /// The conversation after one call answered with kProviderBlocks and text.
    ConversationContext answered(const std::string& stop = "end_turn") {
        ConversationContext c = agent_test::asked("c-provider-blocks");
        const LLMResponse r = anthropic_.call(c, model_for("anthropic"),
                                              canned(canned_answer(kProviderBlocks, stop)));
        EXPECT_TRUE(r.appended);
        EXPECT_EQ(r.provider_blocks_dropped, 0U);
        return c;
    }

    emulator_test::EmulatorProcess emulator_;
    ProviderClient anthropic_ = client_for(emulator_, "anthropic");
    ProviderClient openai_ = client_for(emulator_, "openai");
};

TEST_F(ProviderBlocks, EveryUnmodelledBlockIsKeptVerbatimInItsPlace) {
    ConversationContext c = answered();
    const Message& answer = c.messages().back();
    ASSERT_EQ(answer.blocks.size(), kProviderBlocks.size() + 1);
    for (std::size_t i = 0; i < kProviderBlocks.size(); ++i) {
        const auto* p = answer.blocks[i].get_if<ProviderBlock>();
        ASSERT_NE(p, nullptr) << "block " << i << " is " << block_type_name(answer.blocks[i]);
        EXPECT_EQ(p->wire_family, "anthropic-messages");
        EXPECT_EQ(parsed(p->json), parsed(kProviderBlocks[i])) << "block " << i;
        EXPECT_EQ(p->type, std::string(parsed(kProviderBlocks[i])["type"].GetString()));
    }
    EXPECT_TRUE(answer.blocks.back().is<TextBlock>());
    EXPECT_EQ(answer.provider_message_id, "msg_blocks_01");
}

TEST_F(ProviderBlocks, SavedRestoredAndSentBackUnchangedInOrderToTheSameWireFamily) {
    ConversationContext original = answered();
    // What a store saves and a restore reads (on another host, in another process).
    const std::string saved = write_conversation_document(original);
    ConversationContext c = read_conversation_document(saved);
    ASSERT_EQ(c.messages().back().blocks, original.messages().back().blocks);
    EXPECT_EQ(c.messages().back().provider_message_id, "msg_blocks_01");
    EXPECT_EQ(write_conversation_document(c), saved);

    c.add_message(Message::outgoing_text("And order 43?"));
    const HttpRequest next = anthropic_.build_request(c, model_for("anthropic"));
    rapidjson::Document body = parsed(next.body.view());
    strip_cache_marks(body);
    const rapidjson::Value& sent = body["messages"][1]["content"];
    ASSERT_TRUE(sent.IsArray());
    ASSERT_EQ(sent.Size(), kProviderBlocks.size() + 1);
    for (std::size_t i = 0; i < kProviderBlocks.size(); ++i)
        EXPECT_EQ(sent[static_cast<rapidjson::SizeType>(i)], parsed(kProviderBlocks[i]))
            << "block " << i << " was not sent back as it came";
    EXPECT_STREQ(sent[static_cast<rapidjson::SizeType>(kProviderBlocks.size())]["type"].GetString(),
                 "text");

    // The emulator takes the request, as the provider would.
    const LLMResponse r = anthropic_.call(c, model_for("anthropic"));
    EXPECT_TRUE(r.appended);
    EXPECT_EQ(r.provider_blocks_dropped, 0U);
}

TEST_F(ProviderBlocks, AnotherProviderGetsThemLeftOutCountedAndTheCallSucceeds) {
    ConversationContext c = answered();
    c.add_message(Message::outgoing_text("And order 43?"));
    std::vector<CallRecord> records;
    const CallRecordObserver previous =
        set_call_record_observer([&](const CallRecord& r) { records.push_back(r); });
    const HttpRequest request = openai_.build_request(c, model_for("openai"));
    const std::string body(request.body.view());
    EXPECT_EQ(body.find("srvtoolu_01"), std::string::npos) << body;
    EXPECT_EQ(body.find("hologram"), std::string::npos) << body;
    EXPECT_NE(body.find("Order 42 shipped."), std::string::npos) << body;
    const LLMResponse r = openai_.call(c, model_for("openai"));
    set_call_record_observer(previous);
    EXPECT_TRUE(r.appended);
    EXPECT_EQ(r.provider_blocks_dropped, kProviderBlocks.size());
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.back().provider_blocks_dropped, kProviderBlocks.size());
    // Left out of the request only: the conversation keeps them for the provider that takes them.
    EXPECT_EQ(c.messages()[1].blocks.size(), kProviderBlocks.size() + 1);
}

TEST_F(ProviderBlocks, ATurnOfProviderBlocksAloneReachesAnotherProviderAsANote) {
    ConversationContext c = agent_test::asked("c-compacted");
    const std::string compaction_only =
        R"({"id":"msg_c1","type":"message","role":"assistant","model":"claude-sonnet-5-5",)"
        R"("content":[{"type":"compaction","content":"Order 42 shipped.","encrypted_content":null}],)"
        R"("stop_reason":"compaction","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":12}})";
    const LLMResponse first = anthropic_.call(c, model_for("anthropic"), canned(compaction_only));
    // answers.111: the compaction stop, and an answer of one provider block is stored.
    EXPECT_EQ(first.stop_reason, "compaction");
    ASSERT_TRUE(first.appended);
    c.add_message(Message::outgoing_text("Go on."));
    const HttpRequest request = openai_.build_request(c, model_for("openai"));
    const rapidjson::Document body = parsed(request.body.view());
    const rapidjson::Value& messages = body["messages"];
    bool noted = false;
    for (const auto& m : messages.GetArray()) {
        if (std::string(m["role"].GetString()) != "assistant") continue;
        const std::string text = m["content"].IsString() ? m["content"].GetString()
                                                         : m["content"][0]["text"].GetString();
        noted = text.find("compaction (anthropic-messages)") != std::string::npos;
    }
    EXPECT_TRUE(noted) << std::string(request.body.view());
    const LLMResponse r = openai_.call(c, model_for("openai"));
    EXPECT_TRUE(r.appended);
    EXPECT_EQ(r.provider_blocks_dropped, 1U);
}

TEST_F(ProviderBlocks, TheTranscriptShowsThemByKind) {
    ConversationContext c = answered();
    const std::string transcript = Transcript::render(c);
    EXPECT_NE(transcript.find("[compaction block of anthropic-messages]"), std::string::npos)
        << transcript;
    EXPECT_NE(transcript.find("[hologram block of anthropic-messages]"), std::string::npos);
    EXPECT_EQ(transcript.find("c2lnbmF0dXJl"), std::string::npos) << "no block content is shown";
}

}  // namespace
}  // namespace nucleo
