// wire.211's pieces apart from the wire: the thread digest (what a provider's thread holds, cache
// marks aside), the plan that continues a thread only when the conversation before its answer is
// unchanged, and the error codes that are replayed.
#include <gtest/gtest.h>

#include <string>

#include "llm/threads.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/prepared.hpp"

namespace nucleo::internal {
namespace {

ModelSpec model_named(const std::string& wire) {
    ModelSpec m;
    m.id = wire;
    m.wire_model = wire;
    return m;
}

PreparedTurn turn(TurnRole role, const std::string& id, const std::string& text) {
    PreparedTurn t;
    t.role = role;
    t.message_id = id;
    t.blocks.emplace_back(TextBlock{text});
    return t;
}

PreparedConversation prepared_of(const ConversationContext& c) {
    PreparedConversation p;
    p.system_blocks.emplace_back(TextBlock{"You answer questions."});
    p.tool_definitions.push_back({"search", "Searches.", R"({"type":"object"})"});
    for (const Message& m : c.messages()) {
        const auto* text = m.blocks.front().get_if<TextBlock>();
        p.turns.push_back(turn(m.outgoing() ? TurnRole::kUser : TurnRole::kAssistant, m.id,
                               text != nullptr ? text->text : ""));
    }
    return p;
}

const ThinkingRequest kAdaptive{"adaptive", "low"};

TEST(ThreadDigest, CacheMarksAsideEveryPartOfTheThreadChangesIt) {
    ConversationContext c("digest");
    c.add_message(Message::outgoing_text("hello"));
    c.add_message(Message::incoming_text("hi"));
    const PreparedConversation base = prepared_of(c);
    const ModelSpec model = model_named("claude-a");
    const std::string d = thread_digest("anthropic", model, kAdaptive, base, 2);
    ASSERT_EQ(d.size(), 32U);
    EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos);

    PreparedConversation marked = base;
    marked.turns[0].cache = true;
    marked.cache_plan.system_block = 0;
    marked.cache_plan.turn_anchors.push_back({1, 0});
    EXPECT_EQ(thread_digest("anthropic", model, kAdaptive, marked, 2), d) << "marks aside";

    PreparedConversation system = base;
    system.system_blocks[0] = TextBlock{"You answer in French."};
    PreparedConversation tools = base;
    tools.tool_definitions[0].description = "Searches the web.";
    PreparedConversation text = base;
    text.turns[0].blocks[0] = TextBlock{"hello!"};
    PreparedConversation role = base;
    role.turns[1].role = TurnRole::kUser;
    for (const auto& [what, changed] :
         {std::pair{"system", thread_digest("anthropic", model, kAdaptive, system, 2)},
          std::pair{"tools", thread_digest("anthropic", model, kAdaptive, tools, 2)},
          std::pair{"a turn's text", thread_digest("anthropic", model, kAdaptive, text, 2)},
          std::pair{"a turn's role", thread_digest("anthropic", model, kAdaptive, role, 2)},
          std::pair{"fewer turns", thread_digest("anthropic", model, kAdaptive, base, 1)},
          std::pair{"the provider", thread_digest("anthropic-eu", model, kAdaptive, base, 2)},
          std::pair{"the model",
                    thread_digest("anthropic", model_named("claude-b"), kAdaptive, base, 2)},
          std::pair{"the effort", thread_digest("anthropic", model,
                                                ThinkingRequest{"adaptive", "high"}, base, 2)}}) {
        EXPECT_NE(changed, d) << what;
    }
}

/// u1, a1 (threaded, its digest that of the turns before it unless `digest` says otherwise), u2.
ConversationContext threaded_conversation(const ModelSpec& model, bool user_after,
                                          const std::string& digest = {}) {
    ConversationContext c("plan");
    c.add_message(Message::outgoing_text("hello"));
    c.add_message(Message::incoming_text("hi"));
    if (user_after) c.add_message(Message::outgoing_text("more"));
    const PreparedConversation p = prepared_of(c);
    std::vector<Message> messages(c.messages().begin(), c.messages().end());
    messages[1].provider_message_id = "msg_1";
    messages[1].thread_digest =
        digest.empty() ? thread_digest("anthropic", model, kAdaptive, p, 1) : digest;
    std::vector<std::size_t> origins;
    for (std::size_t i = 0; i < messages.size(); ++i) origins.push_back(i);
    c.replace_messages(std::move(messages), origins);
    return c;
}

TEST(PlanThread, ContinuesAfterTheThreadedAnswerWhenTheTurnsBeforeItAreUnchanged) {
    const ModelSpec model = model_named("claude-a");
    const ConversationContext c = threaded_conversation(model, true);
    const PreparedConversation p = prepared_of(c);
    const ThreadCall call = plan_thread("anthropic", model, kAdaptive, c, p);
    EXPECT_EQ(call.kind, ThreadCall::Kind::kContinue);
    EXPECT_EQ(call.previous_message_id, "msg_1");
    EXPECT_EQ(call.first_new_turn, 2U);
    EXPECT_EQ(call.digest, thread_digest("anthropic", model, kAdaptive, p, 3));
}

TEST(PlanThread, CreatesWhenTheThreadNoLongerHoldsTheConversation) {
    const ModelSpec model = model_named("claude-a");
    const auto kind = [&](const ConversationContext& c, const ModelSpec& m) {
        return plan_thread("anthropic", m, kAdaptive, c, prepared_of(c)).kind;
    };
    EXPECT_EQ(kind(threaded_conversation(model, true, std::string(32, '0')), model),
              ThreadCall::Kind::kCreate)
        << "the turns before the answer changed";
    EXPECT_EQ(kind(threaded_conversation(model, false), model), ThreadCall::Kind::kCreate)
        << "no user turn follows the answer";
    EXPECT_EQ(kind(threaded_conversation(model, true), model_named("claude-b")),
              ThreadCall::Kind::kCreate)
        << "another model";
    ConversationContext plain("plain");
    plain.add_message(Message::outgoing_text("hello"));
    plain.add_message(Message::incoming_text("hi"));
    plain.add_message(Message::outgoing_text("more"));
    EXPECT_EQ(kind(plain, model), ThreadCall::Kind::kCreate) << "no threaded answer";
}

TEST(ThreadErrors, OnlyTheFourThreadCodesAreReplayed) {
    EXPECT_EQ(provider_error_code("anthropic: HTTP 404 not_found_error: gone (error_code: "
                                  "thread_not_found) (request-id: req_1)"),
              "thread_not_found");
    EXPECT_EQ(provider_error_code("a message quoting (error_code: x) then (error_code: y)"), "y");
    EXPECT_EQ(provider_error_code("anthropic: HTTP 400 invalid_request_error: bad"), "");
    EXPECT_EQ(provider_error_code("(error_code: unterminated"), "");
    for (const char* code : {"thread_not_found", "thread_already_continued",
                             "thread_continue_in_flight", "thread_fingerprint_mismatch"})
        EXPECT_TRUE(replays_thread(code)) << code;
    for (const char* code : {"", "thread_unsupported_request", "thread_exploded", "not_found"})
        EXPECT_FALSE(replays_thread(code)) << code;
}

}  // namespace
}  // namespace nucleo::internal
