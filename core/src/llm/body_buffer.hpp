// The per-call buffers of a provider request, reused from call to call (limits.134) and the
// spare bytes a request body keeps for the audit's parser (limits.135).
//
// A request document at 2,000 messages is close to a megabyte; allocated afresh on every call,
// glibc gives its pages back to the kernel when it is freed and the next call faults them in
// again, which is most of a cold request's time. The buffers here are leased from a per-thread
// pool instead: a lease takes a buffer (or makes one), the holder writes it, and the buffer goes
// back cleared, its capacity kept, when the lease ends. Nothing written survives a lease, so the
// reuse is invisible in the bytes; a buffer that grew above kScratchKeepBytes is freed instead of
// kept, so one huge request does not pin its memory for the thread's life.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <rapidjson/stringbuffer.h>

namespace nucleo::internal {

/// limits.135: the spare capacity after a request body's last byte (simdjson's SIMDJSON_PADDING),
/// so a parser that reads whole blocks past the end can read the body where it lies.
inline constexpr std::size_t kBodyPadding = 64;

/// limits.135: makes `body.capacity()` at least `body.size() + kBodyPadding` (the bytes are
/// unchanged; a reallocation happens only when the spare room is missing).
void reserve_body_padding(std::string& body);

/// limits.134: a per-call buffer whose capacity grew above this is freed when its lease ends.
inline constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;

/// limits.134: at most this many buffers rest in one thread's pool (a lease beyond them, when
/// more are leased at once, makes a buffer that is freed when it ends).
inline constexpr std::size_t kScratchPoolSize = 4;

/// limits.134: a lease of one of this thread's request document buffers, empty when leased.
class DocumentScratch {
  public:
    DocumentScratch();
    ~DocumentScratch();
    DocumentScratch(const DocumentScratch&) = delete;
    DocumentScratch& operator=(const DocumentScratch&) = delete;

    [[nodiscard]] rapidjson::StringBuffer& buffer() const noexcept { return *buffer_; }

  private:
    std::unique_ptr<rapidjson::StringBuffer> buffer_;
};

/// What this thread's pool keeps between leases, for tests: the buffers resting and the sum of
/// their capacities.
struct ScratchKept {
    std::size_t buffers = 0;
    std::size_t bytes = 0;
};
[[nodiscard]] ScratchKept document_scratch_kept() noexcept;

/// For tests: the keep bound of this thread's pool (kScratchKeepBytes unless set); 0 restores it.
void set_document_scratch_keep_bytes(std::size_t bytes) noexcept;

}  // namespace nucleo::internal
