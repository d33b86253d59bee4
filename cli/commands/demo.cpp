// `nucleo demo` (README's first command): a scripted agent session on real parts.
//
// An Agent with two real tools over the project's docs/ folder (search_docs, read_doc) answers
// five questions through a ConversationService that saves to the embedded SQLite store in a
// temporary folder. Over the turns it shows the provider's cache hit rate climbing (every message
// is marked for caching, so each turn reads what the turns before it wrote), crosses a small
// comfort window so the ContextWindowManager compacts and reports its level, then drops the
// conversation from memory and restores it the way a restarted process would (a new store
// instance, service, client and agent over the same file) and continues one more turn. It ends
// with the transcript and a table of tokens, cache reads and cost per turn.
//
// Decisions:
//  - The provider: with a key in the config (ANTHROPIC_API_KEY, OPENAI_API_KEY, the AWS pair)
//    the real provider of the first such default model (claude-sonnet-5-5, gpt-6-luna,
//    bedrock-claude-haiku-5-5), or of --model; with none (or --emulator), nucleo-emulator on a
//    free loopback port, started with --exit-with-parent and stopped at the end, the model
//    priced as its catalog entry says.
//  - The docs: --docs DIR, else the installed copy, else the source tree's (demo_support.hpp).
//  - The summarizer is the offline `extractive` plugin, so compaction costs no model call.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "args.hpp"
#include "commands.hpp"
#include "commands/demo_support.hpp"
#include "config_loading.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli::demo {

/// The input of the search_docs tool.
struct SearchDocsInput {
    std::string query;
};

/// The input of the read_doc tool.
struct ReadDocInput {
    std::string name;
};

}  // namespace nucleo::cli::demo

template <>
struct nucleo::Describe<nucleo::cli::demo::SearchDocsInput> {
    static constexpr std::string_view name = "SearchDocsInput";
    static auto fields() {
        return std::tuple(schema::field("query", &nucleo::cli::demo::SearchDocsInput::query)
                              .required()
                              .description("A word or phrase to look for, e.g. compaction"));
    }
};

template <>
struct nucleo::Describe<nucleo::cli::demo::ReadDocInput> {
    static constexpr std::string_view name = "ReadDocInput";
    static auto fields() {
        return std::tuple(schema::field("name", &nucleo::cli::demo::ReadDocInput::name)
                              .required()
                              .description("The file's name, e.g. operations.md"));
    }
};

namespace nucleo::cli {

namespace {

using demo::DocsLibrary;

/// The comfort window the demo's agent keeps to: small, so four turns of tool output cross it
/// once, and LIGHT brings it back under the halfway line to the trigger (compaction.116).
constexpr std::int64_t kComfortTokens = 11000;
/// The best measured cache policy (bench/economy, bench/RESULTS.md) and the compaction target.
constexpr CachePolicy kDemoCachePolicy = CachePolicy::kSliding;
constexpr double kDemoCompactionTarget = 0.6;
constexpr const char* kUser = "demo-user";

/// The scripted questions. The emulator calls the first tool with the question's last word, so
/// each ends with the term to search for; a real model reads them as plain questions.
const std::vector<std::string> kQuestions = {
    "What do the docs say about caching?",
    "How do the docs describe compaction?",
    "Where are conversations kept? Search for SQLite",
    "What keeps two hosts from writing one conversation? Look up fencing",
    "Now that you are restored: which provider formats does the emulator speak? Search emulator",
};
constexpr std::size_t kTurnsBeforeRestart = 4;

bool has_credentials(const ProviderConfig& p) {
    return !p.credentials.api_key.empty() ||
           (!p.credentials.access_key_id.empty() && !p.credentials.secret_access_key.empty());
}

/// Which model, and whether it is called for real.
struct Target {
    ModelSpec model;
    bool offline = true;
};

Target choose_target(const Config& config, const Args& args) {
    const bool forced_offline = args.has("emulator");
    if (auto id = args.get("model")) {
        const ModelSpec& m = config.catalog().find(*id);
        return {m, forced_offline || !has_credentials(config.provider(m.provider))};
    }
    if (!forced_offline) {
        for (const char* id : {"claude-sonnet-5-5", "gpt-6-luna", "bedrock-claude-haiku-5-5"}) {
            const ModelSpec* m = config.catalog().try_find(id);
            if (m != nullptr && has_credentials(config.provider(m->provider))) return {*m, false};
        }
    }
    const ModelSpec* m = config.catalog().try_find("claude-sonnet-5-5");
    if (m == nullptr) {
        throw Error(ErrorKind::kNotFound,
                    "the catalog has no claude-sonnet-5-5 for the offline demo; pass --model ID");
    }
    return {*m, true};
}

/// The provider instance of the model; offline, aimed at the emulator with stand-in credentials
/// as ask's and chat's --emulator are (demo::aimed_at).
ProviderClient make_client(const Config& config, const Target& target,
                           const demo::EmulatorChild* emulator) {
    ProviderConfig pc = config.provider(target.model.provider);
    if (emulator != nullptr) pc = demo::aimed_at(std::move(pc), *emulator);  // cli.102
    const PluginLoader loader(config.plugin_paths());
    return ProviderClient(pc, loader.load(pc.plugin).make_provider(pc.options_json));
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

AgentOptions agent_options(const Config& config, const DocsLibrary& docs);
void add_tools(Agent& agent, const DocsLibrary& docs);

/// What lives as long as one "process" of the demo, and what a restart throws away: the store
/// instance over the SQLite file, the service, the client and the agent with its tools.
struct Session {
    Session(const Config& config, const Target& target, const demo::EmulatorChild* emulator,
            const DocsLibrary& docs, const std::string& db_path)
        : store(PluginLoader(config.plugin_paths())
                    .load("sqlite")
                    .make_store("{\"path\":" + json_string(db_path) + "}")),
          client(make_client(config, target, emulator)),
          service(options(store)),
          agent(client, target.model, agent_options(config, docs)) {
        add_tools(agent, docs);
    }

    static ConversationServiceOptions options(const StoreInstance& store) {
        ConversationServiceOptions o;
        o.persistent.emplace(store);
        o.cleanup_thread = false;  // a one-shot program: nothing to evict in the background
        return o;
    }

    StoreInstance store;
    ProviderClient client;
    ConversationService service;
    Agent agent;
};

AgentOptions agent_options(const Config& config, const DocsLibrary& docs) {
    AgentOptions o;
    o.max_rounds = 6;
    o.objective =
        "You answer questions about Nucleo, a C++20 runtime for the conversations of LLM agents, "
        "from its documentation only. Search the docs with search_docs, read a whole file with "
        "read_doc, and answer in two or three sentences naming the files you used.\n\n" +
        docs.outline();
    // Every message marked for caching: each turn's call reads the prefix the turns before it
    // wrote (caching.8: cache_all_messages), which is what makes the hit rate climb.
    o.cache_all_messages = true;
    // caching.105: the policy that read the most from the cache in bench/economy.
    o.cache_policy = kDemoCachePolicy;
    // compaction.108: down to 60% of the window once the trigger is crossed, so compactions are
    // rare and each rewrites the cached prefix once.
    ContextWindowSettings window{kComfortTokens, std::nullopt};
    window.compaction_target = kDemoCompactionTarget;
    o.window = std::make_shared<ContextWindowManager>(
        PluginLoader(config.plugin_paths()).load("extractive").make_summarizer(), window);
    return o;
}

void add_tools(Agent& agent, const DocsLibrary& docs) {
    agent.add_tool<demo::SearchDocsInput>(
        "search_docs",
        "Searches the project's docs (Markdown files) for a word or phrase and returns the "
        "paragraphs that mention it, with file, line and section.",
        [&docs](const demo::SearchDocsInput& in) { return docs.search(in.query); });
    agent.add_tool<demo::ReadDocInput>(
        "read_doc", "Reads one file of the project's docs by name.",
        [&docs](const demo::ReadDocInput& in) { return docs.read(in.name); });
}

double hit_rate(const Usage& u) {
    const std::int64_t total = u.total_input_tokens();
    return total == 0 ? 0.0 : static_cast<double>(u.cache_read_tokens) / static_cast<double>(total);
}

std::string first_line(std::string_view text, std::size_t max = 110) {
    std::string line(text.substr(0, text.find('\n')));
    if (line.size() > max) line = line.substr(0, max) + "...";
    return line;
}

struct TurnRow {
    int number = 0;
    TurnReport report;
    bool restored = false;
};

/// One turn with live output: the question, each tool call and its result's first line, the
/// answer as it streams, compaction when it runs, and the turn's usage.
TurnRow run_one(Agent& agent, ConversationService& service, const std::shared_ptr<Thinker>& thinker,
                int number, const std::string& question, bool restored,
                const demo::InterruptWatch& interrupt) {
    std::printf("\n== turn %d%s\nuser       %s\n", number, restored ? " (after the restore)" : "",
                question.c_str());
    bool in_text = false;
    const auto end_text = [&] {
        if (in_text) std::printf("\n");
        in_text = false;
    };
    TurnCallbacks cb;
    cb.on_text_delta = [&](std::string_view t) {
        if (!in_text) std::printf("assistant  ");
        in_text = true;
        std::fwrite(t.data(), 1, t.size(), stdout);
        std::fflush(stdout);
    };
    cb.on_discard = [&](std::string_view why) {
        end_text();
        std::printf("           (answer discarded: %.*s)\n", static_cast<int>(why.size()),
                    why.data());
    };
    cb.on_tool_call_started = [&](const ToolCallEvent& e) {
        end_text();
        std::printf("tool call  %s %s\n", e.name.c_str(), e.input_json.c_str());
    };
    cb.on_tool_call_finished = [&](const ToolCallEvent&, const ToolOutput& out) {
        std::printf("  %s %s (%zu bytes)\n", out.is_error ? "error:" : "->",
                    first_line(out.text).c_str(), out.text.size());
    };
    cb.on_compaction = [&](const CompactionReport& c) {
        end_text();
        std::printf("compaction level %s: %" PRId64 " -> %" PRId64
                    " tokens, %zu summaries (comfort window %" PRId64 ", compacts above %" PRId64
                    ")\n",
                    to_string(c.level), c.tokens_before, c.tokens_after, c.summaries.size(),
                    c.limit, c.trigger_tokens);
    };
    cb.on_round_end = [&](const RoundReport&) { end_text(); };
    TurnRow row{number, agent.run_turn(service, thinker, question, cb, &interrupt.token()),
                restored};
    end_text();
    if (interrupt.received() != 0) {
        throw Error(ErrorKind::kInternal,
                    std::string("interrupted by ") +
                        (interrupt.received() == SIGINT ? "SIGINT" : "SIGTERM") + " in turn " +
                        std::to_string(number) +
                        ": stopped at a boundary (the turn was saved); stopping the emulator and "
                        "removing the temporary folder");
    }
    const TurnReport& r = row.report;
    if (r.end != TurnEnd::kFinalAnswer) {
        std::printf("           (the turn ended: %s)\n", to_string(r.end));
    }
    std::printf("turn %d     %d rounds, input %" PRId64 ", cache write %" PRId64
                ", cache read %" PRId64 ", cache hit rate %.1f%%, output %" PRId64 ", $%.6f\n",
                number, r.rounds, r.usage.input_tokens, r.usage.cache_write_tokens,
                r.usage.cache_read_tokens, 100.0 * hit_rate(r.usage), r.usage.output_tokens,
                r.cost);
    std::fflush(stdout);
    return row;
}

/// The conversation as a reader sees it, each message shortened to four lines for the screen.
void print_transcript(const ConversationContext& conversation) {
    std::printf("\n== transcript (each message shortened to 4 lines)\n");
    std::istringstream in(Transcript::render(conversation));
    std::string line;
    int shown = 0;
    int hidden = 0;
    const auto flush_hidden = [&] {
        if (hidden > 0) std::printf("    [... %d more lines]\n", hidden);
        hidden = 0;
    };
    while (std::getline(in, line)) {
        // Transcript::render starts every message with its role on a line of its own.
        if (line == "user:" || line == "assistant:") {
            flush_hidden();
            shown = 0;
            std::printf("\n%s\n", line.c_str());
            continue;
        }
        if (line.empty()) continue;
        if (++shown > 4) {
            ++hidden;
            continue;
        }
        if (line.size() > 150) line = line.substr(0, 150) + "...";
        std::printf("    %s\n", line.c_str());
    }
    flush_hidden();
}

void print_table(const std::vector<TurnRow>& rows) {
    std::printf("\n== per turn (cache hit rate = cache reads / all input the provider read)\n");
    std::printf("%4s %6s %5s %8s %11s %10s %9s %7s %-10s %10s\n", "turn", "rounds", "tools",
                "input", "cache write", "cache read", "hit rate", "output", "compaction", "cost");
    UsageTotals totals;
    for (const TurnRow& row : rows) {
        const TurnReport& r = row.report;
        totals.add(r);
        std::printf("%4d %6d %5zu %8" PRId64 " %11" PRId64 " %10" PRId64 " %8.1f%% %7" PRId64
                    " %-10s %10.6f%s\n",
                    row.number, r.rounds, r.tool_calls, r.usage.input_tokens,
                    r.usage.cache_write_tokens, r.usage.cache_read_tokens,
                    100.0 * hit_rate(r.usage), r.usage.output_tokens, to_string(r.compaction),
                    r.cost, row.restored ? "  restored" : "");
    }
    std::printf("%4s %6d %5zu %8" PRId64 " %11" PRId64 " %10" PRId64 " %8.1f%% %7" PRId64
                " %-10s %10.6f\n",
                "all", totals.rounds, totals.tool_calls, totals.usage.input_tokens,
                totals.usage.cache_write_tokens, totals.usage.cache_read_tokens,
                100.0 * hit_rate(totals.usage), totals.usage.output_tokens, "", totals.cost);

    // What the table shows, in words, from its own numbers.
    const TurnRow* best = &rows.front();
    std::string compacted;
    for (const TurnRow& row : rows) {
        if (hit_rate(row.report.usage) > hit_rate(best->report.usage)) best = &row;
        if (row.report.compaction != CompactionLevel::kNone) {
            compacted += (compacted.empty() ? "" : ", ") + std::to_string(row.number) + " (" +
                         to_string(row.report.compaction) + ")";
        }
    }
    std::printf(
        "\ncache       hit rate %.1f%% in turn 1, %.1f%% at best (turn %d): each turn read "
        "the prefix the turns before it wrote\n",
        100.0 * hit_rate(rows.front().report.usage), 100.0 * hit_rate(best->report.usage),
        best->number);
    std::printf(
        "compaction  in turn(s) %s: earlier tool results were summarized, so the prefix "
        "changed there and was cached anew\n",
        compacted.empty() ? "none" : compacted.c_str());
}

std::vector<std::string> message_ids(const ConversationContext& c) {
    std::vector<std::string> ids;
    for (const auto& m : c.messages()) ids.push_back(m.id);
    return ids;
}

int run_demo(const Args& args) {
    // Before any thread starts: Ctrl-C becomes a cancellation, and the cleanup below still runs.
    const demo::InterruptWatch interrupt;
    const DocsLibrary docs(args.get("docs") ? std::filesystem::path(*args.get("docs"))
                                            : demo::default_docs_dir());
    const Config config = load_config(args);
    // The demo reports compaction itself; the runtime's own records stay quiet below warnings
    // unless the user asked for them.
    const Target target = choose_target(config, args);

    // Destroyed in reverse: the emulator stops before its folder goes.
    demo::TempDir tmp("nucleo-demo-");
    std::optional<demo::EmulatorChild> emulator;
    if (target.offline) emulator.emplace(demo::find_emulator(), tmp.path());
    const std::string db = (tmp.path() / "conversations.db").string();

    std::printf("Nucleo demo: an agent answers questions from %zu docs (%zu bytes) in %s\n",
                docs.files(), docs.bytes(), docs.dir().string().c_str());
    if (emulator) {
        std::printf("provider   nucleo-emulator pid %d at %s (offline: no provider key set)\n",
                    static_cast<int>(emulator->pid()), emulator->base_url().c_str());
    } else {
        std::printf("provider   %s (a key is set: real calls, real cost)\n",
                    target.model.provider.c_str());
    }
    std::printf("model      %s, priced as the catalog says\n", target.model.id.c_str());
    std::printf("store      SQLite at %s\n", db.c_str());
    std::printf("window     comfort %" PRId64
                " tokens; compaction starts above %.0f%% of it and goes down to %.0f%%\n",
                kComfortTokens, 100.0 * kDefaultCompactionTrigger, 100.0 * kDemoCompactionTarget);
    std::printf("cache      policy %s, the best measured in bench/economy (bench/RESULTS.md)\n",
                to_string(kDemoCachePolicy));
    std::fflush(stdout);

    std::vector<TurnRow> rows;
    std::string conversation_id;
    std::vector<std::string> saved_ids;
    const demo::EmulatorChild* provider = emulator ? &*emulator : nullptr;
    {
        Session s(config, target, provider, docs, db);
        auto thinker = s.agent.make_thinker(kUser, OutputSize::kShort);
        conversation_id = thinker->mint_conversation_id();
        for (std::size_t i = 0; i < kTurnsBeforeRestart; ++i) {
            rows.push_back(run_one(s.agent, s.service, thinker, static_cast<int>(i + 1),
                                   kQuestions[i], false, interrupt));
        }
        const auto conversation = s.service.obtain_conversation(thinker).get();
        saved_ids = message_ids(*conversation);
        s.service.release(*thinker);
        const auto versions = PersistentStore(s.store).versions(kUser, conversation_id);
        std::printf(
            "\n== saved: conversation %s, %zu messages, %zu versions in SQLite "
            "(one per save boundary)\n",
            conversation_id.c_str(), saved_ids.size(), versions.size());
    }
    std::printf(
        "== dropped: store instance, service, agent and client are gone; nothing is in "
        "memory\n");

    std::size_t final_messages = 0;
    {
        // A restarted process: a new store instance, service, client and agent, same file.
        Session s(config, target, provider, docs, db);
        auto thinker = s.agent.make_thinker(kUser, OutputSize::kShort);
        thinker->set_conversation_id(conversation_id);
        {
            const auto restored = s.service.obtain_conversation(thinker).get();
            const std::vector<std::string> ids = message_ids(*restored);
            const std::size_t tools = restored->declared_tools().size();
            s.service.release(*thinker);
            if (ids != saved_ids) {
                throw Error(ErrorKind::kInternal,
                            "the restored conversation differs from the saved one (" +
                                count_of(static_cast<std::int64_t>(ids.size()), "message") + ", " +
                                std::to_string(saved_ids.size()) + " saved)");
            }
            std::printf(
                "== restored: conversation %s from SQLite, %zu messages (the same ids), "
                "%zu tools\n",
                conversation_id.c_str(), ids.size(), tools);
        }
        for (std::size_t i = kTurnsBeforeRestart; i < kQuestions.size(); ++i) {
            rows.push_back(run_one(s.agent, s.service, thinker, static_cast<int>(i + 1),
                                   kQuestions[i], true, interrupt));
        }
        const auto conversation = s.service.obtain_conversation(thinker).get();
        final_messages = conversation->messages().size();
        print_transcript(*conversation);
        s.service.release(*thinker);
    }
    std::printf("== continued: %zu messages after the restore (%zu before it)\n", final_messages,
                saved_ids.size());
    print_table(rows);

    if (emulator) {
        const int status = emulator->stop();
        std::printf("\nemulator pid %d stopped (exit status %d)\n",
                    static_cast<int>(emulator->pid()), status);
        if (status != 0) {
            throw Error(ErrorKind::kInternal, "nucleo-emulator exited with status " +
                                                  std::to_string(status) + " when stopped");
        }
    }
    if (!tmp.remove()) {
        throw Error(ErrorKind::kInternal, "could not remove " + tmp.path().string());
    }
    std::printf("removed %s\n", tmp.path().string().c_str());
    return kExitOk;
}

}  // namespace

const CommandSpec& demo_command() {
    static const CommandSpec spec{
        "demo",
        "a scripted agent session over docs/: tools, cache, compaction, SQLite, restore",
        {{"--docs", "DIR",
          "the Markdown files to search (default: the installed docs, else the source tree's "
          "docs/)"},
         {"--model", "ID",
          "a catalog model (default: the first of claude-sonnet-5-5, gpt-6-luna, "
          "bedrock-claude-haiku-5-5 whose provider has a key; claude-sonnet-5-5 offline)"},
         {"--emulator", "", "run against nucleo-emulator even when a key is set"},
         config_option()},
        "",
        "",
        "Runs a scripted agent session: an agent searches and reads the docs folder with two "
        "tools, the cache hit rate climbs over the turns, a small comfort window makes "
        "compaction run, the conversation is saved to SQLite, dropped and restored as a "
        "restarted process would, and the session ends with the transcript and a table of "
        "tokens and cost per turn. With no provider key set it runs offline against "
        "nucleo-emulator (started beside this binary on a free loopback port, stopped at the "
        "end).",
        run_demo};
    return spec;
}

}  // namespace nucleo::cli
