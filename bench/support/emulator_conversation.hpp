// Shared by the benchmarks that call nucleo-emulator (bench/llm, bench/agent, bench/economy,
// bench/threads): the model entry, the prose and the alternating question/answer conversation
// they send, so their figures stay comparable.
#pragma once

#include <string>

#include "nucleo/catalog.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo::bench_support {

/// Deterministic prose of about `words` words of the docs' vocabulary; `seed` varies it.
inline std::string prose(int words, int seed) {
    static const char* kWords[] = {"cache",  "prefix",  "order",  "refund", "policy", "window",
                                   "tokens", "search",  "result", "answer", "model",  "table",
                                   "file",   "section", "line",   "rule"};
    std::string out;
    unsigned x = static_cast<unsigned>(seed) * 2654435761U + 12345U;
    for (int i = 0; i < words; ++i) {
        x = x * 1103515245U + 12345U;
        out += kWords[(x >> 16) % 16];
        out += (i % 12 == 11) ? ". " : " ";
    }
    return out;
}

/// An Anthropic model entry the emulator serves (no prices, no rate limits).
inline ModelSpec emulator_model() {
    ModelSpec m;
    m.id = "claude-bench";
    m.provider = "anthropic";
    m.wire_model = "claude-sonnet-5-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = 8192;
    m.supports_caching = true;
    m.native_tools = true;
    return m;
}

/// `messages` alternating questions and answers about an order, output 256 tokens, no thinking.
inline ConversationContext emulator_conversation(int messages) {
    ConversationContext c("bench", "alice");
    c.put_main_objective("task", "You answer questions about orders.");
    c.set_output(std::int64_t{256});
    c.set_depth(Depth::kImmediate);
    for (int i = 0; i < messages; ++i) {
        Message m = (i % 2 == 0)
                        ? Message::outgoing_text("Question " + std::to_string(i) + " about order 42?")
                        : Message::incoming_text("Answer " + std::to_string(i) + ": it shipped.");
        c.add_message(m);
    }
    return c;
}

}  // namespace nucleo::bench_support
