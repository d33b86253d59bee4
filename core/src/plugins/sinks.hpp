// Host-owned output sinks for plugin calls (abi.102, abi.107).
//
// A sink's context is never the address of a host object: it is a call number looked up in a
// table that lives as long as the process. While the call runs, the number leads to the call's
// output string; once the call has returned the number is gone from the table, so a plugin that
// kept a copy of the sink and writes to it later (from another call, another thread, a timer) is
// refused with NUCLEO_ERR_PLUGIN and a warning naming the plugin and the slot, and nothing of the
// host is touched.
//
// The nucleo_sink struct itself is not on the host's stack either (abi.107): it is a slot of the
// plugin library's SinkPool, which keeps every slot it ever handed out until the library is
// unloaded. A plugin that kept the POINTER it was given and writes through it after the call
// reads live memory holding the returned call's number, and is refused the same way.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "nucleo/plugin.h"

namespace nucleo::plugins_detail {

/// abi.107: the nucleo_sink structs one plugin library's calls are handed. A slot is handed out
/// for one call and comes back when the call returns, still holding that call's (now closed)
/// number; it is handed out again only once kQuarantine other slots came back after it, so a
/// write through a kept pointer is refused for the next kQuarantine sinks of that library at
/// least. Slots are never freed while the library is loaded (the pool grows to the most sinks
/// open at once plus kQuarantine), and a reused slot only ever serves the same library.
class SinkPool {
  public:
    static constexpr std::size_t kQuarantine = 256;

    SinkPool() = default;
    SinkPool(const SinkPool&) = delete;
    SinkPool& operator=(const SinkPool&) = delete;

    /// A slot for a new call, its struct_size and write set, its ctx left to the caller.
    nucleo_sink* acquire();
    /// Gives back a slot whose call returned (its ctx still names that call).
    void release(nucleo_sink* slot) noexcept;
    /// How many slots the pool holds (handed out or resting), for tests.
    [[nodiscard]] std::size_t size() const;

  private:
    mutable std::mutex mutex_;
    std::deque<nucleo_sink> slots_;  ///< stable addresses: a deque never moves its elements
    std::deque<nucleo_sink*> idle_;  ///< returned slots, the longest resting first
};

/// The sink of one plugin call; writes land in `out` until this object is destroyed. limits.143:
/// with a `limit`, a write that would take `out` past it is refused (NUCLEO_ERR_INVALID_ARGUMENT:
/// the plugin stops) and over_limit() says so, so an oversized body is cut while it is written.
class CallSink {
public:
    CallSink(std::string& out, SinkPool& pool, const std::string& plugin, const char* slot,
             std::size_t limit = 0);
    ~CallSink();
    CallSink(const CallSink&) = delete;
    CallSink& operator=(const CallSink&) = delete;

    [[nodiscard]] const nucleo_sink* get() const noexcept { return sink_; }
    /// A write was refused for passing the limit.
    [[nodiscard]] bool over_limit() const noexcept { return over_; }

private:
    SinkPool& pool_;
    nucleo_sink* sink_ = nullptr;
    std::uint64_t id_ = 0;
    bool over_ = false;
};

/// limits.143: the cap of the request bodies a provider plugin writes on this thread while the
/// object lives (0: none, the default), set by the provider client around its encodes.
class BodyLimit {
public:
    explicit BodyLimit(std::size_t bytes) noexcept;
    ~BodyLimit();
    BodyLimit(const BodyLimit&) = delete;
    BodyLimit& operator=(const BodyLimit&) = delete;
    [[nodiscard]] static std::size_t current() noexcept;

private:
    std::size_t previous_;
};

}  // namespace nucleo::plugins_detail
