// Thinking blocks bound to the prefix they follow (wire.193-wire.196, docs/emulator.md
// "Thinking bound to its conversation"): the signature of a thinking block the emulator answers
// with carries a digest of the request it answered (system, tools, messages, cache marks and the
// thinking request left out), and a block sent back is checked against the prefix before its
// message on a model whose record says `thinking.bound_to_prefix`.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator.hpp"
#include "json.hpp"

namespace nucleo::emulator {

/// The two canonical forms: Anthropic Messages (`thinking` blocks, `cache_control` marks) and
/// Bedrock Converse (`reasoningContent` blocks, `cachePoint` blocks).
enum class BindingDialect { kAnthropic, kConverse };

/// The parts of a request's prompt in the canonical form, in the API's prefix order.
enum class PromptPart {
    kTool,          ///< one tool (Converse: one `toolConfig.tools` entry)
    kSystem,        ///< one system block (a string system: its one text block)
    kMessageRole,   ///< `{"role":...}`, which opens each message
    kMessageBlock,  ///< one content block of the message (a string content: its one text block)
};

/// One part and its canonical bytes; `message` is the message's index (0 for tools and system).
using PromptVisitor =
    std::function<void(PromptPart part, std::size_t message, std::string_view bytes)>;

/// Visits the canonical bytes of a request's prompt: each tool, each system block, then each
/// message's role and blocks. Cache marks are left out (`cache_control` members of a block and of
/// the blocks in its `content` list; Converse `cachePoint` blocks), so moving one changes nothing.
/// The one canonical form of the binding (wire.193) and of cache diagnostics
/// (cache_diagnostics.hpp).
void visit_canonical_prompt(BindingDialect dialect, const json::Value& doc,
                            const PromptVisitor& visit);

/// wire.193: the digests of a request's prefixes. `before(i)` covers the tools, the system and
/// messages 0..i-1; `whole()` the entire request: what the thinking block of its answer follows.
class PrefixBinding {
  public:
    PrefixBinding(BindingDialect dialect, const json::Value& doc);
    const std::string& before(std::size_t message) const { return digests_.at(message); }
    const std::string& whole() const { return digests_.back(); }

  private:
    std::vector<std::string> digests_;
};

/// The signature of a thinking block the emulator answers with: `emu-sig-<reply digest>`, and
/// with a binding `emu-sig-<reply digest>-bound-<32 hex digits>` (wire.193).
std::string thinking_signature(std::string_view reply_digest, std::string_view binding);

/// The binding a signature carries, or "" when it is not in the emulator's bound form (wire.196).
std::string signature_binding(std::string_view signature);

/// A block of the request, as `messages.I.content.J`.
using BlockAt = std::pair<std::size_t, std::size_t>;

/// The verdict over a request's thinking blocks (wire.193-wire.195).
struct BindingVerdict {
    /// The 400's text, `messages.I.content.J: The block is bound to a different conversation. ...`,
    /// for the first block whose prefix changed; nullopt when none did or they are dropped.
    std::optional<std::string> refusal;
    /// With drop_block: the blocks to remove, in request order (a failing block and the
    /// consecutive thinking blocks after it in its message, wire.194).
    std::vector<BlockAt> dropped;
};

/// Checks each thinking block of the assistant messages of `doc` whose signature is in the
/// emulator's bound form against `binding.before(its message)`.
BindingVerdict check_binding(BindingDialect dialect, const json::Value& doc,
                             const PrefixBinding& binding, bool drop_block);

/// Removes `dropped` from the messages of `doc`.
void drop_blocks(json::Value& doc, const std::vector<BlockAt>& dropped);

/// The beta that enables `thinking.block_binding` (wire.194).
inline constexpr std::string_view kBindingBeta = "thinking-binding-controls-2026-08-01";

/// wire.194: the request carries the beta (the `anthropic-beta` header, a comma-separated list;
/// on Converse `additionalModelRequestFields.anthropic_beta`, a list) and its thinking object
/// says `block_binding.prefix_mismatch_behavior: "drop_block"`.
bool wants_drop_block(BindingDialect dialect, const Request& req, const json::Value& doc);

}  // namespace nucleo::emulator
