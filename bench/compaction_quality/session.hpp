// Generated coding-agent sessions with planted facts: a user objective, rounds of tool calls whose
// results look like real tool output, the assistant's notes and the user's follow-ups; facts of
// six kinds planted at random places, each a string that occurs exactly once in the session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nucleo/conversation.hpp"
#include "tool_output.hpp"

namespace nucleo::quality {

enum class FactKind { kNumber, kPath, kIdentifier, kError, kDecision, kArtifact };
inline constexpr int kFactKinds = 6;
const char* to_string(FactKind kind) noexcept;

/// Where a fact was planted.
enum class Host { kToolResult, kAssistant, kUser };

struct Fact {
    FactKind kind;
    std::string text;  ///< the unique string looked for, verbatim
    Host host;
    std::size_t message;  ///< index of the message it sits in
    double age;           ///< 1 for the oldest message, 0 for the newest
};

struct Session {
    ConversationContext conversation;
    std::vector<Fact> facts;
};

/// One round of the agent: the assistant's note and calls, and the results of those calls; with
/// `answer`, the assistant's answer and the user's next request after them.
struct RoundOptions {
    bool answer = false;
    int min_lines = 20;
    int max_lines = 260;
};

/// Writes sessions and rounds from one random seed.
class SessionWriter {
  public:
    explicit SessionWriter(std::uint64_t seed) : rng_(seed) {}

    /// A conversation with the objective, the tools and the user's pinned first request.
    ConversationContext start(const std::string& id);
    /// Appends one round (see RoundOptions) to `conversation`.
    void add_round(ConversationContext& conversation, const RoundOptions& options);

    /// A whole session of about `tokens` tokens (by the default counter) with `per_kind` facts
    /// of each kind planted.
    Session session(const std::string& id, std::int64_t tokens, int per_kind);

    Rng& rng() { return rng_; }

  private:
    struct Draft;
    std::vector<Draft> draft_round(const RoundOptions& options);
    std::string fact_text(FactKind kind, ConversationContext& conversation);
    std::string fact_line(FactKind kind, const std::string& fact);
    std::string fact_sentence(FactKind kind, const std::string& fact);

    Rng rng_;
    int next_call_ = 0;
};

}  // namespace nucleo::quality
