// bench/peers: what it costs Nucleo to build a request, beside the Vercel AI SDK building the
// same conversation, in one run. Targets (bench/RESULTS.md): the cold request at 2,000 messages
// <= 0.5x the AI SDK's doGenerate (body building, to the fetch) and <= 3x rapidjson's Writer of
// the same body; on a growing conversation the next request at 20,000 messages within 3x of its
// cost at 200 and <= 10x a memcpy of its body.
//
// The conversation is the one bench/peers/conversation.json describes (20 tools, a tool round
// every four messages, the system text and the last three user questions cache-marked); the peer
// script ai_sdk_peer.mjs reads the same file. Sizes: 200, 2,000 and 20,000 messages of history,
// then the user's next question.
//
// Measured here, per request, wall and process CPU time (the peer's CPU figure is node's process
// CPU too), medians of the repetitions:
//   BM_NucleoCold/N      ProviderClient::build_request on a conversation that never rendered:
//                        prepare, the request document, the plugin's encode through the ABI,
//                        the audit, the body as it would be sent (the public path, no network)
//   BM_NucleoGrowing/N   the conversation rendered the call before; append one turn (the model's
//                        tool call, the tool's result, the answer, the next question) and build
//                        the next request. Every 4 calls the conversation goes back to N
//                        messages (not timed), so it stays within 16 messages of its size.
//                        The body is what the transport sends: the per-turn cache's pieces
//                        (caching.115), never joined into one string.
//   BM_NucleoGrowingRead/N  the same, and the host then reads the body as one string (the
//                        join a host that reads the body pays, once per request)
//   BM_WriterSameBody/N  rapidjson's Writer writing Nucleo's body from a ready DOM
//   BM_MemcpyBody/N      a memcpy of that body
// The two Nucleo benchmarks time themselves (manual time: the copy of the conversation and the
// resets are left out) and report their CPU time as the cpu_ms counter.
// The peer (node on ai_sdk_peer.mjs) runs once before the benchmarks; its medians become
// counters of BM_NucleoCold and BM_NucleoGrowing and the table printed at the end.
//
// Options beside Google Benchmark's: --peer_runs=N (9), --peer_warmup=N (3), --no_peer,
// --dump_bodies=DIR (writes Nucleo's body of each size to DIR/nucleo_N.json and has the peer write
// its own to DIR/ai_sdk_N.json).
// Without --benchmark_repetitions the program repeats each benchmark 9 times and shows the
// aggregates.
#include <benchmark/benchmark.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace {

using nucleo::ContentBlock;
using nucleo::ConversationContext;
using nucleo::Message;

constexpr std::array<std::int64_t, 3> kSizes = {200, 2000, 20000};
constexpr int kCycle = 4;  // conversation.json's cycle: question, tool call, tool result, answer

// ---- the conversation of conversation.json ----

rapidjson::Document load_description() {
    const std::string path = NUCLEO_SOURCE_DIR "/bench/peers/conversation.json";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("peer_bench: cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    rapidjson::Document d;
    d.Parse(text.str().c_str());
    if (d.HasParseError() || !d.IsObject())
        throw std::runtime_error("peer_bench: " + path + " is not a JSON object");
    return d;
}

const rapidjson::Document& description() {
    static const rapidjson::Document d = load_description();
    return d;
}

std::string str(const rapidjson::Value& v, const char* key) {
    if (!v.IsObject() || !v.HasMember(key) || !v[key].IsString())
        throw std::runtime_error(std::string("peer_bench: conversation.json: missing string '") + key + "'");
    return {v[key].GetString(), v[key].GetStringLength()};
}

/// The template with {i}, {r}, {t} and {k} replaced (conversation.json's placeholders).
std::string fill(std::string_view tpl, const std::map<char, std::int64_t>& vars) {
    std::string out;
    out.reserve(tpl.size() + 16);
    for (std::size_t p = 0; p < tpl.size(); ++p) {
        if (tpl[p] == '{' && p + 2 < tpl.size() && tpl[p + 2] == '}' && vars.count(tpl[p + 1]) != 0) {
            out += std::to_string(vars.at(tpl[p + 1]));
            p += 2;
        } else {
            out += tpl[p];
        }
    }
    return out;
}

std::map<char, std::int64_t> vars_of(std::int64_t i) {
    const std::int64_t r = i / kCycle;
    return {{'i', i}, {'r', r}, {'t', r % description()["tools"]["count"].GetInt64()}};
}

std::string tool_input(const rapidjson::Value& input, const std::map<char, std::int64_t>& vars) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.StartObject();
    for (const auto& m : input.GetObject()) {
        w.Key(m.name.GetString(), m.name.GetStringLength());
        if (m.value.IsString()) {
            const std::string s = fill(m.value.GetString(), vars);
            w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
        } else {
            m.value.Accept(w);
        }
    }
    w.EndObject();
    return {b.GetString(), b.GetSize()};
}

/// Message i of the cycle, cache-marked when `cached` (the mark anchors on its text, caching.4).
Message message(std::int64_t i, bool cached) {
    const rapidjson::Value& entry = description()["cycle"][static_cast<rapidjson::SizeType>(i % kCycle)];
    const auto vars = vars_of(i);
    const std::string role = str(entry, "role");
    Message m;
    m.cache = cached;
    if (role == "user") {
        m.blocks.emplace_back(nucleo::TextBlock{fill(str(entry, "text"), vars)});
    } else if (role == "assistant") {
        m.direction = nucleo::Direction::kIncoming;
        m.blocks.emplace_back(nucleo::TextBlock{fill(str(entry, "text"), vars)});
        if (entry.HasMember("tool_call")) {
            const rapidjson::Value& call = entry["tool_call"];
            m.blocks.emplace_back(nucleo::ToolUseBlock{fill(str(call, "id"), vars), fill(str(call, "name"), vars),
                                                       tool_input(call["input"], vars)});
        }
    } else if (role == "tool") {
        nucleo::ToolResultBlock r;
        r.tool_use_id = fill(str(entry, "tool_call_id"), vars);
        r.content.emplace_back(nucleo::TextBlock{fill(str(entry, "result"), vars)});
        m.blocks.emplace_back(std::move(r));
    } else {
        throw std::runtime_error("peer_bench: conversation.json: cycle role '" + role + "'");
    }
    return m;
}

/// N messages of history and the next question; the last three questions carry cache marks.
ConversationContext conversation(std::int64_t n) {
    const rapidjson::Document& d = description();
    ConversationContext c("peer-bench", "bench-user");
    c.put_main_objective("task", str(d, "system"));
    c.set_cache_main_objective(d["cache_marks"]["system"].GetBool());
    c.set_output(d["max_tokens"].GetInt64());
    c.set_depth(nucleo::Depth::kImmediate);  // no thinking: the peer's request has none
    const rapidjson::Value& tools = d["tools"];
    for (std::int64_t k = 0; k < tools["count"].GetInt64(); ++k) {
        nucleo::ToolDefinitionBlock def;
        def.name = fill(str(tools, "name"), {{'k', k}});
        def.description = fill(str(tools, "description"), {{'k', k}});
        rapidjson::StringBuffer schema;
        rapidjson::Writer<rapidjson::StringBuffer> w(schema);
        tools["input_schema"].Accept(w);
        def.schema_json.assign(schema.GetString(), schema.GetSize());
        c.add_tool(std::move(def));
    }
    std::set<std::int64_t> marks;
    for (std::int64_t q = 0; q < d["cache_marks"]["last_user_questions"].GetInt64(); ++q) marks.insert(n - kCycle * q);
    for (std::int64_t i = 0; i <= n; ++i) c.add_message(message(i, marks.count(i) != 0));
    return c;
}

nucleo::ModelSpec model() {
    nucleo::ModelSpec m;
    m.id = "claude-peer-bench";
    m.provider = "anthropic";
    m.wire_model = str(description(), "model");
    m.max_context_tokens = 10'000'000;  // 20,000 messages are past a real window: no refusal here
    m.max_output_tokens = 64000;
    m.supports_caching = true;
    m.native_tools = true;
    return m;
}

nucleo::ProviderClient& client() {
    static nucleo::ProviderClient c = [] {
        nucleo::ProviderConfig config;
        config.name = "anthropic";
        config.plugin = "anthropic";
        config.base_url = "http://127.0.0.1:9";  // never reached: nothing is sent
        config.credentials.api_key = "bench";
        nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        return nucleo::ProviderClient(config, loader.load("anthropic").make_provider("{}"));
    }();
    return c;
}

const ConversationContext& base(std::int64_t n) {
    static std::map<std::int64_t, ConversationContext> cache;
    auto it = cache.find(n);
    if (it == cache.end()) it = cache.emplace(n, conversation(n)).first;
    return it->second;
}

/// The body Nucleo sends for the cold request of size n (built once).
const std::string& body(std::int64_t n) {
    static std::map<std::int64_t, std::string> bodies;
    auto it = bodies.find(n);
    if (it == bodies.end()) {
        ConversationContext c = base(n);
        it = bodies.emplace(n, client().build_request(c, model()).body).first;
    }
    return it->second;
}

using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
/// The process's CPU time, as the peer measures node's (process.cpuUsage).
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- the peer ----

/// What a body carries: its messages, tools and cache_control marks.
struct Carried {
    std::int64_t messages = 0, tools = 0, cache_marks = 0;
    bool operator==(const Carried&) const = default;
};
struct PeerSize {
    double body_bytes = 0, do_generate_body_ms = 0, do_generate_body_cpu_ms = 0, do_generate_ms = 0,
           generate_text_ms = 0, growing_body_ms = 0, growing_body_cpu_ms = 0;
    Carried carried;
};
struct Peer {
    std::string versions;
    std::map<std::int64_t, PeerSize> sizes;
    std::string error;  // why there are no figures
};
Peer g_peer;

Peer run_peer(int runs, int warmup, const std::string& dump_dir) {
    Peer p;
    std::string cmd = "node " NUCLEO_SOURCE_DIR "/bench/peers/ai_sdk_peer.mjs --runs " + std::to_string(runs) +
                      " --warmup " + std::to_string(warmup) + " --sizes ";
    if (!dump_dir.empty()) cmd = cmd.insert(cmd.find(" --runs"), " --dump-body '" + dump_dir + "'");
    for (std::size_t s = 0; s < kSizes.size(); ++s) cmd += (s ? "," : "") + std::to_string(kSizes[s]);
    std::fprintf(stderr, "peer: %s\n", cmd.c_str());
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) {
        p.error = "cannot start node";
        return p;
    }
    std::string out;
    std::array<char, 4096> buf{};
    for (std::size_t got; (got = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0;) out.append(buf.data(), got);
    const int status = pclose(pipe.release());
    if (status != 0) {
        p.error = "node exited with status " + std::to_string(status) + " (scripts/fetch-bench-peers installs the peer)";
        return p;
    }
    rapidjson::Document d;
    d.Parse(out.c_str(), out.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("sizes") || !d["sizes"].IsArray()) {
        p.error = "the peer printed no JSON document";
        return p;
    }
    rapidjson::StringBuffer v;
    rapidjson::Writer<rapidjson::StringBuffer> w(v);
    d["versions"].Accept(w);
    p.versions.assign(v.GetString(), v.GetSize());
    for (const auto& s : d["sizes"].GetArray()) {
        PeerSize ps;
        ps.body_bytes = s["body_bytes"].GetDouble();
        ps.do_generate_body_ms = s["do_generate_body_ms"].GetDouble();
        ps.do_generate_body_cpu_ms = s["do_generate_body_cpu_ms"].GetDouble();
        ps.growing_body_cpu_ms = s["growing_body_cpu_ms"].GetDouble();
        ps.carried = {s["body"]["messages"].GetInt64(), s["body"]["tools"].GetInt64(),
                      s["body"]["cache_marks"].GetInt64()};
        ps.do_generate_ms = s["do_generate_ms"].GetDouble();
        ps.generate_text_ms = s["generate_text_ms"].GetDouble();
        ps.growing_body_ms = s["growing_body_ms"].GetDouble();
        p.sizes[s["messages"].GetInt64()] = ps;
    }
    return p;
}

/// The peer's figures beside Nucleo's (wall and CPU ms per request) as counters.
void peer_counters(benchmark::State& state, double wall_ms, double cpu_ms, bool growing) {
    state.counters["wall_ms"] = wall_ms;
    state.counters["cpu_ms"] = cpu_ms;
    const auto it = g_peer.sizes.find(state.range(0));
    if (it == g_peer.sizes.end()) return;
    const PeerSize& p = it->second;
    if (growing) {
        state.counters["sdk_grow_ms"] = p.growing_body_ms;
        state.counters["x_sdk_grow"] = wall_ms / p.growing_body_ms;
        state.counters["x_sdk_grow_cpu"] = cpu_ms / p.growing_body_cpu_ms;
        return;
    }
    state.counters["sdk_body_ms"] = p.do_generate_body_ms;
    state.counters["sdk_genText_ms"] = p.generate_text_ms;
    state.counters["x_sdk_body"] = wall_ms / p.do_generate_body_ms;
    state.counters["x_sdk_body_cpu"] = cpu_ms / p.do_generate_body_cpu_ms;
}

// ---- the benchmarks ----

void BM_NucleoCold(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    const ConversationContext& original = base(n);
    double wall = 0, cpu = 0;
    std::size_t bytes = 0;
    for (auto _ : state) {
        ConversationContext c = original;  // never rendered: the first render of this instance
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        nucleo::HttpRequest request = client().build_request(c, model());
        const auto t1 = Clock::now();
        const double c1 = cpu_seconds();
        benchmark::DoNotOptimize(request.body.size());
        bytes = request.body.size();
        wall += seconds(t1 - t0);
        cpu += c1 - c0;
        state.SetIterationTime(seconds(t1 - t0));
    }
    const double iterations = static_cast<double>(state.iterations());
    state.counters["body_KB"] = static_cast<double>(bytes) / 1e3;
    peer_counters(state, wall / iterations * 1e3, cpu / iterations * 1e3, false);
}

/// `read_whole`: the host also reads the body as one string (joins its pieces), timed.
void nucleo_growing(benchmark::State& state, bool read_whole) {
    const std::int64_t n = state.range(0);
    constexpr int kCallsPerReset = 4;
    std::unique_ptr<ConversationContext> c;
    std::int64_t next = 0;
    int calls = kCallsPerReset;
    double wall = 0, cpu = 0;
    std::size_t bytes = 0;
    for (auto _ : state) {
        if (calls == kCallsPerReset) {  // back to N messages, rendered once (not timed)
            c = std::make_unique<ConversationContext>(base(n));
            (void)client().build_request(*c, model());
            next = n + 1;
            calls = 0;
        }
        ++calls;
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        for (const std::int64_t end = next + kCycle; next < end; ++next) c->add_message(message(next, false));
        nucleo::HttpRequest request = client().build_request(*c, model());
        if (read_whole) benchmark::DoNotOptimize(request.body.view().data());
        const auto t1 = Clock::now();
        const double c1 = cpu_seconds();
        benchmark::DoNotOptimize(request.body.size());
        bytes = request.body.size();
        wall += seconds(t1 - t0);
        cpu += c1 - c0;
        state.SetIterationTime(seconds(t1 - t0));
    }
    const double iterations = static_cast<double>(state.iterations());
    state.counters["body_KB"] = static_cast<double>(bytes) / 1e3;
    peer_counters(state, wall / iterations * 1e3, cpu / iterations * 1e3, true);
}

void BM_NucleoGrowing(benchmark::State& state) {
    nucleo_growing(state, false);
}
void BM_NucleoGrowingRead(benchmark::State& state) {
    nucleo_growing(state, true);
}

void BM_WriterSameBody(benchmark::State& state) {
    rapidjson::Document dom;
    const std::string& sent = body(state.range(0));
    dom.Parse(sent.c_str(), sent.size());
    std::size_t bytes = 0;
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        dom.Accept(w);
        benchmark::DoNotOptimize(buffer.GetString());
        bytes = buffer.GetSize();
    }
    state.counters["body_KB"] = static_cast<double>(bytes) / 1e3;
}

void BM_MemcpyBody(benchmark::State& state) {
    const std::string& sent = body(state.range(0));
    std::vector<char> to(sent.size());
    for (auto _ : state) {
        std::memcpy(to.data(), sent.data(), sent.size());
        benchmark::DoNotOptimize(to.data());
        benchmark::ClobberMemory();
    }
    state.counters["body_KB"] = static_cast<double>(sent.size()) / 1e3;
}

void sizes(benchmark::internal::Benchmark* b) {
    for (const std::int64_t n : kSizes) b->Arg(n);
    b->Unit(benchmark::kMillisecond);
}
// Manual time: only the request is timed (the copy of the conversation, the resets are not).
BENCHMARK(BM_NucleoCold)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_NucleoGrowing)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_NucleoGrowingRead)->Apply(sizes)->UseManualTime();
BENCHMARK(BM_WriterSameBody)->Apply(sizes);
BENCHMARK(BM_MemcpyBody)->Apply(sizes);

// ---- the report ----

/// Keeps each benchmark's wall and CPU ms per request: the median when repeated. Wall is the
/// manual time where the benchmark times itself; CPU its cpu_ms counter when it has one.
class MedianReporter : public benchmark::ConsoleReporter {
  public:
    struct Figures {
        double wall_ms = 0, cpu_ms = 0;
    };
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            std::string name = r.run_name.str();
            if (const auto cut = name.find("/manual_time"); cut != std::string::npos) name.erase(cut);
            const double unit = unit_ms(r.time_unit);
            Figures f{r.GetAdjustedRealTime() / unit, r.GetAdjustedCPUTime() / unit};
            if (const auto c = r.counters.find("cpu_ms"); c != r.counters.end()) f.cpu_ms = c->second.value;
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
                figures_[name] = f;
                from_median_.insert(name);
            } else if (r.run_type == Run::RT_Iteration && r.iterations > 0 && from_median_.count(name) == 0) {
                figures_[name] = f;
            }
        }
        ConsoleReporter::ReportRuns(runs);
    }
    /// The figures of BM/n, zeros when it did not run.
    [[nodiscard]] Figures at(const char* bm, std::int64_t n) const {
        const auto it = figures_.find(std::string(bm) + "/" + std::to_string(n));
        return it == figures_.end() ? Figures{} : it->second;
    }

  private:
    static double unit_ms(benchmark::TimeUnit u) {
        switch (u) {
            case benchmark::kNanosecond: return 1e6;
            case benchmark::kMicrosecond: return 1e3;
            case benchmark::kMillisecond: return 1;
            case benchmark::kSecond: return 1e-3;
        }
        return 1;
    }
    std::map<std::string, Figures> figures_;
    std::set<std::string> from_median_;
};

double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; }

void verdict(const std::string& what, double wall, double cpu, double target) {
    const auto word = [target](double r) { return r <= 0 ? "n/a" : r <= target ? "met" : "MISSED"; };
    std::printf("%-58s wall %7.2f (%s)  cpu %7.2f (%s)  target <= %.2f\n", what.c_str(), wall, word(wall), cpu,
                word(cpu), target);
}

/// What Nucleo's body of size n carries (the peer's is checked against it).
Carried carried(std::int64_t n) {
    rapidjson::Document d;
    d.Parse(body(n).c_str(), body(n).size());
    Carried c;
    if (d.IsObject() && d.HasMember("messages") && d["messages"].IsArray()) c.messages = d["messages"].Size();
    if (d.IsObject() && d.HasMember("tools") && d["tools"].IsArray()) c.tools = d["tools"].Size();
    for (std::size_t at = 0; (at = body(n).find("\"cache_control\":", at)) != std::string::npos; ++at) ++c.cache_marks;
    return c;
}

void print_table(const MedianReporter& r) {
    std::printf("\nmedian ms per request, wall / cpu (peer %s)\n",
                g_peer.error.empty() ? g_peer.versions.c_str() : g_peer.error.c_str());
    std::printf("%8s | %15s %15s | %15s %9s %9s %15s | %15s %15s | %8s %8s\n", "messages", "nucleo cold",
                "nucleo growing", "sdk body", "doGen", "genText", "sdk growing", "writer", "memcpy", "body KB",
                "sdk KB");
    const auto pair = [](MedianReporter::Figures f) {
        char b[32];
        std::snprintf(b, sizeof b, "%.3f/%.3f", f.wall_ms, f.cpu_ms);
        return std::string(b);
    };
    for (const std::int64_t n : kSizes) {
        const PeerSize p = g_peer.sizes.count(n) ? g_peer.sizes.at(n) : PeerSize{};
        std::printf("%8lld | %15s %15s | %15s %9.3f %9.3f %15s | %15s %15s | %8.1f %8.1f\n", static_cast<long long>(n),
                    pair(r.at("BM_NucleoCold", n)).c_str(), pair(r.at("BM_NucleoGrowing", n)).c_str(),
                    pair({p.do_generate_body_ms, p.do_generate_body_cpu_ms}).c_str(), p.do_generate_ms,
                    p.generate_text_ms, pair({p.growing_body_ms, p.growing_body_cpu_ms}).c_str(),
                    pair(r.at("BM_WriterSameBody", n)).c_str(), pair(r.at("BM_MemcpyBody", n)).c_str(),
                    static_cast<double>(body(n).size()) / 1e3, p.body_bytes / 1e3);
        const Carried ours = carried(n);
        if (g_peer.sizes.count(n) && !(ours == p.carried)) {
            std::printf("         WARNING: the bodies differ: nucleo %lld messages, %lld tools, %lld cache marks; "
                        "the AI SDK %lld, %lld, %lld\n",
                        static_cast<long long>(ours.messages), static_cast<long long>(ours.tools),
                        static_cast<long long>(ours.cache_marks), static_cast<long long>(p.carried.messages),
                        static_cast<long long>(p.carried.tools), static_cast<long long>(p.carried.cache_marks));
        }
    }
    const auto cold = r.at("BM_NucleoCold", 2000);
    const PeerSize sdk = g_peer.sizes.count(2000) ? g_peer.sizes.at(2000) : PeerSize{};
    const auto writer = r.at("BM_WriterSameBody", 2000);
    const auto grow_small = r.at("BM_NucleoGrowing", 200), grow_large = r.at("BM_NucleoGrowing", 20000);
    const auto memcpy_large = r.at("BM_MemcpyBody", 20000);
    std::printf("\n");
    verdict("cold @2,000: Nucleo / AI SDK doGenerate body", ratio(cold.wall_ms, sdk.do_generate_body_ms),
            ratio(cold.cpu_ms, sdk.do_generate_body_cpu_ms), 0.5);
    verdict("cold @2,000: Nucleo / rapidjson Writer of the same body", ratio(cold.wall_ms, writer.wall_ms),
            ratio(cold.cpu_ms, writer.cpu_ms), 3);
    verdict("growing: next request @20,000 / @200", ratio(grow_large.wall_ms, grow_small.wall_ms),
            ratio(grow_large.cpu_ms, grow_small.cpu_ms), 3);
    verdict("growing @20,000: Nucleo / memcpy of its body", ratio(grow_large.wall_ms, memcpy_large.wall_ms),
            ratio(grow_large.cpu_ms, memcpy_large.cpu_ms), 10);
    // For the record: a host that also reads each body as one string pays its join (caching.115).
    const auto read_small = r.at("BM_NucleoGrowingRead", 200),
               read_large = r.at("BM_NucleoGrowingRead", 20000);
    std::printf(
        "growing, the body read whole: @200 %.3f ms, @20,000 %.3f ms (x%.2f; %.2f x memcpy)\n",
        read_small.wall_ms, read_large.wall_ms, ratio(read_large.wall_ms, read_small.wall_ms),
        ratio(read_large.wall_ms, memcpy_large.wall_ms));
}

}  // namespace

int main(int argc, char** argv) {
    int peer_runs = 9, peer_warmup = 3;
    bool peer = true, repetitions = false;
    std::string dump_dir;
    std::vector<char*> args;
    for (int a = 0; a < argc; ++a) {
        const std::string_view s(argv[a]);
        if (s.rfind("--peer_runs=", 0) == 0) {
            peer_runs = std::stoi(std::string(s.substr(12)));
        } else if (s.rfind("--peer_warmup=", 0) == 0) {
            peer_warmup = std::stoi(std::string(s.substr(14)));
        } else if (s.rfind("--dump_bodies=", 0) == 0) {
            dump_dir = std::string(s.substr(14));
        } else if (s == "--no_peer") {
            peer = false;
        } else {
            repetitions = repetitions || s.rfind("--benchmark_repetitions", 0) == 0;
            args.push_back(argv[a]);
        }
    }
    std::string reps = "--benchmark_repetitions=9";
    std::string aggregates = "--benchmark_display_aggregates_only=true";
    if (!repetitions) {
        args.push_back(reps.data());
        args.push_back(aggregates.data());
    }
    int n = static_cast<int>(args.size());
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
    if (peer) {
        g_peer = run_peer(peer_runs, peer_warmup, dump_dir);
        if (!g_peer.error.empty()) std::fprintf(stderr, "peer: %s\n", g_peer.error.c_str());
    } else {
        g_peer.error = "not run (--no_peer)";
    }
    if (!dump_dir.empty()) {
        for (const std::int64_t size : kSizes) {
            const std::string path = dump_dir + "/nucleo_" + std::to_string(size) + ".json";
            std::ofstream out(path, std::ios::binary);
            out << body(size);
            if (!out) {
                std::fprintf(stderr, "peer_bench: cannot write %s\n", path.c_str());
                return 1;
            }
        }
    }
    MedianReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    print_table(reporter);
    benchmark::Shutdown();
    return 0;
}
