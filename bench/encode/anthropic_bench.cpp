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

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "contract/contract.hpp"
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
    return R"({"schema_version":1,"model":{"id":"claude-sonnet-4-5","wire_model":)"
           R"("claude-sonnet-4-5-20250929"},"max_tokens":16384,"thinking":{"active":true,)"
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
    const std::string body(buffer.GetString(), buffer.GetSize());
    const std::vector<std::pair<std::string, std::string>> headers = {
        {"content-type", "application/json"}, {"anthropic-version", "2023-06-01"}, {"x-api-key", "***"}};
    nucleo::contract::CallPlan plan;
    plan.breakpoints = 4;
    plan.system_texts = {"You are a careful build engineer.",
                         "Standing rules: never push to main; keep the tree green. " + std::string(2000, '-')};
    plan.max_tokens = 16384;
    nucleo::contract::OutgoingRequest req;
    req.method = "POST";
    req.path = encoded["path"].GetString();
    req.headers = &headers;
    req.body = body;
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
BENCHMARK(BM_AnthropicAudit2000)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    std::printf("request: %zu bytes, 2000 messages\n", request().size());
    return nucleo::bench::run_with_ratios(
        argc, argv, {{"BM_AnthropicEncode2000", "BM_AnthropicWriterSameBody"}},
        {{"BM_AnthropicAudit2000", "BM_AnthropicEncode2000", 0.3}});
}
