// Thinker identity (core/include/nucleo/thinker.hpp).
#include "nucleo/thinker.hpp"

#include <cstdint>
#include <cstdio>
#include <random>

namespace nucleo {

std::string Thinker::mint_conversation_id() {
    // ownership.1: a readable id with a conv marker (e.g. conv-a26f-52b01fa3bd75): 64 random
    // bits, 4 + 12 hex digits; the thinker's name stays out of it (a user types and reads it).
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const std::uint64_t bits = rng();
    char hex[20];
    std::snprintf(hex, sizeof hex, "%04llx-%012llx", static_cast<unsigned long long>(bits >> 48),
                  static_cast<unsigned long long>(bits & 0xffffffffffffULL));
    conversation_id_ = std::string("conv-") + hex;
    intent_ = ConversationIntent::kMinted;
    return conversation_id_;
}

void Thinker::set_conversation_id(std::string id) {
    conversation_id_ = std::move(id);
    intent_ =
        conversation_id_.empty() ? ConversationIntent::kTemporary : ConversationIntent::kAdopted;
}

}  // namespace nucleo
