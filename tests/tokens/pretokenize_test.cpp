// The hand-written pre-split against the regexes of tiktoken_ext/openai_public.py (quoted in
// core/src/tokens/pretokenize.hpp). Expected pieces were checked against the same patterns run
// by a regex engine; the parity test checks the whole pipeline against tiktoken itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokens/pretokenize.hpp"

namespace nucleo::tokens {
namespace {

std::vector<std::string> split(Pattern p, std::string_view text) {
    std::vector<std::string> out;
    pretokenize(p, text, [&](std::string_view piece, bool) { out.emplace_back(piece); });
    return out;
}
std::vector<std::string> cl(std::string_view t) { return split(Pattern::kCl100k, t); }
std::vector<std::string> o2(std::string_view t) { return split(Pattern::kO200k, t); }
using V = std::vector<std::string>;

// cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d) is its own alternative, tried first.
TEST(PreSplit, Cl100kContractionsAreSeparatePiecesInAnyCase) {
    EXPECT_EQ(cl("don't stop"), (V{"don", "'t", " stop"}));
    EXPECT_EQ(cl("I'M HE'LL we'Ve"), (V{"I", "'M", " HE", "'LL", " we", "'Ve"}));
    EXPECT_EQ(cl("'sx"), (V{"'s", "x"}));  // leftmost-first: the contraction wins over "'sx"
    EXPECT_EQ(cl("O'Neil's"), (V{"O", "'Neil", "'s"}));
}

// o200k: the contraction is an optional tail of the word.
TEST(PreSplit, O200kContractionsStayOnTheWord) {
    EXPECT_EQ(o2("don't stop"), (V{"don't", " stop"}));
    EXPECT_EQ(o2("I'M HE'LL we'Ve"), (V{"I'M", " HE'LL", " we'Ve"}));
    EXPECT_EQ(o2("'sx"), (V{"'sx"}));
    EXPECT_EQ(o2("don't's"), (V{"don't", "'s"}));
    EXPECT_EQ(o2("O'Neil's"), (V{"O", "'Neil's"}));
}

// (?i) in Rust's regex (tiktoken's engine) folds ſ (U+017F) to s, so 'ſ is a contraction.
TEST(PreSplit, CaseInsensitiveContractionFoldsLongS) {
    EXPECT_EQ(cl("x'\u017f"), (V{"x", "'\u017f"}));
    EXPECT_EQ(o2("x'\u017f"), (V{"x'\u017f"}));
}

// \p{N}{1,3} in both encodings: digits go in groups of at most three, never glued to letters.
TEST(PreSplit, DigitsInGroupsOfOneToThree) {
    for (Pattern p : {Pattern::kCl100k, Pattern::kO200k}) {
        EXPECT_EQ(split(p, "12345678"), (V{"123", "456", "78"}));
        EXPECT_EQ(split(p, "abc1234def"), (V{"abc", "123", "4", "def"}));
        EXPECT_EQ(split(p, "$100"), (V{"$", "100"}));
        EXPECT_EQ(split(p, "x  1"), (V{"x", " ", " ", "1"}));
        // Other numbers count too: Arabic-Indic digits, Roman numeral Ⅻ (Nl), superscript ² (No).
        EXPECT_EQ(split(p, "\u0661\u0662\u0663\u0664\u216b\u00b2"),
                  (V{"\u0661\u0662\u0663", "\u0664\u216b\u00b2"}));
    }
}

// o200k splits CamelCase runs: [Upperish]*[Lowerish]+ then [Upperish]+[Lowerish]*.
TEST(PreSplit, O200kSplitsCaseRunsCl100kDoesNot) {
    EXPECT_EQ(cl("HELLOworld helloWORLD"), (V{"HELLOworld", " helloWORLD"}));
    EXPECT_EQ(o2("HELLOworld helloWORLD"), (V{"HELLOworld", " hello", "WORLD"}));
    EXPECT_EQ(o2("\u01c5emal"), (V{"\u01c5emal"}));  // titlecase ǅ heads a word
    EXPECT_EQ(o2("\u02b0ello"), (V{"\u02b0ello"}));  // modifier letter ʰ (Lm) joins either side
}

// Marks: \p{M} belongs to o200k's word classes but not to \p{L}.
TEST(PreSplit, CombiningMarksJoinWordsInO200kOnly) {
    EXPECT_EQ(o2("e\u0301 cafe\u0301s"), (V{"e\u0301", " cafe\u0301s"}));
    EXPECT_EQ(cl("e\u0301 cafe\u0301s"), (V{"e", "\u0301", " cafe", "\u0301s"}));
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ : a run keeps its last space for the next word.
TEST(PreSplit, WhitespaceRunsBeforeWordsAndNewlines) {
    for (Pattern p : {Pattern::kCl100k, Pattern::kO200k}) {
        EXPECT_EQ(split(p, "  hello"), (V{" ", " hello"}));
        EXPECT_EQ(split(p, "\t\tindent"), (V{"\t", "\tindent"}));
        EXPECT_EQ(split(p, "a\n\n  b"), (V{"a", "\n\n", " ", " b"}));
        EXPECT_EQ(split(p, "x  \n"), (V{"x", "  \n"}));
        EXPECT_EQ(split(p, "foo   "), (V{"foo", "   "}));  // (?!\S) holds at the end
        EXPECT_EQ(split(p, "  \n  \n  x"), (V{"  \n  \n", " ", " x"}));
        EXPECT_EQ(split(p, "\u3000a"), (V{"\u3000a"}));  // any non-newline space prefixes a word
        EXPECT_EQ(split(p, std::string(5000, ' ') + "x"),
                  (V{std::string(4999, ' '), " x"}));
    }
}

// \s is Unicode White_Space (Rust regex): U+0085 is a space, U+FEFF is not.
TEST(PreSplit, WhiteSpaceIsTheUnicodeProperty) {
    EXPECT_EQ(cl("a\u0085\u0085b"), (V{"a", "\u0085", "\u0085b"}));
    EXPECT_EQ(cl("a\ufeff\ufeffb"), (V{"a", "\ufeff\ufeff", "b"}));
}

// " ?[^\s\p{L}\p{N}]+[\r\n]*" in cl100k; o200k also takes '/' in the tail.
TEST(PreSplit, PunctuationRunsAndTheirNewlineTail) {
    EXPECT_EQ(cl("?!\r\n\r\nx"), (V{"?!\r\n\r\n", "x"}));
    EXPECT_EQ(cl("?\n/x"), (V{"?\n", "/x"}));
    EXPECT_EQ(o2("?\n/x"), (V{"?\n/", "x"}));
    for (Pattern p : {Pattern::kCl100k, Pattern::kO200k}) {
        EXPECT_EQ(split(p, "path/to/file.txt\n"), (V{"path", "/to", "/file", ".txt", "\n"}));
    }
}

TEST(PreSplit, CjkAndEmojiZwjSequences) {
    for (Pattern p : {Pattern::kCl100k, Pattern::kO200k}) {
        EXPECT_EQ(split(p, "你好世界。"), (V{"你好世界", "。"}));
        EXPECT_EQ(split(p, "中文abc"), (V{"中文abc"}));
        // 👨‍👩‍👧: emoji are symbols, ZWJ a format char: one punctuation-class piece.
        EXPECT_EQ(split(p, "\U0001F468\u200d\U0001F469\u200d\U0001F467 ok"),
                  (V{"\U0001F468\u200d\U0001F469\u200d\U0001F467", " ok"}));
        EXPECT_EQ(split(p, " \U0001F600!"), (V{" \U0001F600!"}));
    }
}

// Nucleo's rule for bytes tiktoken cannot see: each invalid byte is its own piece, and each
// valid run around it is split as a text of its own ((?!\S) sees the run's end).
TEST(PreSplit, InvalidUtf8BytesArePiecesAndBoundaries) {
    EXPECT_EQ(cl("ab\xff" "cd"), (V{"ab", "\xff", "cd"}));
    EXPECT_EQ(cl("a  \x80  b"), (V{"a", "  ", "\x80", " ", " b"}));
    // A truncated 3-byte sequence: both bytes invalid; an overlong; a surrogate.
    EXPECT_EQ(cl("\xe2\x82x"), (V{"\xe2", "\x82", "x"}));
    EXPECT_EQ(cl("\xc0\x80"), (V{"\xc0", "\x80"}));
    EXPECT_EQ(cl("\xed\xa0\x80"), (V{"\xed", "\xa0", "\x80"}));
    std::vector<bool> flags;
    pretokenize(Pattern::kO200k, "a\xf5" "b", [&](std::string_view, bool bad) { flags.push_back(bad); });
    EXPECT_EQ(flags, (std::vector<bool>{false, true, false}));
}

TEST(PreSplit, PiecesCoverTheInputExactly) {
    const std::string text = "Mixed: don't 12345 \xff caf\u00e9 \u4f60\u597d \U0001F600\n\n  end  ";
    for (Pattern p : {Pattern::kCl100k, Pattern::kO200k}) {
        std::string joined;
        for (const auto& piece : split(p, text)) {
            EXPECT_FALSE(piece.empty());
            joined += piece;
        }
        EXPECT_EQ(joined, text);
    }
}

}  // namespace
}  // namespace nucleo::tokens
