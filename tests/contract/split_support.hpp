// What the tests of the split audit (wire.173, wire.174, wire.214) share: the request they send,
// the verdict as a line, a seeded generator's draws, and a conversation's items cut at random into
// a first run and chunks.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nucleo/wire/contract.hpp"

namespace split_support {

using nucleo::contract::audit_request;
using nucleo::contract::audit_split_request;
using nucleo::contract::CallPlan;
using nucleo::contract::MessageChunk;
using nucleo::contract::OutgoingRequest;
using nucleo::contract::SplitBody;
using nucleo::contract::Violation;
using nucleo::contract::WireFamily;

using Headers = std::vector<std::pair<std::string, std::string>>;

inline const Headers kHeaders = {{"content-type", "application/json"}};

inline std::string verdict(const std::optional<Violation>& v) {
    return v ? v->line() : std::string("accepted");
}

/// A POST of `body` (which outlives the request) to `path`, its string's capacity readable.
inline OutgoingRequest outgoing(const std::string& body, std::string_view path) {
    OutgoingRequest request;
    request.method = "POST";
    request.path = path;
    request.headers = &kHeaders;
    request.body = body;
    request.readable = body.capacity();
    return request;
}

/// A request of a generated conversation, in pieces: the head around the turns (messages or
/// items) and the wire turns; the plan the core would have decided for it.
struct Generated {
    WireFamily family = WireFamily::kAnthropicMessages;
    std::string path;
    std::string open;
    std::string close;
    std::vector<std::string> messages;
    CallPlan plan;
};

/// The seeded draws of a generator.
class Random {
  public:
    explicit Random(std::uint32_t seed) : rng_(seed) {}

    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(rng_() % n); }
    bool one_in(std::uint32_t n) { return below(n) == 0; }

  private:
    std::mt19937 rng_;
};

/// `messages` cut at random: a first run of one to three (the head's turns), then chunks of one
/// to `most`, each its elements comma-separated.
inline std::pair<std::string, std::vector<std::string>> split_at_random(
    Random& r, const std::vector<std::string>& messages, std::uint32_t most) {
    const std::size_t first =
        1 + r.below(static_cast<std::uint32_t>(std::min<std::size_t>(3, messages.size())));
    std::string turns;
    for (std::size_t i = 0; i < first; ++i) turns += (i ? "," : "") + messages[i];
    std::vector<std::string> chunks;
    for (std::size_t i = first; i < messages.size();) {
        const std::size_t end = std::min(messages.size(), i + 1 + r.below(most));
        std::string c;
        for (std::size_t k = i; k < end; ++k) c += (k > i ? "," : "") + messages[k];
        chunks.push_back(std::move(c));
        i = end;
    }
    return {std::move(turns), std::move(chunks)};
}

}  // namespace split_support
