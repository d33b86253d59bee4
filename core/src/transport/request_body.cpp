#include "nucleo/request_body.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <ostream>
#include <utility>

namespace nucleo {

// caching.115: the one string of a body, given so or joined once from its pieces.
struct RequestBody::Bytes {
    std::once_flag joined;
    std::string text;
    std::atomic<bool> ready{false};  ///< set once `text` holds the join of the pieces
};

RequestBody::RequestBody() = default;

RequestBody::RequestBody(std::string bytes)
    : bytes_(std::make_shared<Bytes>()), size_(bytes.size()) {
    bytes_->text = std::move(bytes);
}

RequestBody::RequestBody(std::string_view bytes) : RequestBody(std::string(bytes)) {}

RequestBody::RequestBody(const char* bytes)
    : RequestBody(std::string(bytes == nullptr ? "" : bytes)) {}

RequestBody RequestBody::from_pieces(std::vector<Piece> pieces) {
    RequestBody body;
    pieces.erase(std::remove_if(pieces.begin(), pieces.end(),
                                [](const Piece& p) { return p.bytes.empty(); }),
                 pieces.end());
    for (const Piece& p : pieces) body.size_ += p.bytes.size();
    body.pieces_ = std::move(pieces);
    body.bytes_ = std::make_shared<Bytes>();
    return body;
}

std::size_t RequestBody::piece_count() const noexcept {
    if (!pieces_.empty()) return pieces_.size();
    return size_ == 0 ? 0 : 1;
}

std::string_view RequestBody::piece(std::size_t i) const noexcept {
    if (!pieces_.empty()) return i < pieces_.size() ? pieces_[i].bytes : std::string_view();
    return i == 0 && bytes_ ? std::string_view(bytes_->text) : std::string_view();
}

std::size_t RequestBody::read(std::size_t offset, char* out, std::size_t n) const noexcept {
    std::size_t written = 0;
    std::size_t start = 0;  // where the piece at hand starts in the body
    for (std::size_t i = 0, count = piece_count(); i < count && written < n; ++i) {
        const std::string_view p = piece(i);
        const std::size_t end = start + p.size();
        if (offset + written < end) {
            const std::size_t from = offset + written - start;
            const std::size_t take = std::min(p.size() - from, n - written);
            std::memcpy(out + written, p.data() + from, take);
            written += take;
        }
        start = end;
    }
    return written;
}

const std::string& RequestBody::str() const {
    static const std::string kNone;
    if (!bytes_) return kNone;
    if (!pieces_.empty()) {
        std::call_once(bytes_->joined, [this] {
            std::string& text = bytes_->text;
            text.reserve(size_ + 64);  // limits.135: a parser's read padding
            for (const Piece& p : pieces_) text.append(p.bytes);
            bytes_->ready.store(true, std::memory_order_release);
        });
    }
    return bytes_->text;
}

std::size_t RequestBody::readable() const {
    const std::string_view bytes = view();
    return bytes_ ? std::max(bytes_->text.capacity(), bytes.size()) : 0;
}

bool RequestBody::contiguous() const noexcept {
    return pieces_.empty() || (bytes_ && bytes_->ready.load(std::memory_order_acquire));
}

std::ostream& operator<<(std::ostream& out, const RequestBody& body) {
    return out << body.view();
}

}  // namespace nucleo
