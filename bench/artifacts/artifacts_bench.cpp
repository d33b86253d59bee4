// bench/artifacts: prepare_messages_for_llm over a conversation holding
// 1,000 artifacts — 900 citations and 100 lists of 200 citation iterands — with warm summary
// caches, against the same conversation with the artifacts' JSON pasted inline (a JsonBlock of the
// PojoBlock's value in each tool result, no registry). Target: artifacts <= 1.5x inline.
//
// The conversation: 100 exchanges (user question, assistant tool call, tool result). Each tool
// result is one PojoBlock holding 9 citations (a 600-character summarizable body each) and one
// list of 200 citations (200-character bodies). Both renderings are timed in the same iteration,
// alternating, so machine load hits both alike.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include "nucleo/artifacts.hpp"
#include "nucleo/conversation.hpp"
#include "render/prepared_json.hpp"

namespace bench_artifacts {

struct Citation {
    std::string url;
    std::string title;
    std::string body;
};

struct Result {
    std::string query;
    std::vector<Citation> sources;
    nucleo::ArtifactList<Citation> list;
};

}  // namespace bench_artifacts

template <>
struct nucleo::Describe<bench_artifacts::Citation> {
    static constexpr std::string_view name = "Citation";
    static constexpr std::string_view artifact_alias = "link:cite";
    static auto fields() {
        using nucleo::schema::field;
        using C = bench_artifacts::Citation;
        return std::tuple(field("url", &C::url).required(), field("title", &C::title),
                          field("body", &C::body).summarizable());
    }
};

template <>
struct nucleo::Describe<bench_artifacts::Result> {
    static constexpr std::string_view name = "SearchResult";
    static auto fields() {
        using nucleo::schema::field;
        using R = bench_artifacts::Result;
        return std::tuple(field("query", &R::query), field("sources", &R::sources),
                          field("list", &R::list));
    }
};

namespace {

using namespace nucleo;
using Clock = std::chrono::steady_clock;

constexpr int kExchanges = 100;
constexpr int kSourcesPerResult = 9;
constexpr int kIterands = 200;

std::string prose(std::size_t n, int seed) {
    std::string out;
    for (int i = 0; out.size() < n; ++i) {
        out += "finding " + std::to_string(seed) + "." + std::to_string(i) + " of the survey; ";
    }
    out.resize(n);
    return out;
}

bench_artifacts::Result result(int exchange) {
    bench_artifacts::Result r;
    r.query = "query " + std::to_string(exchange);
    for (int s = 0; s < kSourcesPerResult; ++s) {
        const int id = exchange * 1000 + s;
        r.sources.push_back({"https://example.com/s/" + std::to_string(id),
                             "Source " + std::to_string(id), prose(600, id)});
    }
    for (int k = 0; k < kIterands; ++k) {
        const int id = exchange * 100000 + k;
        r.list.items.push_back({"https://example.com/i/" + std::to_string(id),
                                "Item " + std::to_string(id), prose(200, id)});
    }
    return r;
}

/// The two conversations: artifacts (PojoBlocks) and inline (the same JSON as JsonBlocks).
std::pair<ConversationContext, ConversationContext> conversations() {
    ConversationContext with("artifacts", "u");
    ConversationContext inline_json("inline", "u");
    for (ConversationContext* c : {&with, &inline_json}) {
        c->put_main_objective("task", "Answer from the search results, citing sources.");
        c->add_tool(
            ToolDefinitionBlock{"search", "Searches the literature.",
                                R"({"type":"object","properties":{"q":{"type":"string"}}})"});
    }
    for (int e = 0; e < kExchanges; ++e) {
        const std::string id = "toolu_" + std::to_string(e);
        const PojoBlock pojo = pojo_block(result(e));
        for (ConversationContext* c : {&with, &inline_json}) {
            c->add_message(Message::outgoing_text("Question " + std::to_string(e) + "?"));
            Message use;
            use.direction = Direction::kIncoming;
            use.blocks = {ToolUseBlock{id, "search", R"({"q":"x"})"}};
            c->add_message(use);
            Message res;
            if (c == &with) {
                res.blocks = {ToolResultBlock{id, {pojo}, false}};
            } else {
                res.blocks = {ToolResultBlock{id, {JsonBlock{pojo.value_json}}, false}};
            }
            c->add_message(res);
        }
    }
    return {std::move(with), std::move(inline_json)};
}

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

/// Warm caches: both conversations have rendered once; each iteration renders each once more.
void BM_ArtifactsVsInline(benchmark::State& state) {
    auto [with, inline_json] = conversations();
    const FixedContentFormatter formatter(true, true);
    (void)with.prepare_messages_for_llm(formatter, false);
    (void)inline_json.prepare_messages_for_llm(formatter, false);
    const bool serialize = state.range(0) != 0;
    double artifacts_s = 0;
    double inline_s = 0;
    std::size_t artifacts_bytes = 0;
    std::size_t inline_bytes = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        PreparedConversation a = with.prepare_messages_for_llm(formatter, false);
        std::string a_json = serialize ? internal::prepared_to_json(a) : std::string();
        const auto t1 = Clock::now();
        PreparedConversation b = inline_json.prepare_messages_for_llm(formatter, false);
        std::string b_json = serialize ? internal::prepared_to_json(b) : std::string();
        const auto t2 = Clock::now();
        benchmark::DoNotOptimize(a);
        benchmark::DoNotOptimize(b);
        artifacts_bytes = a_json.size();
        inline_bytes = b_json.size();
        artifacts_s += seconds(t1 - t0);
        inline_s += seconds(t2 - t1);
        state.SetIterationTime(seconds(t2 - t0));
    }
    const auto n = static_cast<double>(state.iterations());
    state.counters["artifacts_ms"] = artifacts_s / n * 1e3;
    state.counters["inline_ms"] = inline_s / n * 1e3;
    state.counters["artifacts/inline"] = artifacts_s / inline_s;
    state.counters["registered"] = static_cast<double>(with.artifacts().all_artifacts().size());
    state.counters["reachable"] =
        static_cast<double>(with.artifacts().all_artifacts_including_reachable().size() -
                            with.artifacts().all_artifacts().size());
    if (serialize) {
        state.counters["artifacts_MB"] = static_cast<double>(artifacts_bytes) / 1e6;
        state.counters["inline_MB"] = static_cast<double>(inline_bytes) / 1e6;
    }
}
// Arg 0: prepare_messages_for_llm only; 1: prepare and the prepared JSON a plugin reads.
BENCHMARK(BM_ArtifactsVsInline)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond);

/// The cold render (first call: every summary made by the TruncatingSummarizer, every
/// artifact's summarized form built), for scale.
void BM_ColdRender(benchmark::State& state) {
    const FixedContentFormatter formatter(true, true);
    for (auto _ : state) {
        state.PauseTiming();
        auto [with, unused] = conversations();
        state.ResumeTiming();
        benchmark::DoNotOptimize(with.prepare_messages_for_llm(formatter, false));
    }
}
BENCHMARK(BM_ColdRender)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
