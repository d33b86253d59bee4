// Plugin instances run in a helper process (abi.130, `isolation: process`).
//
// The helper is the executable nucleo-plugin-host: it loads one plugin file with the ordinary
// loader, creates one instance and serves its slots over a socketpair, one message in and one out
// per call (frames.hpp). The core keeps a shell Library (the plugin's info and options schemas as
// the helper reported them, none of its code mapped here) and an IsolatedInstance behind the usual
// ProviderInstance, so everything the core checks before and after a plugin call (the channel
// contract, the cache plan, the request audit, the body cap) runs here exactly as in process.
//
// A call waits for its answer with poll() up to the call's deadline; starting a helper (its init
// and the instance's create) is bounded apart, by the larger of that deadline and 10 s. A helper
// that dies (a crash, an exit) fails that call naming the plugin, the slot and the signal; one that
// does not answer by the deadline is killed (SIGKILL) and fails the call the same way. The next
// call starts a new helper and creates the instance again from its options: a provider is a pure
// translator (abi.24), so nothing of the dead helper is missed.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "nucleo/plugins.hpp"
#include "plugins/frames.hpp"

namespace nucleo::plugins_detail {

struct Library;

/// One running helper: its pid and the core's end of the socketpair (non-blocking). Destroyed,
/// it kills the helper (SIGKILL) and reaps it.
class HelperProcess {
  public:
    enum class Outcome { kAnswered, kGone, kTimedOut, kGarbled };

    /// Starts `executable PLUGIN` with the channel on its descriptor 3; throws Error kInternal
    /// when it cannot.
    HelperProcess(const std::filesystem::path& executable, const std::filesystem::path& plugin);
    ~HelperProcess();
    HelperProcess(const HelperProcess&) = delete;
    HelperProcess& operator=(const HelperProcess&) = delete;

    /// Sends `request` (none: only read, the hello) and reads one answer into `reply`, both
    /// before `deadline`.
    Outcome exchange(const Frame* request, Frame& reply,
                     std::chrono::steady_clock::time_point deadline);
    /// How the helper ended, after an exchange that did not answer: killed when still running
    /// (a hang, or a helper that closed its channel and lives on), then reaped.
    std::string ending();

  private:
    void reap();

    int pid_ = -1;
    int fd_ = -1;
    int status_ = 0;
    bool reaped_ = false;
};

/// The least time a helper is given to start (exec, load the plugin, its init, create the
/// instance). Starting costs the machine's time, not the plugin's work: under a loaded host or a
/// sanitizer build an exec alone can take longer than a short call deadline, so a start is bounded
/// by the larger of this and the call's deadline, and the call's own deadline begins after it.
constexpr std::chrono::milliseconds kHelperStartFloor{10000};

/// The bound of every exchange with a helper and how an error names it.
struct HelperDeadline {
    std::chrono::milliseconds deadline{600000};
    /// The config key that set it ("providers.x.transport.deadline_ms"), for the error.
    std::string key;

    /// The bound of a helper's start: the call's deadline, at least kHelperStartFloor.
    [[nodiscard]] std::chrono::milliseconds start() const {
        return deadline > kHelperStartFloor ? deadline : kHelperStartFloor;
    }
};

/// What a helper reported of its plugin when it started.
struct HelperHello {
    PluginInfo info;
    std::map<std::string, std::string> schemas;  ///< factory id -> options schema, when published
};

/// Starts a helper for `file`, reads its hello and keeps it running in `spare` for the first
/// instance. Throws Error kPlugin: the loader's refusal as the helper reported it, or the helper
/// crashed or hung while loading the plugin (its init).
HelperHello start_helper(const std::filesystem::path& file, const HelperDeadline& deadline,
                         std::unique_ptr<HelperProcess>& spare);

/// One plugin instance served by a helper process. Thread rule: calls are serialised (one helper
/// serves one call at a time); every method may be called from any thread.
class IsolatedInstance {
  public:
    /// Creates the instance in `helper` (or in a new helper when null): throws what the
    /// plugin's create threw there, or kPlugin naming a crash or a hang.
    IsolatedInstance(std::filesystem::path file, std::string plugin_name, std::string factory_id,
                     std::string config_json, HelperDeadline deadline,
                     std::unique_ptr<HelperProcess> helper);
    ~IsolatedInstance();
    IsolatedInstance(const IsolatedInstance&) = delete;
    IsolatedInstance& operator=(const IsolatedInstance&) = delete;

    /// Runs `slot` with `args` in the helper; the outputs the slot wrote, in order. A failure of
    /// the plugin is thrown as in process (the helper's own message and kind); a crash or a hang
    /// is Error kPlugin naming the plugin, the slot and what happened. `body_limit` is the
    /// request body cap of the calling thread (limits.143), applied in the helper.
    Frame call(const char* slot, const Frame& args, std::size_t body_limit = 0);

    /// The optional slots the instance offers (decode_event, encode_parts, encode_split).
    [[nodiscard]] bool has(const std::string& slot) const;

  private:
    /// Starts a helper when none runs and creates the instance in it (the mutex held).
    void ensure_live(const char* slot);

    std::filesystem::path file_;
    std::string name_;
    std::string factory_id_;
    std::string config_json_;
    HelperDeadline deadline_;
    std::map<std::string, bool> slots_;
    mutable std::mutex mutex_;
    std::unique_ptr<HelperProcess> live_;
};

/// The helper executable: beside libnucleo in its build tree, else <libdir>/nucleo/ of the
/// installed libnucleo (abi.113's rule for plugins).
std::filesystem::path plugin_host_executable();

}  // namespace nucleo::plugins_detail
