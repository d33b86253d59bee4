// What the bench prints: per ladder level, facts kept by Nucleo and by each baseline at the same
// budget (overall, by kind, by age), tokens saved per fact lost, where the compaction landed
// against its target; then the long session's compactions and their cost. A table, or JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "long_session.hpp"
#include "quality.hpp"

namespace nucleo::quality {

struct Results {
    std::uint64_t seed = 0;
    std::string command;
    std::vector<std::int64_t> session_tokens;
    std::int64_t result_tokens = 0;        ///< of all sessions, in tool results
    std::vector<std::vector<Fact>> facts;  ///< per session
    std::vector<Run> runs;
    LongSession long_session;
    double seconds = 0;
};

void print_table(std::ostream& out, const Results& results);
void print_json(std::ostream& out, const Results& results);

}  // namespace nucleo::quality
