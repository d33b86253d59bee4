// conversation.106: a conversation document is UTF-8 or refused, naming the JSON path of the field
// and the byte offset within it; valid text of every width reads and writes back as it is. Also
// the shared UTF-8 helpers the reader stands on (core/src/common/utf8.hpp).
#include <gtest/gtest.h>

#include <string>

#include "common/utf8.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "utf8_cases.hpp"

namespace nucleo {
namespace {

using internal::first_invalid_utf8;
using internal::first_invalid_utf8_in_json;
using internal::first_lone_surrogate_escape;
using internal::is_valid_utf8;
constexpr std::size_t npos = std::string_view::npos;

TEST(Utf8Helpers, FindTheFirstInvalidByte) {
    EXPECT_EQ(first_invalid_utf8(""), npos);
    EXPECT_EQ(first_invalid_utf8(utf8_cases::kWideText), npos);
    EXPECT_EQ(first_invalid_utf8("\xff"), 0U);
    EXPECT_EQ(first_invalid_utf8("ab\xc3\xa9\xff"), 4U);
    EXPECT_EQ(first_invalid_utf8("\xc0\xaf"), 0U);                // overlong '/'
    EXPECT_EQ(first_invalid_utf8("x\xed\xa0\x80"), 1U);           // U+D800 encoded
    EXPECT_EQ(first_invalid_utf8("\xf4\x90\x80\x80"), 0U);        // above U+10FFFF
    EXPECT_EQ(first_invalid_utf8("abc\xe2\x82"), 3U);             // cut short at the end
    EXPECT_EQ(first_invalid_utf8("\xe2\x82 x"), 0U);              // cut short before a space
    EXPECT_EQ(first_invalid_utf8(std::string("a\0b", 3)), npos);  // U+0000 is UTF-8
    // Past simdjson's 64-byte blocks: the position is still exact.
    const std::string long_text = std::string(1000, 'a') + utf8_cases::kWideText + "\x80";
    EXPECT_EQ(first_invalid_utf8(long_text), long_text.size() - 1);
    EXPECT_FALSE(is_valid_utf8(long_text));
    EXPECT_TRUE(is_valid_utf8(long_text.substr(0, long_text.size() - 1)));
}

TEST(Utf8Helpers, FindLoneSurrogateEscapesOnly) {
    EXPECT_EQ(first_lone_surrogate_escape(R"("\ud83d\ude00")"), npos);  // a pair: U+1F600
    EXPECT_EQ(first_lone_surrogate_escape(R"("\uD83D\uDE00 \u00e9 \n")"), npos);
    EXPECT_EQ(first_lone_surrogate_escape(R"("a\udc00")"), 2U);    // a lone low one
    EXPECT_EQ(first_lone_surrogate_escape(R"("\ud83d x")"), 1U);   // a lone high one
    EXPECT_EQ(first_lone_surrogate_escape(R"("\\udc00")"), npos);  // a backslash, then "udc00"
    EXPECT_EQ(first_lone_surrogate_escape(R"("\\\udc00")"), 3U);   // a backslash, then the escape
    EXPECT_EQ(first_invalid_utf8_in_json("[\"\xff\", \"\\udc00\"]"), 2U);
    EXPECT_EQ(first_invalid_utf8_in_json(R"(["ok", "\udc00", "\u00ff"])"), 8U);
}

TEST(Utf8Helpers, PrintableTextReplacesEachInvalidByte) {
    EXPECT_EQ(internal::printable_utf8("ok"), "ok");
    EXPECT_EQ(internal::printable_utf8("a\xff"
                                       "b"),
              "a\xef\xbf\xbd"
              "b");
    EXPECT_EQ(internal::printable_utf8(utf8_cases::kWideText), utf8_cases::kWideText);
}

/// The refusal `read` throws, which must be the reader's kInvalidArgument.
template <typename Read>
std::string refusal_of(Read&& read) {
    try {
        read();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "accepted text that is not UTF-8";
    return {};
}

/// The refusal of `json` by read_conversation_parts.
std::string refusal(const std::string& json) {
    return refusal_of([&] { (void)read_conversation_parts(json); });
}

TEST(Utf8Document, EveryPlaceIsRefusedWithItsPathAndByteOffset) {
    for (const auto& c : utf8_cases::invalid_documents()) {
        SCOPED_TRACE(c.name);
        const std::string what = refusal(c.document);
        EXPECT_EQ(what.rfind(c.where, 0), 0U) << what;  // the message starts with the position
        EXPECT_TRUE(is_valid_utf8(what)) << "the refusal quotes the invalid bytes";
        // The whole-document variants refuse it alike.
        EXPECT_THROW((void)read_conversation_document(c.document), Error);
        std::vector<std::string> dropped;
        EXPECT_THROW((void)read_conversation_parts(c.document, &dropped), Error);
    }
}

TEST(Utf8Document, UtfEightIsCheckedBeforeAnythingQuotesAString) {
    // An unknown block type is quoted by its refusal: the UTF-8 refusal comes first, so the
    // invalid bytes are never quoted.
    const std::string doc =
        R"({"schema_version": 1, "messages": [{"direction": "outgoing", "blocks": [{"type": "vid)"
        "\xff"
        R"(eo"}]}]})";
    const std::string what = refusal(doc);
    EXPECT_EQ(what,
              "messages[0].blocks[0].type: not valid UTF-8 at byte 3 of the string; a "
              "conversation document is UTF-8 text");
}

TEST(Utf8Document, ATopLevelKeyIsNamedAsSuch) {
    const std::string what = refusal("{\"schema_version\": 1, \"\xff\": 0}");
    EXPECT_EQ(what.rfind("the key of top-level member 1 is not valid UTF-8 at byte 0", 0), 0U)
        << what;
}

TEST(Utf8Document, OneBlockIsRefusedUnderItsName) {
    const std::string what = refusal_of(
        [] { (void)read_content_block("{\"type\": \"text\", \"text\": \"x\xff\"}", "slot"); });
    EXPECT_EQ(what.rfind("slot.text: not valid UTF-8 at byte 1", 0), 0U) << what;
}

TEST(Utf8Document, TextOfEveryWidthReadsAndWritesBackAsItIs) {
    const ConversationParts parts = read_conversation_parts(utf8_cases::valid_wide_document());
    ASSERT_EQ(parts.messages.size(), 3U);
    const auto* text = parts.messages[0].blocks[0].get_if<TextBlock>();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->text, utf8_cases::kWideText);
    const auto* use = parts.messages[1].blocks[0].get_if<ToolUseBlock>();
    ASSERT_NE(use, nullptr);
    EXPECT_NE(use->input_json.find(utf8_cases::kWideText), std::string::npos) << use->input_json;
    // Written back byte for byte (conversation.104: UTF-8 is written as it is, not escaped).
    const std::string written = write_conversation_parts(parts);
    EXPECT_NE(written.find(utf8_cases::kWideText), std::string::npos);
    EXPECT_EQ(write_conversation_parts(read_conversation_parts(written)), written);
    ConversationContext conversation = read_conversation_document(written);
    EXPECT_EQ(conversation.messages().size(), 3U);
}

TEST(Utf8Document, AnEscapedSurrogatePairIsOneCharacter) {
    const ConversationParts parts = read_conversation_parts(
        R"({"schema_version": 1, "messages": [{"direction": "outgoing", "blocks": [{"type": "text", "text": "\ud83d\ude00 \\udc00"}]}]})");
    const auto* text = parts.messages.at(0).blocks.at(0).get_if<TextBlock>();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->text, "\xf0\x9f\x98\x80 \\udc00");
}

}  // namespace
}  // namespace nucleo
