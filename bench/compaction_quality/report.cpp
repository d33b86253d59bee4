// The table and the JSON: see report.hpp.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace nucleo::quality {

namespace {

/// Counts over the runs of one level, per method.
struct Tally {
    int runs = 0;
    int facts = 0;
    double aim_share = 0;  ///< summed; divided by runs when printed
    int within = 0;        ///< runs within ±10% of the target
    int met = 0;           ///< runs at or under the target
    int settled = 0;       ///< runs above the target, under the halfway line to the trigger
    double distance = 0;   ///< summed (after − target) / target
    double seconds = 0;
    std::int64_t summaries = 0;        ///< summaries made, every level of the ladder
    std::int64_t summary_tokens = 0;   ///< what they came back at
    std::int64_t summary_targets = 0;  ///< what they were asked for
    std::int64_t kept[kMethods] = {};
    std::int64_t by_kind[kMethods][kFactKinds] = {};
    std::int64_t kind_total[kFactKinds] = {};
    std::int64_t by_age[kMethods][3] = {};
    std::int64_t age_total[3] = {};
    std::int64_t in_results[kMethods] = {};  ///< kept of the facts planted in tool results
    std::int64_t results_total = 0;
    std::int64_t saved[kMethods] = {};
    int over_budget[kMethods] = {};
};

int age_bucket(double age) {
    return age > 2.0 / 3 ? 0 : (age > 1.0 / 3 ? 1 : 2);
}

std::map<CompactionLevel, Tally> tally(const Results& r) {
    std::map<CompactionLevel, Tally> out;
    for (const Run& run : r.runs) {
        Tally& t = out[run.report.level];
        const std::vector<Fact>& facts = r.facts[run.session];
        t.runs += 1;
        t.facts += static_cast<int>(facts.size());
        t.aim_share += run.aim_share;
        t.seconds += run.seconds;
        const double target = static_cast<double>(run.report.target_tokens);
        const double d = (static_cast<double>(run.report.tokens_after) - target) / target;
        t.distance += d;
        t.within += std::abs(d) <= 0.10 ? 1 : 0;
        t.met += run.report.target_met() ? 1 : 0;
        // compaction.116: the ladder stops above its target once under the halfway line.
        const std::int64_t halfway =
            run.report.target_tokens + (run.report.trigger_tokens - run.report.target_tokens) / 2;
        t.settled += !run.report.target_met() && run.report.tokens_after <= halfway ? 1 : 0;
        for (const CompactionSummary& s : run.report.summaries) {
            t.summaries += 1;
            t.summary_tokens += s.summary_tokens;
            t.summary_targets += s.target_tokens;
        }
        for (std::size_t f = 0; f < facts.size(); ++f) {
            t.kind_total[static_cast<int>(facts[f].kind)] += 1;
            t.age_total[age_bucket(facts[f].age)] += 1;
            t.results_total += facts[f].host == Host::kToolResult ? 1 : 0;
        }
        for (int m = 0; m < kMethods; ++m) {
            const MethodResult& mr = run.methods[static_cast<std::size_t>(m)];
            t.saved[m] += run.report.tokens_before - mr.tokens;
            t.over_budget[m] += mr.reached ? 0 : 1;
            for (std::size_t f = 0; f < facts.size(); ++f) {
                if (!mr.kept[f]) continue;
                t.kept[m] += 1;
                t.by_kind[m][static_cast<int>(facts[f].kind)] += 1;
                t.by_age[m][age_bucket(facts[f].age)] += 1;
                t.in_results[m] += facts[f].host == Host::kToolResult ? 1 : 0;
            }
        }
    }
    return out;
}

std::string pct(std::int64_t part, std::int64_t whole) {
    if (whole == 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%",
                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

std::string per_loss(std::int64_t saved, std::int64_t lost) {
    if (lost == 0) return "no loss";
    return std::to_string(saved / lost);
}

std::string padded(const std::string& s, std::size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

void print_table(std::ostream& out, const Results& r) {
    std::int64_t lo = r.session_tokens.empty() ? 0 : r.session_tokens.front();
    std::int64_t hi = lo;
    std::int64_t sum = 0;
    for (std::int64_t t : r.session_tokens) {
        lo = std::min(lo, t);
        hi = std::max(hi, t);
        sum += t;
    }
    out << "compaction quality: " << r.session_tokens.size() << " sessions (random seed " << r.seed
        << "), " << lo << ".." << hi << " tokens (mean "
        << (r.session_tokens.empty() ? 0 : sum / static_cast<std::int64_t>(r.session_tokens.size()))
        << ", " << pct(r.result_tokens, sum) << " in tool results), "
        << (r.facts.empty() ? 0 : r.facts.front().size())
        << " planted facts each; extractive summarizer, default counter\n"
        << "command: bench_compaction_quality " << r.command << "\n";
    int all_runs = 0;
    int all_within = 0;
    for (const auto& [level, t] : tally(r)) {
        all_runs += t.runs;
        all_within += t.within;
        char head[256];
        std::snprintf(head, sizeof head,
                      "\n== %s: %d runs, %d facts; target %.2f of the session on average; "
                      "ensure_fits %.0f ms a run\n",
                      to_string(level), t.runs, t.facts, t.aim_share / t.runs,
                      1000.0 * t.seconds / t.runs);
        out << head;
        out << padded("method", 27) << padded("kept", 7);
        for (int k = 0; k < kFactKinds; ++k) out << padded(to_string(static_cast<FactKind>(k)), 11);
        out << padded("old", 7) << padded("middle", 7) << padded("recent", 7)
            << padded("results", 8) << padded("texts", 7) << padded("saved/lost", 11)
            << "over budget\n";
        for (int m = 0; m < kMethods; ++m) {
            out << padded(method_name(m), 27) << padded(pct(t.kept[m], t.facts), 7);
            for (int k = 0; k < kFactKinds; ++k)
                out << padded(pct(t.by_kind[m][k], t.kind_total[k]), 11);
            for (int a = 0; a < 3; ++a) out << padded(pct(t.by_age[m][a], t.age_total[a]), 7);
            out << padded(pct(t.in_results[m], t.results_total), 8)
                << padded(pct(t.kept[m] - t.in_results[m], t.facts - t.results_total), 7);
            out << padded(per_loss(t.saved[m], t.facts - t.kept[m]), 11) << t.over_budget[m]
                << "\n";
        }
        char aim[320];
        std::snprintf(aim, sizeof aim,
                      "landing: tokens_after vs target_tokens %+.1f%% on average; within ±10%%: "
                      "%d/%d; at or under the target: %d/%d; above it, under the halfway line "
                      "to the trigger (compaction.116): %d\n",
                      100.0 * t.distance / t.runs, t.within, t.runs, t.met, t.runs, t.settled);
        out << aim << "summaries: " << t.summaries << " made, written at "
            << pct(t.summary_tokens, t.summary_targets) << " of the tokens they were asked for\n";
    }
    out << "\nall levels: within ±10% of the target in " << all_within << "/" << all_runs
        << " runs (" << pct(all_within, all_runs) << ")\n";

    const LongSession& ls = r.long_session;
    std::int64_t given_up = 0;
    std::int64_t summaries = 0;
    std::int64_t saved = 0;
    out << "\n== long session: " << ls.rounds << " rounds, window " << ls.limit
        << " tokens (trigger meant to be crossed at round " << ls.fill_round << ")\n";
    out << "round  level       before   after  target  cache given up  summaries\n";
    for (const Compaction& k : ls.compactions) {
        char line[160];
        std::snprintf(line, sizeof line, "%5d  %-10s %7lld %7lld %7lld  %14lld  %9lld\n", k.round,
                      to_string(k.level), static_cast<long long>(k.tokens_before),
                      static_cast<long long>(k.tokens_after), static_cast<long long>(k.target),
                      static_cast<long long>(k.cache_given_up),
                      static_cast<long long>(k.summary_tokens));
        out << line;
        given_up += k.cache_given_up;
        summaries += k.summary_tokens;
        saved += k.tokens_before - k.tokens_after;
    }
    const int span = ls.first_compaction == 0 ? 0 : ls.rounds - ls.first_compaction + 1;
    char tail[400];
    std::snprintf(tail, sizeof tail,
                  "compactions: %zu in the %d rounds from the first (round %d): %.2f per 10 "
                  "rounds\nspend (summaries %lld + cache rewritten %lld) / saved (before - after, "
                  "%lld) = %s; against the tokens not sent on later calls (%lld): %s\n",
                  ls.compactions.size(), span, ls.first_compaction,
                  span == 0 ? 0.0 : 10.0 * static_cast<double>(ls.compactions.size()) / span,
                  static_cast<long long>(summaries), static_cast<long long>(given_up),
                  static_cast<long long>(saved), pct(summaries + given_up, saved).c_str(),
                  static_cast<long long>(ls.saved_over_calls),
                  pct(summaries + given_up, ls.saved_over_calls).c_str());
    out << tail;
    char took[80];
    std::snprintf(took, sizeof took, "\n(%.1f s)\n", r.seconds);
    out << took;
}

void print_json(std::ostream& out, const Results& r) {
    out << "{\"seed\":" << r.seed << ",\"command\":\"" << r.command << "\",\"levels\":[";
    bool first = true;
    for (const auto& [level, t] : tally(r)) {
        out << (first ? "" : ",") << "{\"level\":\"" << to_string(level) << "\",\"runs\":" << t.runs
            << ",\"facts\":" << t.facts << ",\"within_10pct\":" << t.within
            << ",\"target_met\":" << t.met << ",\"mean_distance\":" << t.distance / t.runs
            << ",\"methods\":[";
        for (int m = 0; m < kMethods; ++m) {
            out << (m ? "," : "") << "{\"method\":\"" << method_name(m)
                << "\",\"kept\":" << t.kept[m] << ",\"saved\":" << t.saved[m]
                << ",\"over_budget\":" << t.over_budget[m] << ",\"by_kind\":{";
            for (int k = 0; k < kFactKinds; ++k) {
                out << (k ? "," : "") << "\"" << to_string(static_cast<FactKind>(k)) << "\":["
                    << t.by_kind[m][k] << "," << t.kind_total[k] << "]";
            }
            out << "}}";
        }
        out << "]}";
        first = false;
    }
    out << "],\"runs\":[";
    for (std::size_t i = 0; i < r.runs.size(); ++i) {
        const Run& run = r.runs[i];
        out << (i ? "," : "") << "{\"session\":" << run.session << ",\"level\":\""
            << to_string(run.report.level) << "\",\"before\":" << run.report.tokens_before
            << ",\"after\":" << run.report.tokens_after
            << ",\"target\":" << run.report.target_tokens << ",\"methods\":[";
        for (std::size_t m = 0; m < run.methods.size(); ++m) {
            const MethodResult& mr = run.methods[m];
            out << (m ? "," : "") << "{\"tokens\":" << mr.tokens
                << ",\"reached\":" << (mr.reached ? "true" : "false")
                << ",\"kept\":" << std::count(mr.kept.begin(), mr.kept.end(), true) << "}";
        }
        out << "]}";
    }
    const LongSession& ls = r.long_session;
    out << "],\"long_session\":{\"rounds\":" << ls.rounds << ",\"limit\":" << ls.limit
        << ",\"first_compaction\":" << ls.first_compaction
        << ",\"saved_over_calls\":" << ls.saved_over_calls << ",\"compactions\":[";
    for (std::size_t i = 0; i < ls.compactions.size(); ++i) {
        const Compaction& k = ls.compactions[i];
        out << (i ? "," : "") << "{\"round\":" << k.round << ",\"level\":\"" << to_string(k.level)
            << "\",\"before\":" << k.tokens_before << ",\"after\":" << k.tokens_after
            << ",\"target\":" << k.target << ",\"cache_given_up\":" << k.cache_given_up
            << ",\"summary_tokens\":" << k.summary_tokens << "}";
    }
    out << "]}}\n";
}

}  // namespace nucleo::quality
