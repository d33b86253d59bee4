// The soak's per-process event log (bench/soak): what each host did, one line per event, read
// back by the coordinator after the run. Acknowledged saves are fsync'd before the host goes on,
// so a host killed with SIGKILL never forgets a save it was told committed; the other lines are
// written unbuffered (they survive SIGKILL in the page cache, not a machine crash).
//
// Lines (fields separated by one space; ids never hold spaces):
//   obtain <conv> <t_requested_us> <t_obtained_us> <thread>
//   release <conv> <t_us> <thread>
//   ack <user> <conv> <version|-> <hash> <tag>     ("-": the save found its write committed
//                                                   already, persistence.103; no version named)
//   turn <conv> <tag> <done|refused|abandoned>
//   obtain-failed <conv> <error kind>
//   save-failed <conv> <tag> <error kind>           (not a refusal: it may have committed)
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::soak {

/// Microseconds since the epoch (CLOCK_REALTIME): comparable across the processes of one machine.
std::int64_t wall_us();

/// FNV-1a, 64 bits: the same in every process (std::hash promises nothing across builds).
std::uint64_t fnv1a(std::string_view bytes);

/// An append-only log file; every method may be called from any thread.
class EventLog {
  public:
    explicit EventLog(const std::string& path);
    ~EventLog();
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;
    /// Appends `line` and a newline in one write(2); `durable`: fsync before returning.
    void write(const std::string& line, bool durable = false);

  private:
    std::mutex mu_;
    int fd_ = -1;
};

struct AckRecord {
    std::string host, user, conversation, version, tag;  ///< version empty: not named
    std::uint64_t hash = 0;
};
struct ObtainRecord {
    std::string host, conversation;
    int thread = 0;
    std::int64_t requested_us = 0, obtained_us = 0;
    std::int64_t released_us = 0;  ///< 0: never released (the host died holding it)
};
struct TurnRecord {
    std::string conversation, tag, outcome;
};

/// What one host's log says.
struct HostLog {
    std::string host;
    std::vector<AckRecord> acks;
    std::vector<ObtainRecord> obtains;
    std::vector<TurnRecord> turns;
    std::size_t obtain_failures = 0;
    std::size_t save_failures = 0;  ///< saves that failed without a refusal
};

/// Reads a host's log; a line cut short by a kill (the last one) is ignored.
HostLog read_host_log(const std::string& path, const std::string& host);

}  // namespace nucleo::soak
