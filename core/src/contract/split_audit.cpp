// The audit of a body built from kept chunks (wire.173): the head is read, each chunk's records
// were read once when the chunk was made, and the checks run over the records of the whole
// request, so the verdict is the whole audit's.
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "contract/contract.hpp"
#include "contract/contract_internal.hpp"
#include "contract/shape.hpp"

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

/// The JSON structure of the head open + turns + close (valid JSON, already read), scanned for
/// where the chunks go: true when `open` ends inside the root object's one "messages" array,
/// right after its '[' or after a ',' that follows elements of it (OpenAI's system message rides
/// the open), `turns` holds one or more complete elements of it, and `close` closes it
/// first. Then open + turns + ("," + chunk)... + close is that JSON with the chunks' values added
/// to the array after the first run's. A root key with an escape is not read: false.
class JoinScan {
  public:
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
                        last_key_messages_ = key_ == "messages";
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

}  // namespace

MessageChunk::MessageChunk(WireFamily family, std::string wire) : records_(std::make_unique<Records>()) {
    records_->family = family;
    records_->wire = std::move(wire);
    records_->readable = internal::messages_of_bytes(family, records_->wire, records_->shape) == BytesRead::kOk;
    if (records_->readable) {
        records_->arena = relocate(records_->shape);
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
                                             const SplitBody& split, const CallPlan& plan, bool* read_whole) {
    const auto whole = [&] {
        if (read_whole != nullptr) *read_whole = true;
        return audit_request(family, request, plan);
    };
    if (read_whole != nullptr) *read_whole = false;
    if (request.parsed != nullptr || request.body.size() != split.size()) return whole();
    for (const MessageChunk* c : split.chunks) {
        if (c == nullptr || !c->readable() || c->family() != family) return whole();
    }
    if (auto e = internal::generic_checks(request, plan)) return e;
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
    JoinScan joins;
    if (internal::shape_of_bytes(family, head, head.capacity(), shape) != BytesRead::kOk ||
        !joins.open(split.open) || !joins.turns(split.turns) || !joins.close(split.close)) {
        return whole();
    }
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
    return internal::body_checks(family, request.body.size(), shape, plan);
}

}  // namespace nucleo::contract
