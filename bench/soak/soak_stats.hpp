// The soak's figures from the hosts' logs (bench/soak): the time to obtain a conversation, in
// all and for a free conversation outside the fault windows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "soak_log.hpp"

namespace nucleo::soak {

/// A span of wall-clock time (µs since the epoch) around an injected fault and its recovery.
struct Window {
    std::int64_t from_us = 0, to_us = 0;
    std::string what;
};

struct ObtainFigures {
    std::size_t all = 0;
    double p50_ms = 0, p99_ms = 0;
    /// Obtains of a conversation no other holder had when asked for nor took while it was asked
    /// for, asked and obtained outside every fault window: what "time to obtain a free
    /// conversation" measures.
    std::size_t free_outside_faults = 0;
    double free_p50_ms = 0, free_p99_ms = 0, free_max_ms = 0;
};

/// `ended_us`: for a host that died holding a conversation, when its hold ends at the latest
/// (its kill plus the lease's TTL); a host missing from it held to the end of the run.
ObtainFigures obtain_figures(const std::vector<HostLog>& logs, const std::vector<Window>& faults,
                             const std::map<std::string, std::int64_t>& ended_us,
                             std::int64_t run_end_us);

}  // namespace nucleo::soak
