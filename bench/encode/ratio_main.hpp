// Shared by the bench/encode programs (target: encode ≤ 2× rapidjson's Writer for
// the same output body, in one run): a console reporter that keeps each benchmark's CPU time per
// iteration, and a main() body that runs the benchmarks and prints encode / Writer ratios for the
// pairs it is given. Header-only; each program includes it once.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nucleo::bench {

/// Keeps each benchmark's CPU time per iteration so the ratio of this very run can be printed:
/// the median when repetitions are asked for (--benchmark_repetitions=N), else the one run.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            const std::string name = r.run_name.str();
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
                cpu_ns[name] = r.GetAdjustedCPUTime();
                from_median.insert(name);
            } else if (r.run_type == Run::RT_Iteration && r.iterations > 0 &&
                       from_median.count(name) == 0) {
                cpu_ns[name] = r.GetAdjustedCPUTime();
            }
        }
        ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, double> cpu_ns;
    std::set<std::string> from_median;
};

/// Runs the benchmarks selected on the command line, then prints "ENCODE / WRITER = R" for each
/// (encode benchmark, Writer benchmark) pair that ran. Returns main's exit status.
/// A further ratio to print after the runs: numerator / denominator against its own target.
struct Ratio {
    std::string numerator;
    std::string denominator;
    double target;
};

inline int run_with_ratios(int argc, char** argv,
                           const std::vector<std::pair<std::string, std::string>>& pairs,
                           const std::vector<Ratio>& others = {}) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    for (const auto& [encode, writer] : pairs) {
        const auto e = reporter.cpu_ns.find(encode);
        const auto w = reporter.cpu_ns.find(writer);
        if (e != reporter.cpu_ns.end() && w != reporter.cpu_ns.end() && w->second > 0) {
            std::printf("%s / %s = %.2f (target <= 2.00)\n", encode.c_str(), writer.c_str(),
                        e->second / w->second);
        }
    }
    for (const Ratio& r : others) {
        const auto n = reporter.cpu_ns.find(r.numerator);
        const auto d = reporter.cpu_ns.find(r.denominator);
        if (n != reporter.cpu_ns.end() && d != reporter.cpu_ns.end() && d->second > 0) {
            std::printf("%s / %s = %.2f (target <= %.2f)\n", r.numerator.c_str(),
                        r.denominator.c_str(), n->second / d->second, r.target);
        }
    }
    benchmark::Shutdown();
    return 0;
}

}  // namespace nucleo::bench
