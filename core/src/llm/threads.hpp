// Anthropic message threads (wire.211): which part of a conversation a call sends when the
// provider holds the rest, and which thread errors are answered by sending it all again.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/thinking.hpp"

namespace nucleo::internal {

/// What a request does with the provider's thread.
struct ThreadCall {
    enum class Kind { kNone, kCreate, kContinue } kind = Kind::kNone;
    /// kContinue: the provider id of the answer the thread ends with.
    std::string previous_message_id;
    /// kContinue: the first prepared turn after that answer; the request sends turns from here.
    std::size_t first_new_turn = 0;
    /// The digest of everything this request puts in the thread (the head and every prepared
    /// turn), kept on its answer as Message::thread_digest.
    std::string digest;
};

/// The digest of what a thread holds before prepared turn `end`: the provider instance, the wire
/// model, the thinking form and effort, the system blocks, the tool definitions and the turns
/// [0, end) by role and blocks (cache marks aside: each request's marks are its own). Two halves
/// of 64-bit FNV-1a, as 32 hexadecimal digits. Deterministic across processes and hosts, so a
/// restored conversation recognises its thread.
[[nodiscard]] std::string thread_digest(std::string_view provider, const ModelSpec& model,
                                        const ThinkingRequest& thinking,
                                        const PreparedConversation& prepared, std::size_t end);

/// wire.211: continue from the conversation's latest answer that carries a thread digest and a
/// provider id, when the turns before it still digest to what that answer's call sent and a user
/// turn follows it; otherwise create a thread with the whole conversation. `digest` of the result
/// is always the whole prepared conversation's.
[[nodiscard]] ThreadCall plan_thread(std::string_view provider, const ModelSpec& model,
                                     const ThinkingRequest& thinking,
                                     const ConversationContext& conversation,
                                     const PreparedConversation& prepared);

/// The `error_code` a dialect names in its error text as "(error_code: CODE)" (the provider's
/// `error.details.error_code`), or "" when none.
[[nodiscard]] std::string provider_error_code(std::string_view error_text);

/// wire.211: whether a continue refused with `error_code` is replayed whole with a new thread:
/// thread_not_found (expired, evicted or lost), thread_already_continued,
/// thread_continue_in_flight, thread_fingerprint_mismatch. Any other code, or none, is the
/// call's error as it came.
[[nodiscard]] bool replays_thread(std::string_view error_code);

}  // namespace nucleo::internal
