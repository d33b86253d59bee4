// bench_compaction_quality: what compaction keeps, against the simplest baselines at the same
// budget, on generated coding-agent sessions with planted facts; and how often a long session
// compacts and what that costs (compaction.10-16, compaction.108, compaction.110).
//
//   bench_compaction_quality [--sessions N] [--seed S] [--rounds R] [--facts-per-kind K]
//                            [--plugins DIR] [--json]
//
// Uses the public API only: ContextWindowManager::ensure_fits with the `extractive` summarizer
// loaded as a plugin, and the model's TokenCounter. Deterministic for a random seed. Results and
// the command that made them: bench/RESULTS.md.
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "long_session.hpp"
#include "nucleo/content.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/tokens.hpp"
#include "report.hpp"

namespace {

using namespace nucleo::quality;

struct Options {
    int sessions = 12;
    std::uint64_t seed = 1;
    int rounds = 60;
    int per_kind = 5;
    std::string plugins = NUCLEO_BUILD_PLUGIN_DIR;
    bool json = false;
};

int usage(const std::string& why) {
    std::cerr << why
              << "\nusage: bench_compaction_quality [--sessions N] [--seed S] [--rounds R] "
                 "[--facts-per-kind K] [--plugins DIR] [--json]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    Results results;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= argc) return usage("missing value after " + arg);
        const std::string value = argv[++i];
        if (arg == "--sessions")
            o.sessions = std::atoi(value.c_str());
        else if (arg == "--seed")
            o.seed = std::strtoull(value.c_str(), nullptr, 10);
        else if (arg == "--rounds")
            o.rounds = std::atoi(value.c_str());
        else if (arg == "--facts-per-kind")
            o.per_kind = std::atoi(value.c_str());
        else if (arg == "--plugins")
            o.plugins = value;
        else
            return usage("unknown option " + arg);
    }
    if (o.sessions < 1 || o.rounds < 1 || o.per_kind < 1) return usage("counts must be positive");
    results.command = "--sessions " + std::to_string(o.sessions) + " --seed " +
                      std::to_string(o.seed) + " --rounds " + std::to_string(o.rounds) +
                      " --facts-per-kind " + std::to_string(o.per_kind);
    // The ladder logs each summary over its target (compaction.41); the table counts them instead.
    if (std::getenv("NUCLEO_LOG_LEVEL") == nullptr)
        nucleo::log::set_level(nucleo::log::Level::kError);
    try {
        const auto start = std::chrono::steady_clock::now();
        const nucleo::SummarizerInstance extractive =
            nucleo::PluginLoader({o.plugins}).load("extractive").make_summarizer();
        const nucleo::TokenCounter& counter = nucleo::TokenCounter::for_model(quality_model());
        results.seed = o.seed;
        for (int s = 0; s < o.sessions; ++s) {
            SessionWriter writer(o.seed * 1000003ULL + static_cast<std::uint64_t>(s));
            const std::int64_t size = writer.rng().between(40000, 90000);
            const Session session =
                writer.session("session-" + std::to_string(s), size * 9 / 10, o.per_kind);
            results.session_tokens.push_back(counter.total_tokens(session.conversation));
            for (const nucleo::Message& m : session.conversation.messages()) {
                for (const nucleo::ContentBlock& b : m.blocks) {
                    if (b.is<nucleo::ToolResultBlock>())
                        results.result_tokens += counter.count_block(b);
                }
            }
            results.facts.push_back(session.facts);
            for (double share : aim_shares()) {
                results.runs.push_back(
                    measure(session, static_cast<std::size_t>(s), share, extractive));
            }
        }
        results.long_session = simulate(o.seed * 7919ULL + 17, o.rounds, extractive);
        results.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (o.json)
            print_json(std::cout, results);
        else
            print_table(std::cout, results);
    } catch (const std::exception& e) {
        std::cerr << "bench_compaction_quality: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
