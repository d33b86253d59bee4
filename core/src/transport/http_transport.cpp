#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>

#include "common/log_internal.hpp"
#include "llm/call_records.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {
namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
    void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
    void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

using Clock = std::chrono::steady_clock;

/// Which bound of TransportLimits ended a transfer (limits.101-104).
enum class Tripped { kNone, kIdle, kSize, kCancelled, kStopped };

/// State one transfer's callbacks write into.
struct Transfer {
    HttpResponse response;
    const BodyChunkCallback* on_chunk = nullptr;
    const SendControl* control = nullptr;  // a caller's own reader (SendControl)
    bool head_given = false;
    const CancellationToken* cancel = nullptr;
    bool chunks_delivered = false;
    std::size_t max_bytes = 0;
    std::chrono::milliseconds idle{0};
    Clock::time_point last_byte = Clock::now();
    Tripped tripped = Tripped::kNone;
};

/// caching.115: a body of several pieces is read by libcurl from where it lies, piece after
/// piece (no joined copy); `at` is how far this attempt has read.
struct BodyReader {
    const RequestBody* body = nullptr;
    std::size_t at = 0;
};

size_t read_body(char* out, size_t size, size_t count, void* user) {
    auto* r = static_cast<BodyReader*>(user);
    const std::size_t n = r->body->read(r->at, out, size * count);
    r->at += n;
    return n;
}

/// libcurl rewinds an upload it must send again (a connection that died before the answer).
int seek_body(void* user, curl_off_t offset, int origin) {
    auto* r = static_cast<BodyReader*>(user);
    if (origin != SEEK_SET || offset < 0 || static_cast<std::size_t>(offset) > r->body->size())
        return CURL_SEEKFUNC_CANTSEEK;
    r->at = static_cast<std::size_t>(offset);
    return CURL_SEEKFUNC_OK;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->last_byte = Clock::now();
    if (t->control != nullptr && t->control->on_chunk) {
        // The caller's reader bounds what it keeps; false from it ends the transfer here.
        if (!t->control->on_chunk(std::string_view(data, n))) {
            t->tripped = Tripped::kStopped;
            return 0;
        }
        t->chunks_delivered = true;
        return n;
    }
    // limits.103: the body is cut at the cap, never buffered past it; returning less than `n`
    // makes libcurl end the transfer.
    if (n > t->max_bytes - std::min(t->max_bytes, t->response.body.size())) {
        t->tripped = Tripped::kSize;
        return 0;
    }
    t->response.body.append(data, n);
    if (t->on_chunk != nullptr && *t->on_chunk && t->response.status < 300) {
        t->chunks_delivered = true;
        (*t->on_chunk)(std::string_view(data, n));
    }
    return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->last_byte = Clock::now();
    std::string_view line(data, n);
    if (trim(line).empty()) {
        // The end of a header block: the final one (not a 1xx) goes to the caller's reader.
        if (t->control != nullptr && t->control->on_head && !t->head_given &&
            t->response.status >= 200) {
            t->head_given = true;
            t->control->on_head(t->response);
        }
        return n;
    }
    if (line.rfind("HTTP/", 0) == 0) {
        // A new status line (after 100-continue or a redirect): headers start over.
        t->response.headers.clear();
        auto sp = line.find(' ');
        if (sp != std::string_view::npos) t->response.status = std::atol(std::string(line.substr(sp + 1, 3)).c_str());
        return n;
    }
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
        const std::string_view name = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        // limits.103: an announced length above the cap is refused before its first byte.
        if (iequals(name, "content-length")) {
            const std::string digits(value);
            char* end = nullptr;
            const unsigned long long announced = std::strtoull(digits.c_str(), &end, 10);
            if (end != digits.c_str() && announced > t->max_bytes) {
                t->tripped = Tripped::kSize;
                return 0;
            }
        }
        t->response.headers.emplace_back(std::string(name), std::string(value));
    }
    return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(user);
    if (t->cancel != nullptr && t->cancel->cancelled()) {
        t->tripped = Tripped::kCancelled;
        return 1;
    }
    // limits.102: libcurl calls this at least once a second while the connection is silent.
    if (Clock::now() - t->last_byte >= t->idle) {
        t->tripped = Tripped::kIdle;
        return 1;
    }
    return 0;
}

/// "30 s" for whole seconds, else "250 ms": the unit the operator wrote the limit in.
std::string duration_text(std::chrono::milliseconds d) {
    return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

/// The host (and port) of a URL, without scheme, userinfo or path: what a limit's error names.
std::string host_of(std::string_view url) {
    if (auto scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
    url = url.substr(0, url.find_first_of("/?#"));
    if (auto at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
    return std::string(url);
}

bool is_retryable_curl_error(CURLcode code) {
    switch (code) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_SSL_CONNECT_ERROR: return true;
        default: return false;
    }
}

/// The URL without its query (a query may carry a key on some providers) and with its userinfo
/// redacted (limits.105): what messages and logs show.
std::string url_for_messages(const std::string& url) { return redact_url(url.substr(0, url.find('?'))); }

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (iequals(k, name)) return v;
    return std::nullopt;
}

void CancellationToken::cancel() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        cancelled_.store(true);
    }
    cv_.notify_all();
}

bool CancellationToken::wait_for(std::chrono::milliseconds d) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, d, [this] { return cancelled_.load(); });
}

bool is_retryable_status(long status) noexcept {
    return status == 429 || status == 500 || status == 502 || status == 503 || status == 504 ||
           status == 529;
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value) {
    value = trim(value);
    if (value.empty()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(value.front()))) {
        char* end = nullptr;
        const std::string s(value);
        const double seconds = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) return std::nullopt;
        return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
    }
    // HTTP-date, e.g. "Wed, 21 Oct 2015 07:28:00 GMT".
    std::tm tm{};
    const std::string s(value);
    if (strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) return std::nullopt;
    const std::time_t when = timegm(&tm);
    const std::time_t now = std::time(nullptr);
    return std::chrono::milliseconds(std::max<std::int64_t>(0, static_cast<std::int64_t>(when - now) * 1000));
}

std::chrono::milliseconds retry_delay(const RetryPolicy& policy, int attempt,
                                      std::optional<std::chrono::milliseconds> retry_after) {
    if (retry_after) return std::min(*retry_after, policy.max_retry_after);
    double ms = static_cast<double>(policy.initial_backoff.count()) *
                std::pow(policy.multiplier, std::max(0, attempt - 1));
    ms = std::min(ms, static_cast<double>(policy.max_backoff.count()));
    return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

struct HttpTransport::Pool {
    std::mutex mutex;
    std::vector<EasyHandle> idle;
    std::size_t max_idle = 8;

    EasyHandle acquire() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!idle.empty()) {
                EasyHandle h = std::move(idle.back());
                idle.pop_back();
                curl_easy_reset(h.get());  // keeps the live connections and caches
                return h;
            }
        }
        EasyHandle h(curl_easy_init());
        if (!h) throw Error(ErrorKind::kTransport, "libcurl could not create a handle");
        return h;
    }
    void release(EasyHandle h) {
        std::lock_guard<std::mutex> lock(mutex);
        if (idle.size() < max_idle) idle.push_back(std::move(h));
    }
};

HttpTransport::HttpTransport(TransportOptions options)
    : options_(std::move(options)), pool_(std::make_unique<Pool>()) {
    global_init();
    pool_->max_idle = options_.max_idle_connections;
}

HttpTransport::~HttpTransport() = default;

HttpResponse HttpTransport::send(const HttpRequest& request, const CancellationToken* cancel,
                                 const BodyChunkCallback& on_chunk) {
    return send_impl(request, cancel, on_chunk, nullptr);
}

HttpResponse HttpTransport::send(const HttpRequest& request, const CancellationToken* cancel,
                                 const SendControl& control) {
    return send_impl(request, cancel, {}, &control);
}

HttpResponse HttpTransport::send_impl(const HttpRequest& request, const CancellationToken* cancel,
                                      const BodyChunkCallback& on_chunk,
                                      const SendControl* control) {
    const RetryPolicy& policy = options_.retry;
    TransportLimits limits = options_.limits;
    if (control != nullptr && control->deadline) limits.deadline = *control->deadline;
    if (control != nullptr && control->idle_timeout) limits.idle_timeout = *control->idle_timeout;
    const int max_attempts = std::max(1, policy.max_attempts);
    const std::string shown_url = url_for_messages(request.url);
    const std::string host = host_of(shown_url);
    // limits.104: one deadline for the whole call, attempts and backoff waits included.
    const Clock::time_point deadline = Clock::now() + limits.deadline;
    const auto remaining = [&] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    };
    const auto past_deadline = [&](int attempts) {
        return Error(ErrorKind::kTransport, "call to " + shown_url + " passed its deadline of " +
                                                duration_text(limits.deadline) + " (" +
                                                std::to_string(attempts) + " attempt" + (attempts == 1 ? "" : "s") +
                                                ")");
    };
    for (int attempt = 1;; ++attempt) {
        if (cancel != nullptr && cancel->cancelled())
            throw Error(ErrorKind::kTransport, "call to " + shown_url + " cancelled");
        if (remaining().count() <= 0) throw past_deadline(attempt - 1);

        internal::attempt_started(attempt, max_attempts);  // obs.104
        const auto attempt_began = std::chrono::steady_clock::now();
        EasyHandle handle = pool_->acquire();
        CURL* h = handle.get();
        Transfer transfer;
        transfer.on_chunk = &on_chunk;
        transfer.control = control;
        transfer.cancel = cancel;
        transfer.max_bytes = limits.max_response_bytes;
        transfer.idle = limits.idle_timeout;

        Slist headers;
        for (const auto& [k, v] : request.headers) {
            const std::string line = k + ": " + v;
            curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
            if (grown == nullptr) throw Error(ErrorKind::kInternal, "out of memory building headers");
            (void)headers.release();
            headers.reset(grown);
        }
        std::string sigv4_param;
        std::string userpwd;
        if (options_.sigv4 && !options_.sigv4->access_key_id.empty()) {
            const AwsSigV4& s = *options_.sigv4;
            sigv4_param = s.provider + ":" + s.region + ":" + s.service;
            userpwd = s.access_key_id + ":" + s.secret_access_key;
            curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4_param.c_str());
            curl_easy_setopt(h, CURLOPT_USERPWD, userpwd.c_str());
            if (!s.session_token.empty()) {
                const std::string line = "x-amz-security-token: " + s.session_token;
                curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
                if (grown == nullptr) throw Error(ErrorKind::kInternal, "out of memory building headers");
                (void)headers.release();
                headers.reset(grown);
            }
        }

        const std::chrono::milliseconds left = remaining();
        curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
        BodyReader reader{&request.body, 0};  // read from the start on every attempt
        if (request.method != "GET") {
            // caching.115: a body in pieces (not joined yet) is read piece by piece. SigV4 signs
            // the payload's hash, which libcurl computes from bytes in one piece, so a signed body
            // is joined.
            if (!request.body.contiguous() && sigv4_param.empty()) {
                curl_easy_setopt(h, CURLOPT_POST, 1L);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, nullptr);
                curl_easy_setopt(h, CURLOPT_READFUNCTION, read_body);
                curl_easy_setopt(h, CURLOPT_READDATA, &reader);
                curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_body);
                curl_easy_setopt(h, CURLOPT_SEEKDATA, &reader);
            } else {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
            }
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        }
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                         static_cast<long>(std::min(limits.connect_timeout, left).count()));
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");

        transfer.last_byte = Clock::now();
        const CURLcode code = curl_easy_perform(h);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_off_t connected_us = 0;
        curl_easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connected_us);
        // The handle goes back only after a clean transfer: a broken one may hold a dead socket.
        if (code == CURLE_OK) pool_->release(std::move(handle));
        // obs.101: one record per HTTP attempt, whatever came of it.
        internal::attempt_ended(
            attempt, max_attempts, code == CURLE_OK ? status : 0, transfer.response.headers,
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - attempt_began),
            code == CURLE_OK ? std::string_view() : std::string_view(curl_easy_strerror(code)));

        std::optional<std::chrono::milliseconds> delay;
        if (transfer.tripped == Tripped::kStopped) {
            // The caller's reader had what it waited for (SendControl::on_chunk).
            transfer.response.status = status;
            transfer.response.attempts = attempt;
            return std::move(transfer.response);
        }
        if (transfer.tripped == Tripped::kCancelled) throw Error(ErrorKind::kTransport, "call to " + shown_url + " cancelled");
        if (transfer.tripped == Tripped::kSize)
            throw Error(ErrorKind::kTransport, "answer from " + host + " exceeds the maximum response size of " +
                                                   std::to_string(limits.max_response_bytes) +
                                                   " bytes (max_response_bytes); cut at the limit");
        if (code != CURLE_OK) {
            std::string what;
            bool retryable = is_retryable_curl_error(code);
            if (transfer.tripped == Tripped::kIdle) {
                what = "no byte for " + duration_text(limits.idle_timeout) + " from " + host + " (idle_timeout)";
                retryable = true;
            } else if (code == CURLE_OPERATION_TIMEDOUT && connected_us == 0 && limits.connect_timeout < left) {
                what = "could not connect to " + host + " within " + duration_text(limits.connect_timeout) +
                       " (connect_timeout)";
            } else if (code == CURLE_OPERATION_TIMEDOUT) {
                throw past_deadline(attempt);
            } else {
                what = std::string("call to ") + shown_url + " failed: " + curl_easy_strerror(code);
            }
            if (!retryable || attempt >= max_attempts || transfer.chunks_delivered)
                throw Error(ErrorKind::kTransport,
                            what + (attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : ""));
            delay = retry_delay(policy, attempt, std::nullopt);
            if (*delay >= remaining())
                throw Error(ErrorKind::kTransport, what + " (attempt " + std::to_string(attempt) +
                                                       "; the call's deadline of " + duration_text(limits.deadline) +
                                                       " leaves no time for a retry)");
            NUCLEO_LOG_WARN("{}; retrying in {} ms (attempt {} of {})", what, delay->count(), attempt + 1,
                            max_attempts);
        } else {
            transfer.response.status = status;
            transfer.response.attempts = attempt;
            if (!is_retryable_status(status) || attempt >= max_attempts || transfer.chunks_delivered)
                return std::move(transfer.response);
            std::optional<std::chrono::milliseconds> after;
            if (auto ms = transfer.response.header("retry-after-ms")) {
                if (auto v = parse_retry_after(*ms)) after = std::chrono::milliseconds(v->count() / 1000);
            }
            if (!after) {
                if (auto s = transfer.response.header("retry-after")) after = parse_retry_after(*s);
            }
            // limits.140: a provider's Retry-After is honoured up to the cap; one past it fails
            // the call now, naming the wait, rather than parking the turn or retrying early.
            if (after && *after > policy.max_retry_after)
                throw Error(
                    status == 429 ? ErrorKind::kRateLimited : ErrorKind::kOverloaded,
                    shown_url + " answered " + std::to_string(status) +
                        " and asked for a wait of " + duration_text(*after) +
                        " before a retry (Retry-After), past the " +
                        duration_text(policy.max_retry_after) +
                        " a call waits at most (RetryPolicy::max_retry_after): not retried" +
                        (attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)"
                                     : std::string()));
            delay = retry_delay(policy, attempt, after);
            // limits.104: a wait that would pass the deadline is not begun; the answer stands.
            if (*delay >= remaining()) return std::move(transfer.response);
            NUCLEO_LOG_WARN("{} answered {}; retrying in {} ms (attempt {} of {})", shown_url, status,
                            delay->count(), attempt + 1, max_attempts);
        }
        internal::retry_waiting(attempt + 1, max_attempts, code == CURLE_OK ? status : 0,
                                code == CURLE_OK ? std::string_view() : std::string_view(curl_easy_strerror(code)),
                                *delay);  // obs.104
        // limits.141: a test sees the wait without spending it.
        if (options_.wait) {
            if (options_.wait(*delay, cancel))
                throw Error(ErrorKind::kTransport, "call to " + shown_url + " cancelled");
        } else if (cancel != nullptr) {
            if (cancel->wait_for(*delay)) throw Error(ErrorKind::kTransport, "call to " + shown_url + " cancelled");
        } else {
            std::this_thread::sleep_for(*delay);
        }
    }
}

}  // namespace nucleo
