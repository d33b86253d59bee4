// The bridge between the "nucleo.host.tokens/1" slot (core/src/plugins/host.cpp) and the token
// counters of the compactions running now (compaction.111).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nucleo/tokens.hpp"

namespace nucleo::internal {

/// While it lives, `counter` answers "nucleo.host.tokens/1" calls that name id(): a summarizer
/// request carries the id as "token_counter", so the plugin counts with the conversation's own
/// counter. Ids are never reused, so a plugin holding an old id gets "unknown", not another
/// compaction's counter. The counter must outlive the lease.
class CounterLease {
  public:
    explicit CounterLease(const TokenCounter& counter);
    ~CounterLease();
    CounterLease(const CounterLease&) = delete;
    CounterLease& operator=(const CounterLease&) = delete;

    [[nodiscard]] const std::string& id() const noexcept { return id_; }

  private:
    std::string id_;
};

/// Tokens of `text` by the counter leased under `id`; nullopt when no lease has that id. Never
/// throws (a counter that fails answers nullopt too).
std::optional<std::int64_t> count_with_leased(std::string_view id, std::string_view text) noexcept;

}  // namespace nucleo::internal
