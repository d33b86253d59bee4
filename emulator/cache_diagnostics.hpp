// Anthropic cache diagnostics (docs/emulator.md "Cache diagnostics"; the types are those of
// @anthropic-ai/sdk 1.17.0, src/resources/messages/messages.ts: DiagnosticsParam, Diagnostics,
// CacheMissReason). A request that carries a `diagnostics` object leaves a fingerprint of its
// prompt under the id of its answer; a later request naming that id in
// `diagnostics.previous_message_id` is told the first place where its prompt diverged from it.
// Claude API only: Bedrock and OpenAI have no such member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "json.hpp"
#include "prefix_cache.hpp"

namespace nucleo::emulator {

/// What a request asks: `requested` when its `diagnostics` is an object (absent or null asks
/// nothing and stores nothing), `previous` the id it names (none on a first turn).
struct DiagnosticsAsk {
    bool requested = false;
    std::optional<std::string> previous;
};

/// The 400 text for a malformed `diagnostics` member, naming the field; nullopt when it is
/// absent, null or well formed (an object whose only member is `previous_message_id`, a string
/// of at most 256 characters or null, as the published DiagnosticsParam schema says).
std::optional<std::string> check_diagnostics_param(const json::Value& doc);

/// The ask of a request that passed check_diagnostics_param.
DiagnosticsAsk diagnostics_ask(const json::Value& doc);

/// A request's prompt as hashes and sizes, never its text: each part's key (two 64-bit hashes and
/// its length in canonical bytes, so its token estimate is tokens_for_bytes of the length).
struct Fingerprint {
    std::string model;  ///< the model and the speed (CacheMissModelChanged: "model or speed")
    PrefixKey tools;
    PrefixKey system;
    std::vector<PrefixKey> messages;
    PrefixKey params;  ///< `thinking`, `tool_choice` and `output_config`: prompt-affecting
};

/// The fingerprint of an Anthropic Messages request, over the canonical form the thinking binding
/// digests (visit_canonical_prompt: cache marks left out).
Fingerprint fingerprint(const json::Value& doc);

/// The CacheMissReason variants; kNone is no divergence.
enum class MissReason {
    kNone,
    kModelChanged,
    kToolsChanged,
    kSystemChanged,
    kMessagesChanged,
    kPreviousMessageNotFound,
    kUnavailable,
};

struct Diagnosis {
    MissReason reason = MissReason::kNone;
    /// `cache_missed_input_tokens` of the *_changed reasons: the previous request's prompt from
    /// the point of divergence on.
    std::int64_t missed_tokens = 0;
};

/// The first divergence of `now` from `previous`, in the order the prompt is cached (model, tools,
/// system, the other prompt-affecting parameters, messages).
Diagnosis compare(const Fingerprint& previous, const Fingerprint& now);

/// The Message's `diagnostics` member: `null` when nothing diverged (the SDK: "`null` when the
/// request did not supply `diagnostics`, or when it did and no prompt-cache divergence was
/// detected"), else `{"cache_miss_reason":{...}}`.
std::string diagnostics_json(const Diagnosis& d);

/// The fingerprints of the latest answers, keyed by answer id: at most `capacity`, the oldest
/// stored forgotten first. Thread-safe: the emulator serves in parallel.
class FingerprintStore {
  public:
    static constexpr std::size_t kDefaultCapacity = 10000;

    void set_capacity(std::size_t capacity);
    /// Compares `fp` with the fingerprint stored under `previous` (none: no comparison), then
    /// stores `fp` under `id`, in one step: the ids are digests of the prompt, so a request that
    /// repeats its previous prompt names its own id and is compared with what was stored before.
    Diagnosis diagnose_and_store(const std::optional<std::string>& previous, const std::string& id,
                                 Fingerprint fp);
    void clear();
    std::size_t size();

  private:
    struct Entry {
        Fingerprint fp;
        std::list<std::string>::iterator age;
    };
    std::mutex mu_;
    std::size_t capacity_ = kDefaultCapacity;
    std::list<std::string> oldest_first_;
    std::unordered_map<std::string, Entry> entries_;
};

}  // namespace nucleo::emulator
