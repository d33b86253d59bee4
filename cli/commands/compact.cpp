// `nucleo compact --in CONV.json --model ID [--comfort N] [--trigger F] [--target F]
// [--summarizer NAME] [--report]`: the ContextWindowManager's check before a call, run on a stored
// conversation (compaction.10-21). Prints the compacted document on stdout (unchanged when it
// already fits);
// --report prints the level reached, tokens before and after, the summaries made and their cost
// on stderr, so stdout stays a document that pipes into another verb.
//
// Decisions: the summarizer is --summarizer, else the config's `summarizer.plugin`, else the
// embedded default `extractive`; `llm` calls models through the config's catalog and providers
// (nucleo.host.model_call/1). The output reserve is the document's own (output_reserve); a
// document that declares no output is reserved the config's default (budget.102); with no default
// either (`defaults: {output: none}`) it reserves nothing, and the report says so.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_input.hpp"
#include "config_loading.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::cli {

namespace {

double parse_share(const char* option, const std::string& value) {
    try {
        std::size_t used = 0;
        const double f = std::stod(value, &used);
        if (used == value.size() && f > 0 && f <= 1) return f;
    } catch (const std::exception&) {
    }
    throw UsageError{std::string(option) + " must be a number in (0, 1], got '" + value + "'"};
}

void print_report(const CompactionReport& r, const std::string& reserve_note) {
    std::fprintf(stderr, "level           %s\n", to_string(r.level));
    std::fprintf(stderr, "tokens before   %lld\n", static_cast<long long>(r.tokens_before));
    std::fprintf(stderr, "tokens after    %lld\n", static_cast<long long>(r.tokens_after));
    std::fprintf(stderr, "limit           %lld (trigger at %lld, hard limit %lld)\n",
                 static_cast<long long>(r.limit), static_cast<long long>(r.trigger_tokens),
                 static_cast<long long>(r.hard_limit));
    std::fprintf(stderr, "output reserve  %lld%s\n", static_cast<long long>(r.output_reserve),
                 reserve_note.c_str());
    // compaction.106, compaction.108: whether the target was met, and the cache it cost.
    std::fprintf(stderr, "target          %lld tokens, %s\n",
                 static_cast<long long>(r.target_tokens), r.target_met() ? "met" : "NOT met");
    std::fprintf(stderr, "cache given up  %lld tokens\n",
                 static_cast<long long>(r.cached_tokens_given_up));
    std::fprintf(stderr, "summaries       %zu\n", r.summaries.size());
    for (const CompactionSummary& s : r.summaries) {
        std::fprintf(stderr, "  %-10s %-14s %s %lld -> %lld tokens (target %lld)%s%s%s\n",
                     to_string(s.level), s.message_id.c_str(),
                     count_of(static_cast<std::int64_t>(s.replaced.size()), "message").c_str(),
                     static_cast<long long>(s.source_tokens),
                     static_cast<long long>(s.summary_tokens),
                     static_cast<long long>(s.target_tokens), s.cut ? ", cut" : "",
                     s.model.empty() ? "" : ", model ", s.model.c_str());
    }
    for (const std::string& f : r.failures) std::fprintf(stderr, "  failed: %s\n", f.c_str());
    if (r.accepted_above_trigger) {
        std::fprintf(stderr, "accepted above the trigger: input + reserve fit the hard limit\n");
    }
    std::fprintf(stderr, "cost            $%.6f\n", r.cost());
}

int run_compact(const Args& args) {
    ContextWindowSettings settings;
    if (auto v = args.get("comfort"))
        settings.comfort_context_tokens = parse_positive("--comfort", *v);
    if (auto v = args.get("trigger")) settings.compaction_trigger = parse_share("--trigger", *v);
    // compaction.108, compaction.110: the level a compaction brings the conversation down to, at
    // most the trigger (the trigger itself: no hysteresis).
    if (auto v = args.get("target")) {
        settings.compaction_target = parse_share("--target", *v);
        const double trigger = settings.compaction_trigger.value_or(kDefaultCompactionTrigger);
        if (*settings.compaction_target > trigger)
            throw UsageError{"--target " + *v + " must not lie above the trigger (" +
                             (std::ostringstream() << trigger).str() + ")"};
    }
    ConversationContext conversation = load_conversation(args.require("in"));
    const Config config = load_config(args);
    const ModelSpec& model = config.catalog().find(args.require("model"));

    const PluginLoader loader(config.plugin_paths());
    // The config's summarizer (in its helper process when it says so, abi.133), or the one
    // --summarizer names, in process with its default options.
    PluginChoice summarizer{.plugin = "extractive"};
    if (config.summarizer()) summarizer = *config.summarizer();
    if (auto v = args.get("summarizer"); v && *v != summarizer.plugin)
        summarizer = PluginChoice{.plugin = *v};
    // The llm summarizer reaches models through the host: install the service for this run.
    ModelCallService models(config, loader);
    const ModelCallHandler previous = set_model_call_handler(models.handler());
    struct Restore {
        ModelCallHandler handler;
        ~Restore() { set_model_call_handler(std::move(handler)); }
    } restore{previous};

    std::int64_t reserve = 0;
    std::string reserve_note;
    try {
        reserve = output_reserve(conversation, model, config.defaults());  // budget.102
    } catch (const UncorrectableLLMException&) {
        reserve_note = " (the document declares no output)";
    }
    ContextWindowManager manager(
        load_summarizer_plugin(loader, summarizer).make_summarizer(summarizer.options_json),
        settings);
    const CompactionReport report = manager.ensure_fits(conversation, model, reserve);
    std::cout << write_conversation_document(conversation) << "\n";
    if (args.has("report")) print_report(report, reserve_note);
    return kExitOk;
}

}  // namespace

const CommandSpec& compact_command() {
    static const CommandSpec spec{
        "compact",
        "compact a conversation to its window",
        {{"--in", "FILE", "a conversation document v1; - reads stdin"},
         {"--model", "ID", "a catalog id: its context window, comfort window and token counter"},
         {"--comfort", "N", "the comfort window in tokens (default: the catalog's, else 128000)"},
         {"--trigger", "F", "the share of the limit where compaction starts (default 0.92)"},
         {"--target", "F",
          "the share of the limit compaction brings it down to (default: 0.65 of the trigger)"},
         {"--summarizer", "NAME", "a summarizer plugin (default: the config's, else extractive)"},
         {"--report", "", "print level, tokens before/after, summaries and cost on stderr"},
         config_option()},
        "",
        "",
        "Prints the compacted conversation document on stdout (a JSON document already).",
        run_compact};
    return spec;
}

}  // namespace nucleo::cli
