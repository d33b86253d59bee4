// The soak's per-process event log (soak_log.hpp).
#include "soak_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace nucleo::soak {

std::int64_t wall_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::uint64_t fnv1a(std::string_view bytes) {
    std::uint64_t h = 14695981039346656037ULL;
    for (const unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

EventLog::EventLog(const std::string& path)
    : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
}

EventLog::~EventLog() {
    if (fd_ >= 0) ::close(fd_);
}

void EventLog::write(const std::string& line, bool durable) {
    const std::string out = line + "\n";
    std::lock_guard lock(mu_);
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = ::write(fd_, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw std::runtime_error(std::string("event log write: ") + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    if (durable && ::fsync(fd_) != 0) {
        throw std::runtime_error(std::string("event log fsync: ") + std::strerror(errno));
    }
}

HostLog read_host_log(const std::string& path, const std::string& host) {
    HostLog log;
    log.host = host;
    std::ifstream in(path);
    std::string line;
    // The open obtain of each thread, to close at its release.
    std::map<int, std::size_t> open;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // no newline: cut short by a kill
        std::istringstream fields(line);
        std::string word;
        fields >> word;
        if (word == "obtain") {
            ObtainRecord o{host, {}, 0, 0, 0, 0};
            if (!(fields >> o.conversation >> o.requested_us >> o.obtained_us >> o.thread))
                continue;
            open[o.thread] = log.obtains.size();
            log.obtains.push_back(std::move(o));
        } else if (word == "release") {
            std::string conversation;
            std::int64_t t = 0;
            int thread = 0;
            if (!(fields >> conversation >> t >> thread)) continue;
            const auto it = open.find(thread);
            if (it != open.end() && log.obtains[it->second].conversation == conversation) {
                log.obtains[it->second].released_us = t;
                open.erase(it);
            }
        } else if (word == "ack") {
            AckRecord a;
            a.host = host;
            if (!(fields >> a.user >> a.conversation >> a.version >> a.hash >> a.tag)) continue;
            if (a.version == "-") a.version.clear();
            log.acks.push_back(std::move(a));
        } else if (word == "turn") {
            TurnRecord t;
            if (!(fields >> t.conversation >> t.tag >> t.outcome)) continue;
            log.turns.push_back(std::move(t));
        } else if (word == "obtain-failed") {
            ++log.obtain_failures;
        } else if (word == "save-failed") {
            ++log.save_failures;
        }
    }
    return log;
}

}  // namespace nucleo::soak
