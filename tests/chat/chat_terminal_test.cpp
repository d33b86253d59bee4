// chat.101: what `nucleo chat` prints of a model's or a tool's text is safe for a terminal, even
// when the text arrives in pieces that cut a UTF-8 sequence or a CRLF; chat.103: where the line
// history is kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "commands/chat_terminal.hpp"

namespace nucleo::cli {
namespace {

TEST(ChatTerminalText, ControlCharactersAreShownAsEscapes) {
    EXPECT_EQ(neutralize("clear\x1b[2Jscreen"), "clear\\x1b[2Jscreen");
    EXPECT_EQ(neutralize("bell\x07 del\x7f nul" + std::string(1, '\0')), "bell\\x07 del\\x7f nul\\x00");
    EXPECT_EQ(neutralize("over\rwrite"), "over\\rwrite");
    // Newlines, tabs, CRLF line ends and ordinary UTF-8 pass.
    EXPECT_EQ(neutralize("a\tb\r\nc\nd é — 日本"), "a\tb\nc\nd é — 日本");
    // The C1 controls (an 8-bit CSI) and the bidirectional overrides are escaped.
    EXPECT_EQ(neutralize("csi\xc2\x9b" "2J"), "csi\\u{9b}2J");
    EXPECT_EQ(neutralize("abc\xe2\x80\xae" "fed"), "abc\\u{202e}fed");
    EXPECT_EQ(neutralize("iso\xe2\x81\xa6x"), "iso\\u{2066}x");
    // A byte that is not UTF-8 is never passed raw.
    EXPECT_EQ(neutralize("bad\x9b" "2J"), "bad\\x9b2J");
    EXPECT_EQ(neutralize("cut\xe2\x80"), "cut\\xe2\\x80");
}

TEST(ChatTerminalText, PiecesOfAStreamAreJoinedBeforeTheyAreJudged) {
    TerminalText t;
    std::string out;
    // An 8-bit CSI cut between two pieces, then an em dash cut in three, then a CRLF cut in two.
    for (const std::string& piece : {std::string("x\xc2"), std::string("\x9b" "2J \xe2"),
                                    std::string("\x80"), std::string("\x94 line\r"),
                                    std::string("\nnext\x1b"), std::string("[0m")}) {
        out += t.feed(piece);
    }
    out += t.flush();
    EXPECT_EQ(out, "x\\u{9b}2J — line\nnext\\x1b[0m");
    TerminalText held;
    EXPECT_EQ(held.feed("end\r"), "end");
    EXPECT_EQ(held.flush(), "\\r");
}

TEST(ChatHistoryFile, IsUnderXdgStateHomeElseUnderHome) {
    const char* saved_state = std::getenv("XDG_STATE_HOME");
    const char* saved_home = std::getenv("HOME");
    const std::string state = saved_state != nullptr ? saved_state : "";
    const std::string home = saved_home != nullptr ? saved_home : "";
    ::setenv("XDG_STATE_HOME", "/var/state-of-alice", 1);
    ::setenv("HOME", "/home/alice", 1);
    EXPECT_EQ(chat_history_file(), "/var/state-of-alice/nucleo/chat_history");
    ::unsetenv("XDG_STATE_HOME");
    EXPECT_EQ(chat_history_file(), "/home/alice/.local/state/nucleo/chat_history");
    // The XDG rule: a relative XDG_STATE_HOME is ignored.
    ::setenv("XDG_STATE_HOME", "relative/state", 1);
    EXPECT_EQ(chat_history_file(), "/home/alice/.local/state/nucleo/chat_history");
    ::unsetenv("HOME");
    ::unsetenv("XDG_STATE_HOME");
    EXPECT_EQ(chat_history_file(), "");
    if (saved_state != nullptr) ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    if (saved_home != nullptr) ::setenv("HOME", home.c_str(), 1);
}

}  // namespace
}  // namespace nucleo::cli
