// The soak's verdict from the database alone (bench/soak): after the hosts stopped, every
// conversation of the pool is read back from PostgreSQL, version by version, and held to what
// the hosts' logs say they were told.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nucleo/store.hpp"
#include "soak_log.hpp"

namespace nucleo::soak {

/// The pool the hosts worked on: conversation k is `<prefix>-conv-k` of `<prefix>-user-(k%users)`.
struct Pool {
    std::string prefix = "soak";
    int size = 256;
    int users = 4;
};

struct CheckReport {
    std::size_t conversations = 0;  ///< of the pool, those the database holds
    std::size_t versions = 0;
    std::size_t turns = 0;     ///< the soak's turns in the conversations' latest versions
    std::size_t handoffs = 0;  ///< consecutive turns of a conversation by different hosts
    std::size_t acks = 0;      ///< acknowledged saves in the hosts' logs
    /// Versions no log acknowledges by name: a write committed whose answer its host never saw
    /// (killed, or the connection cut: persistence.103), or one acknowledged unnamed. Not a fault.
    std::size_t unacknowledged_versions = 0;
    /// An acknowledged save whose version is missing, or holds another document.
    std::size_t lost_acks = 0;
    /// Version ids that are not 1..n, or a version whose messages do not extend its
    /// predecessor's (a write from a base other than the head was accepted).
    std::size_t forks = 0;
    /// A turn written from a stale view: its question's `base=` is not its position in the
    /// conversation (the writer had not seen every message before it), or a turn twice.
    std::size_t stale_writes = 0;
    /// Versions holding a tool_use with no tool_result for it after it.
    std::size_t orphan_tool_uses = 0;
    std::vector<std::string> problems;  ///< the first few, in words

    [[nodiscard]] bool clean() const {
        return lost_acks == 0 && forks == 0 && stale_writes == 0 && orphan_tool_uses == 0;
    }
};

CheckReport check_database(const PersistentStore& store, const Pool& pool,
                           const std::vector<HostLog>& logs);

}  // namespace nucleo::soak
