// `nucleo chat [--model ID] [--user U] [--conversation ID | -c | --new] [--system TEXT]
// [--tools-dir DIR] [--mcp NAME[,NAME]] [--comfort N] [--emulator] [--config FILE]`: an interactive
// session over the agent loop.
//
// Every message is one Agent turn through a ConversationService wired to the config's persistent
// store, so the save discipline holds (saved after the user's message, after the answer, and on
// an abnormal end): a failed turn leaves the conversation as last saved and the session goes on.
// The answer streams as it arrives; tool calls show as they happen.
//
// Decisions:
//  - Terminal or script. With a terminal on stdin the session prompts (`you> `), colours its
//    notes, and notes (the conversation id, tool calls, each turn's usage) go to stdout with the
//    answer. Without one it reads one message per line and stdout carries only what a script
//    wants: each answer (ending with a newline) and the output of slash commands, no prompt and
//    no ANSI; the notes go to stderr. Errors always go to stderr as one line.
//  - Exit status: start-up errors (bad usage 2, bad config/model/conversation id 2, a store that
//    cannot open 1...); then at a terminal 0, and for a script 1 when any turn failed, else 0
//    (chat.110). A failed turn is not kept: the conversation is as it was before the message
//    (ownership.105), so retrying it sends the same conversation again.
//  - Compaction keeps the 4 most recent exchanges word for word (--pinned-exchanges N|all) and
//    may summarize older user messages and answers, so a long chat keeps going inside its window
//    (compaction.109).
//  - The model is --model, else the catalog's first entry whose provider has its key (chat.107),
//    else the catalog's first; a resumed conversation keeps the model that answered it last
//    (chat.113) and /model switches it (chat.115); the user is --user, else $USER, else "local".
//    The seat declares a MEDIUM output and IMMEDIATE depth. --system replaces the default
//    instructions.
//  - At a terminal (chat.102-chat.106): libedit edits the line and keeps the history; Ctrl-C
//    cancels the running turn, and a second Ctrl-C (or Ctrl-C at an empty prompt, or Ctrl-D) ends
//    the session; at the prompt Ctrl-C clears a half-typed line, Alt-Enter and a bracketed paste
//    put newlines in one message (chat.114); a status line says why the turn waits; every byte from
//    the model or a tool is made safe before it reaches the screen (chat.101). On exit the command
//    that resumes the conversation is printed (chat.108). -c/--continue resumes the user's latest
//    conversation.
//  - Tools: none unless --tools-dir DIR, then list_files and read_file confined to DIR
//    (chat_tools.hpp says why).
//  - Caching: every message is marked for caching (AgentOptions::cache_all_messages).
//  - A round whose cache the provider says missed (caching.131) gets a note line saying why.
//  - Compaction: the agent checks the window before every call with the config's summarizer and
//    the model's comfort window (--comfort N overrides it). `/compact [TOKENS]` compacts now to
//    TOKENS, by default half of what the conversation holds, and reports the level reached.
//  - Without a persistent store the chat still works, in memory only (a note says so), and
//    --conversation is refused.
//  - A line starting with `//` is sent as a message starting with `/`.
//  - --emulator starts nucleo-emulator for the session and aims every provider of the config at
//    it with stand-in keys, as `nucleo demo` does (cli.102); the resume command then keeps it.
//  - Logging: warnings and errors only unless NUCLEO_LOG_LEVEL says otherwise; the session's own
//    notes already say what info records would (compaction, usage), and a retried call still
//    shows its warning while the user waits.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <clocale>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "commands/chat_terminal.hpp"
#include "commands/chat_tools.hpp"
#include "commands/conversation_ids.hpp"
#include "commands/demo_support.hpp"
#include "commands/provider_output.hpp"
#include "config_loading.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/configured.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/mcp.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"
#include "nucleo/store.hpp"
#include "nucleo/tokens.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli {

namespace {

constexpr const char* kCommands =
    "/history, /transcript, /undo, /retry, /system [TEXT], /model [ID], /compact [TOKENS], /cost, "
    "/new, /quit, "
    "/exit, /help";

constexpr const char* kHelp =
    "/history          the messages so far, one line each\n"
    "/transcript       the conversation as text for a reader\n"
    "/undo             take back your last message and everything after it\n"
    "/retry            ask your last message again (its answer is replaced)\n"
    "/system [TEXT]    this conversation's instructions; with TEXT, replace them\n"
    "/model [ID]       the model answering; with ID, the catalog's ID answers from now on\n"
    "/compact [TOKENS] compact now to TOKENS (default: half the conversation), report the level\n"
    "/cost             tokens, cache hit rate and spend of this session\n"
    "/new              start a new conversation\n"
    "/quit, /exit      end the session (so do Ctrl-D and end of input)\n"
    "/help             this list\n"
    "//text            send a message that starts with /\n"
    "Alt-Enter         a new line in the message (a pasted block is one message too)\n"
    "Ctrl-C            cancel the running answer; clear a half-typed line; at an empty one, end\n";

/// The objective slot where the agent puts its instructions (AgentOptions::objective).
constexpr const char* kInstructionsSlot = "task";

/// How long the argument preview of a tool call may be on its note line.
constexpr std::size_t kArgsPreview = 80;
/// How long one /history line's text may be.
constexpr std::size_t kHistoryPreview = 100;

/// `text` on one line (newlines and tabs as spaces, runs of spaces kept as one), cut to `max`.
std::string one_line(std::string_view text, std::size_t max) {
    std::string out;
    for (const char c : text) {
        const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
        if (space) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += c;
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.size() > max) out = out.substr(0, max - 3) + "...";
    return out;
}

std::string dollars(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "$%.6f", d);
    return buf;
}

std::string percent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", share * 100.0);
    return buf;
}

/// caching.132: Nucleo's own reason for moving its farthest cache mark, in words; "" for none.
std::string plan_moved_words(const std::string& moved) {
    if (moved.empty()) return "";
    if (moved == "tail")
        return "Nucleo's marks moved past the previous one as the conversation grew";
    if (moved == "rewritten")
        return "Nucleo placed its marks anew after compaction or an edit rewrote earlier messages";
    if (moved == "policy") return "Nucleo placed its marks anew under another cache policy";
    if (moved == "head") return "Nucleo placed its marks anew after the head changed";
    if (moved == "caching_off") return "this model or dialect takes no cache marks";
    return "Nucleo moved its marks (" + moved + ")";
}

/// caching.131, caching.132: one line for a round whose cache the provider says missed or whose
/// marks Nucleo moved; "" when neither (no diagnosis, or one not ready yet, and no move).
std::string cache_miss_note(const RoundReport& round) {
    const std::string& reason = round.cache_miss.reason;
    std::string why;
    if (reason.empty() || reason == "pending") {
        why.clear();
    } else if (reason == "model_changed") {
        why = "the model changed since the previous answer";
    } else if (reason == "system_changed") {
        why = "the system prompt changed since the previous answer";
    } else if (reason == "tools_changed") {
        why = "the tools changed since the previous answer";
    } else if (reason == "messages_changed") {
        why = "an earlier message changed since the previous answer";
    } else if (reason == "previous_message_not_found") {
        why = "the provider no longer knows the previous answer";
    } else if (reason == "unavailable") {
        why = "the provider could not say why";
    } else {
        why = "the provider says " + reason;
    }
    const std::string moved = plan_moved_words(round.cache_miss.plan_moved);
    if (why.empty() && moved.empty()) return "";
    std::string line = "[cache " + std::string(why.empty() ? "marks moved" : "missed") +
                       " in round " + std::to_string(round.round) + ": ";
    line += why.empty() ? moved : why;
    if (!why.empty() && round.cache_miss.missed_input_tokens >= 0)
        line += " (about " + std::to_string(round.cache_miss.missed_input_tokens) +
                " input tokens not read from the cache)";
    if (!why.empty() && !moved.empty()) line += "; " + moved;
    return line + "]";
}

/// A conversation borrowed from the service between turns (for /history, /transcript, /compact):
/// obtained for the thinker and released when done, as a turn does.
class Borrowed {
  public:
    Borrowed(ConversationService& service, std::shared_ptr<Thinker> thinker)
        : service_(service),
          thinker_(std::move(thinker)),
          conversation_(service_.obtain_conversation(thinker_).get()) {}
    ~Borrowed() { service_.release(*thinker_); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;

    [[nodiscard]] ConversationContext& conversation() const { return *conversation_; }

  private:
    ConversationService& service_;
    std::shared_ptr<Thinker> thinker_;
    std::shared_ptr<ConversationContext> conversation_;
};

/// What the session is wired to; built at start-up, where every failure is an exit status.
/// The agent of one model, with the provider client it calls through (chat.115: /model builds
/// another).
struct ModelSeat {
    const ModelSpec* model = nullptr;
    std::unique_ptr<ProviderClient> client;
    std::unique_ptr<Agent> agent;
};

struct ChatSetup {
    const Config& config;
    const PluginLoader& loader;
    /// Builds the seat of a model: its client (checked, as at start-up) and an agent with the
    /// session's options and tools.
    std::function<ModelSeat(const ModelSpec&)> seat_for;
    ModelSeat seat;
    ConversationService& service;
    std::string user;
    std::string store_where;   ///< "stores.persistent (sqlite) at FILE:LINE:COL", or ""
    std::string tools;         ///< which tools the model has, for the greeting
    bool interactive = false;  ///< a terminal on stdin
    bool ansi = false;         ///< colour the prompt and the notes
    bool safe_output = false;  ///< stdout is a terminal: the answer is made safe (chat.101)
    /// chat.108: the command that resumes a conversation, but for its id ("" without a
    /// persistent store: nothing to resume).
    std::string resume_command;
};

/// True when every block of `m` is a tool result: a user turn the runtime sent, not the user.
bool tool_results_only(const Message& m) {
    if (!m.outgoing() || m.blocks.empty()) return false;
    for (const ContentBlock& b : m.blocks)
        if (b.get_if<ToolResultBlock>() == nullptr) return false;
    return true;
}

class ChatSession {
  public:
    explicit ChatSession(ChatSetup setup)
        : s_(std::move(setup)), notes_(s_.interactive ? std::cout : std::cerr) {
        // chat.117: at a terminal, the library's records (a retry's warning) go through the
        // screen's lock: the status line is erased first, so the two never share a line. JSON
        // records are for a machine and stay as they are.
        if (s_.interactive && log::format() == log::Format::kText) {
            log_through_screen_ = true;
            log::set_sink([this](log::Level level, std::string_view logger,
                                 std::string_view message) { log_line(level, logger, message); });
        }
    }

    /// Adopts `id` (verified to exist for the user: kNotFound naming it and the store otherwise)
    /// or mints a new conversation; prints which.
    void open(const std::optional<std::string>& id) {
        if (!id) {
            start_new();
            return;
        }
        thinker_ = fresh_thinker();
        thinker_->set_conversation_id(*id);
        std::size_t messages = 0;
        try {
            messages = Borrowed(s_.service, thinker_).conversation().messages().size();
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::kNotFound) throw;
            throw Error(ErrorKind::kNotFound, "--conversation " + *id +
                                                  ": no such conversation for user '" + s_.user +
                                                  "' in " + s_.store_where);
        }
        note("conversation " + *id + " (resumed, " +
             count_of(static_cast<std::int64_t>(messages), "message") + ")");
    }

    ~ChatSession() {
        if (s_.interactive) set_call_progress_observer(std::move(previous_progress_));
        if (log_through_screen_) log::set_sink({});
    }
    ChatSession(const ChatSession&) = delete;
    ChatSession& operator=(const ChatSession&) = delete;

    /// The read loop; returns the exit status (0: end of input, Ctrl-D, Ctrl-C at the prompt or
    /// /quit).
    int run() {
        if (s_.interactive) {
            note("model " + model().id + ", user " + s_.user + ", " + s_.tools +
                 "; /help for commands, Ctrl-D or /exit to end");
            interrupts_ = std::make_unique<Interrupts>();
            editor_ =
                std::make_unique<LineEditor>(s_.ansi ? "\1\x1b[1;36m\1you> \1\x1b[0m\1" : "you> ",
                                             chat_history_file(), *interrupts_);
            if (!editor_->history_problem().empty()) note(editor_->history_problem());
            // chat.105: why a turn waits, on the status line.
            previous_progress_ = set_call_progress_observer(
                [this](const CallProgress& p) { show_status(describe(p)); });
        }
        std::string line;
        while (next_line(line)) {
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            if (line.starts_with("//")) {
                turn(line.substr(1));
            } else if (line.starts_with("/")) {
                if (!command(line)) break;
            } else {
                turn(line);
            }
        }
        print_resume_command();
        // chat.110: a script learns that a turn failed from the exit status.
        return failed_turns_ && !s_.interactive ? kExitFailure : kExitOk;
    }

  private:
    // ---- output ----------------------------------------------------------------------------

    const char* dim() const { return s_.ansi ? "\x1b[2m" : ""; }
    const char* reset() const { return s_.ansi ? "\x1b[0m" : ""; }

    /// The next line: from the line editor at a terminal, else from stdin. False at the end.
    bool next_line(std::string& line) {
        if (!editor_) {
            if (!std::getline(std::cin, line)) return false;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return true;
        }
        // chat.104, chat.114: Ctrl-C at an empty prompt ends the session as Ctrl-D does (the
        // editor clears a half-typed line itself).
        return editor_->read(line) == LineEditor::Read::kLine;
    }

    /// chat.108: how to come back to this conversation, said on the way out.
    void print_resume_command() {
        if (!s_.interactive) return;  // a script knows the id from the first note
        std::cout << "\n" << std::flush;
        if (s_.resume_command.empty() || !thinker_) return;
        note("resume with: " + s_.resume_command + " --conversation " +
             thinker_->conversation_id());
    }

    // ---- the status line (chat.105) ------------------------------------------------------

    /// Shows `text` on the status line (at a terminal, while no answer text is mid-line).
    void show_status(const std::string& text) {
        std::lock_guard<std::mutex> lock(screen_);
        if (answer_line_open_) return;
        clear_status_locked();
        const std::string shown = "... " + neutralize(text);
        std::cout << dim() << shown << reset() << std::flush;
        status_width_ = shown.size();
    }

    void clear_status_locked() {
        if (status_width_ == 0) return;
        if (s_.ansi) {
            std::cout << "\r\x1b[2K";
        } else {
            std::cout << "\r" << std::string(status_width_, ' ') << "\r";
        }
        status_width_ = 0;
    }

    /// Ends the answer's line on stdout when text was left without a newline.
    void end_answer_line() {
        if (!answer_line_open_) return;
        std::cout << "\n";
        answer_line_open_ = false;
    }

    /// A note line (conversation id, tool calls, usage): dim on a terminal, stderr for scripts.
    /// Made safe (chat.101): notes quote tool names, arguments and provider errors.
    void note(const std::string& text) {
        std::lock_guard<std::mutex> lock(screen_);
        clear_status_locked();
        if (s_.interactive) end_answer_line();
        notes_ << dim() << neutralize(text) << reset() << "\n" << std::flush;
    }

    /// A record of the library at a terminal (chat.117), as the stderr writer spells it.
    void log_line(log::Level level, std::string_view logger, std::string_view message) {
        static constexpr std::array<const char*, 6> kNames = {"trace",   "debug", "info",
                                                              "warning", "error", "off"};
        std::lock_guard<std::mutex> lock(screen_);
        clear_status_locked();
        end_answer_line();
        std::cout << std::flush;
        std::cerr << "[" << kNames.at(static_cast<std::size_t>(level)) << "] ";
        if (logger != "nucleo") std::cerr << logger << ": ";
        std::cerr << message << "\n" << std::flush;
    }

    void error_line(const std::string& text) {
        std::lock_guard<std::mutex> lock(screen_);
        clear_status_locked();
        end_answer_line();
        std::cout << std::flush;
        std::cerr << "nucleo chat: " << neutralize(text) << "\n" << std::flush;
    }

    /// What a command prints on stdout: made safe at a terminal (chat.101).
    [[nodiscard]] std::string shown(std::string_view text) const {
        return s_.safe_output ? neutralize(text) : std::string(text);
    }

    // ---- conversations ---------------------------------------------------------------------

    std::shared_ptr<Thinker> fresh_thinker() const {
        return s_.seat.agent->make_thinker(s_.user, OutputSize::kMedium, Depth::kImmediate);
    }

    void start_new() {
        thinker_ = fresh_thinker();
        const std::string id = thinker_->mint_conversation_id();
        note("conversation " + id + " (new)");
    }

    // ---- a turn ----------------------------------------------------------------------------

    TurnCallbacks callbacks() {
        TurnCallbacks cb;
        cb.on_text_delta = [this](std::string_view text) {
            if (text.empty()) return;
            std::lock_guard<std::mutex> lock(screen_);
            clear_status_locked();
            // chat.101: the model's bytes never reach the terminal raw.
            const std::string out = s_.safe_output ? answer_text_.feed(text) : std::string(text);
            if (out.empty()) return;
            std::cout << out << std::flush;
            answer_line_open_ = out.back() != '\n';
            answer_shown_ = true;
        };
        cb.on_discard = [this](std::string_view reason) {
            note("[the answer so far was cut short (" + std::string(reason) +
                 "); asked again with a larger budget]");
        };
        cb.on_tool_call_started = [this](const ToolCallEvent& call) {
            // Text said before a tool call ends its line, on a terminal and for scripts alike.
            std::lock_guard<std::mutex> lock(screen_);
            clear_status_locked();
            if (s_.safe_output) std::cout << answer_text_.flush();
            end_answer_line();
            notes_ << dim() << "[tool " << neutralize(call.name) << " "
                   << neutralize(one_line(call.input_json, kArgsPreview)) << "]" << std::flush;
        };
        cb.on_tool_call_finished = [this](const ToolCallEvent&, const ToolOutput& output) {
            std::lock_guard<std::mutex> lock(screen_);
            if (output.is_error) {
                notes_ << " error: " << neutralize(one_line(output.text, kArgsPreview));
            } else {
                notes_ << " ok";
            }
            notes_ << reset() << "\n" << std::flush;
        };
        cb.on_compaction = [this](const CompactionReport& r) {
            note("[compacted: level " + std::string(to_string(r.level)) + ", " +
                 std::to_string(r.tokens_before) + " -> " + std::to_string(r.tokens_after) +
                 " tokens, target " + std::to_string(r.trigger_tokens) +
                 (r.target_met() ? " met]" : " NOT met]"));
        };
        return cb;
    }

    /// One turn: at a terminal on a worker thread while this one watches for Ctrl-C (chat.104),
    /// else here.
    void turn(std::string message) {
        if (!interrupts_) {
            run_turn(std::move(message), nullptr);
            return;
        }
        interrupts_->take();  // a Ctrl-C typed before the turn began is not for it
        CancellationToken cancel;
        int done[2] = {-1, -1};
        if (::pipe2(done, O_CLOEXEC) != 0) {
            run_turn(std::move(message), nullptr);
            return;
        }
        show_status("sending to " + model().id);
        std::thread worker([&] {
            sigset_t block;
            sigemptyset(&block);
            sigaddset(&block, SIGINT);
            ::pthread_sigmask(SIG_BLOCK, &block, nullptr);  // Ctrl-C is the main thread's
            run_turn(std::move(message), &cancel);
            const char byte = 1;
            (void)!::write(done[1], &byte, 1);
        });
        bool cancelled = false;
        while (true) {
            pollfd fds[2] = {{done[0], POLLIN, 0}, {interrupts_->fd(), POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) continue;  // EINTR: the Ctrl-C byte is in the pipe
            if (fds[0].revents != 0) break;
            if (fds[1].revents == 0 || !interrupts_->take()) continue;
            if (!cancelled) {
                cancelled = true;
                cancel.cancel();
                show_status("cancelling (Ctrl-C again ends the session)");
                continue;
            }
            // The second Ctrl-C: the session ends now, as Ctrl-C at the prompt ends it (whichever
            // the user's two presses meet, the same end and the same status). The user's message
            // was saved at its boundary; the answer being cancelled is not kept.
            note("[cancelled; the session ends]");
            print_resume_command();
            std::cout << std::flush;
            std::_Exit(kExitOk);
        }
        worker.join();
        ::close(done[0]);
        ::close(done[1]);
    }

    void run_turn(std::string message, const CancellationToken* cancel) {
        answer_text_ = TerminalText();
        answer_shown_ = false;
        const auto cancelled_note = [this] {
            note(std::string(answer_shown_ ? "[cancelled: the answer above is cut and was not kept"
                                           : "[cancelled before the answer") +
                 "; conversation " + thinker_->conversation_id() + " holds your message]");
        };
        try {
            const TurnReport r = s_.seat.agent->run_turn(s_.service, thinker_, std::move(message),
                                                         callbacks(), cancel);
            {
                std::lock_guard<std::mutex> lock(screen_);
                clear_status_locked();
                if (s_.safe_output) std::cout << answer_text_.flush();
                end_answer_line();
                std::cout << std::flush;
            }
            if (r.end == TurnEnd::kCancelled) {
                cancelled_note();
                return;
            }
            if (r.end == TurnEnd::kRoundLimit) {
                note("[the round limit (" + std::to_string(r.rounds) +
                     ") was reached with tool calls still wanted; send a message to continue]");
            }
            if (!r.round_reports.empty() && !r.round_reports.back().answered) {
                // answers.102: an empty answer is reported, never stored.
                note("[the model gave no answer (stop reason " +
                     r.round_reports.back().stop_reason +
                     "); nothing was added to the conversation]");
            }
            for (const RoundReport& round : r.round_reports) {
                // caching.131: a miss the provider explained, one line per round that missed.
                if (const std::string line = cache_miss_note(round); !line.empty()) note(line);
            }
            note("[" + std::to_string(r.rounds) + (r.rounds == 1 ? " round, " : " rounds, ") +
                 std::to_string(r.usage.total_input_tokens()) + " in (cache read " +
                 std::to_string(r.usage.cache_read_tokens) + "), " +
                 std::to_string(r.usage.output_tokens) + " out, " + dollars(r.cost) + "]");
        } catch (const std::exception& e) {
            if (cancel != nullptr && cancel->cancelled()) {
                cancelled_note();
                return;
            }
            // ownership.105: the agent put the conversation (and the store) back as it was
            // before this message, so a retry sends the same conversation, not a longer one.
            failed_turns_ = true;
            error_line("model " + model().id + " (provider " + model().provider +
                       "): the turn failed and was not kept (conversation " +
                       thinker_->conversation_id() +
                       " is as it was before this message): " + one_line(e.what(), 400));
        }
    }

    // ---- slash commands --------------------------------------------------------------------

    /// Runs one slash command; false for /quit.
    bool command(const std::string& line) {
        const auto space = line.find_first_of(" \t");
        const std::string name = line.substr(0, space);
        std::string arg = space == std::string::npos ? "" : line.substr(space + 1);
        arg = one_line(arg, arg.size() + 3);
        try {
            if (name == "/quit" || name == "/exit") return false;
            if (name == "/help") {
                std::cout << kHelp << std::flush;
            } else if (name == "/history") {
                history();
            } else if (name == "/transcript") {
                std::cout << shown(
                                 Transcript::render(Borrowed(s_.service, thinker_).conversation()))
                          << std::flush;
            } else if (name == "/undo") {
                (void)undo();
            } else if (name == "/retry") {
                if (auto text = undo()) turn(std::move(*text));
            } else if (name == "/compact") {
                compact(arg);
            } else if (name == "/cost") {
                cost();
            } else if (name == "/new") {
                start_new();
            } else if (name == "/system") {
                system(arg);
            } else if (name == "/model") {
                switch_model(arg);
            } else {
                error_line("unknown command '" + name + "' (commands: " + kCommands + ")");
            }
        } catch (const UsageError& e) {
            error_line(name + ": " + e.message);
        } catch (const std::exception& e) {
            error_line(name + " on conversation " + thinker_->conversation_id() + ": " +
                       one_line(e.what(), 400));
        }
        return true;
    }

    [[nodiscard]] const ModelSpec& model() const { return *s_.seat.model; }

    /// chat.116: `/system` shows this conversation's instructions; `/system TEXT` replaces them
    /// and saves. The conversation is rebuilt from its parts, since its head froze at its first
    /// render (conversation.14) and a rebuilt one is not frozen (conversation.15).
    void system(const std::string& text) {
        const Borrowed b(s_.service, thinker_);
        ConversationContext& conversation = b.conversation();
        if (text.empty()) {
            const ContentBlock* slot = conversation.objective_slot(kInstructionsSlot);
            const TextBlock* current = slot == nullptr ? nullptr : slot->get_if<TextBlock>();
            std::cout << (current == nullptr ? std::string("(no instructions yet)")
                                             : shown(current->text))
                      << "\n"
                      << std::flush;
            return;
        }
        ConversationParts parts = conversation.parts();
        auto slot = std::find_if(parts.objective.begin(), parts.objective.end(),
                                 [](const ObjectiveSlot& o) { return o.key == kInstructionsSlot; });
        if (slot == parts.objective.end()) {
            parts.objective.push_back({kInstructionsSlot, ContentBlock(TextBlock{text})});
        } else {
            slot->value = ContentBlock(TextBlock{text});
        }
        conversation = ConversationContext::from_parts(std::move(parts));
        s_.service.save_conversation(conversation, *thinker_);
        note("[the instructions of conversation " + thinker_->conversation_id() +
             " are replaced; the next answer follows them]");
    }

    /// chat.115: `/model` names the session's model; `/model ID` answers the next messages with
    /// the catalog's ID (its client checked first; a bad id or a missing key changes nothing).
    void switch_model(const std::string& id) {
        if (id.empty()) {
            std::cout << "model: " << model().id << " (provider " << model().provider << ")\n"
                      << std::flush;
            return;
        }
        ModelSeat next = s_.seat_for(s_.config.catalog().find(id));
        const UsageTotals t = s_.seat.agent->totals();
        earlier_.turns += t.turns;
        earlier_.rounds += t.rounds;
        earlier_.usage += t.usage;
        earlier_.cost += t.cost;
        earlier_.compaction_cost += t.compaction_cost;
        // The thinker stays: its seat and palette are the same under every model's agent.
        s_.seat = std::move(next);
        note("[model " + model().id + " (provider " + model().provider + ") answers from now on]");
    }

    /// chat.112: removes the user's last message and everything after it (its answer, tool
    /// rounds, a note), saves, and returns the message's text; nullopt, said, when there is none.
    std::optional<std::string> undo() {
        const Borrowed b(s_.service, thinker_);
        ConversationContext& conversation = b.conversation();
        const auto& messages = conversation.messages();
        std::size_t last = messages.size();
        for (std::size_t i = messages.size(); i-- > 0;) {
            const Message& m = messages[i];
            if (m.outgoing() && !m.app_authored && !tool_results_only(m)) {
                last = i;
                break;
            }
        }
        if (last == messages.size()) {
            error_line("nothing to take back: no message of yours in this conversation");
            return std::nullopt;
        }
        std::string text;
        for (const ContentBlock& block : messages[last].blocks)
            if (const auto* t = block.get_if<TextBlock>()) text += t->text;
        const std::size_t removed = messages.size() - last;
        std::vector<Message> kept(messages.begin(),
                                  messages.begin() + static_cast<std::ptrdiff_t>(last));
        std::vector<std::size_t> origins(kept.size());
        for (std::size_t i = 0; i < origins.size(); ++i) origins[i] = i;
        conversation.replace_messages(std::move(kept), origins);
        s_.service.save_conversation(conversation, *thinker_);
        note("[took back \"" + neutralize(one_line(text, kHistoryPreview)) + "\" and " +
             count_of(static_cast<std::int64_t>(removed - 1), "message") + " after it]");
        return text;
    }

    void history() {
        const Borrowed b(s_.service, thinker_);
        const auto& messages = b.conversation().messages();
        std::size_t n = 0;
        for (const Message& m : messages) {
            ++n;
            // The transcript's rendering of one message: "user:\n..." or "assistant:\n...";
            // chat.106: a turn of tool results is labelled as such, not as the user's.
            std::string text = Transcript::render(std::span<const Message>(&m, 1));
            if (text.empty()) continue;
            if (tool_results_only(m) && text.starts_with("user:"))
                text = "tool result:" + text.substr(5);
            std::cout << n << ". " << shown(one_line(text, kHistoryPreview)) << "\n";
        }
        if (messages.empty()) std::cout << "(no messages yet)\n";
        std::cout << std::flush;
    }

    void compact(const std::string& arg) {
        const Borrowed b(s_.service, thinker_);
        ConversationContext& conversation = b.conversation();
        const std::int64_t before = get_total_tokens(conversation, model());
        const std::int64_t target =
            arg.empty() ? std::max<std::int64_t>(before / 2, 1) : parse_positive("TOKENS", arg);
        std::int64_t reserve = 0;
        try {
            reserve = output_reserve(conversation, model());
        } catch (const Error&) {
            // No output declared on a conversation of another seat: nothing reserved.
        }
        ContextWindowManager manager(make_configured_summarizer(s_.config, s_.loader),
                                     ContextWindowSettings{target, 1.0});
        const CompactionReport r = manager.ensure_fits(conversation, model(), reserve);
        s_.service.save_conversation(conversation, *thinker_);
        compaction_cost_ += r.cost();
        std::cout << "compaction: level " << to_string(r.level) << ", " << r.tokens_before << " -> "
                  << r.tokens_after << " tokens (target " << target
                  << (r.target_met() ? ", met" : ", NOT met") << "), " << r.summaries.size()
                  << " summaries, " << dollars(r.cost()) << "\n";
        for (const std::string& f : r.failures) std::cout << "  failed: " << f << "\n";
        std::cout << std::flush;
    }

    void cost() {
        UsageTotals t = s_.seat.agent->totals();
        t.turns += earlier_.turns;
        t.rounds += earlier_.rounds;
        t.usage += earlier_.usage;
        t.cost += earlier_.cost;
        t.compaction_cost += earlier_.compaction_cost;
        std::cout << "cost: " << t.turns << (t.turns == 1 ? " turn, " : " turns, ") << t.rounds
                  << (t.rounds == 1 ? " round" : " rounds") << "; tokens in "
                  << t.usage.total_input_tokens() << " (cache read " << t.usage.cache_read_tokens
                  << ", cache write " << t.usage.cache_write_tokens << "), out "
                  << t.usage.output_tokens << "; cache hit rate " << percent(t.cache_hit_rate())
                  << "; spend " << dollars(t.cost + compaction_cost_) << " (compaction "
                  << dollars(t.compaction_cost + compaction_cost_) << ")\n"
                  << std::flush;
    }

    ChatSetup s_;
    UsageTotals earlier_;  ///< what the agents of the models used before /model ran
    std::ostream& notes_;
    std::shared_ptr<Thinker> thinker_;
    std::unique_ptr<Interrupts> interrupts_;  ///< at a terminal only
    std::unique_ptr<LineEditor> editor_;      ///< at a terminal only
    CallProgressObserver previous_progress_;
    std::mutex screen_;             ///< the worker's output, the status line and notes interleave
    std::size_t status_width_ = 0;  ///< the status line on screen (0: none)
    bool log_through_screen_ = false;  ///< chat.117: this session installed the log sink
    TerminalText answer_text_;      ///< the streamed answer, made safe piece by piece
    bool answer_line_open_ = false;
    bool answer_shown_ = false;   ///< this turn's answer text is (partly) on screen
    double compaction_cost_ = 0;  ///< what /compact's summaries cost (turns count their own)
    bool failed_turns_ = false;   ///< a turn failed (chat.110: a script exits 1)
};

/// A missing api key or base URL is a start-up error rather than the first turn's: the request a
/// first message would send is built, never sent, which checks the provider's credentials.
void check_provider(ProviderClient& client, const ModelSpec& model) {
    ConversationContext probe("nucleo-chat-start-up-check");
    probe.set_output(OutputSize::kMedium);
    probe.set_depth(Depth::kImmediate);
    probe.add_message(Message::outgoing_text("ping"));
    (void)client.build_request(probe, model);
}

/// A word for the shell: quoted when it holds anything but letters, digits and -_./:=@.
std::string shell_word(const std::string& word) {
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./:=@") == std::string::npos;
    if (plain) return word;
    std::string out = "'";
    for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

int run_chat(const Args& args) {
    if (static_cast<int>(args.has("conversation")) + static_cast<int>(args.has("new")) +
            static_cast<int>(args.has("continue")) >
        1) {
        throw UsageError{"--conversation, --continue and --new exclude each other"};
    }
    if (auto system = args.get("system");
        system && system->find_first_not_of(" \t\r\n") == std::string::npos) {
        throw UsageError{"--system: empty instructions"};
    }
    const std::string user = args.get("user").value_or(default_user());
    if (user.empty()) throw UsageError{"--user: empty user id"};
    ContextWindowSettings window;
    if (auto v = args.get("comfort"))
        window.comfort_context_tokens = parse_positive("--comfort", *v);
    // compaction.109: the recent exchanges kept word for word; "all" is compaction.31 alone.
    std::optional<std::size_t> pinned = kDefaultPinnedExchanges;
    if (auto v = args.get("pinned-exchanges")) {
        pinned = *v == "all" ? std::nullopt
                             : std::optional<std::size_t>(static_cast<std::size_t>(
                                   parse_positive("--pinned-exchanges", *v)));
    }

    // chat.111: a reader of stdout that goes away (`nucleo chat | head -1`) must not end the
    // session between an answer and its save; a write to it fails and is dropped instead.
    ::signal(SIGPIPE, SIG_IGN);
    // cli.102: --emulator talks to a nucleo-emulator of this session's own, every provider aimed
    // at it (the summarizer's model calls included); it stops when the session ends.
    std::optional<demo::OwnEmulator> emulator;
    const Config config = args.has("emulator")
                              ? demo::with_own_emulator(load_config(args), emulator, "chat")
                              : load_config(args);
    if (config.catalog().empty()) {
        throw Error(ErrorKind::kConfig, config.path().string() + ": the model catalog is empty");
    }
    if (auto id = args.get("model")) (void)config.catalog().find(*id);  // a bad id fails first
    const PluginLoader loader(config.plugin_paths());
    // persistence.106: both configured stores, opened at start (before any provider call).
    ConfiguredStores stores = open_configured_stores(config, loader);
    const std::string store_where = stores.persistent_where;
    if (!stores.persistent && args.has("conversation")) {
        throw Error(ErrorKind::kConfig, config.path().string() +
                                            ": stores.persistent is not configured, so there is "
                                            "no conversation to resume");
    }
    std::optional<std::string> resume;
    bool nothing_to_continue = false;
    if (auto given = args.get("conversation")) {
        // cli.106: the id, or a unique prefix of it.
        resume = resolve_conversation_id(*stores.persistent, user, *given, "--conversation");
    } else if (args.has("continue")) {
        if (!stores.persistent) {
            throw Error(ErrorKind::kConfig,
                        config.path().string() +
                            ": stores.persistent is not configured, so there is "
                            "no conversation to continue");
        }
        resume = latest_conversation(*stores.persistent, user);
        nothing_to_continue = !resume;
    }
    std::string model_note;
    const ModelSpec& model = chosen_model(
        args, config, stores.persistent ? &*stores.persistent : nullptr, user, resume, model_note);
    // The llm summarizer reaches models through the host: install the service for the session.
    ModelCallService models(config, loader);
    struct Restore {
        ModelCallHandler handler;
        ~Restore() { set_model_call_handler(std::move(handler)); }
    } restore{set_model_call_handler(models.handler())};

    ConversationServiceOptions so;
    so.persistent = std::move(stores.persistent);
    so.session = std::move(stores.session);
    so.cleanup_thread = false;  // one conversation at a time: nothing to evict in the background
    ConversationService service(std::move(so));

    AgentOptions options;
    options.window =
        std::make_shared<ContextWindowManager>(make_configured_summarizer(config, loader), window);
    options.objective = args.get("system").value_or(
        "You are a helpful assistant in a terminal chat. Answer concisely in plain text.");
    // caching.8 (cache_all_messages): every turn resends the whole conversation, so marking
    // it for caching is what makes the next turn's prefix a cache read (the core's cache plan
    // keeps to the provider's breakpoint limit and minimum cacheable size).
    options.cache_all_messages = true;
    options.pinned_exchanges = pinned;
    std::string tools_note = "tools: off (--tools-dir DIR gives list_files and read_file)";
    const std::optional<std::string> tools_dir = args.get("tools-dir");
    if (tools_dir) tools_note = "tools: list_files, read_file in " + *tools_dir;
    // mcp.40: each server named by --mcp is started now (one that cannot start ends the chat
    // with its error) and its tools are the agent's (mcp.20).
    std::vector<std::shared_ptr<mcp::McpClient>> servers;
    if (auto names = args.get("mcp")) {
        std::string started;
        for (std::size_t start = 0; start <= names->size();) {
            const std::size_t comma = std::min(names->find(',', start), names->size());
            const std::string name = names->substr(start, comma - start);
            start = comma + 1;
            if (name.empty()) throw UsageError{"--mcp: an empty server name"};
            servers.push_back(
                std::make_shared<mcp::McpClient>(mcp::server_spec(config.mcp_server(name))));
            started += (started.empty() ? "" : ", ") + name;
        }
        tools_note += "; MCP servers: " + started;
    }
    // chat.115: the agent of a model; /model builds another with the same options and tools.
    const auto seat_for = [&config, options, tools_dir, servers](const ModelSpec& m) {
        ModelSeat seat;
        seat.model = &m;
        seat.client = std::make_unique<ProviderClient>(provider_client_for(config, m));
        check_provider(*seat.client, m);
        seat.agent = std::make_unique<Agent>(*seat.client, m, options);
        if (tools_dir)
            for (AgentTool& tool : folder_tools(*tools_dir)) seat.agent->add_tool(std::move(tool));
        for (const auto& server : servers) mcp::attach_mcp_server(*seat.agent, server);
        return seat;
    };
    ModelSeat seat = seat_for(model);

    const bool interactive = ::isatty(STDIN_FILENO) == 1;
    const char* term = std::getenv("TERM");
    const bool ansi = interactive && ::isatty(STDOUT_FILENO) == 1 &&
                      std::getenv("NO_COLOR") == nullptr &&
                      !(term != nullptr && std::string_view(term) == "dumb");
    if (interactive) std::setlocale(LC_CTYPE, "");  // the line editor reads the user's encoding
    std::string resume_command;
    if (!store_where.empty()) {
        resume_command = "nucleo chat";
        if (args.get(kConfigOption))
            resume_command += " --config " + shell_word(*args.get(kConfigOption));
        if (user != default_user()) resume_command += " --user " + shell_word(user);
        if (emulator) resume_command += " --emulator";
    }
    ChatSession session(ChatSetup{config, loader, seat_for, std::move(seat), service, user,
                                  store_where, tools_note, interactive, ansi,
                                  ::isatty(STDOUT_FILENO) == 1, resume_command});
    if (nothing_to_continue) {
        std::cerr << "nucleo chat: user '" << user << "' has no conversation in " << store_where
                  << " to continue; starting a new one\n";
    }
    if (!model_note.empty()) std::cerr << "nucleo chat: " << model_note << "\n";
    session.open(resume);
    // chat.112: the agent puts its instructions only on a conversation that has none, so a
    // resumed one keeps those it started with; --system is said to be unused, not dropped
    // silently.
    if (resume && args.get("system")) {
        std::cerr << "nucleo chat: --system is not applied: conversation " << *resume
                  << " keeps the instructions it was started with\n";
    }
    if (store_where.empty()) {
        std::cerr
            << "nucleo chat: " << config.path().string()
            << ": stores.persistent is not configured; this conversation lives in memory only\n";
    }
    return session.run();
}

}  // namespace

const CommandSpec& chat_command() {
    static const CommandSpec spec{
        "chat",
        "an interactive agent session, streamed and saved",
        {{"--model", "ID",
          "a catalog id (default: a resumed conversation's, else the first whose provider has its "
          "key set)"},
         {"--user", "U", "the user the conversations belong to (default: $USER, else local)"},
         {"--conversation", "ID",
          "resume a stored conversation of this user (its id or a unique prefix of it)"},
         {"-c,--continue", "", "resume this user's latest conversation"},
         {"--new", "", "start a new conversation (the default); its id is printed"},
         {"--system", "TEXT", "the instructions the model gets (default: a terminal assistant's)"},
         {"--tools-dir", "DIR",
          "give the model list_files and read_file, confined to DIR (default: no tools)"},
         {"--mcp", "NAME[,NAME]",
          "start these servers of the config's mcp_servers: and give the model their tools"},
         {"--comfort", "N", "the comfort window in tokens (default: the catalog's, else 128000)"},
         {"--pinned-exchanges", "N|all",
          "the recent exchanges kept word for word when compacting (default: 4)"},
         {"--emulator", "",
          "talk to nucleo-emulator, started for this session on a free loopback port (no key, "
          "nothing billed)"},
         config_option()},
        "",
        "",
        "With a terminal, type messages at the prompt; without one, one message per line.\n"
        "At a terminal: line editing and history (kept in $XDG_STATE_HOME/nucleo/chat_history);\n"
        "Ctrl-C cancels the running answer, a second Ctrl-C or Ctrl-D ends the session;\n"
        "at the prompt Ctrl-C clears a half-typed line. Alt-Enter starts a new line in the\n"
        "message, and a pasted block of lines is one message.\n"
        "Commands: /history /transcript /undo /retry /system [TEXT] /model [ID]\n"
        "/compact [TOKENS] /cost /new\n"
        "/quit /exit /help",
        run_chat};
    return spec;
}

}  // namespace nucleo::cli
