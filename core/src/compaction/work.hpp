// Internals of the compaction ladder: the working copy of the message list one ensure_fits call
// rewrites, and the text helpers of summaries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compaction/host_tokens_internal.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo::compaction {

/// The text a summarizer reads for one message: its role, then each block as text. Attachments
/// are named, never inlined (a base64 payload is not something to summarize); redacted reasoning
/// is left out. With the conversation's `registry`, a PojoBlock reads as the model saw it: each
/// artifact as its {"@ref": ...}, so the references the model saw reach the summary (compaction.33:
/// artifact references survive compaction).
std::string render_for_summary(const Message& message, const ArtifactRegistry* registry = nullptr);
/// The same for the content of one tool result.
std::string render_result_for_summary(const ToolResultBlock& result,
                                      const ArtifactRegistry* registry = nullptr);

/// Every «artifact:TYPE~ID» reference in `text`, each once, in order of first appearance.
std::vector<std::string> artifact_refs(std::string_view text);

/// `text` cut at a UTF-8 boundary to at most `target` tokens by `counter` (binary search over
/// the byte length; ends with "…" when cut). The bounded cut of MAXIMUM.
std::string cut_to_tokens(const TokenCounter& counter, std::string_view text, std::int64_t target);

/// The message list being compacted, with the origin of each message in the conversation and its
/// token count. The ladder edits this copy; ensure_fits commits it once.
struct Work {
    Work(const TokenCounter& counter, const SummarizerInstance& summarizer,
         const ConversationContext& conversation, CompactionReport& report);

    std::vector<Message> msgs;
    std::vector<std::size_t> origins;
    std::vector<std::int64_t> counts;
    std::int64_t fixed = 0;  ///< objective + tools + registry: never touched

    [[nodiscard]] std::int64_t total() const;

    /// Runs one level of the ladder aiming at `aim` tokens. At MAXIMUM the aim falls back to the
    /// trigger and then to `hard_room` when the untouchable parts leave no room under it, and a
    /// failing summary throws.
    void run_level(CompactionLevel level, std::int64_t aim, std::int64_t trigger,
                   std::int64_t hard_room);

  private:
    struct Job;
    struct Outcome;
    void light(std::int64_t aim);
    void collapse(CompactionLevel level, std::int64_t aim, std::int64_t trigger,
                  std::int64_t hard_room);
    void moderate(std::int64_t aim);
    /// Runs every job once; each job's segments are released once its request is written.
    std::vector<Outcome> run_jobs(std::vector<Job>& jobs, CompactionLevel level, bool parallel);
    bool accept(const Job& job, Outcome& outcome, CompactionLevel level);
    void execute(std::vector<Job>& jobs, CompactionLevel level);
    [[nodiscard]] Job in_place_job(std::size_t message, std::size_t block) const;
    [[nodiscard]] Job run_job(std::vector<std::size_t> members) const;
    /// The first words of `job`'s summary: of messages, of a tool result or of a tool call input.
    [[nodiscard]] static std::string header_of(const Job& job);
    /// The tokens the summarizer is asked for: the target less the header's.
    [[nodiscard]] std::int64_t body_target(const Job& job) const;
    /// What the summary `text` of `job` will count where it sits (its message or its block).
    [[nodiscard]] std::int64_t replacing_tokens(const Job& job, const std::string& text) const;
    void apply_in_place(std::size_t message, std::size_t block, const std::string& text);
    void replace_run(const std::vector<std::size_t>& members, std::string text);

    const TokenCounter& counter_;
    const SummarizerInstance& summarizer_;
    CompactionReport& report_;
    std::string conversation_id_;
    const ArtifactRegistry* registry_;  // the conversation's; compaction never changes it
    std::string objective_;             // compaction.114: context for the summarizer
    /// compaction.111: the summarizer counts with counter_ through "nucleo.host.tokens/1".
    internal::CounterLease counter_lease_;
};

}  // namespace nucleo::compaction
