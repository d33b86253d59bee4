// Encode benchmark of nucleo-anthropic: a 2,000-message conversation
// encoded through the ABI (PluginLoader → ProviderInstance::encode → the plugin's encode slot →
// host sink), against rapidjson's Writer writing the same output body from a ready DOM, in one
// run. Target: encode ≤ 2× the Writer. The ratio is printed after the runs (bench/RESULTS.md).
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
// The baseline Writer gets rapidjson's SIMD string scanning too, as the plugin's reader does: the
// comparison is against the fastest Writer this machine has, not a handicapped one.
#define RAPIDJSON_SSE2
#endif

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/wire/contract.hpp"
#include "nucleo/plugins.hpp"
#include "ratio_main.hpp"

namespace {

std::string json_string(const std::string& s) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return b.GetString();
}

/// One block list per message of a coding agent's session, in the Anthropic dialect's mix: every
/// assistant turn thinks (a signed thinking block) before it answers or calls a tool; every
/// fourth exchange is a tool round (tool_use, then a tool_result with text and JSON); now and
/// then the user attaches a screenshot or a skill. Roles alternate.
std::string blocks_for(int i, int& call) {
    const std::string prose =
        "The build of src/render/cache.cpp failed at line 88 with error E1234 after the change "
        "to the breakpoint planner; the previous run on commit 4f1760f passed all 412 tests, so "
        "the regression is in the last three commits. ";
    const bool user = i % 2 == 0;
    if (!user) {
        std::string b = R"([{"type":"thinking","thinking":)" +
                        json_string("Step " + std::to_string(i) + ": " + prose) +
                        R"(,"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},)";
        if (i % 8 == 1) {
            return b + R"({"type":"tool_use","id":"toolu_)" + std::to_string(++call) +
                   R"(","name":"run_tests","input":{"filter":"CachePlan.*","repeat":3}}])";
        }
        return b + R"({"type":"text","text":)" + json_string(std::to_string(i) + ". " + prose) +
               "}]";
    }
    if (i % 8 == 2) {
        return R"([{"type":"tool_result","tool_use_id":"toolu_)" + std::to_string(call) +
               R"(","content":[{"type":"text","text":)" + json_string(prose) +
               R"(},{"type":"json","json":{"passed":411,"failed":1,"name":"CachePlan.Four"}}]}])";
    }
    std::string b =
        R"([{"type":"text","text":)" + json_string(std::to_string(i) + ". " + prose) + "}";
    if (i % 50 == 0)
        b +=
            R"(,{"type":"image","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="})";
    if (i % 20 == 4)
        b +=
            R"(,{"type":"skill","name":"bisect","content":"Bisect between the last green and the first red commit."})";
    return b + "]";
}

std::string conversation(int messages) {
    std::string turns;
    int call = 0;
    for (int i = 0; i < messages; ++i) {
        if (!turns.empty()) turns += ",";
        turns += std::string(R"({"role":")") + (i % 2 == 0 ? "user" : "assistant") +
                 R"(","message_id":"m)" + std::to_string(i) + R"(","cache":false,"blocks":)" +
                 blocks_for(i, call) + "}";
    }
    // The full plan: the system prefix and three anchors on user turns that open with text.
    const std::string last = std::to_string(messages - 2), prev = std::to_string(messages - 4),
                      before = std::to_string(messages - 8);
    return R"({"schema_version":1,"model":{"id":"claude-sonnet-5-5","wire_model":)"
           R"("claude-sonnet-5-5"},"max_tokens":16384,"thinking":{"active":true,)"
           R"("budget_tokens":8192},"stream":false,"cache_ttl":"5m",)"
           R"("options":{"anthropic_version":"2023-06-01"},"prepared":{"system_blocks":[)"
           R"({"type":"text","text":"You are a careful build engineer."},{"type":"text","text":)" +
           json_string("Standing rules: never push to main; keep the tree green. " +
                       std::string(2000, '-')) +
           R"(}],"cache_system":true,"native_tools":true,"cache_plan":{"breakpoints":4,)"
           R"("system_block":1,"turn_anchors":[{"turn":)" +
           before + R"(,"block":0},{"turn":)" + prev + R"(,"block":0},{"turn":)" + last +
           R"(,"block":0}]},"tool_definitions":[)"
           R"({"name":"run_tests","description":"Run the test suite.","schema":{"type":"object",)"
           R"("properties":{"filter":{"type":"string"},"repeat":{"type":"integer"}},)"
           R"("required":["filter"]}}],"turns":[)" +
           turns + "]}}";
}

const nucleo::ProviderInstance& anthropic() {
    static const nucleo::Plugin plugin =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("anthropic");
    static const nucleo::ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

const std::string& request() {
    static const std::string r = conversation(2000);
    return r;
}

void BM_AnthropicEncode2000(benchmark::State& state) {
    const std::string& in = request();
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string out = anthropic().encode(in);
        bytes = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_AnthropicEncode2000)->Unit(benchmark::kMicrosecond);

void BM_AnthropicWriterSameBody(benchmark::State& state) {
    rapidjson::Document encoded;
    const std::string out = anthropic().encode(request());
    encoded.Parse(out.c_str(), out.size());
    const rapidjson::Value& body = encoded["body"];
    std::size_t bytes = 0;
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        body.Accept(w);
        bytes = buffer.GetSize();
        benchmark::DoNotOptimize(buffer.GetString());
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_AnthropicWriterSameBody)->Unit(benchmark::kMicrosecond);

const std::vector<std::pair<std::string, std::string>>& headers() {
    static const std::vector<std::pair<std::string, std::string>> h = {
        {"content-type", "application/json"}, {"anthropic-version", "2023-06-01"}, {"x-api-key", "***"}};
    return h;
}

/// What the core decided for the benchmark conversation's call.
nucleo::contract::CallPlan call_plan() {
    nucleo::contract::CallPlan plan;
    plan.breakpoints = 4;
    plan.system_texts = {"You are a careful build engineer.",
                         "Standing rules: never push to main; keep the tree green. " + std::string(2000, '-')};
    plan.max_tokens = 16384;
    return plan;
}

/// wire.150: the core's audit of the encoded request (generic checks, the plan's breakpoints,
/// system channel and max_tokens, the Anthropic rule book), over the body bytes as sent, parse
/// included. Target: audit <= 0.3x encode, printed after the runs.
void BM_AnthropicAudit2000(benchmark::State& state) {
    rapidjson::Document encoded;
    const std::string out = anthropic().encode(request());
    encoded.Parse(out.c_str(), out.size());
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    encoded["body"].Accept(w);
    // The body as ProviderClient::build_request hands it over: a std::string with the reader's
    // padding reserved past it (wire.172), read in place.
    std::string body;
    body.reserve(buffer.GetSize() + nucleo::contract::kReadPadding);
    body.assign(buffer.GetString(), buffer.GetSize());
    nucleo::contract::OutgoingRequest req;
    req.method = "POST";
    req.path = encoded["path"].GetString();
    req.headers = &headers();
    req.body = body;
    req.readable = body.capacity();
    // With a parsed body (state.range(0) == 1) the audit skips its own parse: what a caller that
    // already holds the DOM pays. 2: a body without the padding, copied before it is read.
    if (state.range(0) == 1) req.parsed = &encoded["body"];
    if (state.range(0) == 2) req.readable = body.size();
    const nucleo::contract::CallPlan plan = call_plan();
    for (auto _ : state) {
        auto v = nucleo::contract::audit_request(nucleo::contract::WireFamily::kAnthropicMessages, req, plan);
        if (v) {
            state.SkipWithError(v->line().c_str());
            break;
        }
        benchmark::DoNotOptimize(v);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_AnthropicAudit2000)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

/// A request of a growing conversation as the per-turn encode cache builds it (caching.110): the
/// head (encode_split's open and close around the first message) and chunks of 32 wire messages.
struct Grown {
    std::string path;
    std::string open;
    std::string first;
    std::string close;
    std::vector<std::string> chunks;
};

Grown grown(int messages) {
    rapidjson::Document encoded;
    const std::string out = anthropic().encode(conversation(messages));
    encoded.Parse(out.c_str(), out.size());
    rapidjson::Value& body = encoded["body"];
    const auto compact = [](const rapidjson::Value& v) {
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        v.Accept(w);
        return std::string(b.GetString(), b.GetSize());
    };
    Grown g;
    g.path = encoded["path"].GetString();
    const auto& list = body["messages"].GetArray();
    g.first = compact(list[0]);
    for (rapidjson::SizeType i = 1; i < list.Size(); i += 32) {
        std::string chunk;
        for (rapidjson::SizeType k = i; k < std::min<rapidjson::SizeType>(i + 32, list.Size()); ++k)
            chunk += (chunk.empty() ? "" : ",") + compact(list[k]);
        g.chunks.push_back(std::move(chunk));
    }
    body["messages"].SetArray();
    const std::string rest = compact(body);
    const std::string key = R"("messages":[])";
    const std::size_t at = rest.find(key) + key.size() - 1;
    g.open = rest.substr(0, at);
    g.close = rest.substr(at);
    return g;
}

/// wire.173: the audit of the next request of a growing conversation of state.range(0) messages
/// (two more than the request before): state.range(1) == 0 audits its body whole; 1 reads the
/// last chunk (the new bytes), keeps the records of the others from the request before, and
/// audits over them (audit_split_request). The body is built once outside the loop in both.
void BM_AuditNextRequest(benchmark::State& state) {
    using nucleo::contract::MessageChunk;
    const Grown g = grown(static_cast<int>(state.range(0)));
    const auto family = nucleo::contract::WireFamily::kAnthropicMessages;
    std::vector<MessageChunk> kept;
    for (std::size_t i = 0; i + 1 < g.chunks.size(); ++i) kept.emplace_back(family, g.chunks[i]);
    nucleo::contract::SplitBody split{g.open, g.first, g.close, {}};
    for (const MessageChunk& c : kept) split.chunks.push_back(&c);
    MessageChunk last(family, g.chunks.back());
    split.chunks.push_back(&last);
    const std::string body = split.join();
    nucleo::contract::OutgoingRequest req;
    req.method = "POST";
    req.path = g.path;
    req.headers = &headers();
    req.body = body;
    req.readable = body.capacity();
    const nucleo::contract::CallPlan plan = call_plan();
    const bool incremental = state.range(1) == 1;
    for (auto _ : state) {
        std::optional<nucleo::contract::Violation> v;
        if (incremental) {
            split.chunks.back() = nullptr;
            MessageChunk fresh(family, g.chunks.back());  // the new bytes, read
            split.chunks.back() = &fresh;
            v = nucleo::contract::audit_split_request(family, req, split, plan);
        } else {
            v = nucleo::contract::audit_request(family, req, plan);
        }
        if (v) {
            state.SkipWithError(v->line().c_str());
            break;
        }
        benchmark::DoNotOptimize(v);
    }
    state.counters["body_bytes"] = static_cast<double>(body.size());
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_AuditNextRequest)
    ->ArgsProduct({{200, 2000, 20000}, {0, 1}})
    ->ArgNames({"messages", "incremental"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    std::printf("request: %zu bytes, 2000 messages\n", request().size());
    return nucleo::bench::run_with_ratios(
        argc, argv, {{"BM_AnthropicEncode2000", "BM_AnthropicWriterSameBody"}},
        {{"BM_AnthropicAudit2000/0", "BM_AnthropicEncode2000", 0.3},
         {"BM_AnthropicAudit2000/1", "BM_AnthropicEncode2000", 0.3}});
}
