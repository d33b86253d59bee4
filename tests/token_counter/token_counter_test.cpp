// TokenCounter (tokens.10-14).
#include <gtest/gtest.h>

#include <thread>

#include "nucleo/tokenizer.hpp"
#include "nucleo/tokens.hpp"
#include "render/render_internal.hpp"

namespace nucleo {
namespace {

const Tokenizer& o200k() {
    return Tokenizer::get("o200k_base");
}

ConversationContext conversation(int messages) {
    ConversationContext c("c", "u");
    c.put_main_objective("task", "Answer questions about orders.");
    for (int i = 0; i < messages; ++i) {
        c.add_message(Message::outgoing_text("Question number " + std::to_string(i) + "?"));
    }
    return c;
}

TEST(TokenCounter, ASecondCountOfAnUnchangedConversationHitsTheCache) {
    // tokens.14: per-message counts are memoized by content.
    TokenCounter counter(o200k());
    const ConversationContext c = conversation(50);
    const std::int64_t first = counter.total_tokens(c);
    const TokenCacheStats after_first = counter.stats();
    EXPECT_EQ(after_first.message_misses, 50U);
    EXPECT_EQ(counter.total_tokens(c), first);
    const TokenCacheStats after_second = counter.stats();
    EXPECT_EQ(after_second.message_misses, 50U) << "nothing may be tokenized again";
    EXPECT_EQ(after_second.prefix_hits, after_first.prefix_hits + 1);
}

TEST(TokenCounter, AppendingOneMessageCountsOneMessage) {
    // tokens.14: appending one message to a 10,000-message conversation and asking again costs
    // about the new message alone.
    TokenCounter counter(o200k());
    ConversationContext c = conversation(200);
    const std::int64_t before = counter.total_tokens(c);
    const TokenCacheStats s0 = counter.stats();
    const Message added = Message::incoming_text("Order 42 shipped on Monday.");
    c.add_message(added);
    const std::int64_t after = counter.total_tokens(c);
    const TokenCacheStats s1 = counter.stats();
    EXPECT_EQ(s1.message_misses - s0.message_misses, 1U);
    EXPECT_EQ(s1.message_hits, s0.message_hits) << "old messages are not even looked up";
    EXPECT_EQ(after - before, counter.count_message(added));
}

TEST(TokenCounter, AnIdenticalMessageElsewhereIsCountedOnce) {
    TokenCounter counter(o200k());
    const ConversationContext a = conversation(10);
    const ConversationContext b = conversation(10);  // another conversation, same content
    EXPECT_EQ(counter.total_tokens(a), counter.total_tokens(b));
    EXPECT_EQ(counter.stats().message_misses, 10U);
    EXPECT_EQ(counter.stats().message_hits, 10U);
}

TEST(TokenCounter, TotalsStayFreshAfterTheListIsRewritten) {
    // "ConversationContext always estimates tokens from scratch": a replaced list is recounted.
    TokenCounter counter(o200k());
    ConversationContext c = conversation(5);
    const std::int64_t full = counter.total_tokens(c);
    std::vector<Message> kept(c.messages().begin() + 3, c.messages().end());
    c.replace_messages(kept, {3, 4});
    const std::int64_t expected =
        counter.fixed_tokens(c) + counter.count_message(kept[0]) + counter.count_message(kept[1]);
    EXPECT_EQ(counter.total_tokens(c), expected);
    EXPECT_LT(expected, full);
    // A copy is its own lineage: appending to it never leaks into the original's total.
    ConversationContext copy = c;
    EXPECT_NE(copy.messages_epoch(), c.messages_epoch());
    copy.add_message(Message::outgoing_text("only in the copy"));
    EXPECT_EQ(counter.total_tokens(c), expected);
}

TEST(TokenCounter, TheObjectiveIsCountedOnItsRenderedStringWithoutFreezing) {
    // tokens.11: "The objective and the artifact registry are counted on the strings
    // prepare_messages_for_llm would send".
    TokenCounter counter(o200k());
    ConversationContext c("c", "u");
    c.put_main_objective("task", "Answer questions about orders.");
    c.put_main_objective("profile", PojoBlock{"Profile", R"({"name":"Alice","tier":"gold"})"});
    const TokenBreakdown b = counter.breakdown(c);
    EXPECT_EQ(b.objective, counter.count_text("Answer questions about orders.") +
                               counter.count_text(R"({"name":"Alice","tier":"gold"})"));
    EXPECT_FALSE(c.frozen()) << "counting must not freeze the objective";
    EXPECT_TRUE(c.put_main_objective("task", "Changed."));
}

TEST(TokenCounter, ToolDefinitionsAreCountedOnTheirRenderedText) {
    // tokens.12: tool definitions on render_tool_definition_text, so the estimate and the
    // text-fallback wire cannot diverge.
    TokenCounter counter(o200k());
    ConversationContext c("c", "u");
    const ToolDefinitionBlock def{"search_orders", "Search orders by text.",
                                  R"({ "type": "object", "properties": {} })"};
    c.add_tool(def);
    const TokenBreakdown pending = counter.breakdown(c);
    const std::int64_t rendered =
        counter.count_text(render_tool_definition_text(render::to_wire_definition(def)));
    EXPECT_EQ(pending.tools, rendered);
    EXPECT_EQ(pending.objective, counter.count_text(tool_weight_guidance()));
    // After a render the definition sits in the head; the count is the same text.
    (void)c.prepare_messages_for_llm(FixedContentFormatter(true, false), false);
    const TokenBreakdown announced = counter.breakdown(c);
    EXPECT_EQ(announced.tools, rendered);
    EXPECT_EQ(announced.total(), pending.total());
}

TEST(TokenCounter, ImagesFilesAndTheRegistryFollowTheDocumentedArithmetic) {
    using A = TokenArithmetic;
    TokenCounter counter(o200k());
    Message image;
    image.blocks = {ImageBlock{"image/png", "iVBORw0KGgo=", ""}};
    EXPECT_EQ(counter.count_message(image), A::kMessageOverheadTokens + A::kImageTokens);
    FileBlock pdf{"application/pdf", "a.pdf", std::string(4 * 40 * 1024, 'A'), ""};  // 120 KiB
    EXPECT_EQ(counter.count_block(pdf), 3 * A::kFileTokensPerPage);
    FileBlock text{"text/plain", "a.txt", std::string(400, 'A'), ""};  // 300 bytes
    EXPECT_EQ(counter.count_block(text), 75);
    EXPECT_EQ(counter.count_block(FileBlock{"application/pdf", "b.pdf", "", "https://x/b.pdf"}),
              A::kFileTokensPerPage);

    ConversationContext c("c", "u");
    c.artifacts().register_artifact("link:cite", R"({"url":"https://example.com"})");
    // wire.191: the registry rides a turn (no overhead of its own) and is counted until sent.
    EXPECT_EQ(counter.breakdown(c).artifacts,
              counter.count_text(c.artifacts().build_artifact_registry_section()));
}

TEST(TokenCounter, ToolTrafficCountsItsContentAndWrapper) {
    using A = TokenArithmetic;
    TokenCounter counter(o200k());
    const ToolUseBlock use{"toolu_1", "search", R"({"q":"42"})"};
    EXPECT_EQ(counter.count_block(use),
              A::kToolBlockOverheadTokens + counter.count_text("toolu_1") +
                  counter.count_text("search") + counter.count_text(R"({"q":"42"})"));
    const ToolResultBlock result{"toolu_1", {TextBlock{"found"}}, false};
    EXPECT_EQ(
        counter.count_block(result),
        A::kToolBlockOverheadTokens + counter.count_text("toolu_1") + counter.count_text("found"));
}

TEST(TokenCounter, ConcurrentCountsAgree) {
    TokenCounter counter(o200k());
    const ConversationContext c = conversation(300);
    const std::int64_t expected = TokenCounter(o200k()).total_tokens(c);
    std::vector<std::thread> threads;
    std::vector<std::int64_t> got(4);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] { got[t] = counter.total_tokens(c); });
    }
    for (auto& th : threads) th.join();
    for (std::int64_t g : got) EXPECT_EQ(g, expected);
}

}  // namespace
}  // namespace nucleo
