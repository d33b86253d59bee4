#include "commands/demo_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "nucleo/errors.hpp"

extern char** environ;

namespace nucleo::cli::demo {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::size_t count_of(std::string_view haystack, std::string_view needle) {
    std::size_t n = 0;
    for (std::size_t at = haystack.find(needle); at != std::string_view::npos;
         at = haystack.find(needle, at + needle.size())) {
        ++n;
    }
    return n;
}

/// At most `max` bytes of `text`, cut before a UTF-8 continuation byte (never mid-character).
std::string_view utf8_prefix(std::string_view text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
    return text.substr(0, end);
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return std::string(s);
}

/// One paragraph of a Markdown file: lines between blank lines, with the section it sits in.
struct Paragraph {
    std::size_t line = 0;  // 1-based line of its first line
    std::string section;
    std::string text;
};

bool is_heading(std::string_view line) {
    return line.starts_with("#");
}

std::string heading_text(std::string_view line) {
    while (!line.empty() && line.front() == '#') line.remove_prefix(1);
    return trimmed(line);
}

std::vector<Paragraph> paragraphs_of(const std::string& text) {
    std::vector<Paragraph> out;
    std::istringstream in(text);
    std::string line;
    std::string section;
    Paragraph current;
    bool in_fence = false;
    std::size_t number = 0;
    const auto flush = [&] {
        if (!current.text.empty()) out.push_back(std::move(current));
        current = Paragraph{};
    };
    while (std::getline(in, line)) {
        ++number;
        if (line.starts_with("```")) in_fence = !in_fence;
        if (!in_fence && is_heading(line)) {
            flush();
            section = heading_text(line);
            out.push_back(Paragraph{number, section, line});
            continue;
        }
        if (!in_fence && trimmed(line).empty()) {
            flush();
            continue;
        }
        if (current.text.empty()) {
            current.line = number;
            current.section = section;
        } else {
            current.text += '\n';
        }
        current.text += line;
    }
    flush();
    return out;
}

}  // namespace

fs::path executable_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
        throw Error(
            ErrorKind::kInternal,
            "cannot tell where this nucleo binary is (/proc/self/exe: " + ec.message() + ")");
    }
    return exe.parent_path();
}

fs::path default_docs_dir() {
    const fs::path installed = (executable_dir() / NUCLEO_DOCS_FROM_BINDIR).lexically_normal();
    if (fs::is_directory(installed)) return installed;
    const fs::path source = NUCLEO_SOURCE_DOCS_DIR;
    if (fs::is_directory(source)) return source;
    throw Error(ErrorKind::kNotFound, "no docs folder: neither the installed " +
                                          installed.string() + " nor the source tree's " +
                                          source.string() + " exists; pass --docs DIR");
}

// ---- DocsLibrary ----------------------------------------------------------------------------

DocsLibrary::DocsLibrary(fs::path dir) : dir_(std::move(dir)) {
    if (!fs::is_directory(dir_)) {
        throw Error(ErrorKind::kNotFound, "--docs " + dir_.string() + ": not a folder");
    }
    for (const auto& entry : fs::directory_iterator(dir_)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".md") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        if (!in) throw Error(ErrorKind::kNotFound, "cannot read " + entry.path().string());
        std::ostringstream text;
        text << in.rdbuf();
        files_.push_back({entry.path().filename().string(), text.str()});
    }
    if (files_.empty()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "--docs " + dir_.string() + ": holds no Markdown (*.md) file to search");
    }
    std::sort(files_.begin(), files_.end(),
              [](const File& a, const File& b) { return a.name < b.name; });
}

std::size_t DocsLibrary::bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& f : files_) n += f.text.size();
    return n;
}

std::string DocsLibrary::names() const {
    std::string out;
    for (const auto& f : files_) out += (out.empty() ? "" : ", ") + f.name;
    return out;
}

std::string DocsLibrary::outline() const {
    std::string out = "The docs folder holds " + std::to_string(files_.size()) +
                      " Markdown files: each with its opening paragraph and its sections.\n";
    for (const auto& f : files_) {
        std::string opening;
        std::string headings;
        for (const auto& p : paragraphs_of(f.text)) {
            if (is_heading(p.text)) {
                headings += (headings.empty() ? "" : "; ") + p.section;
            } else if (opening.empty()) {
                opening = std::string(utf8_prefix(p.text, 600));
            }
        }
        out += "\n" + f.name + ": " + opening + "\nSections: " + headings + "\n";
    }
    return out;
}

ToolOutput DocsLibrary::search(std::string_view query, std::size_t max_passages,
                               std::size_t max_bytes) const {
    const std::string needle = lower(trimmed(query));
    if (needle.empty()) return ToolOutput::error("search_docs needs a non-empty query");

    struct Hit {
        const File* file;
        Paragraph paragraph;
    };
    struct FileHits {
        const File* file;
        std::size_t mentions = 0;
        std::vector<Hit> hits;
    };
    std::vector<FileHits> by_file;
    std::size_t passages = 0;
    for (const auto& f : files_) {
        FileHits fh{&f, 0, {}};
        for (auto& p : paragraphs_of(f.text)) {
            const std::size_t n = count_of(lower(p.text), needle);
            if (n == 0) continue;
            fh.mentions += n;
            fh.hits.push_back({&f, std::move(p)});
        }
        passages += fh.hits.size();
        if (!fh.hits.empty()) by_file.push_back(std::move(fh));
    }
    const std::string quoted = "\"" + trimmed(query) + "\"";
    if (by_file.empty()) {
        return {"No passage of the " + std::to_string(files_.size()) + " docs mentions " + quoted +
                    ". The docs: " + names() + ".",
                false};
    }
    // The files that say most about it first; passages in reading order within a file.
    std::stable_sort(by_file.begin(), by_file.end(),
                     [](const FileHits& a, const FileHits& b) { return a.mentions > b.mentions; });
    std::string head = std::to_string(passages) + " passages in " + std::to_string(by_file.size()) +
                       " files mention " + quoted + ":";
    for (std::size_t i = 0; i < by_file.size(); ++i) {
        head += std::string(i == 0 ? " " : ", ") + by_file[i].file->name + " (" +
                std::to_string(by_file[i].hits.size()) + ")";
    }
    std::string body;
    std::size_t shown = 0;
    for (const auto& fh : by_file) {
        for (const auto& h : fh.hits) {
            if (shown == max_passages || body.size() >= max_bytes) break;
            const std::string_view text = utf8_prefix(h.paragraph.text, 700);
            body +=
                "\n\n[" + h.file->name + ":" + std::to_string(h.paragraph.line) +
                (h.paragraph.section.empty() ? "" : ", section \"" + h.paragraph.section + "\"") +
                "]\n" + std::string(text) + (text.size() < h.paragraph.text.size() ? " [...]" : "");
            ++shown;
        }
    }
    if (shown < passages) {
        head += "\n(showing " + std::to_string(shown) + " of them; read_doc reads a whole file)";
    }
    return {head + body, false};
}

ToolOutput DocsLibrary::read(std::string_view name, std::size_t max_bytes) const {
    std::string wanted = trimmed(name);
    for (const std::string_view prefix : {"./", "docs/"}) {
        if (wanted.starts_with(prefix)) wanted.erase(0, prefix.size());
    }
    for (const auto& f : files_) {
        if (f.name != wanted) continue;
        const std::string_view text = utf8_prefix(f.text, max_bytes);
        std::string out =
            f.name + " (" + std::to_string(f.text.size()) + " bytes)\n" + std::string(text);
        if (text.size() < f.text.size()) {
            out +=
                "\n[... " + std::to_string(f.text.size() - text.size()) + " more bytes not shown]";
        }
        return {out, false};
    }
    return ToolOutput::error("no doc named \"" + std::string(name) +
                             "\"; the docs are: " + names());
}

// ---- TempDir --------------------------------------------------------------------------------

TempDir::TempDir(std::string_view prefix) {
    std::string pattern = (fs::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw Error(ErrorKind::kInternal,
                    "cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
}

TempDir::~TempDir() {
    remove();
}

bool TempDir::remove() noexcept {
    if (path_.empty()) return true;
    std::error_code ec;
    fs::remove_all(path_, ec);
    return !fs::exists(path_, ec);
}

// ---- InterruptWatch -------------------------------------------------------------------------

namespace {

sigset_t watched_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);  // the destructor's wake-up call
    return set;
}

}  // namespace

InterruptWatch::InterruptWatch() {
    const sigset_t set = watched_signals();
    pthread_sigmask(SIG_BLOCK, &set, &previous_);
    watcher_ = std::thread([this, set] {
        int sig = 0;
        while (sigwait(&set, &sig) != 0) {
        }
        if (sig == SIGUSR1) return;
        received_.store(sig);
        token_.cancel();
    });
}

InterruptWatch::~InterruptWatch() {
    if (received_.load() == 0) pthread_kill(watcher_.native_handle(), SIGUSR1);
    watcher_.join();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

// ---- EmulatorChild --------------------------------------------------------------------------

fs::path find_emulator() {
    if (const char* given = std::getenv("NUCLEO_EMULATOR"); given != nullptr && *given != '\0') {
        if (::access(given, X_OK) != 0) {
            throw Error(ErrorKind::kNotFound,
                        std::string("NUCLEO_EMULATOR=") + given + ": not an executable file");
        }
        return given;
    }
    const fs::path beside = executable_dir() / "nucleo-emulator";
    if (::access(beside.c_str(), X_OK) != 0) {
        throw Error(ErrorKind::kNotFound,
                    "nucleo-emulator is needed (for --emulator, or a demo without a provider "
                    "key), but there is none at " +
                        beside.string() +
                        " (build it: cmake --build build --target nucleo_emulator; or set "
                        "NUCLEO_EMULATOR, or a provider key such as ANTHROPIC_API_KEY)");
    }
    return beside;
}

EmulatorChild::EmulatorChild(const fs::path& binary, const fs::path& work_dir) {
    const fs::path port_file = work_dir / "emulator.port";
    std::vector<std::string> args = {
        binary.string(), "--host",           "127.0.0.1",         "--port", "0",
        "--port-file",   port_file.string(), "--exit-with-parent"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    // Its stdout (the "listening on" line) is not the demo's to show; its stderr is, on failure.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    // Its own process group, so a Ctrl-C at the terminal reaches the demo alone, which then stops
    // at a boundary and stops the emulator itself; and the default signal mask (the demo blocks
    // SIGINT/SIGTERM for its InterruptWatch).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        pid_ = -1;
        throw Error(ErrorKind::kInternal,
                    "cannot start " + binary.string() + ": " + std::strerror(rc));
    }

    // A bounded poll of the port file (written atomically once the port is bound), watching for
    // an early exit: never a blind sleep.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (port_ == 0) {
        int raw = 0;
        if (::waitpid(pid_, &raw, WNOHANG) == pid_) {
            reaped_ = true;
            status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
            throw Error(ErrorKind::kInternal, binary.string() + " exited with status " +
                                                  std::to_string(status_) +
                                                  " before listening (see its message above)");
        }
        if (std::ifstream in(port_file); in) in >> port_;
        if (port_ > 0) break;
        port_ = 0;
        if (std::chrono::steady_clock::now() > deadline) {
            stop();
            throw Error(ErrorKind::kInternal,
                        binary.string() + " did not report a port within 10 seconds");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

EmulatorChild::~EmulatorChild() {
    stop();
}

std::string EmulatorChild::base_url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
}

int EmulatorChild::stop() noexcept {
    if (pid_ <= 0 || reaped_) return status_;
    ::kill(pid_, SIGTERM);
    int raw = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid_, &raw, 0);
    } while (r < 0 && errno == EINTR);
    reaped_ = true;
    status_ = (r == pid_ && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
    return status_;
}

// ---- aiming at an emulator (cli.102) --------------------------------------------------------

ProviderConfig aimed_at(ProviderConfig provider, const EmulatorChild& emulator) {
    // The two OpenAI dialects' base URLs end in /v1 (the SDKs' OPENAI_BASE_URL convention).
    const bool openai = provider.plugin == "openai" || provider.plugin == "openai-responses";
    provider.base_url = emulator.base_url() + (openai ? "/v1" : "");
    provider.credentials.api_key = "emulator-key";
    provider.credentials.access_key_id = "AKIDEMULATOR";
    provider.credentials.secret_access_key = "emulator-secret";
    provider.credentials.session_token.clear();
    if (provider.credentials.region.empty()) provider.credentials.region = "us-east-1";
    return provider;
}

Config aimed_at(const Config& config, const EmulatorChild& emulator) {
    Config out = config;
    for (const ProviderConfig& p : config.providers())
        out = out.with_provider(aimed_at(p, emulator));
    return out;
}

OwnEmulator::OwnEmulator() : dir_("nucleo-emulator-"), child_(find_emulator(), dir_.path()) {}

Config with_own_emulator(const Config& config, std::optional<OwnEmulator>& holder,
                         std::string_view command) {
    holder.emplace();
    std::cerr << "nucleo " << command << ": answers come from nucleo-emulator at "
              << holder->child().base_url() << " (--emulator)\n";
    return aimed_at(config, holder->child());
}

}  // namespace nucleo::cli::demo
