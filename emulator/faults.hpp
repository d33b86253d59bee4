// Faults injected on request (docs/emulator.md): a client asks for them with the header
// `x-emulator-fault` or the query parameter `fault`, a comma-separated list:
//   429 | 500 | 529 | delay=MS | truncate | malformed | fail-first=N[:STATUS] | retry-after=S
//   | always-tool | tool-rounds=N | tool-cycle | thread-lost | thread-busy
// so retry, backoff and truncation paths are tested deterministically, without sleeps. Three
// script an agent loop: a tool call also after a tool result, always or while the
// conversation holds fewer than N assistant turns. The last two answer an Anthropic thread
// continue as if its thread were gone or busy (wire.204), so a client's replay is tested too.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace nucleo::emulator {

struct Faults {
    bool rate_limited = false;  ///< 429 with retry-after: 1
    bool server_error = false;  ///< 500
    bool overloaded = false;    ///< 529 (Anthropic) / 503 (OpenAI, Bedrock)
    bool truncate = false;      ///< stop at the output limit, mid tool call when one is made
    bool malformed = false;     ///< a 200 whose body is not JSON
    /// Tool calls after tool results: 0 off (a result is answered), -1 always (always-tool), N>0
    /// while the request holds fewer than N assistant turns (tool-rounds=N). Not a fault: any()
    /// ignores it.
    int tool_rounds = 0;
    /// tool-cycle: scripted calls go through the declared tools in order instead of always the
    /// first (the call in the k-th assistant turn is tool k mod n). Not a fault either.
    bool tool_cycle = false;
    /// thread-lost: a thread continue is answered 404 `thread_not_found` and the thread it names
    /// is forgotten, as when the API lost it (wire.204).
    bool thread_lost = false;
    /// thread-busy: a thread continue is answered 400 `thread_continue_in_flight`, as when another
    /// request is continuing the same answer (wire.204).
    bool thread_busy = false;
    int delay_ms = 0;
    int fail_first = 0;   ///< the first N calls with the same request id fail...
    int fail_status = 0;  ///< ...with this status (0: 529 for Anthropic, 500 otherwise)
    /// retry-after=S: the `retry-after` a 429 of this request carries, in seconds (-1: the
    /// providers' usual 1). Not a fault by itself: it words the 429 that `429` or `fail-first`
    /// asks for, so a client's cap on Retry-After is tested without waiting (limits.140).
    int retry_after_s = -1;

    bool any() const {
        return rate_limited || server_error || overloaded || truncate || malformed || thread_lost ||
               thread_busy || delay_ms > 0 || fail_first > 0;
    }
    /// Parses the list; throws std::invalid_argument naming the item it does not know.
    static Faults parse(std::string_view spec);
};

/// Counts calls per request identity for `fail-first=N`: the identity is the
/// `x-emulator-request-id` header, or a hash of the body when the header is absent (a retry
/// resends the same body).
class FailFirstCounter {
  public:
    /// Counts this call and returns its 1-based ordinal for the identity.
    std::int64_t next(const std::string& identity);
    void clear();

  private:
    std::mutex mu_;
    std::map<std::string, std::int64_t> calls_;
};

}  // namespace nucleo::emulator
