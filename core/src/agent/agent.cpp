// The agent loop (core/include/nucleo/agent.hpp): a chat thinker as a C++ API.
#include "nucleo/agent.hpp"
#include "nucleo/artifacts.hpp"

#include <mutex>
#include <random>
#include <unordered_set>

#include "agent/exchanges.hpp"
#include "common/log_internal.hpp"
#include "conversation/tool_check.hpp"
#include "nucleo/budget.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {

const char* to_string(TurnEnd end) noexcept {
    switch (end) {
        case TurnEnd::kFinalAnswer:
            return "final_answer";
        case TurnEnd::kRoundLimit:
            return "round_limit";
        case TurnEnd::kCancelled:
            return "cancelled";
    }
    return "unknown";
}

namespace {

double hit_rate(const Usage& u) noexcept {
    const std::int64_t total = u.total_input_tokens();
    return total <= 0 ? 0.0 : static_cast<double>(u.cache_read_tokens) / static_cast<double>(total);
}

std::string answer_text(const Message& m) {
    std::string text;
    for (const auto& b : m.blocks) {
        if (const auto* t = b.get_if<TextBlock>()) text += t->text;
    }
    return text;
}

bool cancelled(const CancellationToken* cancel) {
    return cancel != nullptr && cancel->cancelled();
}

std::string job_id() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char* hex = "0123456789abcdef";
    std::string id = "agent-job-";
    std::uint64_t v = rng();
    for (int i = 0; i < 16; ++i, v >>= 4) id += hex[v & 0xf];
    return id;
}

}  // namespace

double TurnReport::cache_hit_rate() const noexcept {
    return hit_rate(usage);
}

void UsageTotals::add(const TurnReport& turn) {
    ++turns;
    rounds += turn.rounds;
    usage += turn.usage;
    cost += turn.cost;
    compaction_cost += turn.compaction_cost;
    tool_calls += turn.tool_calls;
    tool_errors += turn.tool_errors;
}

double UsageTotals::cache_hit_rate() const noexcept {
    return hit_rate(usage);
}

struct Agent::Impl {
    Impl(ProviderClient& c, ModelSpec m, AgentOptions o)
        : client(c), model(std::move(m)), options(std::move(o)) {}

    ProviderClient& client;
    ModelSpec model;
    AgentOptions options;
    std::vector<AgentTool> tools;
    std::vector<std::shared_ptr<ToolSource>> sources;
    mutable std::mutex sources_mutex;
    std::vector<AgentTool> source_tools;  // the sources' tools as of the last refresh
    mutable std::mutex totals_mutex;
    UsageTotals totals;

    const AgentTool* find(std::string_view name) const {
        for (const auto& t : tools) {
            if (t.definition.name == name) return &t;
        }
        return nullptr;
    }

    std::vector<ToolDefinitionBlock> palette() const {
        std::vector<ToolDefinitionBlock> out;
        out.reserve(tools.size());
        for (const auto& t : tools) out.push_back(t.definition);
        std::lock_guard<std::mutex> lock(sources_mutex);
        for (const auto& t : source_tools) out.push_back(t.definition);
        return out;
    }

    std::optional<AgentTool> find_source_tool(std::string_view name) const {
        std::lock_guard<std::mutex> lock(sources_mutex);
        for (const auto& t : source_tools) {
            if (t.definition.name == name) return t;
        }
        return std::nullopt;
    }

    /// mcp.20: the sources' tools, asked before each round. A name already taken or a
    /// declaration no provider takes (tools.102) is left out and logged, never thrown into the
    /// turn; a source that throws keeps the tools it had.
    void refresh_sources() {
        std::vector<std::shared_ptr<ToolSource>> asked;
        {
            std::lock_guard<std::mutex> lock(sources_mutex);
            asked = sources;
        }
        if (asked.empty()) return;
        std::unordered_set<std::string> names;
        for (const auto& t : tools) names.insert(t.definition.name);
        std::vector<AgentTool> fresh;
        try {
            for (const auto& source : asked) {
                auto taken = [&names](std::string_view n) {
                    return names.count(std::string(n)) > 0;
                };
                for (AgentTool& t : source->tools(taken)) {
                    try {
                        internal::check_tool_declaration(t.definition, "a tool source");
                    } catch (const Error& e) {
                        NUCLEO_LOG_WARN("agent: a source's tool is left out: {}", e.what());
                        continue;
                    }
                    if (!names.insert(t.definition.name).second) {
                        NUCLEO_LOG_WARN(
                            "agent: a source's tool '{}' is left out: the name is taken",
                            t.definition.name);
                        continue;
                    }
                    fresh.push_back(std::move(t));
                }
            }
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("agent: a tool source failed; its tools stay as they were: {}",
                            e.what());
            return;
        }
        std::lock_guard<std::mutex> lock(sources_mutex);
        source_tools = std::move(fresh);
    }

    /// Runs one tool call. Every failure becomes an is_error result the model reads: an unknown
    /// tool, arguments that do not read, a throw of any kind (never a crash).
    /// The artifact tools the conversation declares itself (get_artifact_field,
    /// search_artifact_content; tools.14) are answered here from its
    /// registry's intact data unless the host registered a tool of that name.
    ToolOutput run_tool(const ToolUseBlock& use, const CancellationToken& cancel,
                        const ConversationContext& conversation) const {
        const AgentTool* tool = find(use.name);
        const std::optional<AgentTool> sourced =
            tool == nullptr ? find_source_tool(use.name) : std::nullopt;
        if (sourced) tool = &*sourced;
        if (tool == nullptr) {
            if (auto answer = answer_artifact_tool(conversation.artifacts(), use)) {
                ToolOutput out;
                out.is_error = answer->is_error;
                for (const ContentBlock& b : answer->content) {
                    if (const auto* text = b.get_if<TextBlock>()) out.text += text->text;
                }
                return out;
            }
            std::vector<std::shared_ptr<ToolSource>> asked;
            {
                std::lock_guard<std::mutex> lock(sources_mutex);
                asked = sources;
            }
            for (const auto& source : asked) {
                if (auto answer = source->answer_unknown(use.name)) return *answer;
            }
            return ToolOutput::error("unknown tool '" + use.name + "'");
        }
        if (!tool->run) return ToolOutput::error("tool '" + use.name + "' has no implementation");
        try {
            return tool->run(use.input_json, cancel);
        } catch (const std::exception& e) {
            return ToolOutput::error("tool '" + use.name + "' failed: " + e.what());
        } catch (...) {
            return ToolOutput::error("tool '" + use.name + "' failed with an unknown exception");
        }
    }

    /// conversation.11: a put is idempotent; the agent's task goes under "task" only
    /// while the conversation has not rendered and has no such slot (a resumed conversation keeps
    /// its own, composed freely until its first render).
    void prepare_conversation(ConversationContext& conversation) const {
        if (!options.objective.empty() && !conversation.frozen() &&
            conversation.objective_slot("task") == nullptr) {
            conversation.put_main_objective("task", options.objective);
        }
        conversation.add_tools(palette());
    }

    TurnReport run(ConversationContext& conversation, std::string user_message,
                   const TurnCallbacks& cb, const CancellationToken* cancel,
                   const std::function<void()>& save);
    TurnReport run_rounds(ConversationContext& conversation, std::string user_message,
                          const TurnCallbacks& cb, const CancellationToken* cancel,
                          const std::function<void()>& save);

    /// answers.109: a turn that ends with a call's error still counts in the totals with what it
    /// billed up to the error (its earlier rounds and the failed call's billed calls).
    void count_failed_turn(const TurnReport& report) {
        std::lock_guard<std::mutex> lock(totals_mutex);
        totals.add(report);
    }
};

TurnReport Agent::Impl::run(ConversationContext& conversation, std::string user_message,
                            const TurnCallbacks& cb, const CancellationToken* cancel,
                            const std::function<void()>& save) {
    refresh_sources();
    prepare_conversation(conversation);
    // caching.105: the agent's cache policy, when it names one, is the conversation's.
    if (options.cache_policy) conversation.set_cache_policy(options.cache_policy);

    // ownership.105: a turn that fails leaves the conversation as it was before it.
    const agent_internal::TurnRollback rollback(conversation);
    try {
        return run_rounds(conversation, std::move(user_message), cb, cancel, save);
    } catch (...) {
        try {
            rollback.restore(conversation);
        } catch (const std::exception& e) {
            NUCLEO_LOG_ERROR(
                "agent: putting conversation '{}' back as before the failed turn "
                "failed: {}",
                conversation.conversation_id(), e.what());
        }
        throw;
    }
}

TurnReport Agent::Impl::run_rounds(ConversationContext& conversation, std::string user_message,
                                   const TurnCallbacks& cb, const CancellationToken* cancel,
                                   const std::function<void()>& save) {
    const auto started = std::chrono::steady_clock::now();
    TurnReport report;
    // compaction.31, compaction.109: the user's message and the final answers of the most recent
    // exchanges are kept word for word; older ones may be summarized.
    Message user = Message::outgoing_text(std::move(user_message));
    user.compactable = false;
    user.cache = options.cache_all_messages;
    user.response_handler = options.handler;
    conversation.add_message(std::move(user));
    agent_internal::pin_recent_exchanges(conversation, options.pinned_exchanges);
    // ownership.105: the user's message is saved with the turn's first answer, not before it, so
    // a turn that fails leaves the store as it was.

    // A token no one cancels stands in when the caller gave none, so tools always get one.
    const CancellationToken never;
    const CancellationToken& tool_cancel = cancel != nullptr ? *cancel : never;

    StreamCallbacks stream;
    if (options.stream && (cb.on_text_delta || cb.on_thinking_delta)) {
        if (cb.on_text_delta)
            stream.on_text_delta = [&cb](std::size_t, std::string_view t) { cb.on_text_delta(t); };
        if (cb.on_thinking_delta)
            stream.on_thinking_delta = [&cb](std::size_t, std::string_view t) {
                cb.on_thinking_delta(t);
            };
        stream.on_discard = [&cb](std::string_view why) {
            if (cb.on_discard) cb.on_discard(why);
        };
    }
    const bool streaming = stream.any() && client.capabilities().streaming;

    for (int round = 1;; ++round) {
        // Cancellation stops the turn at the next boundary: before a call.
        if (cancelled(cancel)) {
            report.end = TurnEnd::kCancelled;
            break;
        }
        if (round > options.max_rounds) {
            report.end = TurnEnd::kRoundLimit;
            break;
        }
        RoundReport rr;
        rr.round = round;
        // Add-only: a per-round refresh costs nothing (tools.1); a source's new tools arrive here
        // as late tools (tools.4, mcp.22).
        if (round > 1) refresh_sources();
        conversation.add_tools(palette());

        // compaction.4: the window is checked before every call to the model.
        if (options.window) {
            // budget.102: the reserve the call will send, the client's defaults included.
            const std::int64_t reserve =
                output_reserve(conversation, model, client.with_defaults(options.binding));
            CompactionReport c = options.window->ensure_fits(conversation, model, reserve);
            rr.compaction = c.level;
            rr.compaction_cost = c.cost();
            rr.context_tokens = c.tokens_after;
            if (c.level > report.compaction) report.compaction = c.level;
            if (c.compacted() && cb.on_compaction) cb.on_compaction(c);
        }

        CallOptions call;
        call.binding = options.binding;
        call.cancel = cancel;
        call.extra_headers = options.extra_headers;
        call.stream = streaming ? &stream : nullptr;
        LLMResponse r;
        try {
            r = client.call(conversation, model, call);
        } catch (const Error& e) {
            // answers.109: what the provider billed before the call failed (a truncated call
            // whose retry failed, a context-window stop) and the compaction before it are the
            // turn's spend all the same.
            report.usage += e.billed_usage();
            report.cost += e.billed_cost() + rr.compaction_cost;
            report.compaction_cost += rr.compaction_cost;
            // A call cut short by the token is the cancellation boundary, not a failure.
            if (cancelled(cancel)) {
                report.end = TurnEnd::kCancelled;
                break;
            }
            count_failed_turn(report);
            throw;
        }
        ++report.rounds;
        rr.usage = r.usage;
        rr.cost = r.cost;
        rr.stop_reason = r.stop_reason;
        rr.cache_miss = r.cache_miss;
        rr.answered = r.appended;
        rr.escalated = r.escalated;
        report.usage += r.usage;
        report.cost += r.cost + rr.compaction_cost;
        report.compaction_cost += rr.compaction_cost;

        // Without a stream the host still sees the text, whole, once the call returned.
        if (!streaming) {
            for (const auto& b : r.message.blocks) {
                if (const auto* t = b.get_if<ThinkingBlock>(); t && cb.on_thinking_delta)
                    cb.on_thinking_delta(t->thinking);
                if (const auto* t = b.get_if<TextBlock>(); t && cb.on_text_delta)
                    cb.on_text_delta(t->text);
            }
        }

        std::vector<ToolUseBlock> uses;
        for (const auto& b : r.message.blocks) {
            if (const auto* u = b.get_if<ToolUseBlock>()) uses.push_back(*u);
        }
        if (uses.empty()) {
            report.end = TurnEnd::kFinalAnswer;
            // answers.102: an empty answer (a refusal, a content filter, nothing to add after
            // tool results) ends the turn with no answer text and nothing stored; the round's
            // stop reason says why.
            if (r.appended) {
                // compaction.31: final answers are kept word for word.
                conversation.set_message_compactable(r.message.id, false);
                report.answer = answer_text(r.message);
                report.answer_message_id = r.message.id;
            }
            report.round_reports.push_back(rr);
            if (cb.on_round_end) cb.on_round_end(rr);
            break;
        }

        // Every call gets a result, so the conversation stays answerable (a provider refuses a
        // tool_use without its tool_result): a call the cancellation overtook gets an error result.
        Message results;
        results.direction = Direction::kOutgoing;
        results.cache = options.cache_all_messages;
        for (const auto& use : uses) {
            ToolCallEvent ev{use.id, use.name, use.input_json, round};
            ToolOutput out;
            if (cancelled(cancel)) {
                out = ToolOutput::error("cancelled before the tool ran");
            } else {
                if (cb.on_tool_call_started) cb.on_tool_call_started(ev);
                out = run_tool(use, tool_cancel, conversation);
                if (cb.on_tool_call_finished) cb.on_tool_call_finished(ev, out);
            }
            ++rr.tool_calls;
            if (out.is_error) ++rr.tool_errors;
            ToolResultBlock block;
            block.tool_use_id = use.id;
            block.is_error = out.is_error;
            // A provider refuses an empty text block: an empty result says so in words.
            if (!out.blocks.empty())
                block.content = std::move(out.blocks);
            else
                block.content.emplace_back(TextBlock{out.text.empty() ? "(no output)" : out.text});
            results.blocks.emplace_back(std::move(block));
        }
        conversation.add_message(std::move(results));
        report.tool_calls += rr.tool_calls;
        report.tool_errors += rr.tool_errors;
        report.round_reports.push_back(rr);
        if (save) save();  // boundary: a response out (and the tool results it asked for)
        if (cb.on_round_end) cb.on_round_end(rr);
    }

    report.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started);
    if (save) save();  // boundary: the answer out, the round limit, or the cancellation
    {
        std::lock_guard<std::mutex> lock(totals_mutex);
        totals.add(report);
    }
    return report;
}

Agent::Agent(ProviderClient& client, ModelSpec model, AgentOptions options)
    : impl_(std::make_unique<Impl>(client, std::move(model), std::move(options))) {
    // answers.108: a model of another provider than the client's is refused here, naming both.
    client.check_model(impl_->model);
    if (impl_->options.max_rounds < 1)
        throw Error(ErrorKind::kInvalidArgument,
                    "AgentOptions.max_rounds must be at least 1 (got " +
                        std::to_string(impl_->options.max_rounds) + ")");
}

Agent::~Agent() = default;

void Agent::add_tool(AgentTool tool) {
    // tools.102: a name and schema every provider takes, checked here, at the declaration.
    internal::check_tool_declaration(tool.definition, "Agent::add_tool");
    if (impl_->find(tool.definition.name) != nullptr)
        throw Error(
            ErrorKind::kInvalidArgument,
            "Agent::add_tool: a tool named '" + tool.definition.name + "' is already registered");
    impl_->tools.push_back(std::move(tool));
}

void Agent::add_tool_source(std::shared_ptr<ToolSource> source) {
    if (!source) throw Error(ErrorKind::kInvalidArgument, "Agent::add_tool_source: no source");
    std::lock_guard<std::mutex> lock(impl_->sources_mutex);
    impl_->sources.push_back(std::move(source));
}

std::vector<ToolDefinitionBlock> Agent::palette() const {
    return impl_->palette();
}

std::shared_ptr<Thinker> Agent::make_thinker(std::string user_id,
                                             std::optional<OutputDeclaration> output,
                                             std::optional<Depth> depth, std::string name) const {
    auto t = std::make_shared<Thinker>();
    t->name = std::move(name);
    t->job_id = job_id();
    t->user_id = std::move(user_id);
    t->workflow_id = t->job_id;
    t->depth = depth;
    t->output = output;
    // The palette as it stands now, by value: the thinker is shared with the service and may
    // outlive this agent (tools added later reach the conversation at the turn's own add_tools).
    t->palette = [palette = impl_->palette()] { return palette; };
    return t;
}

TurnReport Agent::run_turn(ConversationContext& conversation, std::string user_message,
                           const TurnCallbacks& callbacks, const CancellationToken* cancel) {
    return impl_->run(conversation, std::move(user_message), callbacks, cancel, {});
}

TurnReport Agent::run_turn(ConversationService& service, const std::shared_ptr<Thinker>& thinker,
                           std::string user_message, const TurnCallbacks& callbacks,
                           const CancellationToken* cancel) {
    if (!thinker) throw Error(ErrorKind::kInvalidArgument, "Agent::run_turn: no thinker");
    std::shared_ptr<ConversationContext> conversation =
        service.obtain_conversation(thinker, impl_->options.handler).get();
    bool saved = false;
    const auto save = [&] {
        saved = true;
        service.save_conversation(*conversation, *thinker);
    };
    try {
        TurnReport report =
            impl_->run(*conversation, std::move(user_message), callbacks,
                       // ownership.102: force_release reaches the turn through the thinker.
                       cancel != nullptr ? cancel : thinker->cancellation.get(), save);
        service.release(*thinker);
        return report;
    } catch (...) {
        // ownership.20, ownership.105: saved on an abnormal exchange end, which the turn's
        // rollback made the conversation as it was before the turn: a save only when the turn
        // saved something (a round of tool calls), so a turn that failed before its first
        // answer leaves the store untouched. The original error is what the caller sees.
        try {
            if (saved) save();
        } catch (const std::exception& e) {
            NUCLEO_LOG_WARN("agent: the save at the abnormal end of a turn on '{}' failed: {}",
                            conversation->conversation_id(), e.what());
        }
        service.release(*thinker);
        throw;
    }
}

UsageTotals Agent::totals() const {
    std::lock_guard<std::mutex> lock(impl_->totals_mutex);
    return impl_->totals;
}

const ModelSpec& Agent::model() const noexcept {
    return impl_->model;
}
const AgentOptions& Agent::options() const noexcept {
    return impl_->options;
}

}  // namespace nucleo
