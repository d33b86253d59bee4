#include "mcp/http_session.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>

#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "mcp/sse.hpp"
#include "nucleo/config.hpp"

namespace nucleo::mcp_internal {
namespace {

// mcp.45: how often one request's broken event stream is resumed before the exchange fails.
constexpr int kMaxResumptions = 20;
// The wait before a resumption when the server named none with `retry:`.
constexpr std::chrono::milliseconds kDefaultRetry{200};
// mcp.46: the GET stream is opened again after it ended, at most this many times in a row
// without a message between.
constexpr int kMaxListenFailures = 5;
// A GET stream is read this long before it is opened anew (the server may keep it silent).
constexpr std::chrono::milliseconds kListenSpan{std::chrono::minutes(10)};
// mcp.46: what the server sent unasked and nobody read yet is kept up to this many messages; past
// it, its notifications are dropped (an answer or a failure of a request never is).
constexpr std::size_t kMaxUnread = 1024;
// What of a refusal's body a failure quotes.
constexpr std::size_t kQuotedBody = 200;
// mcp.44: what of a 4xx JSON body is kept, to be read as the JSON-RPC error it may be.
constexpr std::size_t kErrorBody = 16 * 1024;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// The media type of a Content-Type header, lowercased, without parameters.
std::string media_type(const HttpResponse& head) {
    std::string type = lower(head.header("content-type").value_or(""));
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') type.pop_back();
    return type;
}

std::chrono::milliseconds left(Clock::time_point deadline) {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

/// Whether `body` is a JSON-RPC error response to request `id`.
bool answers_with_error(const std::string& body, std::int64_t id) {
    try {
        const Incoming in = parse_incoming(body);
        return in.kind == Incoming::Kind::kResponse && in.id == id && in.doc.HasMember("error");
    } catch (const Error&) {
        return false;
    }
}

}  // namespace

struct HttpSession::Worker {
    CancellationToken token;
    std::thread thread;
    std::atomic<bool> done{false};
    std::int64_t id = 0;  // the request it reads the answer of (0: the GET stream)
};

/// Reads one answer (a POST's or a GET stream's) as it comes: an event stream event by event, a
/// JSON body whole, anything else kept only as far as a failure quotes it (mcp.44).
struct HttpSession::Reader {
    HttpSession& session;
    std::optional<std::int64_t> waits_for;
    SseReader sse;
    enum class Mode { kNone, kSse, kJson, kOther } mode = Mode::kNone;
    long status = 0;
    std::string type;
    std::string body;  // a JSON answer, or the head of another one
    std::size_t other_bytes = 0;
    bool answered = false;
    bool delivered = false;  // a message reached the queue
    std::optional<std::pair<ErrorKind, std::string>> failure;

    Reader(HttpSession& s, std::optional<std::int64_t> id)
        : session(s), waits_for(id), sse(s.max_bytes_) {}

    void head(const HttpResponse& h) {
        status = h.status;
        type = media_type(h);
        session.note_session(h);
        if (status < 200 || status >= 300)
            mode = Mode::kOther;
        else if (type == "text/event-stream")
            mode = Mode::kSse;
        else if (type == "application/json")
            mode = Mode::kJson;
        else
            mode = Mode::kOther;
    }

    /// One message's text: parsed (mcp.1's checks), queued; false to stop reading.
    bool deliver(std::string_view text) {
        HttpItem item;
        try {
            item.message = parse_incoming(text);
        } catch (const Error& e) {
            failure = {ErrorKind::kProtocol, std::string("sent ") + e.what()};
            return false;
        }
        const bool is_answer = waits_for && item.message.kind == Incoming::Kind::kResponse &&
                               item.message.id == waits_for;
        session.push(std::move(item));
        delivered = true;
        if (is_answer) answered = true;
        return !is_answer;
    }

    bool chunk(std::string_view bytes) {
        switch (mode) {
            case Mode::kSse:
                if (!sse.feed(bytes, [this](SseEvent& e) { return deliver(e.data); })) {
                    failure = {
                        ErrorKind::kProtocol,
                        "sent an event over " + std::to_string(session.max_bytes_) + " bytes"};
                    return false;
                }
                return !failure && !answered;
            case Mode::kJson:
                // mcp.44: a JSON answer is kept up to the message bound, no further.
                if (body.size() + bytes.size() > session.max_bytes_) {
                    failure = {
                        ErrorKind::kProtocol,
                        "sent an answer over " + std::to_string(session.max_bytes_) + " bytes"};
                    return false;
                }
                body += bytes;
                return true;
            case Mode::kOther:
            case Mode::kNone: {
                other_bytes += bytes.size();
                const std::size_t keep = error_body() ? kErrorBody : kQuotedBody;
                if (body.size() < keep) body += bytes.substr(0, keep - body.size());
                return other_bytes <= session.max_bytes_;
            }
        }
        return false;
    }

    SendControl control(Clock::time_point deadline) {
        SendControl c;
        c.deadline = left(deadline);
        c.idle_timeout = c.deadline;
        c.on_head = [this](const HttpResponse& h) { head(h); };
        c.on_chunk = [this](std::string_view bytes) { return chunk(bytes); };
        return c;
    }

    /// A client error answered with JSON: the body may be the JSON-RPC error answering the
    /// request (mcp.44).
    [[nodiscard]] bool error_body() const {
        return status >= 400 && status < 500 && type == "application/json";
    }

    /// Why a finished answer that was not a message stream is a failure ("answered HTTP 500:
    /// …"), or nullopt.
    [[nodiscard]] std::optional<std::string> refusal() const {
        if (mode == Mode::kOther && (status < 200 || status >= 300)) {
            std::string what = "answered HTTP " + std::to_string(status);
            if (!body.empty()) what += ": " + internal::printable_utf8(body.substr(0, kQuotedBody));
            return what;
        }
        if (mode == Mode::kOther || mode == Mode::kNone)
            return "answered HTTP " + std::to_string(status) + " with content type '" +
                   internal::printable_utf8(type) +
                   "' (neither application/json nor text/event-stream)";
        return std::nullopt;
    }
};

HttpSession::HttpSession(std::string url, HttpHeaders headers, std::size_t max_message_bytes)
    : url_(std::move(url)),
      shown_url_(redact_url(url_.substr(0, url_.find('?')))),
      headers_(std::move(headers)),
      max_bytes_(max_message_bytes),
      transport_([&] {
          TransportOptions o;
          // mcp.42: no retry: a request sent again could run a tool twice.
          o.retry.max_attempts = 1;
          o.limits.max_response_bytes = max_message_bytes;
          o.max_idle_connections = 4;
          return o;
      }()) {}

HttpSession::~HttpSession() {
    std::string session;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        session = session_id_;
    }
    stop_all();
    // mcp.49: the session is ended; a server that does not allow it (405) or is gone is let be.
    if (!session.empty()) {
        try {
            HttpRequest del = make_request("DELETE", "", std::nullopt);
            SendControl c;
            c.deadline = std::chrono::milliseconds(2000);
            transport_.send(del, nullptr, c);
        } catch (const Error& e) {
            NUCLEO_LOG_INFO("MCP session at {} not ended: {}", shown_url_, e.what());
        }
    }
    std::list<std::unique_ptr<Worker>> workers;
    std::unique_ptr<Worker> listener;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        workers.swap(workers_);
        listener.swap(listener_);
    }
    for (auto& w : workers) w->thread.join();
    if (listener) listener->thread.join();
}

void HttpSession::set_protocol_revision(std::string revision, bool stateless) {
    const std::lock_guard<std::mutex> lock(mutex_);
    revision_ = std::move(revision);
    stateless_ = stateless;
}

HttpRequest HttpSession::make_request(const std::string& method, std::string body,
                                      const std::optional<std::string>& last_event_id,
                                      const HttpHeaders& extra) const {
    HttpRequest r;
    r.method = method;
    r.url = url_;
    r.headers = headers_;
    r.headers.insert(r.headers.end(), extra.begin(), extra.end());
    if (method == "POST") {
        r.headers.emplace_back("Content-Type", "application/json");
        r.headers.emplace_back("Accept", "application/json, text/event-stream");
    } else if (method == "GET") {
        r.headers.emplace_back("Accept", "text/event-stream");
    }
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!session_id_.empty()) r.headers.emplace_back("Mcp-Session-Id", session_id_);
        if (!revision_.empty()) r.headers.emplace_back("MCP-Protocol-Version", revision_);
    }
    if (last_event_id) r.headers.emplace_back("Last-Event-ID", *last_event_id);
    r.body = RequestBody(std::move(body));
    return r;
}

void HttpSession::note_session(const HttpResponse& head) {
    const auto id = head.header("mcp-session-id");
    if (!id || id->empty()) return;
    // mcp.43: a session id is visible ASCII; another one is not sent back in a header.
    if (!std::all_of(id->begin(), id->end(), [](char c) { return c >= 0x21 && c <= 0x7e; })) {
        NUCLEO_LOG_WARN("MCP server at {} named a session id that is not visible ASCII; ignored",
                        shown_url_);
        return;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    // mcp.51: the stateless revision has no session; an id a server names anyway is not sent back.
    if (stateless_) return;
    // mcp.43: the id the initialize answer named is the session's; later answers do not change it.
    if (session_id_.empty()) session_id_ = *id;
}

void HttpSession::push(HttpItem item) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (queue_.size() >= kMaxUnread && !item.failed &&
            item.message.kind == Incoming::Kind::kNotification) {
            NUCLEO_LOG_WARN("MCP server at {}: {} messages unread; its {} is dropped", shown_url_,
                            queue_.size(), item.message.method);
            return;
        }
        queue_.push_back(std::move(item));
    }
    ready_.notify_all();
}

void HttpSession::fail(std::int64_t id, ErrorKind kind, std::string what, bool expired) {
    HttpItem item;
    item.failed = true;
    item.request_id = id;
    item.kind = kind;
    item.what = std::move(what);
    item.session_expired = expired;
    push(std::move(item));
}

void HttpSession::reap() {
    std::list<std::unique_ptr<Worker>> finished;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = workers_.begin(); it != workers_.end();) {
            if ((*it)->done) {
                finished.push_back(std::move(*it));
                it = workers_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& w : finished) w->thread.join();
}

void HttpSession::post_request(std::int64_t id, std::string body, Clock::time_point deadline,
                               HttpHeaders extra) {
    reap();
    HttpRequest post = make_request("POST", std::move(body), std::nullopt, extra);
    auto worker = std::make_unique<Worker>();
    worker->id = id;
    Worker& w = *worker;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        workers_.push_back(std::move(worker));
    }
    w.thread = std::thread([this, &w, id, p = std::move(post), deadline] {
        run_request(w, id, p, deadline);
        w.done = true;
    });
}

void HttpSession::run_request(Worker& w, std::int64_t id, const HttpRequest& post,
                              Clock::time_point deadline) {
    bool stateless = false;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stateless = stateless_;
    }
    const bool had_session = std::any_of(post.headers.begin(), post.headers.end(),
                                         [](const auto& h) { return h.first == "Mcp-Session-Id"; });
    std::optional<std::string> last_id;
    std::optional<long> retry;
    for (int stream = 0;; ++stream) {
        Reader reader(*this, id);
        try {
            // mcp.45: a resumption is a GET naming the last event seen.
            const HttpRequest r = stream == 0 ? post : make_request("GET", "", last_id);
            transport_.send(r, &w.token, reader.control(deadline));
        } catch (const Error& e) {
            if (w.token.cancelled()) return;
            if ((!reader.sse.last_event_id() && !last_id) || Clock::now() >= deadline)
                return fail(id, ErrorKind::kTransport, e.what());
            reader.mode = Reader::Mode::kSse;  // a stream cut by the network: resumed below
        }
        if (w.token.cancelled() || reader.answered) return;
        if (reader.failure) return fail(id, reader.failure->first, reader.failure->second);
        if (stream == 0 && reader.status == 404 && had_session)
            return fail(id, ErrorKind::kTransport, "answered HTTP 404: its session ended", true);
        // mcp.44: a 4xx whose JSON body is the JSON-RPC error answering this request (as a
        // server of the stateless revision refuses a revision it does not speak) is the
        // server's refusal of it, read as any answer.
        if (stream == 0 && reader.error_body() && reader.other_bytes == reader.body.size() &&
            answers_with_error(reader.body, id)) {
            reader.deliver(reader.body);
            return;
        }
        if (auto why = reader.refusal()) {
            return fail(id, ErrorKind::kTransport,
                        stream == 0 ? *why : "could not resume its event stream: " + *why);
        }
        if (reader.mode == Reader::Mode::kJson) {
            if (!reader.deliver(reader.body) && !reader.answered && reader.failure)
                return fail(id, reader.failure->first, reader.failure->second);
            if (!reader.answered)
                fail(id, ErrorKind::kProtocol, "answered with a message that is not the answer");
            return;
        }
        // mcp.51: the stateless revision resumes no stream; a broken one loses its request.
        if (stateless)
            return fail(id, ErrorKind::kTransport,
                        "ended its event stream before the answer (the stateless revision resumes "
                        "none)");
        if (reader.sse.last_event_id()) last_id = reader.sse.last_event_id();
        if (reader.sse.retry_ms()) retry = reader.sse.retry_ms();
        if (!last_id)
            return fail(id, ErrorKind::kTransport,
                        "ended its event stream before the answer, with no event id to resume "
                        "it from");
        if (stream + 1 > kMaxResumptions)
            return fail(id, ErrorKind::kTransport,
                        "ended its event stream before the answer " +
                            std::to_string(kMaxResumptions + 1) + " times");
        const auto wait =
            std::min(retry ? std::chrono::milliseconds(*retry) : kDefaultRetry, left(deadline));
        if (w.token.wait_for(wait) || Clock::now() >= deadline) return;
    }
}

std::optional<std::string> HttpSession::post_message(const std::string& body,
                                                     Clock::time_point deadline) {
    Reader reader(*this, std::nullopt);
    try {
        transport_.send(make_request("POST", body, std::nullopt), nullptr,
                        reader.control(deadline));
    } catch (const Error& e) {
        return std::string(e.what());
    }
    // 202 Accepted is the answer; a 200 with a body is tolerated (read as the server's messages).
    if (reader.status >= 200 && reader.status < 300) {
        if (reader.mode == Reader::Mode::kJson && !reader.body.empty()) reader.deliver(reader.body);
        return std::nullopt;
    }
    return reader.refusal();
}

std::optional<HttpItem> HttpSession::next(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ready_.wait_until(lock, deadline, [this] { return !queue_.empty(); })) return std::nullopt;
    HttpItem item = std::move(queue_.front());
    queue_.pop_front();
    return item;
}

void HttpSession::abandon(std::int64_t id) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& w : workers_)
        if (w->id == id) w->token.cancel();
}

bool HttpSession::listen(Clock::time_point deadline, std::int64_t id, std::string body,
                         HttpHeaders extra) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        listen_post_ = ListenPost{id, std::move(body), std::move(extra)};
    }
    return listen(deadline);
}

bool HttpSession::listen(Clock::time_point deadline) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (listener_) return listen_ == Listen::kOpen;
        listen_ = Listen::kWaiting;
        listener_ = std::make_unique<Worker>();
        Worker& w = *listener_;
        w.thread = std::thread([this, &w] {
            run_listener(w);
            w.done = true;
            {
                const std::lock_guard<std::mutex> l(mutex_);
                if (listen_ == Listen::kWaiting) listen_ = Listen::kRefused;
            }
            ready_.notify_all();
        });
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_until(lock, deadline, [this] { return listen_ != Listen::kWaiting; });
    return listen_ == Listen::kOpen;
}

void HttpSession::run_listener(Worker& w) {
    std::optional<std::string> last_id;
    std::optional<long> retry;
    int failures = 0;
    std::optional<ListenPost> post;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        post = listen_post_;
    }
    // mcp.52: in the stateless revision the stream is the answer to subscriptions/listen.
    const std::string stream = post ? "subscriptions/listen stream" : "GET stream";
    while (!w.token.cancelled()) {
        Reader reader(*this, post ? std::optional<std::int64_t>(post->id) : std::nullopt);
        SendControl c = reader.control(Clock::now() + kListenSpan);
        c.on_head = [this, &reader](const HttpResponse& h) {
            reader.head(h);
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                if (listen_ == Listen::kWaiting)
                    listen_ = reader.mode == Reader::Mode::kSse ? Listen::kOpen : Listen::kRefused;
            }
            ready_.notify_all();
        };
        try {
            transport_.send(post ? make_request("POST", post->body, std::nullopt, post->extra)
                                 : make_request("GET", "", last_id),
                            &w.token, c);
        } catch (const Error& e) {
            if (w.token.cancelled()) return;
            NUCLEO_LOG_INFO("MCP server at {}: its {} broke: {}", shown_url_, stream, e.what());
        }
        if (w.token.cancelled()) return;
        // mcp.52: the answer to subscriptions/listen is the server closing the subscription.
        if (reader.answered) return;
        if (post && reader.error_body() && answers_with_error(reader.body, post->id)) {
            reader.deliver(reader.body);  // its refusal, for the client to log
            return;
        }
        if (reader.mode != Reader::Mode::kSse) {
            // mcp.46: 405 is a server without the stream; anything else is logged and let be.
            if (reader.status != 405)
                NUCLEO_LOG_INFO("MCP server at {}: no {}: {}", shown_url_, stream,
                                reader.refusal().value_or("it failed"));
            return;
        }
        if (reader.failure)
            NUCLEO_LOG_WARN("MCP server at {}: its {} {}", shown_url_, stream,
                            reader.failure->second);
        if (reader.sse.last_event_id()) last_id = reader.sse.last_event_id();
        if (reader.sse.retry_ms()) retry = reader.sse.retry_ms();
        failures = reader.delivered ? 0 : failures + 1;
        if (failures >= kMaxListenFailures) {
            NUCLEO_LOG_WARN(
                "MCP server at {}: its {} ended {} times without a message; "
                "not opened again",
                shown_url_, stream, failures);
            return;
        }
        if (w.token.wait_for(retry ? std::chrono::milliseconds(*retry) : kDefaultRetry)) return;
    }
}

void HttpSession::stop_all() {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& w : workers_) w->token.cancel();
    if (listener_) listener_->token.cancel();
}

void HttpSession::reset() {
    stop_all();
    std::list<std::unique_ptr<Worker>> workers;
    std::unique_ptr<Worker> listener;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        workers.swap(workers_);
        listener.swap(listener_);
        session_id_.clear();
        revision_.clear();
        stateless_ = false;
        listen_post_.reset();
        queue_.clear();
    }
    for (auto& w : workers) w->thread.join();
    if (listener) listener->thread.join();
}

}  // namespace nucleo::mcp_internal
