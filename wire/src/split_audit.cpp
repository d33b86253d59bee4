// The audit of a body built from kept chunks (wire.173, wire.174): the head is read, each chunk's
// records were read once when the chunk was made, and the checks run over the records of the whole
// request, so the verdict is the whole audit's. Gemini contents and Responses input items, which
// have no records, are summarized per chunk and read from the parsed head (wire.214).
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "contract_internal.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/json_guard.hpp"
#include "shape.hpp"

namespace nucleo::contract {

using internal::Block;
using internal::BytesRead;
using internal::Msg;
using internal::Shape;

struct MessageChunk::Records {
    WireFamily family = WireFamily::kUnknown;
    std::string wire;
    bool readable = false;
    /// Messages, blocks, inner_1h and call_ids; their views point into `arena` (never moved: a
    /// Records lives behind a unique_ptr).
    Shape shape;
    std::unique_ptr<char[]> arena;
    /// What a request carrying the chunk checks only where it meets its neighbours (wire.174).
    internal::PieceSummary summary;
    /// The same for Gemini contents and Responses input items, which have no Shape (wire.214).
    internal::ItemsSummary items;
    /// wire.161's repeat of the system content among its texts, for the last system text asked
    /// (a conversation's stays the same); under a mutex, since chunks are shared. The text is
    /// shared, not copied per chunk: the chunks of a request hold the one string their audit
    /// asked with (and a string equal to it is recognized without scanning again).
    std::mutex repeats_mutex;
    std::shared_ptr<const std::string> repeats_for;
    bool repeats = false;

    bool repeats_system(const std::shared_ptr<const std::string>& joined) {
        const std::lock_guard<std::mutex> lock(repeats_mutex);
        if (repeats_for != joined) {
            if (!repeats_for || *repeats_for != *joined)
                repeats = internal::repeats_system(shape, 0, *joined);
            repeats_for = joined;
        }
        return repeats;
    }
};

static_assert(std::is_trivially_copyable_v<Msg> && std::is_trivially_copyable_v<Block>);

namespace {

/// Calls f(view&) for every string view of a chunk's records.
template <class F>
void each_view(Shape& s, F&& f) {
    for (Msg& m : s.messages) {
        f(m.role);
        f(m.content_text);
        f(m.tool_call_id);
    }
    for (Block& b : s.blocks) {
        f(b.type);
        f(b.text);
        f(b.id);
        f(b.tool_use_id);
    }
    for (std::string_view& id : s.call_ids) f(id);
}

/// Copies what the views of `s` point at (the per-thread reader's buffers) into one arena.
std::unique_ptr<char[]> relocate(Shape& s) {
    std::size_t total = 0;
    each_view(s, [&](std::string_view& v) { total += v.size(); });
    auto arena = std::make_unique<char[]>(total + 1);
    char* at = arena.get();
    each_view(s, [&](std::string_view& v) {
        if (!v.empty()) std::memcpy(at, v.data(), v.size());
        v = std::string_view(at, v.size());
        at += v.size();
    });
    return arena;
}

/// wire.214: the families whose turns are items of another root key, read from the parsed body.
bool items_family(WireFamily family) {
    return family == WireFamily::kGeminiGenerate || family == WireFamily::kOpenAIResponses;
}

/// The root key of the array that holds the family's turns.
std::string_view turns_key(WireFamily family) {
    if (family == WireFamily::kGeminiGenerate) return "contents";
    if (family == WireFamily::kOpenAIResponses) return "input";
    return "messages";
}

/// The JSON structure of the head open + turns + close (valid JSON, already read), scanned for
/// where the chunks go: true when `open` ends inside the root object's one "messages" array (the
/// family's turns_key: Gemini's "contents", the Responses API's "input"),
/// right after its '[' or after a ',' that follows elements of it (OpenAI's system message rides
/// the open), `turns` holds one or more complete elements of it, and `close` closes it
/// first. Then open + turns + ("," + chunk)... + close is that JSON with the chunks' values added
/// to the array after the first run's. A root key with an escape is not read: false.
class JoinScan {
  public:
    explicit JoinScan(std::string_view key) : turns_key_(key) {}
    bool open(std::string_view bytes) {
        if (!scan(bytes)) return false;
        return !in_string_ && depth_ == 2 && messages_array_ && (last_ == '[' || last_ == ',');
    }
    bool turns(std::string_view bytes) {
        floor_ = 2;  // the messages array stays open
        if (!scan(bytes)) return false;
        return !in_string_ && depth_ == 2 && last_ != '[' && last_ != ',';
    }
    bool close(std::string_view bytes) {
        const std::size_t first = bytes.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos || bytes[first] != ']') return false;
        floor_ = 0;
        if (!scan(bytes)) return false;
        return messages_keys_ == 1;
    }

  private:
    bool scan(std::string_view bytes) {
        for (const char c : bytes) {
            if (in_string_) {
                if (escape_) {
                    escape_ = false;
                } else if (c == '\\') {
                    escape_ = true;
                    if (in_key_) return false;
                } else if (c == '"') {
                    in_string_ = false;
                    if (in_key_) {
                        in_key_ = false;
                        last_key_messages_ = key_ == turns_key_;
                        if (last_key_messages_) ++messages_keys_;
                    }
                } else if (in_key_) {
                    key_ += c;
                }
                continue;
            }
            switch (c) {
                case ' ': case '\t': case '\r': case '\n': continue;
                case '"':
                    in_string_ = true;
                    if (depth_ == 1 && key_next_) {
                        key_next_ = false;
                        in_key_ = true;
                        key_.clear();
                    }
                    break;
                case '{':
                case '[':
                    ++depth_;
                    if (depth_ == 1) {
                        if (c != '{') return false;
                        key_next_ = true;
                    }
                    // In the root object an array is the value of the last key.
                    if (depth_ == 2 && c == '[' && last_key_messages_) messages_array_ = true;
                    break;
                case '}':
                case ']':
                    if (depth_ <= floor_) return false;
                    if (depth_ == 2) messages_array_ = false;
                    --depth_;
                    break;
                case ',':
                    if (depth_ == 1) key_next_ = true;
                    break;
                default: break;
            }
            last_ = c;
        }
        return true;
    }

    std::string_view turns_key_;
    int depth_ = 0;
    int floor_ = 0;
    bool in_string_ = false;
    bool escape_ = false;
    bool key_next_ = false;
    bool in_key_ = false;
    std::string key_;
    bool last_key_messages_ = false;
    bool messages_array_ = false;
    int messages_keys_ = 0;
    char last_ = 0;
};

/// wire.174: the summary of one piece of a request's messages (see PieceSummary); a family
/// without one gets ok = false, so its split bodies are checked over all their records.
internal::PieceSummary summarize(const Shape& s, bool first_in_request) {
    internal::PieceSummary out;
    out.marks = internal::breakpoint_marks(s, false);
    switch (s.family) {
        case WireFamily::kAnthropicMessages:
            internal::anthropic_mark_order(s, s.blocks, out.order);
            for (std::size_t i = 0; i < s.messages.size() && out.ok; ++i) {
                const Msg& m = s.messages[i];
                out.ok = internal::anthropic_message_ok(s, m) &&
                         (i == 0 ? !first_in_request || internal::anthropic_first_ok(s, m)
                                 : internal::anthropic_pair_ok(s, s.messages[i - 1], s, m));
            }
            break;
        case WireFamily::kOpenAIChat:
            internal::openai_piece(s, first_in_request, out);
            break;
        case WireFamily::kBedrockConverse:
        case WireFamily::kGeminiGenerate:
        case WireFamily::kOpenAIResponses:
        case WireFamily::kUnknown:
            out.ok = false;
            break;
    }
    out.ok = out.ok && !s.messages.empty();
    return out;
}

/// One piece of the request's messages: its records and their summary.
struct Piece {
    const Shape* shape;
    const internal::PieceSummary* summary;
    [[nodiscard]] const Msg& first() const { return shape->messages.front(); }
    [[nodiscard]] const Msg& last() const { return shape->messages.back(); }
};

/// wire.174: true when the whole request's checks (internal::body_checks) pass, decided from the
/// head's records, the pieces' summaries and the messages where two pieces meet; false when they
/// may not, which is no verdict: the caller then runs the checks over all the records, which
/// give the verdict and its text. So a request that passes costs the head and its new chunks,
/// and only a refused one costs its whole length.
bool passes_by_pieces(WireFamily family, std::size_t body_bytes, const Shape& head,
                      const std::vector<Piece>& pieces, bool chunks_repeat_system,
                      const CallPlan& plan) {
    if (family != WireFamily::kAnthropicMessages && family != WireFamily::kOpenAIChat) return false;
    for (const Piece& p : pieces)
        if (!p.summary->ok) return false;
    // What reads the head alone: the size, the system channel (and its repeats in the first run),
    // the output budget, the family's rules that read no message.
    if (check_size(family, body_bytes) || internal::system_check(head, plan) ||
        internal::max_tokens_check(head, plan))
        return false;
    if (chunks_repeat_system) return false;
    if (family == WireFamily::kAnthropicMessages) {
        std::size_t marks = internal::breakpoint_marks(head, true);
        for (std::size_t i = 1; i < pieces.size(); ++i) marks += pieces[i].summary->marks;
        if (marks != plan.breakpoints || internal::anthropic_head(head)) return false;
        internal::MarkOrder order;
        internal::anthropic_mark_order(head, head.tools, order);
        internal::anthropic_mark_order(head, head.system_blocks, order);
        for (const Piece& p : pieces) order.add(p.summary->order);
        if (internal::anthropic_cache_control(order, head.request_mark)) return false;
        // Where two pieces meet, and the last message (pieces[0], the head, checked its first).
        for (std::size_t i = 1; i < pieces.size(); ++i) {
            if (!internal::anthropic_pair_ok(*pieces[i - 1].shape, pieces[i - 1].last(),
                                             *pieces[i].shape, pieces[i].first()))
                return false;
        }
        const Piece& tail = pieces.back();
        if (!internal::anthropic_last_ok(*tail.shape, tail.last())) return false;
        if (head.thinking_enabled) {
            const bool both = tail.shape->messages.size() >= 2;
            const Piece& before = both ? tail : pieces[pieces.size() - 2];
            const Msg& assistant =
                both ? tail.shape->messages[tail.shape->messages.size() - 2] : before.last();
            if (!internal::anthropic_thinking_ok(*before.shape, assistant, *tail.shape,
                                                 tail.last()))
                return false;
        }
        return true;
    }
    if (internal::openai_head(head)) return false;
    // wire.124, wire.125 across the pieces: each piece's leading tool messages answer what is
    // pending, and nothing is pending at its first other message or at the end.
    std::vector<std::string_view> pending;
    for (const Piece& p : pieces) {
        for (const std::string_view id : p.summary->leading_tool_ids) {
            const auto it = std::find(pending.begin(), pending.end(), id);
            if (it == pending.end()) return false;
            pending.erase(it);
        }
        if (!p.summary->has_non_tool) continue;
        if (!pending.empty()) return false;
        pending = p.summary->exit_pending;
    }
    return pending.empty();
}

/// wire.214: reads a chunk of the family's items as the whole audit's reader reads them (limits.120
/// to limits.122; each item one level deeper in the body than in "[" + list + "]") and
/// summarizes them; false when they are not one or more JSON values.
bool read_items(WireFamily family, std::string_view list, internal::ItemsSummary& out) {
    std::string text;
    text.reserve(list.size() + 2);
    text.append("[").append(list).append("]");
    rapidjson::Document items;
    if (json_guard::parse(items, text, json_guard::kMaxDepth - 1) || !items.IsArray() ||
        items.Empty())
        return false;
    if (family == WireFamily::kGeminiGenerate)
        internal::gemini_summary(items, false, out);
    else
        internal::responses_summary(items, out);
    return true;
}

/// wire.214: true when the whole audit passes the body of `head` (open + turns + close, whose
/// joins were proven) with the chunks' items after its own, from their summaries (`pieces`, the
/// head's own to be set at pieces[0]); false is no verdict.
bool items_pass_by_pieces(WireFamily family, std::string_view head,
                          std::vector<const internal::ItemsSummary*>& pieces,
                          const CallPlan& plan) {
    rapidjson::Document parsed;
    if (json_guard::parse(parsed, head) || !parsed.IsObject()) return false;
    const auto list = parsed.FindMember(turns_key(family).data());
    if (list == parsed.MemberEnd()) return false;
    internal::ItemsSummary first;
    pieces.front() = &first;
    if (family == WireFamily::kGeminiGenerate) {
        internal::gemini_summary(list->value, true, first);
        return internal::gemini_passes(parsed, pieces, plan);
    }
    internal::responses_summary(list->value, first);
    return internal::responses_passes(parsed, pieces, plan);
}

}  // namespace

MessageChunk::MessageChunk(WireFamily family, std::string wire) : records_(std::make_unique<Records>()) {
    records_->family = family;
    records_->wire = std::move(wire);
    if (items_family(family)) {
        records_->readable = read_items(family, records_->wire, records_->items);
        return;
    }
    records_->readable = internal::messages_of_bytes(family, records_->wire, records_->shape) == BytesRead::kOk;
    if (records_->readable) internal::fold_system_messages(records_->shape);  // wire.210
    if (records_->readable) {
        records_->arena = relocate(records_->shape);
        records_->summary = summarize(records_->shape, false);
    } else {
        records_->shape.clear(family);
    }
    internal::release_large_reader();
}

MessageChunk::~MessageChunk() = default;
MessageChunk::MessageChunk(MessageChunk&&) noexcept = default;
MessageChunk& MessageChunk::operator=(MessageChunk&&) noexcept = default;

const std::string& MessageChunk::wire() const noexcept {
    static const std::string none;
    return records_ ? records_->wire : none;
}
WireFamily MessageChunk::family() const noexcept { return records_ ? records_->family : WireFamily::kUnknown; }
bool MessageChunk::readable() const noexcept { return records_ && records_->readable; }

std::size_t SplitBody::size() const noexcept {
    std::size_t n = open.size() + turns.size() + close.size();
    for (const MessageChunk* c : chunks) n += 1 + c->wire().size();
    return n;
}

std::string SplitBody::join() const {
    std::string body;
    body.reserve(size() + kReadPadding);
    body += open;
    body += turns;
    for (const MessageChunk* c : chunks) {
        body += ',';
        body += c->wire();
    }
    body += close;
    return body;
}

std::optional<Violation> audit_split_request(WireFamily family, const OutgoingRequest& request,
                                             const SplitBody& split, const CallPlan& plan,
                                             bool* read_whole, bool* checked_all) {
    if (checked_all != nullptr) *checked_all = true;
    // caching.115: a body in pieces is the split's join.
    const std::size_t body_bytes = request.body_in_pieces ? split.size() : request.body.size();
    const auto whole = [&] {
        if (read_whole != nullptr) *read_whole = true;
        if (checked_all != nullptr) *checked_all = true;
        if (!request.body_in_pieces) return audit_request(family, request, plan);
        const std::string joined = split.join();
        OutgoingRequest in_one = request;
        in_one.body = joined;
        in_one.readable = joined.capacity();
        in_one.body_in_pieces = false;
        return audit_request(family, in_one, plan);
    };
    if (read_whole != nullptr) *read_whole = false;
    if (request.parsed != nullptr || body_bytes != split.size()) return whole();
    for (const MessageChunk* c : split.chunks) {
        if (c == nullptr || !c->readable() || c->family() != family) return whole();
    }
    if (auto e = internal::generic_checks(request, body_bytes, plan)) return e;
    if (checked_all != nullptr) *checked_all = false;
    thread_local std::string head;
    thread_local Shape shape;
    struct Release {
        ~Release() {
            internal::release_large_reader();
            if (head.capacity() > internal::kKeepReaderBytes) std::string().swap(head);
        }
    } release;  // after the checks, which read views into the reader's buffers and the head
    head.clear();
    head.reserve(split.open.size() + split.turns.size() + split.close.size() + kReadPadding);
    head.append(split.open).append(split.turns).append(split.close);
    JoinScan joins(turns_key(family));
    if (items_family(family)) {
        // wire.214: Gemini contents and Responses input items are read from the parsed head; a
        // request the pieces do not prove passes is audited whole, which gives the verdict.
        if (!joins.open(split.open) || !joins.turns(split.turns) || !joins.close(split.close))
            return whole();
        std::vector<const internal::ItemsSummary*> pieces;
        pieces.reserve(split.chunks.size() + 1);
        pieces.push_back(nullptr);
        for (const MessageChunk* c : split.chunks) pieces.push_back(&c->records_->items);
        if (items_pass_by_pieces(family, head, pieces, plan)) return std::nullopt;
        return whole();
    }
    if (internal::shape_of_bytes(family, head, head.capacity(), shape) != BytesRead::kOk ||
        !joins.open(split.open) || !joins.turns(split.turns) || !joins.close(split.close)) {
        return whole();
    }
    internal::fold_system_messages(shape);  // wire.210
    // wire.174: a request that passes is decided from the head, the chunks' summaries and where
    // the pieces meet; only a request that may not is checked over all its records.
    if (!split.chunks.empty()) {
        const internal::PieceSummary head_summary = summarize(shape, true);
        std::vector<Piece> pieces;
        pieces.reserve(split.chunks.size() + 1);
        pieces.push_back({&shape, &head_summary});
        bool repeat = false;
        if (std::string joined = internal::system_joined(plan); !joined.empty()) {
            // One string per thread for as long as the system text stays the same.
            thread_local std::shared_ptr<const std::string> asked;
            if (!asked || *asked != joined)
                asked = std::make_shared<const std::string>(std::move(joined));
            for (const MessageChunk* c : split.chunks)
                repeat = repeat || c->records_->repeats_system(asked);
        }
        for (const MessageChunk* c : split.chunks)
            pieces.push_back({&c->records_->shape, &c->records_->summary});
        if (passes_by_pieces(family, body_bytes, shape, pieces, repeat, plan)) return std::nullopt;
    }
    if (checked_all != nullptr) *checked_all = true;
    // The records of the whole request: the head's, then each chunk's messages after the first
    // run's, their indexes moved past what comes before them.
    for (const MessageChunk* c : split.chunks) {
        const Shape& kept = c->records_->shape;
        const auto blocks = static_cast<std::uint32_t>(shape.blocks.size());
        const auto inner = static_cast<std::uint32_t>(shape.inner_1h.size());
        const auto calls = static_cast<std::uint32_t>(shape.call_ids.size());
        // Copied in bulk (the records are trivially copyable), then their indexes moved.
        const std::size_t first_message = shape.messages.size();
        shape.messages.insert(shape.messages.end(), kept.messages.begin(), kept.messages.end());
        for (auto m = shape.messages.begin() + static_cast<std::ptrdiff_t>(first_message); m != shape.messages.end(); ++m) {
            m->blocks_begin += blocks;
            m->blocks_end += blocks;
            m->calls_begin += calls;
            m->calls_end += calls;
        }
        shape.blocks.insert(shape.blocks.end(), kept.blocks.begin(), kept.blocks.end());
        if (inner > 0) {
            for (auto b = shape.blocks.begin() + blocks; b != shape.blocks.end(); ++b) {
                b->inner_begin += inner;
                b->inner_end += inner;
            }
        }
        shape.inner_1h.insert(shape.inner_1h.end(), kept.inner_1h.begin(), kept.inner_1h.end());
        shape.call_ids.insert(shape.call_ids.end(), kept.call_ids.begin(), kept.call_ids.end());
    }
    return internal::body_checks(family, body_bytes, shape, plan);
}

}  // namespace nucleo::contract
