// One host of the soak (bench/soak): a process running agent turns on a shared pool of
// conversations held in PostgreSQL, with Redis as session store and lease store, as an
// application of several hosts would (core's public API only). Each of its threads loops until
// the deadline or its share of the turn bound: pick a conversation of the pool, obtain it (timed),
// run one agent turn against nucleo-emulator (a question, one tool call and its result, an
// answer), saved at each round's end (ownership.20), then release. Every acknowledged save is
// logged with the document's hash (fsync'd: soak_log.hpp), so the coordinator can hold the
// database to it after the run.
//
// A turn's question names the turn (`host/thread/seq`) and the messages the conversation held
// when it was obtained (`base=N`): the coordinator reads both back from the database to tell a
// stale write (a base other than the message's position) from a fresh one.
//
//   bench_soak_host --pg URL --redis URL --emulator-port P --host-id ID --log FILE
//                   --until-us T [--threads 1] [--pool 256] [--users 4] [--prefix soak]
//                   [--max-turns N] [--lease-ttl-ms 3000] [--acquire-timeout-ms 10000] [--seed S]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "emulator_conversation.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/service.hpp"
#include "soak_log.hpp"
#include "soak_options.hpp"

namespace nucleo::soak {
namespace {

struct HostOptions {
    std::string pg_url, redis_url, host_id, log_path, prefix = "soak";
    int emulator_port = 0;
    int threads = 1;
    int pool = 256;
    int users = 4;
    long long max_turns = 1'000'000;
    std::int64_t until_us = 0;
    long long lease_ttl_ms = 3000;
    long long acquire_timeout_ms = 10000;
    unsigned seed = 1;
};

/// How long a save that fails for want of a server keeps retrying: past a PostgreSQL restart.
constexpr auto kSaveRetryFor = std::chrono::seconds(20);
constexpr auto kRetryPause = std::chrono::milliseconds(100);

class Host {
  public:
    explicit Host(HostOptions o)
        : o_(std::move(o)), log_(o_.log_path), loader_({NUCLEO_BUILD_PLUGIN_DIR}) {
        ConversationServiceOptions s;
        // A connection for each thread, so the threads of one process never queue for one.
        const int connections = std::max(4, o_.threads);
        s.persistent.emplace(loader_.load("postgres")
                                 .make_store(R"({"url":")" + o_.pg_url + R"(","pool_size":)" +
                                             std::to_string(connections) + "}"));
        const StoreInstance redis =
            loader_.load("redis").make_store(R"({"url":")" + o_.redis_url + R"("})");
        s.session.emplace(redis);
        s.lease.emplace(redis);
        s.host_id = o_.host_id;
        s.lease_ttl = std::chrono::milliseconds(o_.lease_ttl_ms);
        s.acquire_timeout = std::chrono::milliseconds(o_.acquire_timeout_ms);
        service_ = std::make_unique<ConversationService>(std::move(s));
        provider_.name = "anthropic";
        provider_.plugin = "anthropic";
        provider_.base_url = "http://127.0.0.1:" + std::to_string(o_.emulator_port);
        provider_.credentials.api_key = "soak";
    }

    /// False when an error escaped a thread's loop (every expected one -- a server down, a lease
    /// lost -- is handled per turn): the host exits 1 and the coordinator reports it.
    bool run() {
        std::vector<std::thread> threads;
        std::atomic<bool> ok{true};
        const long long share = (o_.max_turns + o_.threads - 1) / o_.threads;
        for (int t = 0; t < o_.threads; ++t) {
            threads.emplace_back([this, t, share, &ok] {
                try {
                    run_thread(t, share);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "%s: thread %d stopped: %s\n", o_.host_id.c_str(), t,
                                 e.what());
                    ok = false;
                }
            });
        }
        for (auto& t : threads) t.join();
        service_->shutdown();
        return ok;
    }

  private:
    void run_thread(int thread, long long turns) {
        ProviderClient client(provider_, loader_.load("anthropic").make_provider("{}"));
        AgentOptions options;
        options.objective = "You answer questions about orders; look them up first.";
        Agent agent(client, bench_support::emulator_model(), options);
        agent.add_tool(AgentTool{
            ToolDefinitionBlock{"lookup_order", "Looks an order up by its number.",
                                R"({"type":"object","properties":{"order":{"type":"string"}},)"
                                R"("required":["order"]})"},
            [](std::string_view input, const CancellationToken&) {
                return ToolOutput{"order " + std::string(input) + " shipped on Monday", false, {}};
            }});
        std::mt19937 rng(o_.seed * 7919U + static_cast<unsigned>(thread));
        for (long long seq = 0; seq < turns && wall_us() < o_.until_us; ++seq) {
            const int k = static_cast<int>(rng() % static_cast<unsigned>(o_.pool));
            const std::string user = o_.prefix + "-user-" + std::to_string(k % o_.users);
            const std::string id = o_.prefix + "-conv-" + std::to_string(k);
            const std::string tag =
                o_.host_id + "/" + std::to_string(thread) + "/" + std::to_string(seq);
            turn(agent, thread, user, id, tag);
        }
    }

    void turn(Agent& agent, int thread, const std::string& user, const std::string& id,
              const std::string& tag) {
        auto thinker = agent.make_thinker(user, OutputDeclaration{std::int64_t{256}});
        // Adopted (durable, leased), yet created by the first host that saves it: must_exist is
        // false below.
        thinker->set_conversation_id(id);
        const std::int64_t requested = wall_us();
        std::shared_ptr<ConversationContext> context;
        try {
            context = service_->obtain_conversation(id, thinker, {}, false).get();
        } catch (const Error& e) {
            // A server restarting or a lease held past acquire_timeout: counted, then the next
            // turn (after a short pause, so a down server is not hammered).
            log_.write("obtain-failed " + id + " " + to_string(e.kind()));
            std::this_thread::sleep_for(kRetryPause);
            return;
        }
        log_.write("obtain " + id + " " + std::to_string(requested) + " " +
                   std::to_string(wall_us()) + " " + std::to_string(thread));
        const std::string outcome = run_saved_turn(agent, *thinker, *context, user, id, tag);
        log_.write("turn " + id + " " + tag + " " + outcome);
        service_->release(*thinker);
        log_.write("release " + id + " " + std::to_string(wall_us()) + " " +
                   std::to_string(thread));
    }

    /// The turn and its saves: "done" (the last save acknowledged), "refused" (the lease was
    /// lost: kOwnership), or "abandoned" (the servers did not come back in time).
    std::string run_saved_turn(Agent& agent, const Thinker& thinker, ConversationContext& context,
                               const std::string& user, const std::string& id,
                               const std::string& tag) {
        bool refused = false;
        bool unsure = false;  // a save failed without saying whether it committed
        CancellationToken cancel;
        TurnCallbacks callbacks;
        // ownership.20: a save at each boundary; one that fails for want of a server is left
        // to the save after the turn, one refused ends the turn.
        callbacks.on_round_end = [&](const RoundReport&) {
            if (refused) return;
            try {
                save(thinker, context, user, id, tag, unsure);
            } catch (const Error& e) {
                if (e.kind() == ErrorKind::kOwnership || e.kind() == ErrorKind::kNotFound) {
                    refused = true;
                    cancel.cancel();
                } else {
                    unsure = true;
                    log_.write("save-failed " + id + " " + tag + " " + to_string(e.kind()));
                }
            }
        };
        const std::string question = "[soak " + tag +
                                     " base=" + std::to_string(context.messages().size()) +
                                     "] Where is order " + tag + " now?";
        try {
            agent.run_turn(context, question, callbacks, &cancel);
        } catch (const Error& e) {
            std::fprintf(stderr, "%s: turn %s on %s failed: %s\n", o_.host_id.c_str(), tag.c_str(),
                         id.c_str(), e.what());
        }
        if (refused) return "refused";
        const auto deadline = std::chrono::steady_clock::now() + kSaveRetryFor;
        for (;;) {
            try {
                save(thinker, context, user, id, tag, unsure);
                return "done";
            } catch (const Error& e) {
                if (e.kind() == ErrorKind::kOwnership || e.kind() == ErrorKind::kNotFound) {
                    return "refused";
                }
                unsure = true;
                log_.write("save-failed " + id + " " + tag + " " + to_string(e.kind()));
                if (std::chrono::steady_clock::now() + kRetryPause >= deadline) return "abandoned";
            }
            std::this_thread::sleep_for(kRetryPause);
        }
    }

    /// One save; an acknowledged one is logged (fsync'd) with the hash of the document it wrote.
    /// Nothing to write after a save that failed unsure (`unsure`) means that write committed
    /// (persistence.103 re-read it): acknowledged too, its version unnamed.
    void save(const Thinker& thinker, const ConversationContext& context, const std::string& user,
              const std::string& id, const std::string& tag, bool& unsure) {
        const std::optional<SaveResult> saved = service_->save_conversation(context, thinker);
        if (!saved && !unsure) return;
        unsure = false;
        const std::string document = write_conversation_parts(context.parts(), {.pretty = false});
        log_.write("ack " + user + " " + id + " " + (saved ? saved->version : "-") + " " +
                       std::to_string(fnv1a(document)) + " " + tag,
                   true);
    }

    HostOptions o_;
    EventLog log_;
    PluginLoader loader_;
    ProviderConfig provider_;
    std::unique_ptr<ConversationService> service_;
};

}  // namespace
}  // namespace nucleo::soak

int main(int argc, char** argv) {
    using namespace nucleo::soak;
    HostOptions o;
    try {
        const Args args(argc, argv);
        o.pg_url = args.text("--pg");
        o.redis_url = args.text("--redis");
        o.host_id = args.text("--host-id");
        o.log_path = args.text("--log");
        o.emulator_port = static_cast<int>(args.number("--emulator-port"));
        o.until_us = args.number("--until-us");
        o.prefix = args.text("--prefix", o.prefix);
        o.threads = static_cast<int>(args.number("--threads", o.threads));
        o.pool = static_cast<int>(args.number("--pool", o.pool));
        o.users = static_cast<int>(args.number("--users", o.users));
        o.max_turns = args.number("--max-turns", o.max_turns);
        o.lease_ttl_ms = args.number("--lease-ttl-ms", o.lease_ttl_ms);
        o.acquire_timeout_ms = args.number("--acquire-timeout-ms", o.acquire_timeout_ms);
        o.seed = static_cast<unsigned>(args.number("--seed", o.seed));
        nucleo::log::set_level(nucleo::log::Level::kError);
        Host host(o);
        if (!host.run()) return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_soak_host: %s\n", e.what());
        return 1;
    }
    return 0;
}
