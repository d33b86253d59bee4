// caching.131: why the cache missed. Through ProviderClient, the real Anthropic plugin and the
// real nucleo-emulator, which answers Anthropic's `diagnostics` as the API does (docs/emulator.md
// "Cache diagnostics"): each request of a model whose record takes diagnostics names the previous
// answer's id, the provider's diagnosis reaches LLMResponse and the call record, and a diagnosis
// this release cannot read (an unknown reason, a pending one, one off its shape; canned answers)
// is kept or dropped without ever losing the answer.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent_support.hpp"
#include "canned_reply.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using agent_test::client_for;

ModelSpec diagnosed() {
    ModelSpec m = agent_test::model_for("anthropic");
    m.cache_diagnostics = true;
    return m;
}

rapidjson::Document body_of(const HttpRequest& request) {
    rapidjson::Document d;
    const std::string_view body = request.body.view();
    d.Parse(body.data(), body.size());
    EXPECT_FALSE(d.HasParseError()) << body;
    return d;
}

std::string canned_with_diagnostics(const std::string& diagnostics) {
    return R"({"id":"msg_diag","type":"message","role":"assistant","model":"claude-sonnet-5-5",)"
           R"("content":[{"type":"text","text":"Order 42 shipped.","citations":null}],)"
           R"("stop_reason":"end_turn","stop_sequence":null,"diagnostics":)" +
           diagnostics + R"(,"usage":{"input_tokens":40,"output_tokens":12}})";
}

class CacheDiagnostics : public ::testing::Test {
  protected:
    void SetUp() override {
        previous_ = set_call_record_observer([this](const CallRecord& r) {
            if (r.kind == CallRecord::Kind::kCall) records_.push_back(r);
        });
    }
    void TearDown() override { set_call_record_observer(previous_); }

    LLMResponse canned_call(ConversationContext& c, const std::string& diagnostics) {
        CallOptions o;
        o.extra_headers = canned::reply(canned_with_diagnostics(diagnostics));
        return client_.call(c, diagnosed(), o);
    }

    emulator_test::EmulatorProcess emulator_;
    ProviderClient client_ = client_for(emulator_, "anthropic");
    std::vector<CallRecord> records_;
    CallRecordObserver previous_;
};

TEST_F(CacheDiagnostics, EachRequestNamesThePreviousAnswerAndTheFirstOptsIn) {
    ConversationContext c = agent_test::asked("c-diag-ids");
    const rapidjson::Document first = body_of(client_.build_request(c, diagnosed()));
    ASSERT_TRUE(first.HasMember("diagnostics"));
    EXPECT_TRUE(first["diagnostics"]["previous_message_id"].IsNull());

    const LLMResponse r = client_.call(c, diagnosed());
    ASSERT_TRUE(r.appended);
    const std::string id = c.messages().back().provider_message_id;
    ASSERT_FALSE(id.empty()) << "the answer's own id is kept";
    EXPECT_FALSE(r.cache_miss.missed()) << r.cache_miss.reason;

    c.add_message(Message::outgoing_text("And order 43?"));
    const rapidjson::Document next = body_of(client_.build_request(c, diagnosed()));
    ASSERT_TRUE(next["diagnostics"]["previous_message_id"].IsString());
    EXPECT_EQ(std::string(next["diagnostics"]["previous_message_id"].GetString()), id);
    // Appending a turn is no divergence.
    const LLMResponse appended = client_.call(c, diagnosed());
    EXPECT_FALSE(appended.cache_miss.missed()) << appended.cache_miss.reason;
}

TEST_F(CacheDiagnostics, AModelWithoutDiagnosticsAsksNothing) {
    ConversationContext c = agent_test::asked("c-diag-none");
    const rapidjson::Document body =
        body_of(client_.build_request(c, agent_test::model_for("anthropic")));
    EXPECT_FALSE(body.HasMember("diagnostics"));
}

TEST_F(CacheDiagnostics, ATurnWhoseToolsChangedGetsTheProvidersReasonInTheResponseAndTheRecord) {
    ConversationContext c = agent_test::asked("c-diag-tools");
    ASSERT_TRUE(client_.call(c, diagnosed()).appended);
    c.add_message(Message::outgoing_text("Look up order 43."));
    c.add_tool(ToolDefinitionBlock{"lookup_order", "Looks an order up.",
                                   R"({"type":"object","properties":{"id":{"type":"string"}}})"});
    const LLMResponse r = client_.call(c, diagnosed());
    EXPECT_EQ(r.cache_miss.reason, "tools_changed");
    EXPECT_GT(r.cache_miss.missed_input_tokens, 0);
    ASSERT_FALSE(records_.empty());
    EXPECT_EQ(records_.back().cache_miss_reason, "tools_changed");
    EXPECT_EQ(records_.back().cache_missed_input_tokens, r.cache_miss.missed_input_tokens);
    EXPECT_NE(to_log_text(records_.back()).find("cache_miss=tools_changed"), std::string::npos);
    EXPECT_NE(to_otel_attributes_json(records_.back()).find("\"nucleo.cache.miss_reason\""),
              std::string::npos);
}

TEST_F(CacheDiagnostics, AnUnknownReasonIsKeptAsItCame) {
    ConversationContext c = agent_test::asked("c-diag-unknown");
    const LLMResponse r = canned_call(
        c, R"({"cache_miss_reason":{"type":"moon_phase_changed","cache_missed_input_tokens":7}})");
    EXPECT_TRUE(r.appended);
    EXPECT_EQ(r.cache_miss.reason, "moon_phase_changed");
    EXPECT_EQ(r.cache_miss.missed_input_tokens, 7);
}

TEST_F(CacheDiagnostics, ADiagnosisNotReadyIsPendingAndOneOffItsShapeIsNone) {
    ConversationContext c = agent_test::asked("c-diag-odd");
    const LLMResponse pending = canned_call(c, R"({"cache_miss_reason":null})");
    EXPECT_EQ(pending.cache_miss.reason, "pending");
    EXPECT_EQ(pending.cache_miss.missed_input_tokens, -1);
    c.add_message(Message::outgoing_text("Again."));
    const LLMResponse odd = canned_call(c, R"({"cache_miss_reason":["model_changed"]})");
    EXPECT_FALSE(odd.cache_miss.missed());
    EXPECT_TRUE(odd.appended) << "a diagnosis off its shape never costs the answer";
    EXPECT_EQ(c.messages().size(), 4U);
}

// caching.132: Nucleo's own plan says why it moved its marks: nothing on a turn appended to the
// last, "rewritten" on the turn after an edit of the history, in the response, the call record
// and its log line.
TEST_F(CacheDiagnostics, ATurnAfterARewriteSaysNucleoPlacedItsMarksAnew) {
    ConversationContext c = agent_test::asked("c-plan-moved");
    ASSERT_TRUE(client_.call(c, diagnosed()).appended);
    c.add_message(Message::outgoing_text("And order 43?"));
    const LLMResponse grown = client_.call(c, diagnosed());
    ASSERT_TRUE(grown.appended);
    EXPECT_EQ(grown.cache_miss.plan_moved, "");
    ASSERT_FALSE(records_.empty());
    EXPECT_EQ(to_log_text(records_.back()).find("plan_moved="), std::string::npos);

    // An edit of the history: the first exchange goes.
    std::vector<Message> kept(c.messages().begin() + 2, c.messages().end());
    ASSERT_EQ(kept.front().direction, Direction::kOutgoing);
    c.replace_messages(std::move(kept), {2, 3});
    c.add_message(Message::outgoing_text("And order 44?"));
    const LLMResponse after = client_.call(c, diagnosed());
    ASSERT_TRUE(after.appended);
    EXPECT_EQ(after.cache_miss.plan_moved, "rewritten");
    EXPECT_EQ(after.cache_miss.reason, "messages_changed") << "the provider sees the same rewrite";
    EXPECT_EQ(records_.back().cache_plan_moved, "rewritten");
    EXPECT_NE(to_log_text(records_.back()).find("plan_moved=rewritten"), std::string::npos);
    EXPECT_NE(to_otel_attributes_json(records_.back()).find("\"nucleo.cache.plan_moved\""),
              std::string::npos);
}

}  // namespace
}  // namespace nucleo
