// abi.102: sinks whose context is a call number, refused once their call returned; abi.107:
// the structs handed to plugins live in their library's SinkPool, never on the host's stack.
#include "plugins/sinks.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "common/log_internal.hpp"
#include "llm/body_buffer.hpp"

namespace nucleo::plugins_detail {
namespace {

struct Open {
    std::string* out;
    std::string plugin;
    const char* slot;
    std::size_t limit;  ///< limits.143: 0 for none
    bool* over;
};

thread_local std::size_t body_limit = 0;

/// How many returned calls are remembered by name, for the warning of a late write (older ones
/// are still refused, only named by number).
constexpr std::size_t kRememberedClosed = 1024;

struct Table {
    std::mutex mutex;
    std::uint64_t next = 1;
    std::unordered_map<std::uint64_t, Open> open;
    /// id, plugin, slot: the name of a late writer's call is put into words only for its warning
    struct Closed {
        std::uint64_t id;
        std::string plugin;
        const char* slot;
    };
    std::deque<Closed> closed;
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
                std::string& out = *it->second.out;
                if (it->second.limit > 0 && size > it->second.limit - std::min(it->second.limit, out.size())) {
                    *it->second.over = true;  // limits.143: refused before a byte past the cap
                    return NUCLEO_ERR_INVALID_ARGUMENT;
                }
                // limits.135: a growth leaves room for the body padding (a body is usually one
                // write, which would otherwise allocate exactly its size).
                if (out.capacity() - out.size() < size)
                    out.reserve(std::max(out.size() + size + internal::kBodyPadding, 2 * out.capacity()));
                out.append(data, size);
            }
            return NUCLEO_OK;
        }
        std::string who = "a plugin";
        for (const auto& c : t.closed)
            if (c.id == id) who = "plugin '" + c.plugin + "' (" + c.slot + ")";
        NUCLEO_LOG_WARN("{} wrote {} bytes to the sink of call #{} after that call returned; the write "
                        "was refused (abi.102)",
                        who, size, id);
        return NUCLEO_ERR_PLUGIN;
    } catch (...) {
        return NUCLEO_ERR_INTERNAL;  // the plugin stops and returns this (plugin.h sink rule)
    }
}

}  // namespace

nucleo_sink* SinkPool::acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    nucleo_sink* slot = nullptr;
    if (idle_.size() > kQuarantine) {
        slot = idle_.front();
        idle_.pop_front();
    } else {
        slot = &slots_.emplace_back();
    }
    slot->struct_size = sizeof(nucleo_sink);
    slot->write = &write_to_call;
    return slot;
}

void SinkPool::release(nucleo_sink* slot) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        idle_.push_back(slot);
    } catch (...) {
        // Out of memory: the slot stays out of circulation, still refusing its closed call.
    }
}

std::size_t SinkPool::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return slots_.size();
}

CallSink::CallSink(std::string& out, SinkPool& pool, const std::string& plugin, const char* slot,
                   std::size_t limit)
    : pool_(pool), sink_(pool.acquire()) {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    id_ = t.next++;
    try {
        t.open.emplace(id_, Open{&out, plugin, slot, limit, &over_});
    } catch (...) {
        pool_.release(sink_);
        throw;
    }
    sink_->ctx = reinterpret_cast<void*>(static_cast<std::uintptr_t>(id_));
}

CallSink::~CallSink() {
    {
        Table& t = table();
        std::lock_guard<std::mutex> lock(t.mutex);
        if (auto it = t.open.find(id_); it != t.open.end()) {
            try {
                t.closed.push_back({id_, std::move(it->second.plugin), it->second.slot});
                if (t.closed.size() > kRememberedClosed) t.closed.pop_front();
            } catch (...) {
                // Naming a late writer is a courtesy; the refusal itself does not need it.
            }
            t.open.erase(it);
        }
    }
    pool_.release(sink_);  // abi.107: the slot rests, its ctx still the closed call's number
}

BodyLimit::BodyLimit(std::size_t bytes) noexcept : previous_(body_limit) {
    body_limit = bytes;
}

BodyLimit::~BodyLimit() {
    body_limit = previous_;
}

std::size_t BodyLimit::current() noexcept {
    return body_limit;
}

}  // namespace nucleo::plugins_detail
