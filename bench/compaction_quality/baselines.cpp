// The baselines compaction is held against: see baselines.hpp.
#include "baselines.hpp"

#include <algorithm>

#include "nucleo/content.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo::quality {

namespace {

/// A tool result of a compactable message: where it sits, and its text split in lines.
struct Slot {
    std::size_t message = 0;
    std::size_t block = 0;
    std::vector<std::string> lines;
    std::vector<std::int64_t> tokens;  ///< per line, newline included
    std::int64_t total = 0;
};

std::vector<Slot> result_slots(const ConversationContext& c, const TokenCounter& counter,
                               bool with_lines) {
    std::vector<Slot> out;
    const auto& msgs = c.messages();
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (!msgs[i].compactable) continue;
        for (std::size_t b = 0; b < msgs[i].blocks.size(); ++b) {
            const auto* r = msgs[i].blocks[b].get_if<ToolResultBlock>();
            if (r == nullptr) continue;
            Slot s{i, b, {}, {}, 0};
            if (with_lines) {
                std::string text;
                for (const ContentBlock& part : r->content) {
                    if (const auto* t = part.get_if<TextBlock>()) text += t->text;
                }
                std::size_t start = 0;
                while (start < text.size()) {
                    std::size_t end = text.find('\n', start);
                    if (end == std::string::npos) end = text.size();
                    s.lines.push_back(text.substr(start, end - start));
                    s.tokens.push_back(counter.count_text(s.lines.back() + "\n"));
                    s.total += s.tokens.back();
                    start = end + 1;
                }
            }
            out.push_back(std::move(s));
        }
    }
    return out;
}

std::string omitted(std::size_t n) {
    return "[... " + std::to_string(n) + " lines omitted ...]\n";
}

/// Which lines of a result a cap keeps: the first `head` and the last `tail` (all of them when
/// `whole`), and the estimated size.
struct Cut {
    bool whole = true;
    std::size_t head = 0;
    std::size_t tail = 0;
    std::int64_t size = 0;
};

/// The first and last lines of `s` within `cap` tokens (by the per-line estimate), taken in
/// turn from the head and the tail, with the omission line between them.
Cut plan(const Slot& s, std::int64_t cap, std::int64_t marker) {
    if (s.total <= cap) return {true, 0, 0, s.total};
    Cut c{false, 0, 0, marker};
    const std::size_t n = s.lines.size();
    for (bool from_head = true; c.head + c.tail < n; from_head = !from_head) {
        const std::size_t i = from_head ? c.head : n - 1 - c.tail;
        if (c.size + s.tokens[i] > cap) break;
        c.size += s.tokens[i];
        (from_head ? c.head : c.tail) += 1;
    }
    return c;
}

std::string render(const Slot& s, const Cut& c) {
    const std::size_t n = s.lines.size();
    std::string out;
    for (std::size_t i = 0; i < (c.whole ? n : c.head); ++i) out += s.lines[i] + "\n";
    if (c.whole) return out;
    out += omitted(n - c.head - c.tail);
    for (std::size_t i = n - c.tail; i < n; ++i) out += s.lines[i] + "\n";
    return out;
}

Baseline finish(const ConversationContext& original, std::vector<Message> msgs,
                std::vector<std::size_t> origins, const TokenCounter& counter,
                std::int64_t budget) {
    Baseline b{original, 0, false};
    b.conversation.replace_messages(std::move(msgs), origins);
    b.tokens = counter.total_tokens(b.conversation);
    b.reached = b.tokens <= budget;
    return b;
}

std::vector<std::size_t> identity(std::size_t n) {
    std::vector<std::size_t> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = i;
    return out;
}

}  // namespace

Baseline head_tail_results(const ConversationContext& conversation, const ModelSpec& model,
                           std::int64_t budget) {
    const TokenCounter& counter = TokenCounter::for_model(model);
    const std::vector<Slot> slots = result_slots(conversation, counter, true);
    const std::int64_t before = counter.total_tokens(conversation);
    const std::int64_t marker = counter.count_text(omitted(1000));
    std::int64_t max_cap = 0;
    std::int64_t all = 0;
    for (const Slot& s : slots) {
        max_cap = std::max(max_cap, s.total);
        all += s.total;
    }
    auto estimate = [&](std::int64_t cap) {
        std::int64_t kept = 0;
        for (const Slot& s : slots) kept += plan(s, cap, marker).size;
        return before - all + kept;
    };
    // The largest equal cap whose estimate is at the goal; the goal tightens by what the exact
    // count finds over the budget.
    std::int64_t goal = budget;
    Baseline best{conversation, before, before <= budget};
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::int64_t lo = 0;
        std::int64_t hi = max_cap;
        while (lo < hi) {
            const std::int64_t mid = (lo + hi + 1) / 2;
            if (estimate(mid) <= goal)
                lo = mid;
            else
                hi = mid - 1;
        }
        std::vector<Message> msgs = conversation.messages();
        for (const Slot& s : slots) {
            auto& r = std::get<ToolResultBlock>(msgs[s.message].blocks[s.block].value);
            r.content = {TextBlock{render(s, plan(s, lo, marker))}};
        }
        best = finish(conversation, std::move(msgs), identity(conversation.messages().size()),
                      counter, budget);
        if (best.reached || lo == 0) break;
        goal -= best.tokens - budget;
    }
    return best;
}

Baseline clear_old_results(const ConversationContext& conversation, const ModelSpec& model,
                           std::int64_t budget) {
    const TokenCounter& counter = TokenCounter::for_model(model);
    const std::vector<Slot> slots = result_slots(conversation, counter, false);
    std::vector<Message> msgs = conversation.messages();
    std::int64_t total = counter.total_tokens(conversation);
    Baseline out{conversation, total, total <= budget};
    std::size_t next = 0;
    while (!out.reached && next < slots.size()) {
        // Clear by the per-block estimate until at the budget, then count exactly.
        for (; next < slots.size() && total > budget; ++next) {
            ContentBlock& block = msgs[slots[next].message].blocks[slots[next].block];
            auto& r = std::get<ToolResultBlock>(block.value);
            const std::int64_t was = counter.count_block(block, &conversation.artifacts());
            std::int64_t content = 0;
            for (const ContentBlock& part : r.content) content += counter.count_block(part);
            r.content = {
                TextBlock{"[tool result cleared: " + std::to_string(content) + " tokens]"}};
            total -= was - counter.count_block(block, &conversation.artifacts());
        }
        out = finish(conversation, msgs, identity(msgs.size()), counter, budget);
        total = out.tokens;
    }
    return out;
}

Baseline head_tail_conversation(const ConversationContext& conversation, const ModelSpec& model,
                                std::int64_t budget) {
    const TokenCounter& counter = TokenCounter::for_model(model);
    const auto& msgs = conversation.messages();
    const ArtifactRegistry* registry = &conversation.artifacts();
    std::int64_t room =
        budget - counter.fixed_tokens(conversation) - counter.count_message(msgs.front(), registry);
    std::size_t start = msgs.size();
    while (start > 1 && counter.count_message(msgs[start - 1], registry) <= room) {
        room -= counter.count_message(msgs[--start], registry);
    }
    for (;; ++start) {
        // A kept tail never opens with results whose calls were dropped.
        while (start < msgs.size() && start > 1 &&
               std::any_of(msgs[start].blocks.begin(), msgs[start].blocks.end(),
                           [](const ContentBlock& b) { return b.is<ToolResultBlock>(); }))
            ++start;
        std::vector<Message> kept = {msgs.front()};
        std::vector<std::size_t> origins = {0};
        for (std::size_t i = start; i < msgs.size(); ++i) {
            kept.push_back(msgs[i]);
            origins.push_back(i);
        }
        Baseline b = finish(conversation, std::move(kept), origins, counter, budget);
        if (b.reached || start + 1 >= msgs.size()) return b;
    }
}

}  // namespace nucleo::quality
