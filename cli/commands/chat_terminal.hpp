// What `nucleo chat` needs of a terminal: text from a model or a tool made safe to print
// (chat.101), the line editor with its persisted history (chat.102, chat.103), and Ctrl-C as an
// event the session handles (chat.104).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace nucleo::cli {

/// chat.101: makes text safe for a terminal. Control characters (C0 but newline and tab, DEL, the
/// C1 range U+0080-U+009F) and the bidirectional overrides (U+202A-U+202E, U+2066-U+2069) are
/// shown as visible escapes (`\x1b`, `\x7f`, `\u{9b}`, `\u{202e}`); a carriage return right before
/// a newline is dropped. Feed a stream piece by piece: a UTF-8 sequence or a CR cut between two
/// pieces is held until the next one; flush() gives what is held at the end.
class TerminalText {
  public:
    [[nodiscard]] std::string feed(std::string_view piece);
    [[nodiscard]] std::string flush();

  private:
    std::string carry_;
};

/// The whole of `text` made safe (TerminalText fed once, then flushed).
[[nodiscard]] std::string neutralize(std::string_view text);

/// chat.103: where the chat's line history lives: $XDG_STATE_HOME/nucleo/chat_history, else
/// $HOME/.local/state/nucleo/chat_history; empty when neither variable is set.
[[nodiscard]] std::filesystem::path chat_history_file();

/// chat.104: SIGINT turned into readable bytes (a self-pipe), for the life of this object: the
/// previous disposition is restored at the end. One at a time per process.
class Interrupts {
  public:
    Interrupts();
    ~Interrupts();
    Interrupts(const Interrupts&) = delete;
    Interrupts& operator=(const Interrupts&) = delete;

    /// Readable when an interrupt arrived and was not taken.
    [[nodiscard]] int fd() const noexcept;
    /// Consumes the pending interrupts; true when there was one.
    bool take();
};

/// chat.102: a prompt with line editing (libedit: arrows, Home/End, Ctrl-A/E/K/W, history with
/// Up/Down and Ctrl-R) whose history is loaded from and saved to `history_file` (saved after every
/// line, the folder made 0700 and the file 0600: lines may hold secrets).
class LineEditor {
  public:
    enum class Read { kLine, kEnd, kInterrupted };

    /// `prompt` may hold ANSI sequences between \1 markers (not counted as width).
    LineEditor(std::string prompt, std::filesystem::path history_file, Interrupts& interrupts);
    ~LineEditor();
    LineEditor(const LineEditor&) = delete;
    LineEditor& operator=(const LineEditor&) = delete;

    /// One message without its final newline (a paste or Alt-Enter may put newlines inside it,
    /// chat.114); kEnd on Ctrl-D at an empty line or end of input; kInterrupted on Ctrl-C at an
    /// empty line (Ctrl-C clears a half-typed one and the read goes on).
    Read read(std::string& line);

    /// A note when the history cannot be written ("" when it can), said once at start.
    [[nodiscard]] const std::string& history_problem() const noexcept { return history_problem_; }

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
    std::string history_problem_;
};

}  // namespace nucleo::cli
