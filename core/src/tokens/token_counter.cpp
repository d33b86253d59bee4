// TokenCounter and get_total_tokens (tokens.10-14).
//
// Fresh every time, yet not quadratic: a message's count is memoized under a hash of its content,
// and the running sum of a conversation's messages is remembered per messages_epoch(), so a total
// after an append tokenizes the new message alone and touches no old one.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "artifacts/artifacts_internal.hpp"
#include "conversation/context_internal.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/response.hpp"
#include "nucleo/schema.hpp"
#include "nucleo/tokenizer.hpp"
#include "nucleo/tokens.hpp"
#include "render/render_internal.hpp"

namespace nucleo {

namespace {

/// A 64-bit content hash built field by field. Each field is hashed with its length and a tag,
/// so ("ab","c") and ("a","bc") and a text vs a json of the same bytes differ.
class Hasher {
  public:
    void add(std::string_view field) {
        mix(std::hash<std::string_view>{}(field));
        mix(field.size());
    }
    void tag(std::uint64_t t) { mix(t * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL); }
    [[nodiscard]] std::uint64_t value() const noexcept { return h_; }

  private:
    void mix(std::uint64_t v) {
        // splitmix64 finalizer over the running state: cheap and well distributed.
        std::uint64_t z = h_ ^ (v + 0x9E3779B97F4A7C15ULL + (h_ << 6) + (h_ >> 2));
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        h_ = z ^ (z >> 31);
    }
    std::uint64_t h_ = 0xCBF29CE484222325ULL;
};

/// The string a PojoBlock is sent as (tokens.101): with the conversation's registry, what
/// write_summarized_with_refs emits (each known artifact as its reference); without one, its JSON.
std::string pojo_sent(const PojoBlock& b, const ArtifactRegistry* registry) {
    return registry != nullptr ? artifacts::rendered_with_refs(*registry, b) : b.value_json;
}

void hash_block(const ContentBlock& block, Hasher& h, const ArtifactRegistry* registry) {
    h.tag(block.value.index() + 1);
    struct Visitor {
        Hasher& h;
        const ArtifactRegistry* registry;
        void operator()(const TextBlock& b) const { h.add(b.text); }
        void operator()(const JsonBlock& b) const { h.add(b.json); }
        void operator()(const PojoBlock& b) const {
            h.add(b.type_name);
            h.add(pojo_sent(b, registry));
        }
        void operator()(const ImageBlock& b) const {
            h.add(b.media_type);
            h.add(b.data);
            h.add(b.url);
        }
        void operator()(const FileBlock& b) const {
            h.add(b.media_type);
            h.add(b.name);
            h.add(b.data);
            h.add(b.url);
        }
        void operator()(const ToolUseBlock& b) const {
            h.add(b.id);
            h.add(b.name);
            h.add(b.input_json);
        }
        void operator()(const ToolResultBlock& b) const {
            h.add(b.tool_use_id);
            h.tag(b.is_error ? 2 : 1);
            h.tag(b.content.size());
            for (const ContentBlock& inner : b.content) hash_block(inner, h, registry);
        }
        void operator()(const ThinkingBlock& b) const { h.add(b.thinking); }
        void operator()(const RedactedThinkingBlock& b) const { h.add(b.data); }
        void operator()(const ProviderBlock& b) const {
            h.add(b.wire_family);
            h.add(b.json);
        }
        void operator()(const SkillBlock& b) const {
            h.add(b.name);
            h.add(b.content);
        }
        void operator()(const ToolDefinitionBlock& b) const {
            h.add(b.name);
            h.add(b.description);
            h.add(b.schema_json);
        }
    };
    std::visit(Visitor{h, registry}, block.value);
}

std::uint64_t hash_message(const Message& message, const ArtifactRegistry* registry) {
    Hasher h;
    h.tag(message.blocks.size());
    for (const ContentBlock& b : message.blocks) hash_block(b, h, registry);
    return h.value();
}

bool is_text_media(std::string_view media_type) {
    return media_type.substr(0, 5) == "text/" || media_type == "application/json";
}

std::int64_t file_tokens(const FileBlock& file) {
    using A = TokenArithmetic;
    if (file.data.empty()) return A::kFileTokensPerPage;  // by URL: one page
    const auto decoded = static_cast<std::int64_t>(file.data.size() / 4 * 3);
    if (is_text_media(file.media_type)) return std::max<std::int64_t>(1, (decoded + 3) / 4);
    const std::int64_t pages =
        std::max<std::int64_t>(1, (decoded + A::kFileBytesPerPage - 1) / A::kFileBytesPerPage);
    return pages * A::kFileTokensPerPage;
}

}  // namespace

struct TokenCounter::Impl {
    const Tokenizer& tokenizer;
    double calibration = 1.0;  // tokens.103
    mutable std::mutex mutex;
    std::unordered_map<std::uint64_t, std::int64_t> memo;  // message hash -> count
    /// What a walk over a prefix of the messages learned: the running sum and the facts the head
    /// count needs (so a total never walks the old messages again).
    struct Prefix {
        std::size_t messages = 0;
        std::int64_t sum = 0;
        std::unordered_set<std::string> announced;  // tool names defined in the messages
        bool stream_weights = false;                // a tool-weight guidance stream message
        bool stream_legend = false;                 // a legend stream message
        bool needs_legend = false;                  // an outgoing handler uses the notation
    };
    std::unordered_map<std::uint64_t, Prefix> prefixes;  // messages_epoch -> running sum
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
    std::atomic<std::uint64_t> prefix_hits{0};

    Impl(const Tokenizer& t, double c) : tokenizer(t), calibration(c) {}
};

TokenCounter::TokenCounter(const Tokenizer& tokenizer, double calibration)
    : impl_(std::make_unique<Impl>(tokenizer, calibration)) {}
TokenCounter::~TokenCounter() = default;

TokenCounter& TokenCounter::for_model(const ModelSpec& model) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<TokenCounter>, std::less<>> counters;
    const Tokenizer& tokenizer = Tokenizer::get(model.token_counter);
    std::lock_guard lock(mutex);
    auto& slot =
        counters[std::string(tokenizer.name()) + "@" + std::to_string(model.token_calibration)];
    if (!slot) slot = std::make_unique<TokenCounter>(tokenizer, model.token_calibration);
    return *slot;
}

const Tokenizer& TokenCounter::tokenizer() const noexcept {
    return impl_->tokenizer;
}

std::int64_t TokenCounter::count_text(std::string_view text) const {
    if (text.empty()) return 0;
    const auto n = static_cast<std::int64_t>(impl_->tokenizer.count(text));
    if (impl_->calibration == 1.0) return n;
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(n) * impl_->calibration));
}

std::int64_t TokenCounter::count_tool_definition(const ToolDefinitionBlock& definition) const {
    return count_text(render_tool_definition_text(definition));
}

std::int64_t TokenCounter::count_block(const ContentBlock& block,
                                       const ArtifactRegistry* registry) const {
    using A = TokenArithmetic;
    struct Visitor {
        const TokenCounter& c;
        const ArtifactRegistry* registry;
        std::int64_t operator()(const TextBlock& b) const { return c.count_text(b.text); }
        std::int64_t operator()(const JsonBlock& b) const { return c.count_text(b.json); }
        // tokens.101: what write_summarized_with_refs emits, not the raw JSON.
        std::int64_t operator()(const PojoBlock& b) const {
            return c.count_text(pojo_sent(b, registry));
        }
        std::int64_t operator()(const ImageBlock&) const { return A::kImageTokens; }
        std::int64_t operator()(const FileBlock& b) const { return file_tokens(b); }
        std::int64_t operator()(const ToolUseBlock& b) const {
            return A::kToolBlockOverheadTokens + c.count_text(b.id) + c.count_text(b.name) +
                   c.count_text(b.input_json);
        }
        std::int64_t operator()(const ToolResultBlock& b) const {
            std::int64_t n = A::kToolBlockOverheadTokens + c.count_text(b.tool_use_id);
            for (const ContentBlock& inner : b.content) n += c.count_block(inner, registry);
            return n;
        }
        std::int64_t operator()(const ThinkingBlock& b) const { return c.count_text(b.thinking); }
        // Encrypted reasoning passed back verbatim: its text is what travels (an over-count).
        std::int64_t operator()(const RedactedThinkingBlock& b) const {
            return c.count_text(b.data);
        }
        // A provider's own block travels as its JSON (an over-count for its encrypted parts).
        std::int64_t operator()(const ProviderBlock& b) const { return c.count_text(b.json); }
        std::int64_t operator()(const SkillBlock& b) const {
            return c.count_text(b.name) + c.count_text(b.content);
        }
        std::int64_t operator()(const ToolDefinitionBlock& b) const {
            return c.count_tool_definition(b);
        }
    };
    return std::visit(Visitor{*this, registry}, block.value);
}

std::int64_t TokenCounter::count_message(const Message& message,
                                         const ArtifactRegistry* registry) const {
    const std::uint64_t key = hash_message(message, registry);
    {
        std::lock_guard lock(impl_->mutex);
        if (auto it = impl_->memo.find(key); it != impl_->memo.end()) {
            impl_->hits.fetch_add(1, std::memory_order_relaxed);
            return it->second;
        }
    }
    // Tokenize outside the lock: other threads keep counting meanwhile.
    std::int64_t n = TokenArithmetic::kMessageOverheadTokens;
    for (const ContentBlock& b : message.blocks) n += count_block(b, registry);
    impl_->misses.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(impl_->mutex);
    if (impl_->memo.size() >= kMaxMemoEntries) impl_->memo.clear();
    impl_->memo.emplace(key, n);
    return n;
}

namespace {

/// Folds messages [from, end) into a prefix walk: their counts and the head-relevant facts.
void scan(const TokenCounter& counter, const ConversationContext& conversation,
          TokenCounter::Impl::Prefix& prefix, std::vector<std::int64_t>* per_message = nullptr) {
    const std::vector<Message>& messages = conversation.messages();
    for (std::size_t i = prefix.messages; i < messages.size(); ++i) {
        const Message& m = messages[i];
        const std::int64_t n = counter.count_message(m, &conversation.artifacts());
        prefix.sum += n;
        if (per_message != nullptr) per_message->push_back(n);
        for (const ContentBlock& b : m.blocks) {
            if (const auto* def = b.get_if<ToolDefinitionBlock>())
                prefix.announced.insert(def->name);
        }
        prefix.stream_weights = prefix.stream_weights || internal::is_stream_tool_weights(m);
        prefix.stream_legend = prefix.stream_legend || internal::is_stream_legend(m);
        prefix.needs_legend = prefix.needs_legend || (m.outgoing() && m.response_handler &&
                                                      m.response_handler->uses_schema_notation());
    }
    prefix.messages = messages.size();
}

/// The objective as prepare would send it, without reconciling or freezing anything: the slots as
/// they are, plus what the next render would place — the legend, the tool-weight guidance and the
/// definitions of tools declared but not yet announced. Returns (non-tool part, tool part).
std::pair<std::int64_t, std::int64_t> count_head(const TokenCounter& counter,
                                                 const ConversationContext& conversation,
                                                 const TokenCounter::Impl::Prefix& facts) {
    std::int64_t objective = 0;
    std::int64_t tools = 0;
    bool legend_slot = false;
    bool weights_slot = false;
    std::unordered_set<std::string_view> head_tools;
    for (const ObjectiveSlot& slot : conversation.main_objective()) {
        if (const auto* def = slot.value.get_if<ToolDefinitionBlock>()) {
            tools += counter.count_tool_definition(*def);
            head_tools.insert(def->name);
            continue;
        }
        legend_slot = legend_slot || slot.key == ConversationContext::kLegendSlot;
        weights_slot = weights_slot || slot.key == ConversationContext::kToolWeightsSlot;
        // A PojoBlock slot is counted on the string the render sends (tokens.101), like one in
        // a message; every other block on its rendered text.
        objective += slot.value.is<PojoBlock>()
                         ? counter.count_block(slot.value, &conversation.artifacts())
                         : counter.count_text(render::rendered_text(slot.value));
    }
    // Pending tools: declared, not yet in the content. Counted on their wire form (the render
    // re-emits the schema compact) so the estimate matches the text that will be sent.
    bool any_pending = false;
    for (const DeclaredTool& tool : conversation.declared_tools()) {
        const std::string& name = tool.definition.name;
        if (head_tools.count(name) != 0 || facts.announced.count(name) != 0) continue;
        any_pending = true;
        try {
            tools += counter.count_tool_definition(render::to_wire_definition(tool.definition));
        } catch (const Error&) {
            tools += counter.count_tool_definition(tool.definition);  // prepare will refuse it
        }
    }
    if (!weights_slot && !facts.stream_weights && (!head_tools.empty() || any_pending)) {
        objective += counter.count_text(tool_weight_guidance());
    }
    if (facts.needs_legend && !legend_slot && !facts.stream_legend) {
        objective += counter.count_text(schema::notation_legend());
    }
    return {objective, tools};
}

/// tokens.11 with wire.191: what rides the turns besides their messages. Every contract and
/// registry a sent turn carries (they stay), and the registry the next call will add to the last
/// outgoing turn when it differs from the latest one sent. A text is counted once per distinct
/// string (`memo`), so a count after many calls does not tokenize every old registry again.
std::int64_t count_registry(const TokenCounter& counter, const ConversationContext& conversation,
                            TokenCounter::Impl& impl) {
    const auto count = [&](const std::string& text) -> std::int64_t {
        if (text.empty()) return 0;
        const std::uint64_t key = std::hash<std::string>{}(text) ^ 0x5e17d17bULL;
        {
            std::lock_guard lock(impl.mutex);
            if (auto it = impl.memo.find(key); it != impl.memo.end()) return it->second;
        }
        const std::int64_t n = counter.count_text(text);
        std::lock_guard lock(impl.mutex);
        impl.memo.emplace(key, n);
        return n;
    };
    std::int64_t n = 0;
    for (const auto& [id, sent] : conversation.sent_with())
        n += count(sent.contract) + count(sent.registry);
    if (conversation.artifacts().empty()) return n;
    const std::string* latest = nullptr;
    const auto& messages = conversation.messages();
    for (std::size_t i = messages.size(); i-- > 0 && latest == nullptr;) {
        const auto it = conversation.sent_with().find(messages[i].id);
        if (it != conversation.sent_with().end() && !it->second.registry.empty())
            latest = &it->second.registry;
    }
    const std::string section = conversation.artifacts().build_artifact_registry_section();
    if (latest == nullptr || *latest != section) n += count(section);
    return n;
}

/// The prefix walk of a conversation's messages, resumed from the walk remembered for its
/// messages_epoch() (an unchanged prefix is never walked again) and remembered in turn.
TokenCounter::Impl::Prefix scan_facts(const TokenCounter& counter, TokenCounter::Impl& impl,
                                      const ConversationContext& conversation) {
    using Impl = TokenCounter::Impl;
    const auto& messages = conversation.messages();
    const std::uint64_t epoch = conversation.messages_epoch();
    Impl::Prefix prefix;
    {
        std::lock_guard lock(impl.mutex);
        if (auto it = impl.prefixes.find(epoch);
            it != impl.prefixes.end() && it->second.messages <= messages.size()) {
            prefix = it->second;
            impl.prefix_hits.fetch_add(1, std::memory_order_relaxed);
        }
    }
    if (prefix.messages < messages.size()) {
        scan(counter, conversation, prefix);
        std::lock_guard lock(impl.mutex);
        if (impl.prefixes.size() >= TokenCounter::kMaxPrefixEntries) impl.prefixes.clear();
        auto& slot = impl.prefixes[epoch];
        if (slot.messages <= prefix.messages) slot = prefix;
    }
    return prefix;
}

}  // namespace

std::int64_t TokenCounter::fixed_tokens(const ConversationContext& conversation) const {
    const Impl::Prefix facts = scan_facts(*this, *impl_, conversation);
    const auto [objective, tools] = count_head(*this, conversation, facts);
    return objective + tools + count_registry(*this, conversation, *impl_);
}

std::int64_t TokenCounter::total_tokens(const ConversationContext& conversation) const {
    const Impl::Prefix facts = scan_facts(*this, *impl_, conversation);
    const auto [objective, tools] = count_head(*this, conversation, facts);
    return facts.sum + objective + tools + count_registry(*this, conversation, *impl_);
}

TokenBreakdown TokenCounter::breakdown(const ConversationContext& conversation) const {
    TokenBreakdown out;
    Impl::Prefix facts;
    out.per_message.reserve(conversation.messages().size());
    scan(*this, conversation, facts, &out.per_message);
    out.messages = facts.sum;
    std::tie(out.objective, out.tools) = count_head(*this, conversation, facts);
    out.artifacts = count_registry(*this, conversation, *impl_);
    return out;
}

TokenCacheStats TokenCounter::stats() const {
    return {impl_->hits.load(), impl_->misses.load(), impl_->prefix_hits.load()};
}

void TokenCounter::clear_cache() {
    std::lock_guard lock(impl_->mutex);
    impl_->memo.clear();
    impl_->prefixes.clear();
}

std::int64_t get_total_tokens(const ConversationContext& conversation, const ModelSpec& model) {
    return TokenCounter::for_model(model).total_tokens(conversation);
}

}  // namespace nucleo
