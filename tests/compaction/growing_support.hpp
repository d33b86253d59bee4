// Seeded growing conversations and compaction's rewrite, shared by the tests of what a
// conversation keeps between requests (caching.110, conversation.101).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compaction_support.hpp"
#include "dialect_client.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {

/// A seeded conversation: user questions, assistant answers, tool rounds, cache marks.
class Grower {
  public:
    explicit Grower(std::uint64_t seed) : rng_(seed), seed_(static_cast<int>(seed)) {}

    void step(ConversationContext& c) {
        const int kind = pick(6);
        const bool user_last = c.messages().empty() || c.messages().back().outgoing();
        const std::string n = std::to_string(seed_) + "_" + std::to_string(++count_);
        if (user_last && kind < 2) {
            const std::vector<std::string> ids{"call_" + n + "a", "call_" + n + "b"};
            c.add_message(tool_call("tc" + n, ids));
            c.add_message(tool_results("tr" + n, ids, 1 + pick(3), seed_ + count_));
        } else if (user_last) {
            Message m = Message::incoming_text("Answer " + n + ": " + prose(1 + pick(2), count_));
            c.add_message(m);
        } else {
            Message m = Message::outgoing_text("Question " + n + ": " + prose(1, count_ + 7));
            m.cache = pick(3) == 0;
            c.add_message(m);
        }
    }

    int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }

  private:
    std::mt19937_64 rng_;
    int seed_;
    int count_ = 0;
};

/// Compaction's rewrite: the first `drop` messages after the first become one summary (keeping
/// tool pairs whole by cutting before a user message that carries no tool result).
inline void compact_half(ConversationContext& c) {
    const auto& m = c.messages();
    std::size_t cut = m.size() / 2;
    while (cut < m.size() && !(m[cut].outgoing() && std::none_of(m[cut].blocks.begin(), m[cut].blocks.end(),
                                                                 [](const ContentBlock& b) {
                                                                     return b.is<ToolResultBlock>();
                                                                 })))
        ++cut;
    if (cut >= m.size() || cut < 2) return;
    std::vector<Message> kept;
    std::vector<std::size_t> origins;
    kept.push_back(m[0]);
    origins.push_back(0);
    Message summary = Message::incoming_text("Summary of the earlier work: " + prose(1, 99));
    summary.id = "";
    kept.push_back(summary);
    origins.push_back(1);
    for (std::size_t i = cut; i < m.size(); ++i) {
        kept.push_back(m[i]);
        origins.push_back(i);
    }
    // A summary stands as the model's turn: the message after it must be the user's.
    c.replace_messages(std::move(kept), origins);
}

/// The test model with caching, served by whichever client builds its request.
inline ModelSpec model_for_test() {
    ModelSpec m = test_model();
    m.provider.clear();
    m.supports_caching = true;
    return m;
}

}  // namespace nucleo::compaction_test
