// Bytes sent per call on a growing conversation, with Anthropic message threads on and off
// (wire.211), through ProviderClient, the Anthropic plugin and nucleo-emulator (which holds
// threads as the Messages API does), on the shipped default model (claude-sonnet-5-5) and the
// shipped catalog.
//
// 1. A 200-turn agent session: each turn a question, one tool round (the emulator's tool-cycle
//    script calls a tool; its result is a few hundred words) and an answer, run with threads off
//    (the shipped default) and on. Reported: the request bytes the emulator received per call
//    (its /stats request_bytes) at turns 20 and 200 and over the whole session, and the input
//    tokens the provider read (the same conversation either way).
// 2. A 2,000-turn chat with threads on: the mean bytes of the calls around turn 20 against those
//    around turn 2,000. Target (bench/RESULTS.md): the ratio <= 1.5, the bytes a call sends do not
//    grow with the conversation (O(new turns)). Exits 1 when it is missed, or when a threaded
//    call did not continue its thread.
//
//   build/bench/bench_threads [--turns N] [--long-turns N]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "emulator_conversation.hpp"
#include "nucleo/config.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using bench_support::prose;

std::int64_t request_bytes(const emulator_test::EmulatorProcess& emulator) {
    const rapidjson::Document s = emulator_test::parse(emulator.get("/stats").body);
    return s["request_bytes"].GetInt64();
}

/// The bytes of each call, by turn (the calls of one turn summed), and what the provider read.
struct Session {
    std::vector<std::int64_t> bytes_per_turn;
    std::int64_t calls = 0;
    std::int64_t bytes = 0;
    std::int64_t input_tokens = 0;
    std::int64_t continued = 0;
    [[nodiscard]] double mean_per_call() const {
        return calls == 0 ? 0 : static_cast<double>(bytes) / static_cast<double>(calls);
    }
    /// The mean bytes of one call over the `width` turns ending at turn `turn` (1-based).
    [[nodiscard]] double around(std::size_t turn, std::size_t width, int calls_per_turn) const {
        std::int64_t sum = 0;
        for (std::size_t t = turn - width; t < turn; ++t) sum += bytes_per_turn[t];
        return static_cast<double>(sum) / static_cast<double>(width * calls_per_turn);
    }
};

Session run(const emulator_test::EmulatorProcess& emulator, bool threads, int turns, bool tools) {
    (void)emulator.post("/reset", "{}", {});
    const Config config = Config::parse(
        emulator_test::shipped_config_yaml(emulator.port(), threads ? "threads: true" : ""),
        std::string(NUCLEO_SOURCE_DIR) + "/config/bench.yaml");
    ProviderClient client =
        ProviderClient::from_config(config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}), "anthropic");
    const ModelSpec& model = config.catalog().find("claude-sonnet-5-5");
    ConversationContext c(threads ? "threads-on" : "threads-off", "bench");
    c.put_main_objective(
        "task", "You answer questions about the project's documentation. " + prose(900, 1));
    c.set_output(std::int64_t{256});
    c.set_depth(Depth::kImmediate);
    if (tools)
        c.add_tool(
            {"search_docs", "Searches the docs for a word and returns passages.",
             R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})"});
    Session s;
    const auto call = [&](bool tool_call) {
        CallOptions options;
        if (tool_call) options.extra_headers = {{"x-emulator-fault", "always-tool,tool-cycle"}};
        const std::int64_t before = request_bytes(emulator);
        const LLMResponse r = client.call(c, model, options);
        const std::int64_t sent = request_bytes(emulator) - before;
        s.bytes_per_turn.back() += sent;
        s.bytes += sent;
        ++s.calls;
        s.input_tokens += r.usage.total_input_tokens();
        if (r.thread == "continue") ++s.continued;
        return r;
    };
    for (int t = 1; t <= turns; ++t) {
        s.bytes_per_turn.push_back(0);
        c.add_message(
            Message::outgoing_text("Question " + std::to_string(t) + ": " + prose(40, 1000 + t)));
        if (tools) {
            const LLMResponse answer = call(true);
            Message results;
            results.direction = Direction::kOutgoing;
            for (const ContentBlock& b : answer.message.blocks) {
                if (const auto* use = b.get_if<ToolUseBlock>())
                    results.blocks.emplace_back(
                        ToolResultBlock{use->id, {TextBlock{prose(300, 5000 + t)}}, false});
            }
            if (!results.blocks.empty()) c.add_message(std::move(results));
        }
        call(false);
    }
    return s;
}

}  // namespace
}  // namespace nucleo

int main(int argc, char** argv) {
    using namespace nucleo;
    int turns = 200;
    int long_turns = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--turns") turns = std::atoi(argv[i + 1]);
        if (flag == "--long-turns") long_turns = std::atoi(argv[i + 1]);
    }
    if (turns < 20 || long_turns < 40) {
        std::fprintf(stderr, "usage: bench_threads [--turns N>=20] [--long-turns N>=40]\n");
        return 2;
    }
    log::set_level(log::Level::kWarn);  // one record per call would bury the report
    emulator_test::EmulatorProcess emulator;
    const Session off = run(emulator, false, turns, true);
    const Session on = run(emulator, true, turns, true);
    std::printf("%d-turn agent session (a question, one tool round, an answer; %" PRId64
                " calls)\n",
                turns, on.calls);
    std::printf("%-12s %14s %14s %16s %14s %16s\n", "threads", "bytes/call@20", "bytes/call@end",
                "bytes/call mean", "total MB", "input tokens");
    for (const auto& [name, s] : {std::pair{"off", &off}, std::pair{"on", &on}}) {
        std::printf("%-12s %14.0f %14.0f %16.0f %14.2f %16" PRId64 "\n", name, s->around(20, 10, 2),
                    s->around(s->bytes_per_turn.size(), 10, 2), s->mean_per_call(),
                    static_cast<double>(s->bytes) / 1e6, s->input_tokens);
    }
    std::printf("bytes sent, on/off: %.4f; calls that continued their thread: %" PRId64
                " of %" PRId64 "\n\n",
                static_cast<double>(on.bytes) / static_cast<double>(off.bytes), on.continued,
                on.calls);

    const Session chat = run(emulator, true, long_turns, false);
    const double early = chat.around(20, 10, 1);
    const double late = chat.around(chat.bytes_per_turn.size(), 10, 1);
    const double ratio = late / early;
    std::printf(
        "%d-turn chat, threads on: bytes/call around turn 20 %.0f, around turn %d %.0f, "
        "ratio %.3f (target <= 1.5); continued %" PRId64 " of %" PRId64 "\n",
        long_turns, early, long_turns, late, ratio, chat.continued, chat.calls);
    const bool all_continued = on.continued == on.calls - 1 && chat.continued == chat.calls - 1;
    if (ratio > 1.5 || !all_continued) {
        std::printf("MISSED: %s\n", ratio > 1.5 ? "the ratio" : "a call did not continue");
        return 1;
    }
    return 0;
}
