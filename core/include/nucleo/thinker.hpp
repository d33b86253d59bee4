// The identity a ConversationService needs of the job driving a conversation (ownership.1,
// ownership.14, ownership.33).
// Deliberately minimal (the agent loop that runs a thinker is in agent.hpp): this is what ownership,
// the save discipline and rehydration read.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nucleo/catalog.hpp"
#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {

/// How a thinker declared what its conversation IS (ownership.1).
enum class ConversationIntent {
    kTemporary,  ///< neither setter: the default keyed by the job id, never stored
    kMinted,     ///< mint_conversation_id(): a brand-new durable conversation
    kAdopted,    ///< set_conversation_id(id): resume one a store holds (obtaining fails otherwise)
};

/// One thinker: the job that owns a conversation for a turn. Shared by std::shared_ptr between
/// the job and the ConversationService (owning_thinker hands the live one out). Thread rule: the
/// fields are set by the job before it obtains its conversation and not changed while it owns
/// it; the service only reads them.
struct Thinker {
    std::string name;         ///< e.g. "ChatThinker": who drives the conversation (logs, errors)
    std::string job_id;       ///< unique per job; the key of the temporary default conversation
    std::string user_id;      ///< the acting principal for every store call
    std::string workflow_id;  ///< stamped on the context at acquisition
    /// ownership.30, ownership.33: how long an UNOWNED holder stays warm after
    /// this thinker released it. Decision: 10 minutes by default, two cleanup intervals, so a
    /// chat's next turn within minutes finds its conversation warm.
    std::chrono::milliseconds retain{std::chrono::minutes(10)};
    /// The seat's current declarations, stamped on every conversation the service creates or
    /// rehydrates for this thinker (ownership.13).
    std::optional<Grade> grade;
    std::optional<Depth> depth;
    std::optional<OutputDeclaration> output;
    /// The thinker's current palette, re-declared on a rehydrated conversation (add-only: only
    /// never-announced names reach the model). Empty: no tools.
    std::function<std::vector<ToolDefinitionBlock>()> palette;
    /// The workflow's cancellation (ownership.32, ownership.102): force_release cancels it by default, and
    /// Agent::run_turn over a service runs the turn under it when the caller passes no token of
    /// its own, so a forced release stops the running turn at its next boundary and the turn's
    /// own release hands the conversation over. Replace it to share a token of the host's.
    std::shared_ptr<CancellationToken> cancellation = std::make_shared<CancellationToken>();
    /// An extra hook force_release calls after cancelling `cancellation` (a host whose workflow
    /// spans more than this turn cancels the rest of it here). Empty: the token alone.
    std::function<void()> cancel_workflow;

    /// ownership.1: a readable `conv-xxxx-xxxxxxxxxxxx` (random hex),
    /// remembered as this thinker's conversation with intent kMinted. Returns it.
    std::string mint_conversation_id();
    /// ownership.1: adopt an existing conversation (intent kAdopted).
    void set_conversation_id(std::string id);

    /// The conversation this thinker works on: the minted or adopted id, else its job id.
    [[nodiscard]] const std::string& conversation_id() const noexcept {
        return conversation_id_.empty() ? job_id : conversation_id_;
    }
    [[nodiscard]] ConversationIntent intent() const noexcept { return intent_; }

  private:
    std::string conversation_id_;
    ConversationIntent intent_ = ConversationIntent::kTemporary;
};

}  // namespace nucleo
