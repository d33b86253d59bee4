// limits.134: per-thread pools of request document buffers; limits.135: the body's padding.
#include "llm/body_buffer.hpp"

#include <vector>

namespace nucleo::internal {
namespace {

struct Pool {
    std::vector<std::unique_ptr<rapidjson::StringBuffer>> resting;
    std::size_t keep_bytes = kScratchKeepBytes;
};

Pool& pool() {
    thread_local Pool p;
    return p;
}

std::size_t capacity_of(const rapidjson::StringBuffer& b) noexcept { return b.stack_.GetCapacity(); }

}  // namespace

void reserve_body_padding(std::string& body) {
    if (body.capacity() < body.size() + kBodyPadding) body.reserve(body.size() + kBodyPadding);
}

DocumentScratch::DocumentScratch() {
    Pool& p = pool();
    if (p.resting.empty()) {
        buffer_ = std::make_unique<rapidjson::StringBuffer>();
    } else {
        buffer_ = std::move(p.resting.back());
        p.resting.pop_back();
    }
}

DocumentScratch::~DocumentScratch() {
    Pool& p = pool();
    if (capacity_of(*buffer_) > p.keep_bytes || p.resting.size() >= kScratchPoolSize) return;  // freed
    buffer_->Clear();
    try {
        p.resting.push_back(std::move(buffer_));
    } catch (...) {
        // Out of memory for the pool's slot: the buffer is freed with the lease, nothing is lost.
    }
}

ScratchKept document_scratch_kept() noexcept {
    ScratchKept kept;
    for (const auto& b : pool().resting) {
        ++kept.buffers;
        kept.bytes += capacity_of(*b);
    }
    return kept;
}

void set_document_scratch_keep_bytes(std::size_t bytes) noexcept {
    pool().keep_bytes = bytes == 0 ? kScratchKeepBytes : bytes;
}

}  // namespace nucleo::internal
