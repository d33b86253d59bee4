// abi.102: sinks whose context is a call number, refused once their call returned.
#include "plugins/sinks.hpp"

#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "common/log_internal.hpp"

namespace nucleo::plugins_detail {
namespace {

struct Open {
    std::string* out;
    std::string plugin;
    const char* slot;
};

/// How many returned calls are remembered by name, for the warning of a late write (older ones
/// are still refused, only named by number).
constexpr std::size_t kRememberedClosed = 1024;

struct Table {
    std::mutex mutex;
    std::uint64_t next = 1;
    std::unordered_map<std::uint64_t, Open> open;
    std::deque<std::pair<std::uint64_t, std::string>> closed;  ///< id, "plugin 'x' slot"
};

Table& table() {
    static Table t;
    return t;
}

int32_t write_to_call(void* ctx, const char* data, size_t size) {
    const auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ctx));
    try {
        Table& t = table();
        std::lock_guard<std::mutex> lock(t.mutex);
        if (auto it = t.open.find(id); it != t.open.end()) {
            if (size > 0) {
                if (data == nullptr) return NUCLEO_ERR_INVALID_ARGUMENT;
                it->second.out->append(data, size);
            }
            return NUCLEO_OK;
        }
        std::string who = "a plugin";
        for (const auto& [closed_id, name] : t.closed)
            if (closed_id == id) who = name;
        NUCLEO_LOG_WARN("{} wrote {} bytes to the sink of call #{} after that call returned; the write "
                        "was refused (abi.102)",
                        who, size, id);
        return NUCLEO_ERR_PLUGIN;
    } catch (...) {
        return NUCLEO_ERR_INTERNAL;  // the plugin stops and returns this (plugin.h sink rule)
    }
}

}  // namespace

CallSink::CallSink(std::string& out, const std::string& plugin, const char* slot) {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    id_ = t.next++;
    t.open.emplace(id_, Open{&out, plugin, slot});
    sink_ = {sizeof(nucleo_sink), reinterpret_cast<void*>(static_cast<std::uintptr_t>(id_)), &write_to_call};
}

CallSink::~CallSink() {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.open.find(id_);
    if (it == t.open.end()) return;
    try {
        t.closed.emplace_back(id_, "plugin '" + it->second.plugin + "' (" + it->second.slot + ")");
        if (t.closed.size() > kRememberedClosed) t.closed.pop_front();
    } catch (...) {
        // Naming a late writer is a courtesy; the refusal itself does not need it.
    }
    t.open.erase(it);
}

}  // namespace nucleo::plugins_detail
