#include <gtest/gtest.h>

#include "nucleo/catalog.hpp"
#include "nucleo/content.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

TEST(Content, BlockTypeNamesFollowTheDocument) {
    EXPECT_STREQ(block_type_name(TextBlock{"hi"}), "text");
    EXPECT_STREQ(block_type_name(ToolResultBlock{"t1", {TextBlock{"x"}}, true}), "tool_result");
    EXPECT_STREQ(block_type_name(RedactedThinkingBlock{"zz"}), "redacted_thinking");
}

TEST(Content, MessagesAreCompactableByDefault) {
    // conversation.3: "Tool results can be compacted (default is true)".
    Message m = Message::outgoing_text("hello");
    EXPECT_TRUE(m.compactable);
    EXPECT_FALSE(m.cache);
    EXPECT_FALSE(m.app_authored);
}

TEST(Catalog, OutputBudgetIsCappedAtTheCeiling) {
    ModelSpec spec;
    spec.max_output_tokens = 1000;
    spec.output_budget[OutputSize::kLong] = 4000;
    spec.output_budget[OutputSize::kShort] = 200;
    EXPECT_EQ(spec.output_budget_for(OutputSize::kLong), 1000);
    EXPECT_EQ(spec.output_budget_for(OutputSize::kShort), 200);
}

TEST(Errors, ContextOverflowIsUncorrectable) {
    bool caught_as_uncorrectable = false;
    try {
        throw ContextOverflowException("too big");
    } catch (const UncorrectableLLMException& e) {
        caught_as_uncorrectable = true;
        EXPECT_EQ(e.kind(), ErrorKind::kContextOverflow);
    }
    EXPECT_TRUE(caught_as_uncorrectable);
}

}  // namespace
}  // namespace nucleo
