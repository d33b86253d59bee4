// The soak (bench/soak, scripts/soak): N host processes (bench_soak_host) on one PostgreSQL and
// one Redis started by scripts/services on loopback, running agent turns against one
// nucleo-emulator on a shared pool of conversations, so conversations move between processes all
// the time. Faults are injected on a schedule spread over the run: PostgreSQL restarted (fast and
// immediate, alternately), Redis restarted (its leases and fencing counters lost), a host paused
// past its lease (SIGSTOP, then SIGCONT) and a host killed (SIGKILL, then replaced). The hosts
// stop by themselves at the deadline; the coordinator waits for them with a deadline of its own.
// Then it reads the database alone and holds it to the hosts' logs (soak_check.hpp), and reports
// turns/s, saves/s, hand-offs/s and the time to obtain a conversation (soak_stats.hpp).
//
//   bench_soak [--hosts 8] [--seconds 600] [--pool 256] [--users 4] [--pg-restarts 3]
//              [--redis-restarts 2] [--pauses 3] [--kills 2] [--lease-ttl-ms 3000]
//              [--single-seconds 0] [--max-turns N] [--dir build/soak]
//
// --single-seconds S first runs the same load (as many threads as there are hosts) in ONE host
// process for S seconds without faults: the throughput the soak is reported against (give it the
// soak's length: the conversations grow, and a turn's cost with them). --seconds 0 with it: that
// run alone.
// Exit status: 0 clean and every fault injected, 1 a check failed, 2 usage, 77 skipped (no
// PostgreSQL or Redis binaries: scripts/bootstrap installs them).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nucleo/log.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"
#include "soak_check.hpp"
#include "soak_log.hpp"
#include "soak_options.hpp"
#include "soak_processes.hpp"
#include "soak_stats.hpp"

namespace nucleo::soak {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Options {
    int hosts = 8;
    long long seconds = 600;
    int pool = 256;
    int users = 4;
    int pg_restarts = 3, redis_restarts = 2, pauses = 3, kills = 2;
    long long lease_ttl_ms = 3000;
    long long single_seconds = 0;
    long long max_turns = 10'000'000;
    fs::path dir = "build/soak";
};

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

/// The newest installed PostgreSQL's bin folder (as scripts/services picks it); empty if none.
fs::path postgres_bin() {
    fs::path best;
    std::error_code ec;
    for (const auto& d : fs::directory_iterator("/usr/lib/postgresql", ec)) {
        if (fs::exists(d.path() / "bin" / "pg_ctl") && d.path() > best) best = d.path();
    }
    return best.empty() ? best : best / "bin";
}

/// The value of `name` in a scripts/services env file (`export NAME="value"` lines).
std::string env_value(const fs::path& file, const std::string& name) {
    std::ifstream in(file);
    const std::string prefix = "export " + name + "=\"";
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0 && line.size() > prefix.size()) {
            return line.substr(prefix.size(), line.size() - prefix.size() - 1);
        }
    }
    throw std::runtime_error(name + " missing from " + file.string());
}

/// The running servers and emulator, stopped when it goes.
class Services {
  public:
    explicit Services(const fs::path& dir) : dir_(dir / "services") {
        if (run_shell(services() + " start " + quoted(dir_.string()) + " >/dev/null") != 0) {
            throw std::runtime_error("scripts/services start failed");
        }
        pg_url = env_value(dir_ / "env", "NUCLEO_TEST_POSTGRES_URL");
        redis_url = env_value(dir_ / "env", "NUCLEO_TEST_REDIS_URL");
        const fs::path port_file = dir / "emulator.port";
        fs::remove(port_file);
        emulator_ = spawn({NUCLEO_EMULATOR, "--port", "0", "--port-file", port_file.string(),
                           "--exit-with-parent"},
                          (dir / "emulator.log").string());
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (emulator_port == 0 && Clock::now() < deadline) {
            std::ifstream in(port_file);
            if (!(in >> emulator_port)) std::this_thread::sleep_for(milliseconds(10));
        }
        if (emulator_port == 0) {
            stop();  // no destructor runs for a constructor that throws
            throw std::runtime_error("nucleo-emulator did not start (see emulator.log)");
        }
    }
    ~Services() { stop(); }
    Services(const Services&) = delete;
    Services& operator=(const Services&) = delete;

    /// pg_ctl restart in `mode` (fast: sessions closed cleanly; immediate: a crash, recovered
    /// at start), as the postgres user when we are root, as scripts/services runs it.
    bool restart_postgres(const std::string& mode) const {
        std::string command = quoted((postgres_bin() / "pg_ctl").string()) + " -D " +
                              quoted((dir_ / "pg").string()) + " -m " + mode +
                              " -w restart >/dev/null 2>&1";
        if (::geteuid() == 0) command = "runuser -u postgres -- " + command;
        return run_shell(command) == 0;
    }
    bool restart_redis() const {
        return run_shell(services() + " restart-redis " + quoted(dir_.string()) + " >/dev/null") ==
               0;
    }

    std::string pg_url, redis_url;
    int emulator_port = 0;

  private:
    void stop() {
        ::kill(emulator_, SIGTERM);
        (void)wait_until(emulator_, Clock::now() + std::chrono::seconds(10));
        (void)run_shell(services() + " stop " + quoted(dir_.string()) + " >/dev/null");
    }
    static std::string services() {
        return quoted(std::string(NUCLEO_SOURCE_DIR) + "/scripts/services");
    }
    fs::path dir_;
    pid_t emulator_ = -1;
};

/// One slot of the run: the host process in it now, replaced when killed.
struct Slot {
    pid_t pid = -1;
    std::string host_id;
    int generation = 0;
};

/// The hosts of one run (one prefix of conversations), their logs and what was done to them.
class Run {
  public:
    Run(const Options& o, const Services& s, std::string prefix, int processes, int threads,
        long long seconds)
        : o_(o),
          s_(s),
          prefix_(std::move(prefix)),
          threads_(threads),
          until_us_(wall_us() + seconds * 1'000'000),
          started_us_(wall_us()) {
        fs::create_directories(o_.dir / prefix_);
        slots_.resize(static_cast<std::size_t>(processes));
        for (std::size_t i = 0; i < slots_.size(); ++i) start(i);
    }

    void start(std::size_t slot) {
        Slot& s = slots_[slot];
        s.host_id = prefix_ + "-h" + std::to_string(slot) + "g" + std::to_string(s.generation++);
        hosts_.push_back(s.host_id);
        const long long share = (o_.max_turns + static_cast<long long>(slots_.size()) - 1) /
                                static_cast<long long>(slots_.size());
        s.pid = spawn({NUCLEO_SOAK_HOST,
                       "--pg",
                       s_.pg_url,
                       "--redis",
                       s_.redis_url,
                       "--emulator-port",
                       std::to_string(s_.emulator_port),
                       "--host-id",
                       s.host_id,
                       "--log",
                       log_path(s.host_id),
                       "--until-us",
                       std::to_string(until_us_),
                       "--threads",
                       std::to_string(threads_),
                       "--pool",
                       std::to_string(o_.pool),
                       "--users",
                       std::to_string(o_.users),
                       "--prefix",
                       prefix_,
                       "--max-turns",
                       std::to_string(share),
                       "--lease-ttl-ms",
                       std::to_string(o_.lease_ttl_ms),
                       "--seed",
                       std::to_string(hosts_.size())},
                      (o_.dir / prefix_ / (s.host_id + ".out")).string());
    }

    /// A host still running, picked at random (the slot's index), or -1 when none is.
    int pick(std::mt19937& rng) {
        std::vector<int> alive;
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            if (!finished(i)) alive.push_back(static_cast<int>(i));
        }
        return alive.empty() ? -1 : alive[rng() % alive.size()];
    }

    /// Pauses a host past its lease (SIGSTOP, the lease's TTL and a half, SIGCONT).
    bool pause(std::mt19937& rng) {
        const int i = pick(rng);
        if (i < 0) return false;
        const pid_t pid = slots_[static_cast<std::size_t>(i)].pid;
        ::kill(pid, SIGSTOP);
        std::this_thread::sleep_for(milliseconds(o_.lease_ttl_ms * 3 / 2));
        ::kill(pid, SIGCONT);
        return true;
    }

    /// Kills a host (SIGKILL) and starts another in its slot; its holds end when its leases
    /// lapse.
    bool kill(std::mt19937& rng) {
        const int i = pick(rng);
        if (i < 0) return false;
        Slot& s = slots_[static_cast<std::size_t>(i)];
        ::kill(s.pid, SIGKILL);
        (void)wait_until(s.pid, Clock::now() + std::chrono::seconds(10));
        ended_us_[s.host_id] = wall_us() + o_.lease_ttl_ms * 1000;
        if (wall_us() < until_us_) start(static_cast<std::size_t>(i));
        return true;
    }

    /// Waits for every host to stop by itself (at the deadline, after its last turn's saves),
    /// with a deadline of its own; a host still running then is killed and reported.
    void wait_all() {
        const auto deadline =
            Clock::now() + milliseconds((until_us_ - wall_us()) / 1000) + std::chrono::seconds(60);
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            const std::optional<int> code =
                finished(i) ? exit_codes_[slots_[i].pid] : wait_until(slots_[i].pid, deadline);
            if (!code) {
                ::kill(slots_[i].pid, SIGKILL);
                (void)wait_until(slots_[i].pid, Clock::now() + std::chrono::seconds(10));
                failures.push_back(slots_[i].host_id + " did not stop by itself");
            } else if (*code != 0) {
                failures.push_back(slots_[i].host_id + " exited with status " +
                                   std::to_string(*code) + " (see its .out file)");
            }
        }
        ended_at_us = wall_us();
    }

    [[nodiscard]] std::vector<HostLog> logs() const {
        std::vector<HostLog> out;
        for (const auto& h : hosts_) out.push_back(read_host_log(log_path(h), h));
        return out;
    }
    [[nodiscard]] const std::map<std::string, std::int64_t>& ended() const { return ended_us_; }
    [[nodiscard]] std::int64_t until_us() const { return until_us_; }
    [[nodiscard]] std::int64_t started_us() const { return started_us_; }
    [[nodiscard]] const std::string& prefix() const { return prefix_; }
    [[nodiscard]] std::size_t processes_started() const { return hosts_.size(); }

    std::vector<std::string> failures;
    std::int64_t ended_at_us = 0;

  private:
    /// Whether the slot's host ended (recording its status); a host that exits before the
    /// deadline by itself is a failure, reported by wait_all.
    bool finished(std::size_t i) {
        const pid_t pid = slots_[i].pid;
        if (exit_codes_.count(pid)) return true;
        if (auto code = exited(pid)) {
            exit_codes_[pid] = *code;
            return true;
        }
        return false;
    }
    [[nodiscard]] std::string log_path(const std::string& host) const {
        return (o_.dir / prefix_ / (host + ".log")).string();
    }

    const Options& o_;
    const Services& s_;
    std::string prefix_;
    int threads_;
    std::int64_t until_us_, started_us_;
    std::vector<Slot> slots_;
    std::vector<std::string> hosts_;
    std::map<std::string, std::int64_t> ended_us_;
    std::map<pid_t, int> exit_codes_;
};

}  // namespace
}  // namespace nucleo::soak

namespace nucleo::soak {
namespace {

enum class Fault { kPostgresFast, kPostgresImmediate, kRedis, kPause, kKill };

/// The faults in the order they are injected: the kinds interleaved, PostgreSQL restarts
/// alternately fast and immediate.
std::vector<Fault> fault_schedule(const Options& o) {
    std::vector<Fault> out;
    int pg = 0, redis = 0, pauses = 0, kills = 0;
    while (pg < o.pg_restarts || redis < o.redis_restarts || pauses < o.pauses || kills < o.kills) {
        if (pg < o.pg_restarts) {
            out.push_back(pg++ % 2 == 0 ? Fault::kPostgresFast : Fault::kPostgresImmediate);
        }
        if (pauses < o.pauses) {
            ++pauses;
            out.push_back(Fault::kPause);
        }
        if (redis < o.redis_restarts) {
            ++redis;
            out.push_back(Fault::kRedis);
        }
        if (kills < o.kills) {
            ++kills;
            out.push_back(Fault::kKill);
        }
    }
    return out;
}

const char* fault_name(Fault f) {
    switch (f) {
        case Fault::kPostgresFast:
            return "PostgreSQL restart (fast)";
        case Fault::kPostgresImmediate:
            return "PostgreSQL restart (immediate)";
        case Fault::kRedis:
            return "Redis restart";
        case Fault::kPause:
            return "host paused past its lease";
        case Fault::kKill:
            return "host killed";
    }
    return "?";
}

/// The recovery counted in a fault's window after the fault itself ended: the hosts' retries
/// find the server back within it.
constexpr std::int64_t kRecoveryUs = 2'000'000;

/// Injects the schedule over the run, spread over its first 85 %, each fault when its time
/// comes (a schedule, not a wait for an outcome). Returns the windows and counts what it did.
std::vector<Window> inject_faults(const Options& o, const Services& s, Run& run,
                                  std::map<Fault, int>& done) {
    const std::vector<Fault> faults = fault_schedule(o);
    std::vector<Window> windows;
    std::mt19937 rng(20261207);
    const std::int64_t span_us = (run.until_us() - run.started_us()) * 85 / 100;
    for (std::size_t i = 0; i < faults.size(); ++i) {
        const std::int64_t at_us =
            run.started_us() + span_us * static_cast<std::int64_t>(i + 1) /
                                   static_cast<std::int64_t>(faults.size() + 1);
        if (at_us > wall_us())
            std::this_thread::sleep_for(std::chrono::microseconds(at_us - wall_us()));
        Window w{wall_us(), 0, fault_name(faults[i])};
        bool ok = false;
        switch (faults[i]) {
            case Fault::kPostgresFast:
                ok = s.restart_postgres("fast");
                break;
            case Fault::kPostgresImmediate:
                ok = s.restart_postgres("immediate");
                break;
            case Fault::kRedis:
                ok = s.restart_redis();
                break;
            case Fault::kPause:
                ok = run.pause(rng);
                break;
            case Fault::kKill:
                ok = run.kill(rng);
                break;
        }
        w.to_us = wall_us() + kRecoveryUs + (faults[i] == Fault::kKill ? o.lease_ttl_ms * 1000 : 0);
        std::printf("  %6.1f s  %s%s\n", static_cast<double>(w.from_us - run.started_us()) / 1e6,
                    w.what.c_str(), ok ? "" : " -- FAILED to inject");
        std::fflush(stdout);
        if (ok) ++done[faults[i]];
        windows.push_back(std::move(w));
    }
    return windows;
}

/// The figures and verdict of one run.
struct Outcome {
    double seconds = 0;
    std::size_t turns = 0, refused = 0, abandoned = 0, obtain_failures = 0, save_failures = 0;
    ObtainFigures obtain;
    CheckReport check;
    double check_seconds = 0;
    [[nodiscard]] double per_second(std::size_t n) const {
        return seconds > 0 ? static_cast<double>(n) / seconds : 0;
    }
};

Outcome judge(const Options& o, const Services& s, const Run& run,
              const std::vector<Window>& faults) {
    Outcome out;
    out.seconds = static_cast<double>(run.until_us() - run.started_us()) / 1e6;
    const std::vector<HostLog> logs = run.logs();
    for (const HostLog& log : logs) {
        out.obtain_failures += log.obtain_failures;
        out.save_failures += log.save_failures;
        for (const TurnRecord& t : log.turns) {
            if (t.outcome == "done") ++out.turns;
            if (t.outcome == "refused") ++out.refused;
            if (t.outcome == "abandoned") ++out.abandoned;
        }
    }
    out.obtain = obtain_figures(logs, faults, run.ended(), run.ended_at_us);
    PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    const PersistentStore store(
        loader.load("postgres").make_store(R"({"url":")" + s.pg_url + R"("})"));
    const auto checking = Clock::now();
    out.check = check_database(store, Pool{run.prefix(), o.pool, o.users}, logs);
    out.check_seconds = std::chrono::duration<double>(Clock::now() - checking).count();
    return out;
}

void print_outcome(const char* title, const Outcome& r) {
    std::printf("%s\n", title);
    std::printf(
        "  turns %zu (%.1f/s; %zu more refused a save, the lease lost; %zu abandoned), "
        "saves %zu (%.1f/s), hand-offs %zu (%.1f/s), obtains failed %zu, saves failed unsure "
        "(retried) %zu\n",
        r.turns, r.per_second(r.turns), r.refused, r.abandoned, r.check.acks,
        r.per_second(r.check.acks), r.check.handoffs, r.per_second(r.check.handoffs),
        r.obtain_failures, r.save_failures);
    std::printf(
        "  time to obtain: all %zu p50 %.2f ms p99 %.2f ms; a free conversation outside "
        "fault windows %zu p50 %.2f ms p99 %.2f ms max %.2f ms (target p99 < 50 ms)\n",
        r.obtain.all, r.obtain.p50_ms, r.obtain.p99_ms, r.obtain.free_outside_faults,
        r.obtain.free_p50_ms, r.obtain.free_p99_ms, r.obtain.free_max_ms);
    std::printf(
        "  from the database: %zu conversations, %zu versions, %zu turns; acknowledged "
        "saves %zu, lost %zu; forks %zu; stale writes accepted %zu; versions with a "
        "tool_use without its result %zu (checked in %.1f s); versions no host was told of %zu\n",
        r.check.conversations, r.check.versions, r.check.turns, r.check.acks, r.check.lost_acks,
        r.check.forks, r.check.stale_writes, r.check.orphan_tool_uses, r.check_seconds,
        r.check.unacknowledged_versions);
    for (const auto& p : r.check.problems) std::printf("  PROBLEM: %s\n", p.c_str());
    std::fflush(stdout);
}

Options parse(int argc, char** argv) {
    const Args a(argc, argv);
    Options o;
    o.hosts = static_cast<int>(a.number("--hosts", o.hosts));
    o.seconds = a.number("--seconds", o.seconds);
    o.pool = static_cast<int>(a.number("--pool", o.pool));
    o.users = static_cast<int>(a.number("--users", o.users));
    o.pg_restarts = static_cast<int>(a.number("--pg-restarts", o.pg_restarts));
    o.redis_restarts = static_cast<int>(a.number("--redis-restarts", o.redis_restarts));
    o.pauses = static_cast<int>(a.number("--pauses", o.pauses));
    o.kills = static_cast<int>(a.number("--kills", o.kills));
    o.lease_ttl_ms = a.number("--lease-ttl-ms", o.lease_ttl_ms);
    o.single_seconds = a.number("--single-seconds", o.single_seconds);
    o.max_turns = a.number("--max-turns", o.max_turns);
    o.dir = a.text("--dir", o.dir.string());
    const bool single_only = o.seconds == 0 && o.single_seconds > 0;
    if (o.hosts < 1 || (o.seconds < 10 && !single_only) || o.pool < 1 || o.users < 1 ||
        o.lease_ttl_ms < 500) {
        throw std::invalid_argument(
            "need --hosts >= 1, --seconds >= 10 (or 0 with --single-seconds: the single-process "
            "run alone), --pool >= 1, --users >= 1, --lease-ttl-ms >= 500");
    }
    return o;
}

int soak(const Options& o) {
    if (postgres_bin().empty() || run_shell("command -v redis-server >/dev/null 2>&1") != 0) {
        std::printf(
            "bench_soak: SKIPPED: the PostgreSQL or Redis server binaries are absent "
            "(scripts/bootstrap installs them)\n");
        return 77;
    }
    fs::remove_all(o.dir);
    fs::create_directories(o.dir);
    const Services services(o.dir);
    std::vector<std::string> failures;
    std::optional<Outcome> single;
    if (o.single_seconds > 0) {
        Run run(o, services, "single", 1, o.hosts, o.single_seconds);
        run.wait_all();
        single = judge(o, services, run, {});
        print_outcome(("single process, " + std::to_string(o.hosts) + " threads, " +
                       std::to_string(o.single_seconds) + " s, no faults:")
                          .c_str(),
                      *single);
        failures.insert(failures.end(), run.failures.begin(), run.failures.end());
        if (!single->check.clean()) failures.push_back("the single-process run's checks failed");
    }
    if (o.seconds == 0) {
        for (const auto& f : failures) std::printf("FAILED: %s\n", f.c_str());
        return failures.empty() ? 0 : 1;
    }
    std::printf(
        "soak: %d processes, %lld s, pool of %d conversations of %d users, lease TTL "
        "%lld ms; faults:\n",
        o.hosts, o.seconds, o.pool, o.users, o.lease_ttl_ms);
    std::fflush(stdout);
    Run run(o, services, "soak", o.hosts, 1, o.seconds);
    std::map<Fault, int> done;
    const std::vector<Window> windows = inject_faults(o, services, run, done);
    run.wait_all();
    const Outcome soaked = judge(o, services, run, windows);
    print_outcome(("soak, " + std::to_string(o.hosts) + " processes (" +
                   std::to_string(run.processes_started()) + " started):")
                      .c_str(),
                  soaked);
    if (single && single->turns > 0) {
        std::printf("throughput against one process of the same load: turns %.2fx, saves %.2fx\n",
                    soaked.per_second(soaked.turns) / single->per_second(single->turns),
                    soaked.per_second(soaked.check.acks) / single->per_second(single->check.acks));
    }
    const int pg = done[Fault::kPostgresFast] + done[Fault::kPostgresImmediate];
    std::printf(
        "faults injected: PostgreSQL restarts %d (fast %d, immediate %d), Redis restarts "
        "%d, hosts paused %d, hosts killed %d\n",
        pg, done[Fault::kPostgresFast], done[Fault::kPostgresImmediate], done[Fault::kRedis],
        done[Fault::kPause], done[Fault::kKill]);
    failures.insert(failures.end(), run.failures.begin(), run.failures.end());
    if (pg < o.pg_restarts || done[Fault::kRedis] < o.redis_restarts ||
        done[Fault::kPause] < o.pauses || done[Fault::kKill] < o.kills) {
        failures.push_back("fewer faults injected than scheduled");
    }
    if (soaked.turns == 0) failures.push_back("no turn completed");
    if (!soaked.check.clean()) failures.push_back("the checks from the database failed");
    for (const auto& f : failures) std::printf("FAILED: %s\n", f.c_str());
    if (failures.empty()) std::printf("PASSED\n");
    return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace nucleo::soak

int main(int argc, char** argv) {
    try {
        nucleo::log::set_level(nucleo::log::Level::kError);
        return nucleo::soak::soak(nucleo::soak::parse(argc, argv));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "bench_soak: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_soak: %s\n", e.what());
        return 1;
    }
}
