// Internals of the plugin loader: a loaded library and a live instance (core/src/plugins).
#pragma once

#include <atomic>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <boost/dll/shared_library.hpp>

#include "nucleo/plugin.h"
#include "nucleo/plugins.hpp"
#include "plugins/isolated.hpp"
#include "plugins/sinks.hpp"

namespace nucleo::plugins_detail {

/// One loaded, initialised plugin library. Members are destroyed in reverse order: `library`
/// (declared first) is unloaded last, after the destructor has called the plugin's deinit.
struct Library {
    boost::dll::shared_library library;
    const nucleo_plugin_entry* entry = nullptr;
    PluginInfo info;
    std::string logger;  ///< "plugin:<name>", the logger of its host log records
    nucleo_host host{};  ///< handed to init; host_ctx points back here
    bool initialised = false;
    /// abi.107: the sink structs this library's calls are handed; destroyed before `library` is
    /// unloaded and after deinit, so they outlive every call of the plugin's code.
    SinkPool sinks;
    /// abi.109: this library was checked for a missing options schema (named at most once per
    /// file and process).
    std::atomic<bool> warned_no_schema{false};
    /// abi.130: set for a plugin served by helper processes (`isolation: process`): then
    /// `library` and `entry` stay empty, `info` and `schemas` are the helper's hello, and `spare`
    /// is the helper that said it, kept running for the first instance.
    std::optional<HelperDeadline> isolation;
    std::map<std::string, std::string> schemas;
    std::unique_ptr<HelperProcess> spare;
    std::mutex spare_mutex;

    Library() = default;
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    ~Library();

    /// The factory struct for `id` when served and at least `min_size` bytes by its own
    /// struct_size; else throws Error kPlugin naming the file, the id and the reason.
    const void* factory(const char* id, std::size_t min_size) const;
};

/// The host struct for a library: host_ctx = the Library, get_extension answering
/// "nucleo.host.log/1" (records go to nucleo::log::write under "plugin:<name>").
nucleo_host make_host(Library* library) noexcept;

/// The one lock that serialises init and deinit of every plugin (abi.22). Recursive: a
/// Library whose load fails after init is destroyed (and deinitialised) while load holds it.
std::recursive_mutex& lifecycle_mutex() noexcept;

/// A live instance. `library` is declared first so it outlives the destroy() call below: a
/// library is never unloaded while an instance of it lives.
struct InstanceHandle {
    std::shared_ptr<Library> library;
    const char* factory_id = nullptr;
    const void* factory = nullptr;
    void (*destroy)(nucleo_instance*) = nullptr;
    nucleo_instance* instance = nullptr;
    /// Where the instance keeps its data, for error messages: "file <path>" or a URL with its
    /// password redacted (persistence.105); empty when its config names neither.
    std::string where;
    /// abi.130: the helper process serving this instance (`isolation: process`); then
    /// `factory` and `instance` stay null and every call goes through it.
    std::unique_ptr<IsolatedInstance> isolated;

    InstanceHandle() = default;
    InstanceHandle(const InstanceHandle&) = delete;
    InstanceHandle& operator=(const InstanceHandle&) = delete;
    ~InstanceHandle() {
        if (destroy != nullptr && instance != nullptr) destroy(instance);
    }
};

}  // namespace nucleo::plugins_detail
