// The conversation: the state of an agent's work, from which every model call is built.
//
// What a conversation holds (conversation.1): the main objective (standing instructions), the
// messages in order, the tools declared to it, the artifact registry, and what its seat asked for.
// The rules this class enforces are in docs/spec/: the objective map and its freeze
// (conversation.10-16), the framework slots, add-only tool declaration and announcement
// (tools.1-5), and the channel contract (channel.1: prepare_messages_for_llm ->
// PreparedConversation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

#include "nucleo/artifacts.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/content.hpp"
#include "nucleo/prepared.hpp"

namespace nucleo {

/// The seat's declaration of how much answer (conversation.20) — an OutputSize rung, or a raw token
/// count for the seat that fits no rung.
using OutputDeclaration = std::variant<OutputSize, std::int64_t>;

/// One slot of the objective map: a key (never sent) and its value (a content block, usually a
/// TextBlock; `tool:<name>` slots hold ToolDefinitionBlocks).
struct ObjectiveSlot {
    std::string key;
    ContentBlock value;
    bool operator==(const ObjectiveSlot&) const = default;
};

/// A tool declared to the conversation (tools.1: a definition is its own declared
/// tool) and the number of messages the conversation held when it was declared — its
/// point of declaration, where a post-freeze announcement is placed.
struct DeclaredTool {
    ToolDefinitionBlock definition;
    std::size_t declared_at = 0;
    bool operator==(const DeclaredTool&) const = default;
};

/// Everything a ConversationContext holds that outlives the instance: what the conversation
/// document v1 (conversation.30) stores. ConversationContext::parts() reads it out,
/// ConversationContext::from_parts() rebuilds a context from it. The freeze is not part of it.
/// wire.191: what rode an outgoing message's turn, beyond its own blocks, when the turn was
/// first sent: the answer contract of that call and the artifact registry as it then stood
/// (empty when none rode it). Every later call sends the turn with them again, so a turn once
/// sent is never rewritten.
struct SentWith {
    std::string contract;
    std::string registry;
    bool operator==(const SentWith&) const = default;
};

struct ConversationParts {
    std::string conversation_id;
    std::string user_id;
    std::string workflow_id;
    std::optional<std::string> prior_spec_id;
    std::vector<ObjectiveSlot> objective;
    bool cache_main_objective = true;
    bool compactable = true;
    std::vector<DeclaredTool> tools;
    std::vector<Message> messages;
    ArtifactRegistry artifacts;
    std::optional<Grade> grade;
    std::optional<Depth> depth;
    std::optional<OutputDeclaration> output;
    /// wire.191: by message id, what rode that outgoing turn when it was sent.
    std::map<std::string, SentWith> sent_with;
};

namespace internal {
struct TurnFragments;
struct TurnFragmentsAccess;
struct KeptPrepare;
struct PreparedAccess;
struct StreamScan;
/// What a conversation keeps of its own renders to make the next one cheaper: owned by one
/// conversation, never shared. A copy starts empty, as its message list has a new epoch anyway.
template <class Kept>
class KeptSlot {
  public:
    KeptSlot() = default;
    KeptSlot(const KeptSlot& /*other*/) noexcept {}
    KeptSlot& operator=(const KeptSlot& other) noexcept {
        if (this != &other) value.reset();
        return *this;
    }
    KeptSlot(KeptSlot&&) noexcept = default;
    KeptSlot& operator=(KeptSlot&&) noexcept = default;
    ~KeptSlot() = default;
    std::shared_ptr<Kept> value;
};
/// caching.110: the encoded wire messages of the conversation's last requests, per dialect
/// (core/src/llm/turn_fragments.hpp).
using TurnFragmentsSlot = KeptSlot<TurnFragments>;
}  // namespace internal

/// A conversation (conversation.1). Not thread-safe: one job owns a conversation at a time
/// (ownership.10), and the owner is the only one touching it.
///
/// Copying copies everything, the freeze included (a copy holds the same rendered prefix). A
/// conversation rebuilt with from_parts() is not frozen (conversation.15): a restored conversation
/// has not rendered, has no warm provider cache to lose, and composes freely until its own first
/// render.
class ConversationContext {
  public:
    /// Framework slot keys (conversation.13: two slots are the framework's own).
    static constexpr std::string_view kLegendSlot = "legend";
    static constexpr std::string_view kToolWeightsSlot = "toolWeights";
    static constexpr std::string_view kToolSlotPrefix = "tool:";

    ConversationContext() = default;
    explicit ConversationContext(std::string conversation_id, std::string user_id = {});

    /// Rebuilds a context from stored parts, NOT frozen. Validates what add_message validates
    /// (duplicate ids named with both positions, tool_results whose tool_use_id no earlier
    /// message carries) and a tool's declared_at within the messages; refuses with
    /// Error(kInvalidArgument). Messages with an empty id get a minted one.
    static ConversationContext from_parts(ConversationParts parts);
    /// Everything from_parts takes, as it stands now.
    [[nodiscard]] ConversationParts parts() const;
    /// wire.191: by message id, what rode each sent outgoing turn (read without copying parts()).
    [[nodiscard]] const std::map<std::string, SentWith>& sent_with() const noexcept { return state_.sent_with; }

    /// The one-turn task call (conversation.24): the model given, one user message, thinking off
    /// (IMMEDIATE), the answer capped at the backstop — the message's
    /// requested_output_tokens is the backstop. Built fresh per call.
    static ConversationContext single_turn(const ModelSpec& model, std::string prompt,
                                           std::int64_t backstop_tokens);

    // ---- identity ----
    [[nodiscard]] const std::string& conversation_id() const noexcept {
        return state_.conversation_id;
    }
    void set_conversation_id(std::string id) { state_.conversation_id = std::move(id); }
    [[nodiscard]] const std::string& user_id() const noexcept { return state_.user_id; }
    void set_user_id(std::string id) { state_.user_id = std::move(id); }
    /// The turn currently driving the conversation (ownership.13).
    [[nodiscard]] const std::string& workflow_id() const noexcept { return state_.workflow_id; }
    void set_workflow_id(std::string id) { state_.workflow_id = std::move(id); }
    /// The catalog id of the spec that last served this conversation (persistence.22: stickiness
    /// input).
    [[nodiscard]] const std::optional<std::string>& prior_spec_id() const noexcept {
        return state_.prior_spec_id;
    }
    void set_prior_spec_id(std::optional<std::string> id) { state_.prior_spec_id = std::move(id); }

    // ---- the model bound for the next call ----
    /// The model the next call uses. single_turn sets it; nothing else does yet (the resolution of
    /// conversation.25 is not built). Unset, it throws UncorrectableLLMException (conversation.21).
    [[nodiscard]] const ModelSpec& model() const;
    [[nodiscard]] bool has_model() const noexcept { return model_.has_value(); }
    void set_model(ModelSpec model);

    // ---- flags ----
    /// Whole-conversation opt-out of compaction (compaction.34); true by default.
    [[nodiscard]] bool compactable() const noexcept { return state_.compactable; }
    void set_compactable(bool compactable) noexcept { state_.compactable = compactable; }
    /// The objective is cached by default (caching.8); rides the prepared value as cache_system.
    [[nodiscard]] bool cache_main_objective() const noexcept { return state_.cache_main_objective; }
    void set_cache_main_objective(bool cache) noexcept { state_.cache_main_objective = cache; }

    // ---- the seat's declarations (conversation.20), all optional ----
    [[nodiscard]] const std::optional<Grade>& grade() const noexcept { return state_.grade; }
    void set_grade(std::optional<Grade> grade) noexcept { state_.grade = grade; }
    [[nodiscard]] const std::optional<Depth>& depth() const noexcept { return state_.depth; }
    void set_depth(std::optional<Depth> depth) noexcept { state_.depth = depth; }
    [[nodiscard]] const std::optional<OutputDeclaration>& output() const noexcept {
        return state_.output;
    }
    void set_output(std::optional<OutputDeclaration> output) noexcept { state_.output = output; }

    // ---- messages ----
    /// Appends a message and returns its id. An empty id is minted ("m<N>", unique within the
    /// conversation). Refused with Error(kInvalidArgument): a duplicate id (naming it and the
    /// position it already holds), and a tool_result whose tool_use_id no earlier message carries
    /// as a ToolUseBlock (naming the id and the position) — a provider refuses the whole
    /// conversation over one such orphan.
    std::string add_message(Message message);
    [[nodiscard]] const std::vector<Message>& messages() const noexcept { return state_.messages; }
    /// The message with this id, or nullptr.
    [[nodiscard]] const Message* find_message(std::string_view id) const noexcept;
    /// Sets (or clears) a message's requested_output_tokens, the per-call override of the output
    /// budget chain (budget.1). On truncation the client raises the SENT message's
    /// requested_output_tokens to the model's max output (budget.7).
    /// The only mutation of a stored message: it changes no rendered content, so it is allowed
    /// after the freeze. Error(kNotFound) naming the id when no message has it.
    void set_requested_output_tokens(std::string_view message_id,
                                     std::optional<std::int64_t> tokens);
    /// Marks one message compactable or not (compaction.31: final answers are kept
    /// word for word — the agent loop learns an answer is final only after the
    /// call appended it). Changes no rendered content, so it is allowed after the freeze.
    /// Error(kNotFound) naming the id when no message has it.
    void set_message_compactable(std::string_view message_id, bool compactable);

    /// Compaction's one rewrite of the message list (compaction.30: compaction rewrites the list
    /// of messages and nothing else). `messages` replaces the list; `origins[i]` is the position,
    /// in the current list, of the (first) message that new message i stands for — a kept message's
    /// own position, a summary's first summarized message — so each tool's point of declaration
    /// moves with the content it followed. Validated as from_parts validates (an empty id is
    /// minted; duplicate ids and tool_results whose tool_use no earlier message carries are
    /// refused with Error(kInvalidArgument)), and `origins` must be non-decreasing, one per
    /// message, each inside the current list. On a refusal the conversation is unchanged. The
    /// objective, the tools, the artifact registry and the freeze are not touched.
    void replace_messages(std::vector<Message> messages, const std::vector<std::size_t>& origins);

    /// A process-unique number for the current message list, renewed whenever the list changes
    /// other than by an append (replace_messages, a post-freeze announcement inserted mid-stream)
    /// and given afresh to every copy. So a reader that remembers (epoch, size, value) for a
    /// prefix of the list knows the prefix is unchanged while the epoch is: the token counter's
    /// O(new messages) running total (tokens.14).
    [[nodiscard]] std::uint64_t messages_epoch() const noexcept { return epoch_.value(); }

    /// persistence.110: how many times a stored message's flags were set in place
    /// (set_message_compactable, set_requested_output_tokens) since construction. With
    /// messages_epoch() it tells a saver in O(1) that the messages it saved are unchanged.
    [[nodiscard]] std::uint64_t message_flag_changes() const noexcept { return flag_changes_; }

    /// conversation.22: the inputs beyond text the OUTGOING messages carry anywhere in
    /// the history, tool results included — an image block as Input::kImages, a file block as
    /// Input::kDocuments. Each at most once, in enum order.
    [[nodiscard]] std::vector<Input> carried_inputs() const;

    /// conversation.23: the first message a HUMAN sent — the text of the first
    /// outgoing message that is not app_authored and carries no tool result. Its TextBlocks are
    /// joined by "\n". Decision: a human message without text (an image alone) is skipped, since
    /// the utterance titles and embeds the conversation. nullopt when there is none.
    [[nodiscard]] std::optional<std::string> first_user_utterance() const;

    // ---- the objective map (conversation.10-16) ----
    /// Puts a slot. Before the freeze: an existing key is replaced IN PLACE (conversation.11: a
    /// re-put keeps the slot's original position, so a refresh never reorders the rendered prefix),
    /// a new key appends. After the freeze: a value that renders identically to the slot's is a
    /// silent no-op; anything else — a divergent value or a new key — is a no-op logged at ERROR
    /// level with the caller's file:line and function and a stack trace. Returns true when the slot
    /// now holds the value, false when the put was refused.
    bool put_main_objective(std::string_view key, ContentBlock value,
                            std::source_location where = std::source_location::current());
    /// The same with a TextBlock value.
    bool put_main_objective(std::string_view key, std::string text,
                            std::source_location where = std::source_location::current());
    /// Empties the map, framework slots included (conversation.12: nothing fills itself back in —
    /// though the next render re-places derived slots). After the freeze: a no-op logged at ERROR
    /// level with the caller's location and a stack trace. Returns false when refused.
    bool nuke_main_objective(std::source_location where = std::source_location::current());
    /// The slots in order.
    [[nodiscard]] const std::vector<ObjectiveSlot>& main_objective() const noexcept {
        return state_.objective;
    }
    /// The value under `key`, or nullptr.
    [[nodiscard]] const ContentBlock* objective_slot(std::string_view key) const noexcept;
    /// True once this instance has rendered (conversation.14: the head freezes at the instance's
    /// first render).
    [[nodiscard]] bool frozen() const noexcept { return frozen_; }

    // ---- tools (tools.1-5) ----
    /// Declares a tool. Add-only by name: "a name already declared is a no-op, whatever the new
    /// declaration would produce". Nothing is converted here ("never eagerly"): the definition
    /// reaches the conversation's content at the next render. What no provider takes is refused
    /// here, not at the first call (tools.102): a name outside ^[a-zA-Z0-9_-]{1,64}$ or an input
    /// schema that is not a JSON object of type "object" throws Error(kInvalidArgument) and
    /// declares nothing. Returns true when the name was new.
    bool add_tool(ToolDefinitionBlock definition);
    /// add_tool for each; returns how many names were new.
    std::size_t add_tools(std::vector<ToolDefinitionBlock> definitions);
    /// Every declared tool, in declaration order.
    [[nodiscard]] const std::vector<DeclaredTool>& declared_tools() const noexcept {
        return state_.tools;
    }
    /// Where a tool was announced, derived from the conversation's content (a ToolDefinitionBlock
    /// of that name in the head or in a message): "head", or the id of the stream message that
    /// carries it; nullopt while declared but not yet rendered (or never declared).
    [[nodiscard]] std::optional<std::string> announced_in(std::string_view tool_name) const;
    /// Names of declared tools not yet announced: "declared but not rendered".
    [[nodiscard]] std::vector<std::string> pending_tools() const;

    // ---- artifacts (nucleo/artifacts.hpp) ----
    /// The registry. Artifacts inside PojoBlocks are registered as their message is added; a
    /// conversation that has artifacts declares the two artifact tools (at the next add_message
    /// or render).
    [[nodiscard]] const ArtifactRegistry& artifacts() const noexcept { return state_.artifacts; }
    [[nodiscard]] ArtifactRegistry& artifacts() noexcept { return state_.artifacts; }

    // ---- the channel contract ----
    /// The channel contract (channel.1). In order:
    ///  1. Framework slots and tools are reconciled with the content: before the freeze the legend
    ///     (iff an outgoing message carries a handler with uses_schema_notation()), the tool-weight
    ///     guidance (iff tools are declared) and each unannounced tool under `tool:<name>` (after
    ///     the guidance) join the head, and stale framework slots are refreshed to the current
    ///     text or removed; after the freeze each newcomer is an app-authored, non-compactable
    ///     outgoing stream message at its point of appearance (a tool: where it was declared; the
    ///     legend: before the first message carrying the notation handler).
    ///  2. The head freezes (first render of this instance).
    ///  3. The objective's values become system_blocks; each message becomes a USER (outgoing) or
    ///     ASSISTANT (incoming) turn; PojoBlocks become JsonBlocks; tool definitions are swept to
    ///     tool_definitions (native formatter) or rendered inline as text.
    ///  4. The last outgoing message's response handler's response_instructions(native,
    ///     thinking_active) is appended to its turn as a TextBlock (when non-empty).
    ///  5. A non-empty artifact registry that changed since it was last sent rides the last
    ///     outgoing turn and stays there, as the answer contract does (wire.191) (and its two tools,
    ///     get_artifact_field and search_artifact_content, are declared in step 1).
    ///  6. The cache plan is computed (CachePlan).
    /// Throws Error(kInvalidArgument) naming the tool when a declared tool's schema is not JSON
    /// (the conversion happens here, never at declaration).
    ///
    /// `cache` carries what the caller knows of the backend and the model for the plan
    /// (caching.105-107); the conversation's own cache_policy(), when set, replaces its policy.
    PreparedConversation prepare_messages_for_llm(const ContentFormatter& formatter,
                                                  bool thinking_active,
                                                  const CacheOptions& cache = {});

    /// caching.105: the cache policy this conversation asked for, or nullopt to follow the
    /// provider's configured one (kDefaultCachePolicy, `sliding`, when none is). Not
    /// persisted: the thinker that resumes a conversation supplies it, like the model.
    [[nodiscard]] const std::optional<CachePolicy>& cache_policy() const noexcept {
        return cache_policy_;
    }
    void set_cache_policy(std::optional<CachePolicy> policy) noexcept { cache_policy_ = policy; }

  private:
    std::string append_message(Message message);
    void declare_artifact_tools();
    std::string mint_message_id();
    /// The stored message with this id, for the metadata setters; Error(kNotFound) naming it.
    Message& stored_message(std::string_view message_id);
    void check_message(const Message& message, std::size_t position) const;
    void reconcile_derived_content();
    /// conversation.102: the facts of the message stream reconciliation needs, extended over the
    /// messages appended since the last scan.
    const internal::StreamScan& scan_stream();
    void place_in_head(std::vector<DeclaredTool> pending, const internal::StreamScan& scan);
    void place_in_stream(std::vector<DeclaredTool> pending, const internal::StreamScan& scan);
    /// conversation.101: prepare_messages_for_llm into the kept PreparedConversation, which the
    /// returned reference points at until the conversation's next prepare or change.
    const PreparedConversation& prepare_in_place(const ContentFormatter& formatter, bool thinking_active,
                                                 const CacheOptions& cache);
    void prepare_kept(internal::KeptPrepare& kept, const ContentFormatter& formatter, bool thinking_active,
                      const CacheOptions& cache);
    bool refuse_frozen(std::string_view what, const std::source_location& where) const;
    /// wire.191: this call's extras on the last outgoing turn of `kept`, recorded in sent_with.
    void decorate_last_outgoing(internal::KeptPrepare& kept, bool native, bool thinking_active);

    /// See messages_epoch(): fresh on construction and on every copy, renewed by renew().
    class Epoch {
      public:
        Epoch() noexcept : value_(next()) {}
        Epoch(const Epoch&) noexcept : value_(next()) {}
        Epoch& operator=(const Epoch&) noexcept {
            value_ = next();
            return *this;
        }
        ~Epoch() = default;
        void renew() noexcept { value_ = next(); }
        [[nodiscard]] std::uint64_t value() const noexcept { return value_; }

      private:
        static std::uint64_t next() noexcept;
        std::uint64_t value_;
    };

    // Everything that outlives the instance lives in one ConversationParts, so parts() and
    // from_parts() cannot drift from the members.
    ConversationParts state_;
    std::optional<ModelSpec> model_;
    std::unordered_set<std::string> message_ids_;
    std::unordered_set<std::string> tool_use_ids_;  // every ToolUseBlock id in the messages
    std::size_t next_message_number_ = 1;
    bool frozen_ = false;
    std::optional<CachePolicy> cache_policy_;
    Epoch epoch_;
    std::uint64_t flag_changes_ = 0;  // see message_flag_changes()

    /// The transformed blocks of a message carrying PojoBlocks, as the last render made them:
    /// valid while the message list's epoch, the registry's epoch and the dialect are the same
    /// (messages never change in place), so a warm render does not walk the JSON again.
    struct RenderedMessage {
        std::uint64_t messages_epoch = 0;
        std::uint64_t registry_epoch = 0;
        bool native = false;
        std::vector<ContentBlock> blocks;
    };
    std::vector<RenderedMessage> rendered_;  // by message position

    friend struct internal::TurnFragmentsAccess;
    internal::TurnFragmentsSlot turn_fragments_;
    friend struct internal::PreparedAccess;
    internal::KeptSlot<internal::KeptPrepare> kept_prepare_;  // conversation.101
};

}  // namespace nucleo
