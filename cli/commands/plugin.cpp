// `nucleo plugin check PATH-OR-NAME [--family F] [--json] [--timeout SECONDS] [--store-config JSON]
// [--config FILE] [--path DIR]`: the conformance kit (abi.120-abi.127).
//
// The battery runs in a child process (this very `nucleo`, told by NUCLEO_PLUGIN_CHECK_FROM where
// to start), which writes one JSON line per event: the plugin it loaded, each case it begins, each
// finding, each case it ends or skips, and "done". A child that dies by a signal, exits, or stays
// silent for --timeout seconds inside a case gives that case a finding (crashed, exited, hung) and
// a new child goes on with the next case, so one bad slot never hides the others (abi.121). A
// failure before the first case (not a plugin, another ABI major, init refused, a crash or a hang
// while loading) is bad input: one line, exit 2 (abi.123).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/plugin_check.hpp"
#include "config_loading.hpp"
#include "conformance/kit.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::cli {
namespace {

namespace fs = std::filesystem;
using conformance::Finding;

constexpr const char* kFromVariable = "NUCLEO_PLUGIN_CHECK_FROM";
constexpr const char* kNoCapabilitiesVariable = "NUCLEO_PLUGIN_CHECK_NO_CAPABILITIES";
/// abi.131: the slots a case of which hung; the child skips their remaining cases.
constexpr const char* kSkipSlotsVariable = "NUCLEO_PLUGIN_CHECK_SKIP_SLOTS";
/// The run's scratch folder, made and removed by the parent (a store's temporary database).
constexpr const char* kScratchVariable = "NUCLEO_PLUGIN_CHECK_SCRATCH";

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// The child's event channel: its stdout as it started. The plugin's own stdout is moved to a
/// file, so a plugin that prints cannot garble the events and is caught doing it (abi.131).
int events_fd = STDOUT_FILENO;

void emit(const std::function<void(Writer&)>& body) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    body(w);
    w.EndObject();
    std::string line = std::string(buf.GetString()) + "\n";
    for (std::size_t done = 0; done < line.size();) {
        const ssize_t n = ::write(events_fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the parent is gone
        done += static_cast<std::size_t>(n);
    }
}

/// abi.131: what the plugin wrote to stdout since `offset` (the file fd 1 now is), if anything:
/// "N bytes: <the first of them>"; `offset` moves past it.
std::string stdout_written(off_t& offset) {
    std::fflush(stdout);
    std::cout.flush();
    const off_t end = ::lseek(STDOUT_FILENO, 0, SEEK_END);
    if (end <= offset) return {};
    std::string head(static_cast<std::size_t>(std::min<off_t>(end - offset, 80)), '\0');
    const ssize_t n = ::pread(STDOUT_FILENO, head.data(), head.size(), offset);
    head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    for (char& c : head)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    const std::string text = std::to_string(end - offset) + " bytes: \"" + head + "\"";
    offset = end;
    return text;
}

/// Moves fd 1 to an unlinked temporary file and keeps the events on a copy of the old one.
void divert_plugin_stdout() {
    std::cout.flush();
    events_fd = ::dup(STDOUT_FILENO);
    std::FILE* sink = std::tmpfile();
    if (events_fd < 0 || sink == nullptr || ::dup2(::fileno(sink), STDOUT_FILENO) < 0)
        throw Error(ErrorKind::kInternal,
                    std::string("cannot divert stdout: ") + std::strerror(errno));
}

/// {"slot", "case", "expected", "got"}: a finding in the child's lines and in --json alike.
void write_finding(Writer& w, const Finding& f) {
    w.StartObject();
    w.Key("slot");
    w.String(f.slot);
    w.Key("case");
    w.String(f.case_name);
    w.Key("expected");
    w.String(f.expected);
    w.Key("got");
    w.String(f.got);
    if (!f.source.empty()) {
        w.Key("source");
        w.String(f.source);
    }
    w.EndObject();
}

fs::path executable_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error(ErrorKind::kInternal, "cannot tell where this nucleo binary is: " + ec.message());
    return exe.parent_path();
}

/// The child: runs the battery from case `from` on, one JSON line per event.
int run_battery(const fs::path& file, const Args& args, std::size_t from) {
    divert_plugin_stdout();
    off_t stdout_seen = 0;
    conformance::Options options;
    options.plugin = file;
    options.family = args.get("family").value_or("");
    if (std::getenv(kNoCapabilitiesVariable) != nullptr && options.family.empty()) options.family = "none";
    options.store_config = args.get("store-config").value_or("");
    if (const char* scratch = std::getenv(kScratchVariable)) options.scratch = scratch;
    std::set<std::string> skipped_slots;
    if (const char* hung = std::getenv(kSkipSlotsVariable)) {
        std::stringstream list(hung);
        for (std::string slot; std::getline(list, slot, ',');)
            if (!slot.empty()) skipped_slots.insert(slot);
    }
    if (auto dir = args.get("save-requests")) options.save_requests = *dir;
    try {
        options.corpus = conformance::default_corpus_dir(executable_dir());
    } catch (const std::exception& e) {
        throw Error(ErrorKind::kNotFound, e.what());
    }
    std::optional<conformance::Battery> battery;
    try {
        battery.emplace(options);
    } catch (const conformance::BadPlugin& e) {
        emit([&](Writer& w) {
            w.Key("bad");
            w.String(e.what());
        });
        return kExitBadInput;
    }
    if (const std::string written = stdout_written(stdout_seen); !written.empty() && from == 0) {
        emit([&](Writer& w) {
            w.Key("finding");
            write_finding(w, {"abi", "abi/init",
                              "nothing written to stdout while loading, which belongs to the host",
                              written, ""});
        });
    }
    for (std::size_t i = from; i < battery->size(); ++i) {
        emit([&](Writer& w) {
            w.Key("begin");
            w.Uint64(i);
            w.Key("slot");
            w.String(battery->slot(i));
            w.Key("case");
            w.String(battery->name(i));
        });
        if (skipped_slots.count(battery->slot(i)) != 0) {
            emit([&](Writer& w) {
                w.Key("skip");
                w.Uint64(i);
                w.Key("after_hang");
                w.Bool(true);
            });
            continue;
        }
        if (!battery->applies(i)) {
            emit([&](Writer& w) {
                w.Key("skip");
                w.Uint64(i);
            });
            continue;
        }
        std::vector<Finding> findings = battery->run(i);
        // abi.131: stdout is the host's (`ask --json` prints its document there).
        if (const std::string written = stdout_written(stdout_seen); !written.empty())
            findings.push_back({battery->slot(i), battery->slot(i) + "/" + battery->name(i),
                                "nothing written to stdout, which belongs to the host (a command's "
                                "--json document)",
                                written, ""});
        for (const Finding& f : findings) {
            emit([&](Writer& w) {
                w.Key("finding");
                write_finding(w, f);
            });
        }
        emit([&](Writer& w) {
            w.Key("end");
            w.Uint64(i);
        });
    }
    emit([&](Writer& w) {
        w.Key("done");
        w.Uint64(battery->size());
    });
    return kExitOk;
}

/// PATH-OR-NAME as a file: a path as given, a name as nucleo-<name>.so on the search path.
fs::path resolve_target(const std::string& target, const Args& args) {
    if (target.find('/') != std::string::npos || (target.size() > 3 && target.substr(target.size() - 3) == ".so"))
        return fs::path(target);
    std::vector<fs::path> dirs;
    if (auto path = args.get("path")) dirs.emplace_back(*path);
    if (args.has(kConfigOption)) {
        const auto config = load_config(args);
        for (const auto& p : config.plugin_paths()) dirs.push_back(p);
    }
    const PluginLoader loader(dirs);
    std::string searched;
    for (const fs::path& dir : loader.search_path()) {
        const fs::path file = dir / ("nucleo-" + target + ".so");
        std::error_code ec;
        if (fs::is_regular_file(file, ec)) return file;
        searched += (searched.empty() ? "" : ", ") + dir.string();
    }
    throw Error(ErrorKind::kPlugin, "no plugin named '" + target + "' (nucleo-" + target + ".so) in " +
                                        (searched.empty() ? std::string("an empty search path") : searched));
}

struct Report {
    std::string name, version, abi, family;
    std::size_t cases = 0;
    std::size_t failed = 0;
    std::vector<Finding> findings;
    /// abi.131: per slot that hung, the case that hung and how many of its cases were not run.
    std::map<std::string, std::pair<std::string, std::size_t>> skipped;
};

/// The run's scratch folder, removed with everything in it when the check ends.
struct Scratch {
    fs::path dir;
    Scratch() {
        dir = fs::temp_directory_path() / ("nucleo-plugin-check-" + std::to_string(::getpid()));
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir);
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

int run_plugin(const Args& args) {
    const auto& words = args.positionals();
    if (words.empty() || words.front() != "check")
        throw UsageError{"expected `nucleo plugin check PATH-OR-NAME`" +
                         (words.empty() ? std::string() : ", got '" + words.front() + "'")};
    if (words.size() != 2) throw UsageError{"`nucleo plugin check` takes one plugin, a path or a name"};
    if (auto f = args.get("family");
        f && contract::wire_family_from_name(*f) == contract::WireFamily::kUnknown && *f != "none")
        throw UsageError{"--family expects anthropic-messages, openai-chat, bedrock-converse or none, got '" + *f + "'"};
    const std::chrono::milliseconds timeout = timeout_option(args);
    const fs::path file = resolve_target(words[1], args);
    if (const char* from = std::getenv(kFromVariable)) return run_battery(file, args, std::strtoull(from, nullptr, 10));

    std::vector<std::string> child_args = {"plugin", "check", file.string()};
    if (auto dir = args.get("save-requests")) {
        std::error_code ec;
        if (!fs::is_directory(*dir, ec)) throw UsageError{"--save-requests " + *dir + ": not a folder"};
    }
    for (const char* key : {"family", "store-config", "save-requests"})
        if (auto v = args.get(key)) child_args.insert(child_args.end(), {"--" + std::string(key), *v});
    Report report;
    const Scratch scratch;
    std::string hung_slots;  // kSkipSlotsVariable's value
    std::size_t from = 0;
    bool no_capabilities = false;
    bool begun_any = false;
    for (;;) {
        std::optional<std::size_t> open;
        std::string open_slot, open_name, bad;
        bool done = false;
        bool finding_in_open = false;
        std::vector<std::string> env = {std::string(kFromVariable) + "=" + std::to_string(from)};
        if (no_capabilities) env.push_back(std::string(kNoCapabilitiesVariable) + "=1");
        env.push_back(std::string(kScratchVariable) + "=" + scratch.dir.string());
        if (!hung_slots.empty()) env.push_back(std::string(kSkipSlotsVariable) + "=" + hung_slots);
        const ChildRun run = run_child(child_args, env, timeout, [&](const std::string& line) {
            rapidjson::Document d;
            d.Parse(line.data(), line.size());
            if (d.HasParseError() || !d.IsObject()) return;
            if (d.HasMember("bad")) bad = d["bad"].GetString();
            if (d.HasMember("begin")) {
                open = d["begin"].GetUint64();
                open_slot = d["slot"].GetString();
                open_name = d["case"].GetString();
                finding_in_open = false;
                begun_any = true;
            }
            if (d.HasMember("finding")) {
                const auto& f = d["finding"];
                report.findings.push_back({f["slot"].GetString(), f["case"].GetString(),
                                           f["expected"].GetString(), f["got"].GetString(),
                                           f.HasMember("source") ? f["source"].GetString() : ""});
                finding_in_open = true;
            }
            if (d.HasMember("end")) {
                ++report.cases;
                if (finding_in_open) ++report.failed;
                open.reset();
            }
            if (d.HasMember("skip")) {
                if (d.HasMember("after_hang") && open) ++report.skipped[open_slot].second;
                open.reset();
            }
            if (d.HasMember("done")) done = true;
        });
        if (!bad.empty()) {
            std::cerr << "nucleo plugin check: " << bad << "\n";
            return kExitBadInput;
        }
        if (done) break;
        std::string how;
        if (run.timed_out) how = "did not return within " + seconds_text(timeout) + " (killed)";
        else if (WIFSIGNALED(run.status)) how = "crashed: " + describe_signal(WTERMSIG(run.status));
        else how = "the process exited with status " + std::to_string(WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1);
        if (!begun_any) {
            std::string why = run.stderr_text.substr(0, run.stderr_text.find('\n'));
            std::cerr << "nucleo plugin check: plugin " << file.string()
                      << (run.timed_out ? " did not finish loading within " + seconds_text(timeout)
                                        : WIFSIGNALED(run.status) ? " crashed while loading: " + describe_signal(WTERMSIG(run.status))
                                                                  : ": " + (why.empty() ? how : why))
                      << "\n";
            return kExitBadInput;
        }
        if (!open) {
            // Died between cases (the plugin's deinit, or an atexit handler): the last case's.
            report.findings.push_back({"abi", "process", "the child to finish the battery", how});
            ++report.failed;
            break;
        }
        report.findings.push_back({open_slot, open_slot + "/" + open_name, "the call to return", how});
        ++report.cases;
        ++report.failed;
        if (open_slot == "capabilities") no_capabilities = true;
        // abi.131: after a hang, the slot's other cases would each wait the whole timeout too.
        if (run.timed_out && report.skipped.count(open_slot) == 0 && open_slot != "abi") {
            report.skipped[open_slot] = {open_slot + "/" + open_name, 0};
            hung_slots += (hung_slots.empty() ? "" : ",") + open_slot;
        }
        from = *open + 1;
    }

    if (args.has("json")) {
        rapidjson::StringBuffer buf;
        Writer w(buf);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("plugin");
        w.String(file.string());
        w.Key("cases");
        w.Uint64(report.cases);
        w.Key("passed");
        w.Uint64(report.cases - report.failed);
        w.Key("failed");
        w.Uint64(report.failed);
        w.Key("findings");
        w.StartArray();
        for (const Finding& f : report.findings) write_finding(w, f);
        w.EndArray();
        w.Key("skipped");
        w.StartArray();
        for (const auto& [slot, why] : report.skipped) {
            w.StartObject();
            w.Key("slot");
            w.String(slot);
            w.Key("after");
            w.String(why.first);
            w.Key("cases");
            w.Uint64(why.second);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        std::cout << buf.GetString() << "\n";
    } else {
        for (const Finding& f : report.findings)
            std::cout << "FAIL " << f.case_name << " [" << f.slot << "]"
                      << (f.source.empty() ? "" : " (corpus " + f.source + ")") << ": expected "
                      << f.expected << "; got " << f.got << "\n";
        for (const auto& [slot, why] : report.skipped)
            std::cout << "SKIP " << why.second << " more " << (why.second == 1 ? "case" : "cases")
                      << " of " << slot << ": not run after " << why.first << " hung\n";
        std::cout << "plugin " << file.string() << ": " << report.cases << " cases, " << report.cases - report.failed
                  << " passed, " << report.failed << " failed, " << report.findings.size()
                  << (report.findings.size() == 1 ? " finding" : " findings") << "\n";
    }
    return report.findings.empty() ? kExitOk : kExitFailure;
}

}  // namespace

const CommandSpec& plugin_command() {
    static const CommandSpec spec{
        "plugin",
        "check a plugin against the ABI and its wire: `nucleo plugin check PATH-OR-NAME`",
        {json_option(),
         {"--family", "FAMILY",
          "audit against this wire family (anthropic-messages, openai-chat, bedrock-converse, "
          "gemini-generate, openai-responses, none) "
          "instead of the one the plugin declares"},
         {"--timeout", "SECONDS",
          "how long one case may run before it counts as hung (default 10)"},
         {"--store-config", "JSON",
          "the create() config of a store plugin (default: a temporary database file for a store "
          "whose options take a \"path\", else {})"},
         {"--save-requests", "DIR",
          "write the body of each corpus request encode gave to DIR/<case>.json"},
         {"--path", "DIR", "search DIR first for a plugin given by name"},
         {"--config", "FILE", "search the config's plugins.paths for a plugin given by name"}},
        "ACTION",
        "`check` and the plugin: a path to nucleo-<name>.so, or a name found on the search path",
        "Runs the conformance kit in a child process: the ABI, encode over the corpus audited by "
        "the "
        "rule book, decode and decode_event over documented and hostile answers, the store and "
        "summarizer contracts. One line per finding (FAIL case [slot]: expected ...; got ...) and "
        "a "
        "summary. Exit status: 0 nothing failed, 1 findings, 2 bad input (not a plugin, another "
        "ABI "
        "major, a crash or hang while loading).",
        run_plugin};
    return spec;
}

}  // namespace nucleo::cli
