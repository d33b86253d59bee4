// Host-owned output sinks for plugin calls (abi.102).
//
// A sink's context is never the address of a host object: it is a call number looked up in a
// table that lives as long as the process. While the call runs, the number leads to the call's
// output string; once the call has returned the number is gone from the table, so a plugin that
// kept a copy of the sink and writes to it later (from another call, another thread, a timer) is
// refused with NUCLEO_ERR_PLUGIN and a warning naming the plugin and the slot, and nothing of the
// host is touched.
#pragma once

#include <cstdint>
#include <string>

#include "nucleo/plugin.h"

namespace nucleo::plugins_detail {

/// The sink of one plugin call; writes land in `out` until this object is destroyed.
class CallSink {
public:
    CallSink(std::string& out, const std::string& plugin, const char* slot);
    ~CallSink();
    CallSink(const CallSink&) = delete;
    CallSink& operator=(const CallSink&) = delete;

    [[nodiscard]] const nucleo_sink* get() const noexcept { return &sink_; }

private:
    nucleo_sink sink_{};
    std::uint64_t id_ = 0;
};

}  // namespace nucleo::plugins_detail
