// ConversationService benchmarks, a plain program (the figures are
// distributions and a throughput, not Google Benchmark loops):
//  1. hand-off latency between two threads: the owner releases, the waiting obtain's future
//     returns, the waiter parked before the release; median and p99 over --handoffs rounds.
//  2. --threads threads over --conversations conversations, --cycles obtain/save/release cycles
//     in all with the memory store: no deadlock (every obtain succeeds within the service's 30 s
//     timeout, or the program fails), throughput reported.
//
//   service_bench [--handoffs N] [--threads T] [--conversations C] [--cycles N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

nucleo::ConversationServiceOptions memory_options() {
    static nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    nucleo::ConversationServiceOptions o;
    o.persistent.emplace(loader.load("memory").make_store("{}"));
    o.cleanup_thread = false;
    return o;
}

std::shared_ptr<nucleo::Thinker> thinker(const std::string& name) {
    auto t = std::make_shared<nucleo::Thinker>();
    t->name = name;
    t->job_id = name + "-job";
    t->user_id = "bench";
    t->workflow_id = name + "-wf";
    return t;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void handoff(int rounds) {
    nucleo::ConversationService service(memory_options());
    auto a = thinker("A");
    auto b = thinker("B");
    const std::string id = a->mint_conversation_id();
    b->set_conversation_id(id);
    std::vector<double> micros;
    micros.reserve(static_cast<std::size_t>(rounds));
    for (int i = 0; i < rounds; ++i) {
        auto& owner = i % 2 == 0 ? a : b;
        auto& waiter = i % 2 == 0 ? b : a;
        service.obtain_conversation(id, owner).get();
        auto waiting = service.obtain_conversation(id, waiter);
        // Time the hand-off from a waiter already parked on the handed-off condition (not its
        // thread's start-up).
        while (service.waiters(id) == 0) std::this_thread::yield();
        const auto t0 = Clock::now();
        service.release(*owner);
        waiting.get();
        const auto t1 = Clock::now();
        micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        service.release(*waiter);
    }
    std::printf("handoff: %d rounds, median %.1f us, p99 %.1f us, max %.1f us\n", rounds,
                percentile(micros, 0.5), percentile(micros, 0.99), percentile(micros, 1.0));
}

void contention(int threads, int conversations, long cycles) {
    nucleo::ConversationService service(memory_options());
    std::vector<std::string> ids;
    for (int i = 0; i < conversations; ++i) {
        nucleo::Thinker minting;
        minting.name = "Bench";
        ids.push_back(minting.mint_conversation_id());
    }
    std::atomic<long> next{0};
    std::atomic<long> saves{0};
    std::atomic<long> failures{0};
    std::vector<std::thread> pool;
    const auto t0 = Clock::now();
    for (int w = 0; w < threads; ++w) {
        pool.emplace_back([&, w] {
            auto t = thinker("W" + std::to_string(w));
            std::mt19937 rng(static_cast<unsigned>(w));
            std::uniform_int_distribution<int> pick(0, conversations - 1);
            while (next.fetch_add(1) < cycles) {
                const std::string& id = ids[static_cast<std::size_t>(pick(rng))];
                t->set_conversation_id(id);
                try {
                    auto ctx = service.obtain_conversation(id, t).get();
                    // Small conversations: append until 20 messages, then flip the last
                    // message's flag, so every save is a one-message delta.
                    if (ctx->messages().size() < 20) {
                        ctx->add_message(ctx->messages().size() % 2 == 0
                                             ? nucleo::Message::outgoing_text("question")
                                             : nucleo::Message::incoming_text("answer"));
                    } else {
                        auto parts = ctx->parts();
                        parts.messages.back().compactable = !parts.messages.back().compactable;
                        *ctx = nucleo::ConversationContext::from_parts(std::move(parts));
                    }
                    if (service.save_conversation(*ctx, *t)) ++saves;
                    service.release(*t);
                } catch (const std::exception& e) {
                    if (failures.fetch_add(1) == 0) std::fprintf(stderr, "failure: %s\n", e.what());
                    service.release(*t);
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf(
        "contention: %d threads, %d conversations, %ld cycles (%ld saves), %ld failures, "
        "%.2f s, %.0f cycles/s\n",
        threads, conversations, cycles, saves.load(), failures.load(), seconds,
        static_cast<double>(cycles) / seconds);
    if (failures.load() != 0) std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    int handoffs = 2000;
    int threads = 64;
    int conversations = 1000;
    long cycles = 1000000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--handoffs"))
            handoffs = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--threads"))
            threads = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--conversations"))
            conversations = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--cycles"))
            cycles = std::atol(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    handoff(handoffs);
    contention(threads, conversations, cycles);
    return 0;
}
