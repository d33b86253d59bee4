// abi.130: plugin instances in a helper process (isolated.hpp).
#include "plugins/isolated.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/process_text.hpp"
#include "nucleo/errors.hpp"

extern char** environ;

namespace nucleo::plugins_detail {
namespace fs = std::filesystem;
using internal::duration_text;
using internal::signal_text;
using Clock = std::chrono::steady_clock;

namespace {

/// The helper's end of the channel is this descriptor in the helper (its stdout is its stderr,
/// so a plugin that prints cannot garble the channel).
constexpr int kHelperFd = 3;
/// The largest message the core reads from a helper; a larger one ends the helper (a plugin's
/// body is capped in the helper already, limits.143, so only a broken helper sends one).
constexpr std::uint32_t kMaxFrame = 1U << 30;

int milliseconds_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return 0;
    return left.count() > 1000000 ? 1000000 : static_cast<int>(left.count());
}

/// The <name> of nucleo-<name>.so, else the file: how a plugin is named before its hello.
std::string name_of_file(const fs::path& file) {
    const std::string f = file.filename().string();
    if (f.size() > 10 && f.rfind("nucleo-", 0) == 0 && f.compare(f.size() - 3, 3, ".so") == 0)
        return f.substr(7, f.size() - 10);
    return file.string();
}

}  // namespace

HelperProcess::HelperProcess(const fs::path& executable, const fs::path& plugin) {
    int sv[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        throw Error(
            ErrorKind::kInternal,
            std::string("cannot create a socketpair for a plugin helper: ") + std::strerror(errno));
    fd_ = sv[0];
    int child_end = sv[1];
    // dup2 onto the same number would keep close-on-exec: move the end out of the way.
    if (child_end == kHelperFd) {
        child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kHelperFd + 1);
        ::close(sv[1]);
    }
    std::string exe = executable.string();
    std::string file = plugin.string();
    char* argv[] = {exe.data(), file.data(), nullptr};
    // The helper reads nothing of the host's input (a plugin reading stdin would steal what a
    // `nucleo chat` user types), and runs in a process group of its own, so the terminal's
    // Ctrl-C, meant for the host (which cancels a turn), never kills it and gets blamed on the
    // plugin.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, child_end, kHelperFd);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    ::close(child_end);
    if (spawned != 0) {
        ::close(fd_);
        throw Error(ErrorKind::kInternal,
                    "cannot start the plugin helper " + exe + ": " + std::strerror(spawned));
    }
    pid_ = pid;
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

HelperProcess::~HelperProcess() {
    ::close(fd_);
    // A provider holds nothing worth a clean shutdown (abi.24), and a helper may be hung: it is
    // killed, never waited for.
    reap();
}

HelperProcess::Outcome HelperProcess::exchange(const Frame* request, Frame& reply,
                                               Clock::time_point deadline) {
    const std::string out = request != nullptr ? encode_frame(*request) : std::string();
    std::size_t sent = 0;
    std::string in;
    std::size_t want = 4;  // the header first, then the payload
    bool header_read = false;
    for (;;) {
        pollfd p{fd_, static_cast<short>(POLLIN | (sent < out.size() ? POLLOUT : 0)), 0};
        const int ready = ::poll(&p, 1, milliseconds_left(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return Outcome::kTimedOut;
        if (ready < 0) return Outcome::kGone;
        if ((p.revents & POLLOUT) != 0 && sent < out.size()) {
            const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += static_cast<std::size_t>(n);
            else if (errno != EAGAIN && errno != EINTR)
                return Outcome::kGone;
        }
        if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        char buf[65536];
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n == 0) return Outcome::kGone;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            return Outcome::kGone;
        }
        in.append(buf, static_cast<std::size_t>(n));
        if (!header_read && in.size() >= 4) {
            const std::uint32_t size = frame_size(in.data());
            if (size > kMaxFrame) return Outcome::kGarbled;
            want = 4 + static_cast<std::size_t>(size);
            header_read = true;
        }
        if (header_read && in.size() >= want) {
            if (in.size() > want) return Outcome::kGarbled;  // one answer per request
            auto fields = decode_payload(std::string_view(in).substr(4));
            if (!fields || fields->empty()) return Outcome::kGarbled;
            reply = std::move(*fields);
            return Outcome::kAnswered;
        }
    }
}

std::string HelperProcess::ending() {
    reap();
    if (WIFSIGNALED(status_)) return signal_text(WTERMSIG(status_));
    if (WIFEXITED(status_)) return "exit status " + std::to_string(WEXITSTATUS(status_));
    return "status " + std::to_string(status_);
}

void HelperProcess::reap() {
    if (reaped_ || pid_ <= 0) return;
    ::kill(pid_, SIGKILL);  // a helper that died already is a zombie: then this does nothing
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
}

namespace {

/// Runs one exchange; anything but an answer ends the helper and throws Error kPlugin naming
/// the plugin, the slot and what happened.
/// `starting`: the exchange is part of a helper's start, bounded by deadline.start().
Frame exchange_or_throw(std::unique_ptr<HelperProcess>& helper, const Frame* request,
                        const std::string& plugin, const char* slot, const HelperDeadline& deadline,
                        Clock::time_point until, bool starting) {
    Frame reply;
    const auto outcome = helper->exchange(request, reply, until);
    if (outcome == HelperProcess::Outcome::kAnswered) return reply;
    const std::string ending = helper->ending();
    helper.reset();
    const std::string who = "plugin '" + plugin + "' " + slot;
    // A load that failed has no next call of its own; a call's failure has.
    const std::string next =
        std::string_view(slot) == "init" ? "" : "; a new helper serves the next call";
    switch (outcome) {
        case HelperProcess::Outcome::kTimedOut: {
            const std::string key = deadline.key.empty() ? std::string() : ", " + deadline.key;
            const std::string bound =
                starting && deadline.start() > deadline.deadline
                    ? "its helper's start time (" + duration_text(deadline.start()) +
                          ", the least a start is given; the call's deadline is " +
                          duration_text(deadline.deadline) + key + ")"
                    : std::string(starting ? "its helper's start time ("
                                           : "the call's deadline (") +
                          duration_text(deadline.deadline) + key + ")";
            throw Error(ErrorKind::kPlugin, who + " did not answer by " + bound +
                                                ": its helper process was killed (isolation: "
                                                "process)" +
                                                next);
        }
        case HelperProcess::Outcome::kGarbled:
            throw Error(ErrorKind::kPlugin, who +
                                                ": its helper process sent a message that is no "
                                                "frame and was killed (isolation: process)" +
                                                next);
        default:
            throw Error(
                ErrorKind::kPlugin,
                who + " crashed in its helper process (isolation: process): " + ending + next);
    }
}

/// Rethrows an "error" answer as the in-process wrapper threw it (same kind and text).
[[noreturn]] void rethrow(const Frame& reply) {
    const int kind = reply.size() > 1 ? std::atoi(reply[1].c_str()) : -1;
    const std::string text = reply.size() > 2 ? reply[2] : "the plugin helper failed";
    if (kind < 0 || kind > static_cast<int>(ErrorKind::kOutputTruncated))
        throw Error(ErrorKind::kPlugin, text);
    const auto k = static_cast<ErrorKind>(kind);
    if (k == ErrorKind::kNotImplemented) throw NotImplementedException(text);
    if (k == ErrorKind::kContextOverflow) throw ContextOverflowException(text);
    if (k == ErrorKind::kUncorrectable) throw UncorrectableLLMException(text);
    throw Error(k, text);
}

}  // namespace

HelperHello start_helper(const fs::path& file, const HelperDeadline& deadline,
                         std::unique_ptr<HelperProcess>& spare) {
    const auto until = Clock::now() + deadline.start();
    auto helper = std::make_unique<HelperProcess>(plugin_host_executable(), file);
    const Frame reply =
        exchange_or_throw(helper, nullptr, name_of_file(file), "init", deadline, until, true);
    if (reply[0] == "refused" && reply.size() > 1) throw Error(ErrorKind::kPlugin, reply[1]);
    if (reply[0] != "hello" || reply.size() < 7 || (reply.size() - 7) % 3 != 0)
        throw Error(ErrorKind::kPlugin,
                    "plugin '" + name_of_file(file) + "': its helper process did not say hello");
    HelperHello hello;
    hello.info.name = reply[1];
    hello.info.version = reply[2];
    hello.info.description = reply[3];
    hello.info.abi_major = static_cast<uint32_t>(std::strtoul(reply[4].c_str(), nullptr, 10));
    hello.info.abi_minor = static_cast<uint32_t>(std::strtoul(reply[5].c_str(), nullptr, 10));
    hello.info.file = reply[6];
    for (std::size_t i = 7; i + 2 < reply.size(); i += 3) {
        hello.info.factories.push_back(reply[i]);
        if (reply[i + 1] == "1") hello.schemas[reply[i]] = reply[i + 2];
    }
    spare = std::move(helper);
    return hello;
}

IsolatedInstance::IsolatedInstance(fs::path file, std::string plugin_name, std::string factory_id,
                                   std::string config_json, HelperDeadline deadline,
                                   std::unique_ptr<HelperProcess> helper)
    : file_(std::move(file)),
      name_(std::move(plugin_name)),
      factory_id_(std::move(factory_id)),
      config_json_(std::move(config_json)),
      deadline_(std::move(deadline)),
      live_(std::move(helper)) {
    const std::lock_guard lock(mutex_);
    ensure_live("create");
}

IsolatedInstance::~IsolatedInstance() = default;

void IsolatedInstance::ensure_live(const char* slot) {
    const auto until = Clock::now() + deadline_.start();
    if (!live_) {
        std::unique_ptr<HelperProcess> helper;
        (void)start_helper(file_, deadline_, helper);
        live_ = std::move(helper);
    }
    const Frame request{"create", factory_id_, config_json_};
    const Frame reply = exchange_or_throw(live_, &request, name_, slot, deadline_, until, true);
    if (reply[0] != "ok") {
        live_.reset();
        rethrow(reply);
    }
    // The optional slots the instance offers, in the order the helper lists them.
    for (std::size_t i = 1; i + 1 < reply.size(); i += 2) slots_[reply[i]] = reply[i + 1] == "1";
}

Frame IsolatedInstance::call(const char* slot, const Frame& args, std::size_t body_limit) {
    const std::lock_guard lock(mutex_);
    if (!live_) ensure_live(slot);  // the last helper died: a new one, the instance again
    Frame request{"call", slot, std::to_string(body_limit)};
    request.insert(request.end(), args.begin(), args.end());
    const auto until = Clock::now() + deadline_.deadline;
    Frame reply = exchange_or_throw(live_, &request, name_, slot, deadline_, until, false);
    if (reply[0] != "ok") rethrow(reply);
    reply.erase(reply.begin());
    return reply;
}

bool IsolatedInstance::has(const std::string& slot) const {
    const std::lock_guard lock(mutex_);
    const auto it = slots_.find(slot);
    return it != slots_.end() && it->second;
}

}  // namespace nucleo::plugins_detail
