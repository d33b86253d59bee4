// The agent loop: a chat thinker as a C++ API.
//
// One turn: the user's message in, a model call, the model's tool calls executed against tools the
// host registered as typed C++ callables, repeated until a final answer or the round limit
// (limits.20). The user's messages and the final answers of the most recent exchanges are
// non-compactable (compaction.31, compaction.109); the palette is declared through add_tools (add-only, tools.1); the window is checked and the
// conversation compacted before every call (compaction.4); budgets are resolved and truncation
// escalated through ProviderClient::call's one retry path (budget.1, budget.7); a turn on a
// conversation obtained from ConversationService saves at every boundary (an answer out, an abnormal
// end) and releases it (ownership.20, ownership.30); a turn that fails leaves the conversation,
// and the store, as they were before it (ownership.105).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nucleo/compaction.hpp"
#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/response.hpp"
#include "nucleo/schema.hpp"
#include "nucleo/service.hpp"
#include "nucleo/thinker.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {

/// What a tool returned for one call (a ToolResultBlock's content). `is_error` marks a failure the
/// model should see as one (a transcript marks it too: conversation.33).
struct ToolOutput {
    std::string text;
    bool is_error = false;
    /// When not empty, the result's content as blocks (text, images, JSON: an MCP tool's result,
    /// mcp.30), sent instead of `text`, which then only tells the callbacks what happened.
    std::vector<ContentBlock> blocks;

    /// A failed call: the text says what went wrong, for the model to read.
    static ToolOutput error(std::string text) { return {std::move(text), true, {}}; }
};

/// One registered tool: its wire definition (input schema from the schema facility) and the
/// callable that runs it on the call's input JSON. A callable may throw: the loop turns any
/// exception into an is_error result carrying its message, never a crash.
/// Thread rule: a tool runs on the turn's thread, one call at a time.
struct AgentTool {
    ToolDefinitionBlock definition;
    std::function<ToolOutput(std::string_view input_json, const CancellationToken& cancel)> run;
};

/// A tool from a typed callable: `fn(const Input&)` returning std::string or ToolOutput (plain
/// text is a success). The input schema is schema::json_schema<Input>(); the model's arguments
/// are read with schema::from_json<Input>, and arguments that do not read (a missing required
/// property, a wrong type) become an is_error result naming the JSON path, so the model can
/// correct itself.
template <typename Input, typename Fn>
AgentTool make_tool(std::string name, std::string description, Fn fn) {
    AgentTool tool;
    tool.definition = tool_definition<Input>(std::move(name), std::move(description));
    tool.run = [fn = std::move(fn)](std::string_view input_json,
                                    const CancellationToken&) -> ToolOutput {
        Input input = schema::from_json<Input>(input_json);
        using R = std::invoke_result_t<const Fn&, const Input&>;
        if constexpr (std::is_same_v<R, ToolOutput>) {
            return fn(input);
        } else {
            return ToolOutput{std::string(fn(input)), false, {}};
        }
    };
    return tool;
}

/// Tools that come from outside the host's code and may change between rounds (an MCP server's,
/// mcp.20). The agent asks for them before each round; a conversation keeps every tool it was
/// once given (tools.1), so a tool a source drops stays declared and its calls are answered by
/// answer_unknown.
class ToolSource {
  public:
    virtual ~ToolSource() = default;
    /// The source's tools now. `taken(name)` says whether a host tool or an earlier source
    /// already has a name (the source renames its own, mcp.21). Names and schemas must pass the
    /// declaration check (tools.102): the agent leaves out, and logs, one that does not.
    virtual std::vector<AgentTool> tools(const std::function<bool(std::string_view)>& taken) = 0;
    /// A call of `name` that none of the current tools answers: the source's answer when the name
    /// was once its own (a removed tool, mcp.23), nullopt otherwise.
    virtual std::optional<ToolOutput> answer_unknown(std::string_view name) = 0;
};

/// A tool call as the loop saw it: announced before it runs, reported with its result after.
struct ToolCallEvent {
    std::string id;          ///< the provider-minted (or runtime-minted) tool_use id
    std::string name;        ///< the tool's name
    std::string input_json;  ///< the arguments the model sent
    int round = 0;           ///< 1-based round of the turn
};

/// One round: one model call (with its escalation, if any) and the tools it asked for.
struct RoundReport {
    int round = 0;                  ///< 1-based
    Usage usage;                    ///< the provider's numbers for the call
    double cost = 0;                ///< dollars, the call's (compaction's is apart)
    /// Normalized (one of kStopReasons: end_turn, tool_use, refusal, content_filter, ...): why
    /// the round's answer ended; a refusal or a filtered answer ends the turn with it.
    std::string stop_reason;
    bool answered = true;           ///< false: the answer was empty and nothing was stored
    std::size_t tool_calls = 0;     ///< calls the model made in this round
    std::size_t tool_errors = 0;    ///< of those, is_error results
    bool escalated = false;         ///< the call was retried at the escalated budget
    CompactionLevel compaction = CompactionLevel::kNone;  ///< compaction before this call
    double compaction_cost = 0;     ///< dollars the summaries cost
    std::int64_t context_tokens = 0;  ///< the conversation's estimate when the call went out
    CacheMiss cache_miss;             ///< caching.131: the provider's diagnosis of a cache miss
};

/// Why a turn ended.
enum class TurnEnd {
    kFinalAnswer,  ///< the model answered without tool calls
    kRoundLimit,   ///< the configured round limit was reached with tool calls still wanted
    kCancelled,    ///< the CancellationToken fired; the turn stopped at the next boundary
};
const char* to_string(TurnEnd end) noexcept;

/// The per-turn report the CLI's `/cost` shows: tokens, cache reads and writes,
/// cost, rounds and the compaction level.
struct TurnReport {
    TurnEnd end = TurnEnd::kFinalAnswer;
    std::string answer;              ///< the final answer's text (empty unless kFinalAnswer)
    std::string answer_message_id;   ///< the id of the final answer in the conversation
    int rounds = 0;
    Usage usage;                     ///< summed over the rounds
    double cost = 0;                 ///< model calls and compaction, dollars
    double compaction_cost = 0;      ///< of `cost`, what compaction's summaries cost
    CompactionLevel compaction = CompactionLevel::kNone;  ///< the highest level run this turn
    std::size_t tool_calls = 0;
    std::size_t tool_errors = 0;
    std::vector<RoundReport> round_reports;
    std::chrono::microseconds elapsed{0};

    /// Cache reads over everything the provider read (caching.9, over the turn).
    [[nodiscard]] double cache_hit_rate() const noexcept;
};

/// Totals over every turn an Agent ran (the CLI's `/cost`: tokens, cache hit rate and spend so
/// far), a turn that failed on a call's error included with what it billed (answers.109).
struct UsageTotals {
    int turns = 0;
    int rounds = 0;
    Usage usage;
    double cost = 0;
    double compaction_cost = 0;
    std::size_t tool_calls = 0;
    std::size_t tool_errors = 0;

    void add(const TurnReport& turn);
    [[nodiscard]] double cache_hit_rate() const noexcept;
};

/// The host's view of a running turn, exposed to host code as callbacks. Every member
/// is optional; all run on the turn's thread. Text and thinking deltas arrive as the provider
/// streams them when the dialect streams; otherwise each answer's text is delivered whole after
/// its call. A callback that throws ends the turn as an abnormal end (saved, then rethrown).
struct TurnCallbacks {
    std::function<void(std::string_view text)> on_text_delta;
    std::function<void(std::string_view thinking)> on_thinking_delta;
    /// The streamed answer so far was discarded (truncated, retried at the escalated budget).
    std::function<void(std::string_view reason)> on_discard;
    std::function<void(const ToolCallEvent& call)> on_tool_call_started;
    std::function<void(const ToolCallEvent& call, const ToolOutput& output)> on_tool_call_finished;
    /// Compaction ran before a call (only when it summarized something).
    std::function<void(const CompactionReport& report)> on_compaction;
    std::function<void(const RoundReport& round)> on_round_end;
};

/// How an Agent runs its turns.
/// compaction.109: the recent exchanges kept word for word by default.
inline constexpr std::size_t kDefaultPinnedExchanges = 4;

struct AgentOptions {
    /// The round limit: model calls per turn. Reaching it with tool calls still wanted ends the
    /// turn as kRoundLimit (the tool results of the last round are in the conversation, so the
    /// next turn can continue).
    int max_rounds = 8;
    /// compaction.4: the window check before every call. Null: no compaction; the hard context is
    /// still the provider's to refuse.
    std::shared_ptr<ContextWindowManager> window;
    /// Layer 3 of the budget and depth chains (budget.1, budget.4), passed to every call.
    BindingDeclarations binding;
    /// Headers added to every request (tracing ids; the emulator's scripting in tests).
    HttpHeaders extra_headers;
    /// Stream answers when the dialect can and a text/thinking callback is set.
    bool stream = true;
    /// The answer contract attached to the user's messages (null: plain prose).
    std::shared_ptr<const ResponseHandler> handler;
    /// The main objective put under the "task" slot of a conversation that has none (a put is
    /// idempotent and refused after the freeze, so a resumed conversation keeps its own).
    std::string objective;
    /// caching.8: every message the agent sends is marked for caching.
    bool cache_all_messages = false;
    /// caching.105: the cache policy of the conversations this agent runs turns on (nullopt:
    /// the conversation's own, else the provider's configured one).
    std::optional<CachePolicy> cache_policy;
    /// compaction.109: how many of the most recent exchanges (a user message and everything
    /// until the next one) keep their user message and final answer word for word; older ones
    /// may be summarized, so a long chat keeps going inside its window. nullopt: every user
    /// message and final answer is kept (compaction.31 alone, which a long chat outgrows).
    std::optional<std::size_t> pinned_exchanges = kDefaultPinnedExchanges;
};

/// The agent loop (a chat thinker). Holds the tools, the client and the model; a turn runs
/// on a conversation the caller owns. Calls of the artifact tools a conversation with artifacts
/// declares (get_artifact_field, search_artifact_content; tools.14) are
/// answered from its registry unless the host registered a tool of that name. Thread rule: an Agent
/// may run turns on different conversations concurrently only if its tools are thread-safe; the
/// totals are guarded.
class Agent {
  public:
    Agent(ProviderClient& client, ModelSpec model, AgentOptions options = {});
    ~Agent();
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    /// Registers a tool. A name already registered is refused with kInvalidArgument (the
    /// conversation's add-only declaration would silently keep the first).
    void add_tool(AgentTool tool);
    /// make_tool<Input>(name, description, fn) and add_tool.
    template <typename Input, typename Fn>
    void add_tool(std::string name, std::string description, Fn fn) {
        add_tool(make_tool<Input>(std::move(name), std::move(description), std::move(fn)));
    }
    /// Adds a source of tools asked before every round (mcp.20); its tools follow the host's in
    /// the palette.
    void add_tool_source(std::shared_ptr<ToolSource> source);
    /// The palette: every registered tool's definition, in registration order (what add_tools
    /// declares and what Thinker::palette returns for a rehydrated conversation).
    [[nodiscard]] std::vector<ToolDefinitionBlock> palette() const;

    /// A thinker for this agent's turns through a ConversationService: name "ChatThinker" unless
    /// given, a fresh job id, `user_id`, the palette, and the seat's declarations (`output` and
    /// `depth`, stamped by the service on the conversations it creates or rehydrates), and its
    /// own workflow cancellation token (ownership.102). The caller then mints or adopts its
    /// conversation id.
    [[nodiscard]] std::shared_ptr<Thinker> make_thinker(std::string user_id,
                                                        std::optional<OutputDeclaration> output,
                                                        std::optional<Depth> depth = Depth::kImmediate,
                                                        std::string name = "ChatThinker") const;

    /// One turn on a conversation the caller owns (no service, no saves). Throws what the call
    /// throws (kConfig, a provider refusal, ContextOverflowException, ...), after which the
    /// conversation is as it was before the turn (ownership.105): the user's message, the rounds
    /// before the failing call and any compaction of the turn are undone. A turn that ends with a
    /// call's error still counts in totals() with what it billed up to the error: its earlier
    /// rounds and the error's billed calls (answers.109).
    TurnReport run_turn(ConversationContext& conversation, std::string user_message,
                        const TurnCallbacks& callbacks = {},
                        const CancellationToken* cancel = nullptr);

    /// One turn on the thinker's conversation obtained from `service` (waiting for a current
    /// owner as obtain_conversation does), with the save discipline: saved after each round of
    /// tool calls, after the final answer (or the round limit, or cancellation), and on an
    /// abnormal end before the error is rethrown, when the turn had saved (ownership.105: the
    /// user's message reaches the store with the turn's first answer; a failed turn leaves the
    /// conversation and the store as they were before it); released at the end whatever happened. `cancel` null:
    /// the turn runs under thinker->cancellation, which ConversationService::force_release
    /// cancels (ownership.102).
    TurnReport run_turn(ConversationService& service, const std::shared_ptr<Thinker>& thinker,
                        std::string user_message, const TurnCallbacks& callbacks = {},
                        const CancellationToken* cancel = nullptr);

    /// Totals over every turn this agent ran.
    [[nodiscard]] UsageTotals totals() const;

    [[nodiscard]] const ModelSpec& model() const noexcept;
    [[nodiscard]] const AgentOptions& options() const noexcept;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace nucleo
