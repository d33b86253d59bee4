// The Streamable HTTP transport (mcp.42 to mcp.49): one endpoint URL, every message a POST whose
// answer is JSON or an event stream, the session the server names echoed on every request, a
// broken stream resumed from its last event id, and the server's own GET stream listened to when
// it offers one. Speaking the stateless revision (mcp.51, mcp.52) it keeps no session, resumes
// nothing, and listens on the answer to `subscriptions/listen` instead of a GET. Each request's
// answer is read on a thread of its own and reaches the client through one queue, in the order it
// came, with the messages the server sent beside it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "mcp/jsonrpc.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/transport.hpp"

namespace nucleo::mcp_internal {

using Clock = std::chrono::steady_clock;

/// What the client reads from the session: a message the server sent, or the failure of the
/// exchange that carried request `request_id`.
struct HttpItem {
    Incoming message;
    bool failed = false;
    std::int64_t request_id = 0;
    ErrorKind kind = ErrorKind::kTransport;
    std::string what;              ///< "answered HTTP 500: …", without the server's name
    bool session_expired = false;  ///< mcp.47: 404 on a request that carried the session id
};

class HttpSession {
  public:
    /// `headers` are sent with every request (the configured ones, mcp.48).
    HttpSession(std::string url, HttpHeaders headers, std::size_t max_message_bytes);
    /// mcp.49: stops every stream and ends the session with DELETE.
    ~HttpSession();
    HttpSession(const HttpSession&) = delete;
    HttpSession& operator=(const HttpSession&) = delete;

    /// The revision sent as MCP-Protocol-Version from now on. `stateless` (mcp.51): the revision
    /// has no session (a session id the server names is ignored) and no resumption of a broken
    /// event stream.
    void set_protocol_revision(std::string revision, bool stateless = false);
    /// POSTs request `id` with `extra` headers besides the session's (mcp.51's Mcp-Method and
    /// Mcp-Name); its answer, and what the server sends before it, come through next(). The
    /// exchange gives up at `deadline`.
    void post_request(std::int64_t id, std::string body, Clock::time_point deadline,
                      HttpHeaders extra = {});
    /// POSTs a notification or a response; nullopt when the server accepted it, else what went
    /// wrong.
    std::optional<std::string> post_message(const std::string& body, Clock::time_point deadline);
    /// The next item before `deadline`, or nullopt.
    std::optional<HttpItem> next(Clock::time_point deadline);
    /// Stops reading the answer of request `id` (cancelled, or past its deadline).
    void abandon(std::int64_t id);
    /// mcp.46: opens the server's GET stream and waits (until `deadline`) for its answer; false
    /// when the server offers none (405) or it failed.
    bool listen(Clock::time_point deadline);
    /// mcp.52: the same, the stream being the event-stream answer to request `id` (the stateless
    /// revision's `subscriptions/listen`, POSTed with `extra` headers). The stream ends for good
    /// when the server answers the request (it closed the subscription).
    bool listen(Clock::time_point deadline, std::int64_t id, std::string body, HttpHeaders extra);
    /// mcp.47: forgets an expired session: every stream stopped, no session id, no revision.
    void reset();
    /// The URL as messages show it (no query, no userinfo).
    [[nodiscard]] const std::string& shown_url() const { return shown_url_; }

  private:
    struct Worker;
    struct Reader;
    HttpRequest make_request(const std::string& method, std::string body,
                             const std::optional<std::string>& last_event_id,
                             const HttpHeaders& extra = {}) const;
    void run_request(Worker& worker, std::int64_t id, const HttpRequest& post,
                     Clock::time_point deadline);
    void run_listener(Worker& worker);
    void push(HttpItem item);
    void fail(std::int64_t id, ErrorKind kind, std::string what, bool expired = false);
    void note_session(const HttpResponse& head);
    void stop_all();
    void reap();

    std::string url_;
    std::string shown_url_;
    HttpHeaders headers_;
    std::size_t max_bytes_;
    HttpTransport transport_;

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::string session_id_;
    std::string revision_;
    bool stateless_ = false;
    struct ListenPost {
        std::int64_t id = 0;
        std::string body;
        HttpHeaders extra;
    };
    std::optional<ListenPost> listen_post_;  // mcp.52: the listener POSTs this instead of a GET
    std::deque<HttpItem> queue_;
    std::list<std::unique_ptr<Worker>> workers_;
    std::unique_ptr<Worker> listener_;
    enum class Listen { kWaiting, kOpen, kRefused } listen_ = Listen::kWaiting;
};

}  // namespace nucleo::mcp_internal
