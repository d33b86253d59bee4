// The terminal side of `nucleo chat`: chat.101 (safe text), chat.102 and chat.103 (the line
// editor and its history), chat.104 (Ctrl-C as an event).
#include "commands/chat_terminal.hpp"

#include <fcntl.h>
#include <histedit.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace nucleo::cli {

namespace fs = std::filesystem;

// ---- chat.101 ---------------------------------------------------------------------------------

namespace {

/// The length of the UTF-8 sequence that `lead` starts (1 for ASCII and for a stray byte).
std::size_t sequence_length(unsigned char lead) {
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    return 1;
}

void hex_escape(std::string& out, unsigned value, bool unicode) {
    char buf[16];
    if (unicode) {
        std::snprintf(buf, sizeof buf, "\\u{%x}", value);
    } else {
        std::snprintf(buf, sizeof buf, "\\x%02x", value);
    }
    out += buf;
}

}  // namespace

std::string TerminalText::feed(std::string_view piece) {
    std::string in = std::move(carry_);
    carry_.clear();
    in.append(piece);
    std::string out;
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
        const auto c = static_cast<unsigned char>(in[i]);
        if (c == '\r') {
            if (i + 1 == in.size()) break;  // held: a newline may follow in the next piece
            if (in[i + 1] != '\n') out += "\\r";
            ++i;
            continue;
        }
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
                hex_escape(out, c, false);
            } else {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        const std::size_t n = sequence_length(c);
        if (n == 1) {  // a stray continuation or an invalid lead: never passed raw
            hex_escape(out, c, false);
            ++i;
            continue;
        }
        if (i + n > in.size()) break;  // held until the rest arrives
        bool valid = true;
        unsigned code = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
        for (std::size_t k = 1; k < n; ++k) {
            const auto cc = static_cast<unsigned char>(in[i + k]);
            if ((cc & 0xC0) != 0x80) valid = false;
            code = (code << 6) | (cc & 0x3F);
        }
        if (!valid) {
            hex_escape(out, c, false);
            ++i;
            continue;
        }
        const bool c1 = code >= 0x80 && code <= 0x9F;
        const bool bidi = (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
        if (c1 || bidi) {
            hex_escape(out, code, true);
        } else {
            out.append(in, i, n);
        }
        i += n;
    }
    carry_ = in.substr(i);
    return out;
}

std::string TerminalText::flush() {
    std::string held = std::move(carry_);
    carry_.clear();
    std::string out;
    for (const char c : held) {
        if (c == '\r') {
            out += "\\r";
        } else {
            hex_escape(out, static_cast<unsigned char>(c), false);
        }
    }
    return out;
}

std::string neutralize(std::string_view text) {
    TerminalText t;
    std::string out = t.feed(text);
    return out + t.flush();
}

// ---- chat.103 ---------------------------------------------------------------------------------

fs::path chat_history_file() {
    const char* state = std::getenv("XDG_STATE_HOME");
    if (state != nullptr && *state == '/') return fs::path(state) / "nucleo" / "chat_history";
    const char* home = std::getenv("HOME");
    if (home != nullptr && *home != '\0')
        return fs::path(home) / ".local" / "state" / "nucleo" / "chat_history";
    return {};
}

// ---- chat.104 ---------------------------------------------------------------------------------

namespace {

int g_interrupt_pipe[2] = {-1, -1};

extern "C" void on_sigint(int) {
    const int saved = errno;
    const char byte = 1;
    (void)!::write(g_interrupt_pipe[1], &byte, 1);
    errno = saved;
}

struct sigaction g_previous {};

}  // namespace

Interrupts::Interrupts() {
    if (::pipe2(g_interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        throw std::system_error(errno, std::generic_category(), "nucleo chat: pipe for Ctrl-C");
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &g_previous);
}

Interrupts::~Interrupts() {
    ::sigaction(SIGINT, &g_previous, nullptr);
    ::close(g_interrupt_pipe[0]);
    ::close(g_interrupt_pipe[1]);
    g_interrupt_pipe[0] = g_interrupt_pipe[1] = -1;
}

int Interrupts::fd() const noexcept { return g_interrupt_pipe[0]; }

bool Interrupts::take() {
    bool any = false;
    char buf[64];
    while (::read(g_interrupt_pipe[0], buf, sizeof buf) > 0) any = true;
    return any;
}

// ---- chat.102 ---------------------------------------------------------------------------------

struct LineEditor::Impl {
    EditLine* el = nullptr;
    History* history = nullptr;
    HistEvent event{};
    std::string prompt;
    fs::path history_path;
    Interrupts* interrupts = nullptr;
    bool interrupted = false;

    ~Impl() {
        if (el != nullptr) el_end(el);
        if (history != nullptr) history_end(history);
    }

    static Impl* of(EditLine* el) {
        void* data = nullptr;
        el_get(el, EL_CLIENTDATA, &data);
        return static_cast<Impl*>(data);
    }

    static const char* prompt_of(EditLine* el) { return of(el)->prompt.c_str(); }

    /// libedit's character source: stdin, or an interrupt (Ctrl-C as a signal, or as the byte
    /// when the terminal delivers it raw), which ends the read with an error.
    static int read_char(EditLine* el, wchar_t* out) {
        Impl* self = of(el);
        std::mbstate_t state{};
        while (true) {
            pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {self->interrupts->fd(), POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR) continue;
                return -1;
            }
            // chat.114: Ctrl-C (a signal, or the byte when the terminal delivers it raw) is a
            // key bound to ctrl_c(): it clears a half-typed line, at an empty one it ends the read.
            // Keys typed before the Ctrl-C are read before it.
            if (fds[0].revents == 0) {
                if (fds[1].revents != 0 && self->interrupts->take()) {
                    *out = L'\x03';
                    return 1;
                }
                continue;
            }
            char c = 0;
            const ssize_t n = ::read(STDIN_FILENO, &c, 1);
            if (n == 0) return 0;
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN) continue;
                return -1;
            }
            wchar_t wc = 0;
            const std::size_t r = std::mbrtowc(&wc, &c, 1, &state);
            if (r == static_cast<std::size_t>(-2)) continue;  // more bytes of this character
            if (r == static_cast<std::size_t>(-1)) {
                state = {};
                wc = static_cast<unsigned char>(c);
            }
            *out = wc;
            return 1;
        }
    }

    /// chat.114: Ctrl-C at the prompt: a half-typed line is cleared (left on screen marked ^C,
    /// the prompt drawn again below it); at an empty line the read ends as interrupted.
    static unsigned char ctrl_c(EditLine* el, int) {
        const LineInfo* li = el_line(el);
        if (li->lastchar == li->buffer) {
            of(el)->interrupted = true;
            return CC_EOF;
        }
        el_cursor(el, static_cast<int>(li->lastchar - li->cursor));
        el_deletestr(el, static_cast<int>(li->lastchar - li->buffer));
        std::fputs("^C\n", stdout);
        std::fflush(stdout);
        return CC_REDISPLAY;
    }

    /// chat.114: Alt-Enter (Esc then Enter) puts a newline in the message instead of sending it.
    static unsigned char newline(EditLine* el, int) {
        el_insertstr(el, "\n");
        return CC_REFRESH;
    }

    /// chat.114: a bracketed paste (the terminal wraps it in ESC[200~ ... ESC[201~) is inserted
    /// whole, its newlines kept, so a pasted block is one message that Enter sends.
    static unsigned char paste(EditLine* el, int) {
        static constexpr std::wstring_view kEnd = L"\x1b[201~";
        std::wstring text;
        wchar_t wc = 0;
        while (!text.ends_with(kEnd) && el_wgetc(el, &wc) == 1) text += wc == L'\r' ? L'\n' : wc;
        if (text.ends_with(kEnd)) text.resize(text.size() - kEnd.size());
        if (!text.empty()) el_winsertstr(el, text.c_str());
        return CC_REFRESH;
    }
};

LineEditor::LineEditor(std::string prompt, fs::path history_file, Interrupts& interrupts)
    : impl_(std::make_unique<Impl>()) {
    impl_->prompt = std::move(prompt);
    impl_->history_path = std::move(history_file);
    impl_->interrupts = &interrupts;
    impl_->history = history_init();
    impl_->el = el_init("nucleo", stdin, stdout, stderr);
    if (impl_->history == nullptr || impl_->el == nullptr)
        throw std::runtime_error("nucleo chat: the line editor could not start");
    ::history(impl_->history, &impl_->event, H_SETSIZE, 1000);
    ::history(impl_->history, &impl_->event, H_SETUNIQUE, 1);
    el_set(impl_->el, EL_CLIENTDATA, impl_.get());
    el_set(impl_->el, EL_EDITOR, "emacs");
    el_set(impl_->el, EL_SIGNAL, 0);
    el_set(impl_->el, EL_PROMPT_ESC, &Impl::prompt_of, '\1');
    el_set(impl_->el, EL_HIST, &::history, impl_->history);
    el_set(impl_->el, EL_GETCFN, &Impl::read_char);
    // Ctrl-R searches the history backwards, as in bash.
    el_set(impl_->el, EL_BIND, "^R", "em-inc-search-prev", nullptr);
    // Functions are added through el_wset with wide literals: libedit keeps the name and help
    // pointers for its life and never frees them, so the narrow el_set, which copies them with
    // wcsdup first, leaks those copies.
    el_wset(impl_->el, EL_ADDFN, L"nucleo-ctrl-c", L"clear the line, or end at an empty one",
            &Impl::ctrl_c);
    el_set(impl_->el, EL_BIND, "^C", "nucleo-ctrl-c", nullptr);
    el_wset(impl_->el, EL_ADDFN, L"nucleo-newline", L"a newline in the message", &Impl::newline);
    el_set(impl_->el, EL_BIND, "\\e\\r", "nucleo-newline", nullptr);
    el_set(impl_->el, EL_BIND, "\\e\\n", "nucleo-newline", nullptr);
    el_wset(impl_->el, EL_ADDFN, L"nucleo-paste", L"a bracketed paste, whole", &Impl::paste);
    el_set(impl_->el, EL_BIND, "\\e[200~", "nucleo-paste", nullptr);
    el_source(impl_->el, nullptr);  // the user's ~/.editrc, when there is one

    if (impl_->history_path.empty()) {
        history_problem_ = "neither XDG_STATE_HOME nor HOME is set: the line history is not kept";
        return;
    }
    std::error_code ec;
    const fs::path dir = impl_->history_path.parent_path();
    fs::create_directories(dir, ec);
    if (ec) {
        history_problem_ = "cannot create " + dir.string() + " (" + ec.message() +
                           "): the line history is not kept";
        impl_->history_path.clear();
        return;
    }
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (fs::exists(impl_->history_path))
        ::history(impl_->history, &impl_->event, H_LOAD, impl_->history_path.c_str());
}

LineEditor::~LineEditor() = default;

LineEditor::Read LineEditor::read(std::string& line) {
    impl_->interrupted = false;
    int count = 0;
    // chat.114: bracketed paste on while the line is edited, off while a turn prints.
    std::fputs("\x1b[?2004h", stdout);
    std::fflush(stdout);
    const char* text = el_gets(impl_->el, &count);
    std::fputs("\x1b[?2004l", stdout);
    std::fflush(stdout);
    if (impl_->interrupted) {
        el_reset(impl_->el);
        std::fputs("\n", stdout);
        std::fflush(stdout);
        return Read::kInterrupted;
    }
    if (text == nullptr || count <= 0) return Read::kEnd;
    line.assign(text, static_cast<std::size_t>(count));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) {
        ::history(impl_->history, &impl_->event, H_ENTER, line.c_str());
        if (!impl_->history_path.empty()) {
            const mode_t old = ::umask(077);
            ::history(impl_->history, &impl_->event, H_SAVE, impl_->history_path.c_str());
            ::umask(old);
        }
    }
    return Read::kLine;
}

}  // namespace nucleo::cli
