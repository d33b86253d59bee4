// conversation.107: what the host hands a conversation (a message, its text blocks, a tool
// result, a tool call's input, the system content, a tool) is UTF-8 or refused with where, and a
// refusal leaves the conversation as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/utf8.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kWide = "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 \xf0\xa0\x80\x80";

/// A conversation holding one question, one tool call and its result, all valid.
ConversationContext conversation() {
    ConversationContext c("c-host", "alice");
    c.put_main_objective("task", "Answer about orders " + kWide);
    c.add_message(Message::outgoing_text("Where is order 42? " + kWide));
    Message call;
    call.direction = Direction::kIncoming;
    call.blocks = {ToolUseBlock{"toolu_1", "search", R"({"q":")" + kWide + R"("})"}};
    c.add_message(std::move(call));
    return c;
}

/// The message of the refusal `fn` throws, which must be kInvalidArgument and valid UTF-8.
template <typename Fn>
std::string refusal(Fn&& fn) {
    try {
        fn();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        EXPECT_TRUE(internal::is_valid_utf8(e.what())) << "the refusal quotes the invalid bytes";
        return e.what();
    }
    ADD_FAILURE() << "accepted text that is not UTF-8";
    return {};
}

/// Everything of a conversation a refusal must leave as it was.
struct Snapshot {
    std::string document;
    std::uint64_t epoch;
    explicit Snapshot(const ConversationContext& c)
        : document(write_conversation_document(c)), epoch(c.messages_epoch()) {}
    void expect_unchanged(const ConversationContext& c) const {
        EXPECT_EQ(write_conversation_document(c), document);
        EXPECT_EQ(c.messages_epoch(), epoch);
    }
};

Message with(std::vector<ContentBlock> blocks, Direction d = Direction::kOutgoing) {
    Message m;
    m.id = "q";
    m.direction = d;
    m.blocks = std::move(blocks);
    return m;
}

TEST(Utf8Host, AMessageIsRefusedNamingTheFieldAndTheByte) {
    ConversationContext c = conversation();
    const Snapshot before(c);
    struct Case {
        Message message;
        std::string expected;
    };
    std::vector<Case> cases;
    cases.push_back({with({TextBlock{"ab\xff"}}),
                     "message 2 (id 'q'): blocks[0].text: not valid UTF-8 at byte 2"});
    cases.push_back({with({TextBlock{"fine"}, TextBlock{"\xc3\x28"}}),
                     "message 2 (id 'q'): blocks[1].text: not valid UTF-8 at byte 0"});
    cases.push_back(
        {with({ToolResultBlock{"toolu_1", {TextBlock{"ok"}, TextBlock{"ok \xed\xa0\x80"}}, false}}),
         "message 2 (id 'q'): blocks[0].content[1].text: not valid UTF-8 at byte 3"});
    cases.push_back({with({ToolUseBlock{"toolu_2", "search", "{\"q\":\"\xf4\x90\x80\x80\"}"}},
                          Direction::kIncoming),
                     "message 2 (id 'q'): blocks[0].input: not valid UTF-8 at byte 6"});
    // A JSON-valued field whose escape would read as a lone surrogate is refused too.
    cases.push_back(
        {with({ToolUseBlock{"toolu_2", "search", R"({"q":"\udc00"})"}}, Direction::kIncoming),
         "message 2 (id 'q'): blocks[0].input: not valid UTF-8 at byte 6"});
    cases.push_back({with({ThinkingBlock{"hmm \xff", ""}}, Direction::kIncoming),
                     "message 2 (id 'q'): blocks[0].thinking: not valid UTF-8 at byte 4"});
    Message bad_id = Message::outgoing_text("fine");
    bad_id.id = "m\xff";
    cases.push_back({std::move(bad_id), "message 2: id: not valid UTF-8 at byte 1"});
    for (Case& k : cases) {
        SCOPED_TRACE(k.expected);
        const std::string what = refusal([&] { c.add_message(std::move(k.message)); });
        EXPECT_THAT(what, StartsWith(k.expected));
        before.expect_unchanged(c);
    }
    // Nothing of the refused messages stuck: their id is free.
    EXPECT_EQ(c.add_message(with({TextBlock{kWide}})), "q");
}

TEST(Utf8Host, TheSystemContentIsRefusedAndTheObjectiveKept) {
    ConversationContext c = conversation();
    const Snapshot before(c);
    EXPECT_THAT(refusal([&] { c.put_main_objective("task", "Be \xff"); }),
                StartsWith("put_main_objective: value.text: not valid UTF-8 at byte 3"));
    EXPECT_THAT(refusal([&] { c.put_main_objective("style", "x\xc0\xaf"); }),
                StartsWith("put_main_objective: value.text: not valid UTF-8 at byte 1"));
    EXPECT_THAT(refusal([&] { c.put_main_objective("k\xff", "fine"); }),
                StartsWith("put_main_objective: key: not valid UTF-8 at byte 1"));
    before.expect_unchanged(c);
    ASSERT_EQ(c.main_objective().size(), 1U);
    EXPECT_TRUE(c.put_main_objective("style", kWide));
}

TEST(Utf8Host, AToolIsRefusedAndNothingDeclared) {
    ConversationContext c = conversation();
    ToolDefinitionBlock tool{"lookup", "Looks \xff up", R"({"type":"object","properties":{}})"};
    EXPECT_THAT(refusal([&] { c.add_tool(tool); }),
                StartsWith("add_tool: tool.description: not valid UTF-8 at byte 6"));
    tool.description = "fine";
    tool.name = "look\xff";
    EXPECT_THAT(refusal([&] { c.add_tool(tool); }),
                StartsWith("add_tool: tool.name: not valid UTF-8 at byte 4"));
    EXPECT_TRUE(c.declared_tools().empty());
}

TEST(Utf8Host, PartsAndACompactionRewriteAreCheckedAlike) {
    ConversationParts parts = conversation().parts();
    parts.objective[0].value = TextBlock{"\xff"};
    EXPECT_THAT(refusal([&] { (void)ConversationContext::from_parts(parts); }),
                StartsWith("from_parts: objective[0].value.text: not valid UTF-8 at byte 0"));
    parts = conversation().parts();
    parts.messages[0].blocks = {TextBlock{"ok\xff"}};
    EXPECT_THAT(refusal([&] { (void)ConversationContext::from_parts(parts); }),
                StartsWith("message 0 (id 'm1'): blocks[0].text: not valid UTF-8 at byte 2"));

    ConversationContext c = conversation();
    const Snapshot before(c);
    std::vector<Message> rewritten = c.messages();
    rewritten[1].blocks = {TextBlock{"summary \xff"}};
    rewritten[1].direction = Direction::kIncoming;
    EXPECT_THAT(refusal([&] {
                    c.replace_messages(rewritten, {0, 1});
                }),
                HasSubstr("blocks[0].text: not valid UTF-8 at byte 8"));
    before.expect_unchanged(c);
}

TEST(Utf8Host, TextOfEveryWidthIsTaken) {
    ConversationContext c = conversation();
    c.add_message(with({ToolResultBlock{"toolu_1", {TextBlock{kWide}}, false}}));
    Message answer = with({TextBlock{kWide}, ThinkingBlock{kWide, "sig"}}, Direction::kIncoming);
    answer.id = "a";
    c.add_message(std::move(answer));
    EXPECT_EQ(c.messages().size(), 4U);
    const std::string written = write_conversation_document(c);
    EXPECT_EQ(write_conversation_parts(read_conversation_parts(written)), written);
}

}  // namespace
}  // namespace nucleo
