// The bytes of an HTTP request body, in one piece or in several (caching.115).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo {

/// caching.115: an immutable request body. A body the host or a plugin writes is one piece; a
/// body built through the per-turn encode cache is the pieces the cache keeps (the request's
/// head, each kept run of turns, the commas between them), shared with the cache, never copied
/// into one string: building the next request of a growing conversation costs its new turns, not
/// its length, and HttpTransport sends the pieces one after the other.
///
/// Asking for the bytes in one piece (view(), data(), a conversion to std::string_view) joins
/// them the first time, once per body and its copies, thread-safely, and keeps the join with the
/// body: a host that reads a body pays for one copy, a body that is only sent never is. Copies are
/// cheap (they share the pieces) and every view stays valid while one copy lives.
class RequestBody {
  public:
    /// One piece: `bytes` stays valid while `owner` lives (the body keeps it).
    struct Piece {
        std::shared_ptr<const void> owner;
        std::string_view bytes;
    };

    RequestBody();
    // A body is its bytes: a string converts to one implicitly, as HttpRequest::body was one.
    RequestBody(std::string bytes);       // NOLINT(google-explicit-constructor)
    RequestBody(std::string_view bytes);  // NOLINT(google-explicit-constructor)
    RequestBody(const char* bytes);       // NOLINT(google-explicit-constructor)
    /// The body made of `pieces`, in order (empty pieces are dropped).
    static RequestBody from_pieces(std::vector<Piece> pieces);

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

    /// The pieces, in order; one for a body given as a string (none when empty).
    [[nodiscard]] std::size_t piece_count() const noexcept;
    [[nodiscard]] std::string_view piece(std::size_t i) const noexcept;
    /// Copies up to `n` bytes from `offset` into `out` (a transport's read callback); returns how
    /// many (0 at the end).
    std::size_t read(std::size_t offset, char* out, std::size_t n) const noexcept;

    /// The bytes in one string (joined the first time for a body of several, then kept).
    [[nodiscard]] const std::string& str() const;
    [[nodiscard]] std::string_view view() const { return str(); }
    [[nodiscard]] const char* data() const { return str().data(); }
    [[nodiscard]] const char* c_str() const { return str().c_str(); }
    operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
    operator std::string_view() const { return str(); }    // NOLINT(google-explicit-constructor)
    /// How many bytes from data() may be read: the capacity of the string that holds the bytes in
    /// one piece (limits.135), at least size().
    [[nodiscard]] std::size_t readable() const;
    /// Whether the bytes were ever held in one string: a body given as one, or joined since.
    [[nodiscard]] bool contiguous() const noexcept;

    friend bool operator==(const RequestBody& a, std::string_view b) { return a.view() == b; }
    friend std::ostream& operator<<(std::ostream& out, const RequestBody& body);

  private:
    struct Bytes;
    std::vector<Piece> pieces_;     ///< empty when the bytes are in one string
    std::shared_ptr<Bytes> bytes_;  ///< the one string, or the join once asked for
    std::size_t size_ = 0;
};

}  // namespace nucleo
