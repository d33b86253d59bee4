// The soak's figures from the hosts' logs (soak_stats.hpp).
#include "soak_stats.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace nucleo::soak {
namespace {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double ms(std::int64_t us) {
    return static_cast<double>(us) / 1000.0;
}

}  // namespace

ObtainFigures obtain_figures(const std::vector<HostLog>& logs, const std::vector<Window>& faults,
                             const std::map<std::string, std::int64_t>& ended_us,
                             std::int64_t run_end_us) {
    struct Hold {
        const ObtainRecord* obtain;
        std::int64_t until_us;
    };
    std::unordered_map<std::string, std::vector<Hold>> holds;
    for (const HostLog& log : logs) {
        const auto ended = ended_us.find(log.host);
        for (const ObtainRecord& o : log.obtains) {
            std::int64_t until = o.released_us;
            if (until == 0) until = ended != ended_us.end() ? ended->second : run_end_us;
            holds[o.conversation].push_back({&o, until});
        }
    }
    const auto in_fault = [&](std::int64_t t) {
        return std::any_of(faults.begin(), faults.end(),
                           [t](const Window& w) { return t >= w.from_us && t <= w.to_us; });
    };
    std::vector<double> all, free;
    for (const auto& [conversation, list] : holds) {
        for (const Hold& h : list) {
            const ObtainRecord& o = *h.obtain;
            const double took = ms(o.obtained_us - o.requested_us);
            all.push_back(took);
            if (in_fault(o.requested_us) || in_fault(o.obtained_us)) continue;
            // Held by another when asked for, or taken by another while this one was asking.
            const bool contended = std::any_of(list.begin(), list.end(), [&](const Hold& x) {
                if (x.obtain == &o) return false;
                const bool held =
                    x.obtain->obtained_us <= o.requested_us && o.requested_us < x.until_us;
                const bool taken =
                    x.obtain->obtained_us > o.requested_us && x.obtain->obtained_us < o.obtained_us;
                return held || taken;
            });
            if (!contended) free.push_back(took);
        }
    }
    ObtainFigures f;
    f.all = all.size();
    f.p50_ms = percentile(all, 0.50);
    f.p99_ms = percentile(all, 0.99);
    f.free_outside_faults = free.size();
    f.free_p50_ms = percentile(free, 0.50);
    f.free_p99_ms = percentile(free, 0.99);
    f.free_max_ms = free.empty() ? 0 : *std::max_element(free.begin(), free.end());
    return f;
}

}  // namespace nucleo::soak
