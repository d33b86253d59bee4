// bench/prepare: prepare_messages_for_llm over a long conversation,
// against the time RapidJSON's Writer takes to serialize the same PreparedConversation, in one
// run, with the bytes prepare allocates. Targets: prepare <= 2x serialization, allocations <= 2x
// the conversation's text size, linear from 200 to 20,000 messages. Results: bench/RESULTS.md.
//
// The conversation: ~500 bytes of text per message (2,000 messages ~ 1 MB), 20 tools, a
// repeating five-message exchange of mixed blocks — a user question (every 10th with an image),
// an assistant turn with thinking and a tool call, a tool result (text, and JSON every other
// time), an assistant answer, a user follow-up marked for caching every 50th message.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "nucleo/conversation.hpp"
#include "render/prepared_json.hpp"

// ---- allocation counting: every operator new of the process, libnucleo's included ----
namespace {
std::atomic<std::uint64_t> g_allocated_bytes{0};

void* counted_alloc(std::size_t n) {
    g_allocated_bytes.fetch_add(n, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* counted_aligned_alloc(std::size_t n, std::align_val_t align) {
    g_allocated_bytes.fetch_add(n, std::memory_order_relaxed);
    const auto a = static_cast<std::size_t>(align);
    if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
    throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) {
    return counted_alloc(n);
}
void* operator new[](std::size_t n) {
    return counted_alloc(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
    return operator new(n, t);
}
void* operator new(std::size_t n, std::align_val_t a) {
    return counted_aligned_alloc(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return counted_aligned_alloc(n, a);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}

namespace {

using nucleo::ContentBlock;
using nucleo::ConversationContext;
using nucleo::Message;

/// Deterministic filler text: words from a small vocabulary, a fixed seed per call site.
std::string words(std::uint32_t seed, std::size_t bytes) {
    static const char* const kWords[] = {"order",   "shipped", "customer", "the",    "invoice",
                                         "refund",  "Monday",  "delivery", "status", "tracking",
                                         "address", "please",  "number",   "and",    "warehouse"};
    std::string out;
    out.reserve(bytes + 12);
    std::uint32_t x = seed * 2654435761U + 1;
    while (out.size() < bytes) {
        x = x * 1664525U + 1013904223U;
        out += kWords[(x >> 16) % (sizeof kWords / sizeof kWords[0])];
        out += ' ';
    }
    return out;
}

/// The conversation of the header comment, and the bytes of text it carries.
ConversationContext build(std::size_t messages, std::size_t& text_bytes) {
    ConversationContext c("bench", "bench-user");
    text_bytes = 0;
    auto count = [&](const std::string& s) -> const std::string& {
        text_bytes += s.size();
        return s;
    };
    c.put_main_objective("task", count(words(1, 2000)));
    c.put_main_objective("style", count(words(2, 300)));
    for (int t = 0; t < 20; ++t) {
        nucleo::ToolDefinitionBlock def;
        def.name = "tool_" + std::to_string(t);
        def.description = count(words(100 + t, 200));
        def.schema_json = count(
            R"({"type":"object","properties":{"query":{"type":"string","description":"What to look for"},)"
            R"("limit":{"type":"integer","description":"At most this many results"}},"required":["query"]})");
        c.add_tool(std::move(def));
    }
    for (std::size_t i = 0; i < messages; ++i) {
        const auto seed = static_cast<std::uint32_t>(i);
        const std::string call_id = "toolu_" + std::to_string(i / 5);
        Message m;
        switch (i % 5) {
            case 0:  // a user question, an image every 10th message
                m.blocks.emplace_back(nucleo::TextBlock{count(words(seed, 450))});
                if (i % 10 == 0) {
                    m.blocks.emplace_back(
                        nucleo::ImageBlock{"image/png", count(std::string(200, 'A')), ""});
                }
                break;
            case 1:  // the model thinks and calls a tool
                m.direction = nucleo::Direction::kIncoming;
                m.blocks.emplace_back(nucleo::ThinkingBlock{count(words(seed, 250)), "sig"});
                m.blocks.emplace_back(nucleo::ToolUseBlock{
                    call_id, "tool_" + std::to_string(i % 20),
                    count(R"({"query":")" + words(seed, 40) + R"(","limit":10})")});
                break;
            case 2: {  // the tool result: text, and JSON every other time
                nucleo::ToolResultBlock r;
                r.tool_use_id = call_id;
                r.content.emplace_back(nucleo::TextBlock{count(words(seed, 500))});
                if (i % 10 == 2) {
                    r.content.emplace_back(nucleo::JsonBlock{
                        count(R"({"order":42,"status":"shipped","items":[1,2,3],"note":")" +
                              words(seed, 80) + R"("})")});
                }
                m.blocks.emplace_back(std::move(r));
                break;
            }
            case 3:  // the answer
                m.direction = nucleo::Direction::kIncoming;
                m.blocks.emplace_back(nucleo::TextBlock{count(words(seed, 600))});
                m.compactable = false;
                break;
            default:  // a follow-up, cached every 50th message
                m.blocks.emplace_back(nucleo::TextBlock{count(words(seed, 350))});
                m.cache = (i % 50 == 4);
                break;
        }
        c.add_message(std::move(m));
    }
    return c;
}

using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

/// Steady state: the conversation has rendered once (head placed, frozen); each iteration is
/// the prepare of one more call, then the serialization of its result. Manual time = prepare.
void BM_PrepareVsSerialize(benchmark::State& state) {
    std::size_t text_bytes = 0;
    ConversationContext c = build(static_cast<std::size_t>(state.range(0)), text_bytes);
    const nucleo::FixedContentFormatter formatter(/*native_tools=*/true, /*caching=*/true);
    (void)c.prepare_messages_for_llm(formatter, false);
    double prepare_s = 0;
    double serialize_s = 0;
    std::uint64_t prepare_bytes = 0;
    std::size_t json_bytes = 0;
    for (auto _ : state) {
        const std::uint64_t before = g_allocated_bytes.load(std::memory_order_relaxed);
        const auto t0 = Clock::now();
        nucleo::PreparedConversation prepared = c.prepare_messages_for_llm(formatter, false);
        const auto t1 = Clock::now();
        prepare_bytes += g_allocated_bytes.load(std::memory_order_relaxed) - before;
        const std::string json = nucleo::internal::prepared_to_json(prepared);
        const auto t2 = Clock::now();
        benchmark::DoNotOptimize(json.data());
        json_bytes = json.size();
        prepare_s += seconds(t1 - t0);
        serialize_s += seconds(t2 - t1);
        state.SetIterationTime(seconds(t1 - t0));
    }
    const auto n = static_cast<double>(state.iterations());
    state.counters["prepare_ms"] = prepare_s / n * 1e3;
    state.counters["serialize_ms"] = serialize_s / n * 1e3;
    state.counters["prepare/serialize"] = prepare_s / serialize_s;
    state.counters["text_MB"] = static_cast<double>(text_bytes) / 1e6;
    state.counters["json_MB"] = static_cast<double>(json_bytes) / 1e6;
    state.counters["alloc_MB"] = static_cast<double>(prepare_bytes) / n / 1e6;
    state.counters["alloc/text"] =
        static_cast<double>(prepare_bytes) / n / static_cast<double>(text_bytes);
    state.counters["us/message"] = prepare_s / n * 1e6 / static_cast<double>(state.range(0));
}
BENCHMARK(BM_PrepareVsSerialize)
    ->Arg(200)
    ->Arg(2000)
    ->Arg(20000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// The first render of a restored conversation: tools converted and placed in the head, the
/// freeze set. Each iteration prepares a fresh copy (the copy is not timed).
void BM_PrepareFirstRender(benchmark::State& state) {
    std::size_t text_bytes = 0;
    const ConversationContext original =
        build(static_cast<std::size_t>(state.range(0)), text_bytes);
    const nucleo::FixedContentFormatter formatter(true, true);
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        state.PauseTiming();
        ConversationContext c = original;
        state.ResumeTiming();
        const std::uint64_t before = g_allocated_bytes.load(std::memory_order_relaxed);
        nucleo::PreparedConversation prepared = c.prepare_messages_for_llm(formatter, false);
        bytes += g_allocated_bytes.load(std::memory_order_relaxed) - before;
        benchmark::DoNotOptimize(prepared.turns.data());
        state.PauseTiming();  // destroying the copy and the result is not the prepare
        {
            auto discard = std::move(prepared);
            auto discard_c = std::move(c);
        }
        state.ResumeTiming();
    }
    state.counters["alloc/text"] = static_cast<double>(bytes) /
                                   static_cast<double>(state.iterations()) /
                                   static_cast<double>(text_bytes);
}
BENCHMARK(BM_PrepareFirstRender)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
