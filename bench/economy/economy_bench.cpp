// The bill of a long agent session (caching.105-108, compaction.108): a scripted 50-turn
// tool-using session against nucleo-emulator, which caches as Anthropic documents (caching.103),
// run once per cache policy and once without caching. Each turn is a question, two tool rounds
// (a search with a medium result and a read with a long one, the tools taken in turn by the
// emulator's tool-cycle script) and an answer; a third tool is declared at turn 20, which changes
// the tools parameter at the head of the request; the comfort window makes compaction cross its
// trigger several times, bringing the conversation down to 60% of the window.
//
// Reported per run: the calls, all input tokens the provider read, the share read from the
// cache, the tokens written to it, the input cost and its ratio to the run without caching, the
// compactions and what they spent (the summaries they wrote plus the cached prefix each gave up,
// which the next call writes again) against what they saved (the tokens each took out of the
// conversation, times the calls that followed it). Then the same session with the shipped
// config (config/nucleo.yaml, no policy named: caching.130) on Anthropic (claude-sonnet-5-5),
// OpenAI (gpt-6-luna, explicit breakpoints: caching.118) and Bedrock (bedrock-claude-sonnet-5-5),
// each against its own bill with every input token at the input price. Exits 1 when a target of
// bench/RESULTS.md is missed: sliding, automatic and each default run at >= 90% cache reads and
// <= 0.25x the cost without caching, and compaction's spend <= 5% of its saving.
//
//   build/bench/bench_economy [--turns N]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator_client.hpp"
#include "emulator_conversation.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/config.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

/// Claude Sonnet 4.5 as the catalog prices it ($3 input, $15 output, $3.75 cache write, $0.30
/// cache read per million), served by the emulator.
ModelSpec sonnet(bool caching) {
    ModelSpec m = bench_support::emulator_model();
    m.id = "claude-sonnet-5-5";
    m.wire_model = "claude-sonnet-5-5";
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.supports_caching = caching;
    m.min_cacheable_tokens = 1024;
    m.prices = {3.0, 15.0, 3.75, 0.30, std::nullopt};
    return m;
}

constexpr std::int64_t kComfortTokens = 40000;
constexpr double kCompactionTarget = 0.6;
constexpr int kLateToolTurn = 20;

using bench_support::prose;

ToolDefinitionBlock tool(const std::string& name, const std::string& description) {
    return {name, description,
            R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})"};
}

/// What one tool call returns: a search a few passages, a read a long file.
std::string run_tool(const std::string& name, int turn, int round) {
    if (name == "search_docs") return "Passages found: " + prose(300, turn * 10 + round);
    if (name == "read_doc") return "File contents: " + prose(1100, turn * 10 + round);
    return "Table: " + prose(200, turn * 10 + round);
}

struct Run {
    std::string name;
    int calls = 0;
    Usage usage;
    double cost = 0;
    double uncached = 0;  // the same input, every token at the input price
    int compactions = 0;
    std::int64_t compaction_spent = 0;  // summaries written + cached prefix given up
    std::int64_t compaction_saved = 0;  // tokens taken out x calls after
    [[nodiscard]] double read_share() const {
        const auto all = usage.total_input_tokens();
        return all == 0 ? 0
                        : static_cast<double>(usage.cache_read_tokens) / static_cast<double>(all);
    }
};

ProviderClient anthropic_client(const emulator_test::EmulatorProcess& emulator,
                                const PluginLoader& loader) {
    ProviderConfig config;
    config.name = "anthropic";
    config.plugin = "anthropic";
    config.base_url = "http://127.0.0.1:" + std::to_string(emulator.port());
    config.credentials.api_key = "bench";
    return ProviderClient(config, loader.load("anthropic").make_provider("{}"));
}

/// The session on `client` and `model`; `policy` set on the conversation when given (else the
/// client's: the provider instance's option, or the default, caching.130).
Run run_session(const std::string& name, ProviderClient& client, const ModelSpec& model,
                std::optional<CachePolicy> policy, int turns,
                emulator_test::EmulatorProcess& emulator, const PluginLoader& loader) {
    (void)emulator.post("/reset", "{}", {});
    ContextWindowSettings settings{kComfortTokens, std::nullopt};
    settings.compaction_target = kCompactionTarget;
    ContextWindowManager window(loader.load("extractive").make_summarizer(), settings);

    ConversationContext c("economy", "bench");
    c.put_main_objective(
        "task", "You answer questions about the project's documentation. " + prose(900, 1));
    c.set_output(std::int64_t{256});
    c.set_depth(Depth::kImmediate);
    c.add_tool(tool("search_docs", "Searches the docs for a word and returns passages."));
    c.add_tool(tool("read_doc", "Reads one file of the docs."));
    if (policy) c.set_cache_policy(*policy);

    Run run;
    run.name = name;
    struct Saving {
        std::int64_t tokens;
        int at_call;
    };
    std::vector<Saving> savings;
    const auto call = [&](bool tool_call) {
        const CompactionReport r = window.ensure_fits(c, model, 256);
        if (r.compacted()) {
            ++run.compactions;
            for (const CompactionSummary& s : r.summaries) run.compaction_spent += s.summary_tokens;
            run.compaction_spent += r.cached_tokens_given_up;
            savings.push_back({r.tokens_before - r.tokens_after, run.calls});
        }
        CallOptions options;
        if (tool_call) options.extra_headers = {{"x-emulator-fault", "always-tool,tool-cycle"}};
        const LLMResponse answer = client.call(c, model, options);
        ++run.calls;
        run.usage += answer.usage;
        run.cost += model.cost(answer.usage.input_tokens, 0, answer.usage.cache_write_tokens,
                               answer.usage.cache_read_tokens, answer.usage.cache_write_1h_tokens);
        run.uncached += model.cost(answer.usage.total_input_tokens(), 0, 0, 0, 0);
        return answer;
    };
    for (int t = 1; t <= turns; ++t) {
        if (t == kLateToolTurn) c.add_tool(tool("table_stats", "Summarizes a table of figures."));
        Message question = Message::outgoing_text("Question " + std::to_string(t) + ": " +
                                                  prose(40, 1000 + t) + " Search cache");
        question.cache = true;
        question.compactable = false;
        c.add_message(std::move(question));
        for (int round = 1; round <= 2; ++round) {
            const LLMResponse answer = call(true);
            Message results;
            results.direction = Direction::kOutgoing;
            results.cache = true;
            for (const ContentBlock& b : answer.message.blocks) {
                if (const auto* use = b.get_if<ToolUseBlock>()) {
                    results.blocks.emplace_back(ToolResultBlock{
                        use->id, {TextBlock{run_tool(use->name, t, round)}}, false});
                }
            }
            if (results.blocks.empty()) break;
            c.add_message(std::move(results));
        }
        call(false);
    }
    for (const Saving& s : savings)
        run.compaction_saved += s.tokens * static_cast<std::int64_t>(run.calls - s.at_call);
    return run;
}

}  // namespace
}  // namespace nucleo

int main(int argc, char** argv) {
    using namespace nucleo;
    int turns = 50;
    if (argc == 3 && std::string(argv[1]) == "--turns") turns = std::atoi(argv[2]);
    if (turns <= 0) {
        std::fprintf(stderr, "usage: bench_economy [--turns N]  (N > 0)\n");
        return 2;
    }
    emulator_test::EmulatorProcess emulator;
    const PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    std::vector<Run> runs;
    {
        ProviderClient client = anthropic_client(emulator, loader);
        const ModelSpec cached = sonnet(true);
        runs.push_back(
            run_session("none", client, sonnet(false), std::nullopt, turns, emulator, loader));
        runs.push_back(run_session("seed", client, cached, CachePolicy::kMarkedTurns, turns,
                                   emulator, loader));
        runs.push_back(
            run_session("sliding", client, cached, CachePolicy::kSliding, turns, emulator, loader));
        runs.push_back(run_session("automatic", client, cached, CachePolicy::kAutomatic, turns,
                                   emulator, loader));
    }
    // caching.130: the shipped config (config/nucleo.yaml and its catalog), pointed at the emulator
    // through the variables a user sets, on each provider's current model; no policy named.
    const std::string url = "http://127.0.0.1:" + std::to_string(emulator.port());
    ::setenv("ANTHROPIC_BASE_URL", url.c_str(), 1);
    ::setenv("OPENAI_BASE_URL", (url + "/v1").c_str(), 1);
    ::setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url.c_str(), 1);
    for (const char* key :
         {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"})
        ::setenv(key, "bench", 1);
    const Config shipped =
        Config::load(std::filesystem::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml");
    std::vector<Run> defaults;
    for (const auto& [provider, model_id] :
         {std::pair{"anthropic", "claude-sonnet-5-5"}, std::pair{"openai", "gpt-6-luna"},
          std::pair{"bedrock", "bedrock-claude-sonnet-5-5"}}) {
        ProviderClient client = ProviderClient::from_config(shipped, loader, provider);
        defaults.push_back(run_session(std::string("default ") + provider, client,
                                       shipped.catalog().find(model_id), std::nullopt, turns,
                                       emulator, loader));
    }
    const double none = runs.front().cost;

    std::printf("%d turns, comfort window %" PRId64 " tokens, compaction down to %.0f%%\n", turns,
                kComfortTokens, 100 * kCompactionTarget);
    std::printf("%-18s %6s %12s %11s %12s %11s %9s %12s %16s\n", "policy", "calls", "input",
                "cache read", "cache write", "input cost", "vs none", "compactions",
                "spent / saved");
    bool ok = true;
    const auto row = [&](const Run& r, double ratio) {
        const double spend = r.compaction_saved == 0 ? 0
                                                     : static_cast<double>(r.compaction_spent) /
                                                           static_cast<double>(r.compaction_saved);
        std::printf("%-18s %6d %12" PRId64 " %10.1f%% %12" PRId64 " %10.4f$ %8.3fx %12d %15.1f%%\n",
                    r.name.c_str(), r.calls, r.usage.total_input_tokens(), 100 * r.read_share(),
                    r.usage.cache_write_tokens, r.cost, ratio, r.compactions, 100 * spend);
        if (r.name != "none") ok = ok && r.compactions >= 2 && spend <= 0.05;
    };
    for (const Run& r : runs) {
        const double ratio = none == 0 ? 0 : r.cost / none;
        row(r, ratio);
        if (r.name == "sliding" || r.name == "automatic") {
            ok = ok && r.read_share() >= 0.90 && ratio <= 0.25;
        }
    }
    // The default runs against their own bill with every input token at the input price.
    for (const Run& r : defaults) {
        const double ratio = r.uncached == 0 ? 0 : r.cost / r.uncached;
        row(r, ratio);
        ok = ok && r.read_share() >= 0.90 && ratio <= 0.25;
    }
    std::printf("targets %s\n", ok ? "met" : "NOT met");
    return ok ? 0 : 1;
}
