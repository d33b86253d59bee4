// McpClient's state and its exchanges with the server, shared by client.cpp (requests,
// what the server sends unasked) and negotiation.cpp (mcp.50: the revision, mcp.52: the
// subscription).
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>

#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "mcp/http_session.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/stateless.hpp"
#include "mcp/stdio_process.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

namespace nucleo::mcp {

using mcp_internal::Clock;
using mcp_internal::HttpItem;
using mcp_internal::HttpSession;
using mcp_internal::Incoming;
using mcp_internal::StdioProcess;

// How often a request waiting for its answer looks at its cancellation token.
inline constexpr std::chrono::milliseconds kCancelCheck{50};
// mcp.42: an HTTP exchange's own deadline lies this far past the client's, so that the client's
// timeout (mcp.12) is what a caller sees.
inline constexpr std::chrono::milliseconds kExchangeGrace{5000};

struct McpClient::Impl {
    // Public calls are serialized: turns of one Agent on several conversations may share a
    // server, whose one stdin/stdout pair carries one exchange at a time here.
    std::mutex mutex;
    ServerSpec spec;
    ClientLimits limits;
    std::optional<StdioProcess> process;
    std::unique_ptr<HttpSession> http;  // the Streamable HTTP transport instead (mcp.42)
    std::atomic<bool> dead{false};      // alive() reads it without the lock
    std::string dead_reason;
    std::int64_t next_id = 1;
    std::string revision;
    std::string info_name;
    std::string info_version;
    bool has_tools = false;
    bool list_changed_capability = false;
    std::uint64_t list_changes = 0;
    // mcp.50: the server speaks the stateless revision: every request carries its _meta.
    bool stateless = false;
    // mcp.52: the id of the subscriptions/listen request (0: none), and what became of it.
    std::int64_t listen_id = 0;
    bool listen_acknowledged = false;
    bool listen_ended = false;
    // mcp.55: the x-mcp-header annotations of each tool of the last listing (stateless HTTP).
    std::map<std::string, std::vector<mcp_internal::ParamHeader>> annotations;

    std::string prefix() const { return "MCP server '" + spec.name + "'"; }

    /// An Error's message without the server's name in front, to be said again by give_up.
    std::string without_prefix(std::string why) const {
        if (why.rfind(prefix() + ": ", 0) == 0)
            why.erase(0, prefix().size() + 2);
        else if (why.rfind(prefix() + " ", 0) == 0)
            why.erase(0, prefix().size() + 1);
        return why;
    }

    /// mcp.15: a server that broke the protocol, died or would not start is given up on: killed,
    /// and every later call refused with the reason.
    [[noreturn]] void give_up(ErrorKind kind, const std::string& what) {
        dead = true;
        dead_reason = what;
        if (process) process->kill();
        NUCLEO_LOG_WARN("{} given up: {}", prefix(), what);
        throw Error(kind, prefix() + ": " + what);
    }

    void require_alive() const {
        if (dead) throw Error(ErrorKind::kTransport, prefix() + " is not running: " + dead_reason);
    }

    void send(const std::string& line, const std::string& during) {
        if (http) {
            // mcp.42: a failed exchange fails what it was for; the server is not given up on.
            if (auto failure = http->post_message(line, Clock::now() + limits.request_timeout))
                throw Error(ErrorKind::kTransport,
                            prefix() + ": " + *failure + " during " + during);
            return;
        }
        const auto deadline = Clock::now() + limits.request_timeout;
        if (!process->write(line, deadline)) {
            if (Clock::now() >= deadline)
                give_up(ErrorKind::kTransport, "stopped reading its input during " + during);
            give_up(ErrorKind::kTransport, process->ending() + " during " + during);
        }
    }

    /// What the server sent unasked: its notifications are noted, its requests answered (ping
    /// with an empty result, anything else "method not found": this client offers no client
    /// features, mcp.9).
    void handle_unasked(const Incoming& in) {
        if (in.kind == Incoming::Kind::kNotification) {
            // mcp.52: in the stateless revision only what the subscription carries is heard.
            if (stateless && !of_subscription(in)) return;
            if (stateless && in.method == "notifications/subscriptions/acknowledged")
                return acknowledged(in);
            if (in.method == "notifications/tools/list_changed") ++list_changes;  // mcp.8
            return;
        }
        if (in.kind == Incoming::Kind::kResponse && listen_id != 0 && in.id == listen_id) {
            // mcp.52: the answer to subscriptions/listen ends the subscription.
            listen_ended = true;
            const auto error = in.doc.FindMember("error");
            NUCLEO_LOG_WARN("{} ended its subscription to list changes{}", prefix(),
                            error == in.doc.MemberEnd()
                                ? std::string()
                                : ": " + mcp_internal::describe_error(error->value));
            return;
        }
        if (in.kind != Incoming::Kind::kRequest) return;  // a late answer to a cancelled request
        const std::string id = internal::json_compact(in.doc["id"]);
        try {
            if (in.method == "ping")
                send(mcp_internal::result_line(id, "{}"), "an answer to its ping");
            else
                send(mcp_internal::error_line(id, -32601, "method not found: " + in.method),
                     "an answer to its " + in.method + " request");
        } catch (const Error& e) {
            if (!http) throw;
            NUCLEO_LOG_WARN("{}", e.what());  // over HTTP, the exchange waited for goes on
        }
    }

    /// Reads one message before `deadline`; nullopt on timeout. Gives the server up when it ended,
    /// sent too much or sent garbage.
    std::optional<Incoming> read_one(Clock::time_point deadline, const std::string& during) {
        std::string line;
        for (;;) {
            switch (process->read_line(line, deadline, limits.max_message_bytes)) {
                case StdioProcess::Read::kTimeout:
                    return std::nullopt;
                case StdioProcess::Read::kClosed:
                    give_up(ErrorKind::kTransport, process->ending() + " during " + during);
                case StdioProcess::Read::kOversized:
                    give_up(ErrorKind::kProtocol, "sent a message over " +
                                                      std::to_string(limits.max_message_bytes) +
                                                      " bytes during " + during);
                case StdioProcess::Read::kLine:
                    break;
            }
            if (line.empty()) continue;
            try {
                return mcp_internal::parse_incoming(line);
            } catch (const Error& e) {
                give_up(ErrorKind::kProtocol,
                        std::string("sent ") + e.what() + " during " + during);
            }
        }
    }

    /// One request and its answer's result (a document whose "result" member is it).
    /// mcp.12: at the deadline or on cancellation the server is told (notifications/cancelled)
    /// and the call fails; the server stays (a late answer is dropped by its id).
    /// `name`: the tool a tools/call names (mcp.51's Mcp-Name); `until`: a deadline sooner than
    /// `timeout` from now (the start's, mcp.50), `timeout` still being the bound an error names.
    rapidjson::Document request(std::string_view method, const std::string& params,
                                std::chrono::milliseconds timeout, const CancellationToken* cancel,
                                const std::string& during, bool cancellable = true,
                                std::optional<std::string_view> name = std::nullopt,
                                std::optional<Clock::time_point> until = std::nullopt,
                                const HttpHeaders& mirrored = {}) {
        require_alive();
        std::optional<rapidjson::Document> answer =
            exchange(method, params, timeout, cancel, during, cancellable, name, until, mirrored);
        if (answer) return checked(std::move(*answer), during);
        // mcp.47: the server ended the session (404): a new one, once, and the request again.
        if (method == "initialize")
            give_up(ErrorKind::kTransport, "answered HTTP 404 to initialize");
        NUCLEO_LOG_INFO("{}: its session ended; initializing a new one", prefix());
        http->reset();
        try {
            initialize();
        } catch (const Error& e) {
            if (dead) throw;
            // The server's name is said once, in front ("... refused initialize: ...").
            give_up(e.kind(), "could not begin a new session: " + without_prefix(e.what()));
        }
        answer =
            exchange(method, params, timeout, cancel, during, cancellable, name, until, mirrored);
        if (!answer)
            give_up(ErrorKind::kTransport, "ended the new session too, at once, during " + during);
        return checked(std::move(*answer), during);
    }

    /// mcp.14: a JSON-RPC error is the server's refusal; mcp.53: a result that is not complete
    /// is refused too. The server stays.
    rapidjson::Document checked(rapidjson::Document doc, const std::string& during) {
        const auto error = doc.FindMember("error");
        if (error != doc.MemberEnd())
            throw Error(ErrorKind::kProtocol, prefix() + " refused " + during + ": " +
                                                  mcp_internal::describe_error(error->value));
        if (stateless)
            if (auto why = mcp_internal::incomplete_result(doc["result"]))
                throw Error(ErrorKind::kProtocol,
                            prefix() + " answered " + during + " with " + *why);
        return doc;
    }

    /// One request and its answer (a result or an error); nullopt when an HTTP server answered
    /// that the session ended.
    std::optional<rapidjson::Document> exchange(std::string_view method, const std::string& params,
                                                std::chrono::milliseconds timeout,
                                                const CancellationToken* cancel,
                                                const std::string& during, bool cancellable,
                                                std::optional<std::string_view> name,
                                                std::optional<Clock::time_point> until,
                                                const HttpHeaders& mirrored = {}) {
        const std::int64_t id = next_id++;
        const auto deadline = until ? *until : Clock::now() + timeout;
        // mcp.51: the stateless revision's _meta on every request, mirrored in headers over HTTP.
        const std::string line = mcp_internal::request_line(
            id, method, stateless ? mcp_internal::with_request_meta(params) : params);
        if (http) {
            // mcp.55: a call's parameters the tool's schema asks mirrored follow.
            HttpHeaders headers;
            if (stateless) headers = mcp_internal::request_headers(method, name);
            headers.insert(headers.end(), mirrored.begin(), mirrored.end());
            http->post_request(id, line, deadline + kExchangeGrace, std::move(headers));
        } else {
            send(line, during);
        }
        for (;;) {
            const bool was_cancelled = cancel != nullptr && cancel->cancelled();
            if (was_cancelled || Clock::now() >= deadline) {
                const std::string why =
                    was_cancelled ? "cancelled"
                                  : "no answer within " + std::to_string(timeout.count()) + " ms";
                if (!cancellable) give_up(ErrorKind::kTransport, "gave " + why + " to " + during);
                if (http) http->abandon(id);
                // mcp.51: over HTTP the stateless revision's cancellation is the closed stream.
                if (http && stateless)
                    throw Error(ErrorKind::kTransport, prefix() + ": " + during + ": " + why);
                try {
                    send(mcp_internal::notification_line("notifications/cancelled",
                                                         R"({"requestId":)" + std::to_string(id) +
                                                             R"(,"reason":)" +
                                                             mcp_internal::json_string(why) + "}"),
                         "the cancellation of " + during);
                } catch (const Error& e) {
                    if (!http) throw;
                    NUCLEO_LOG_WARN("{}", e.what());  // mcp.12's answer stands
                }
                throw Error(ErrorKind::kTransport, prefix() + ": " + during + ": " + why);
            }
            auto wake = deadline;
            if (cancel != nullptr) wake = std::min(wake, Clock::now() + kCancelCheck);
            std::optional<Incoming> in;
            if (http) {
                std::optional<HttpItem> item = http->next(wake);
                if (!item) continue;
                if (item->failed) {
                    if (item->request_id != id) continue;  // an exchange given up before
                    if (item->session_expired) return std::nullopt;
                    throw Error(item->kind, prefix() + ": " + item->what + " during " + during);
                }
                in = std::move(item->message);
            } else {
                in = read_one(wake, during);
            }
            if (!in) continue;
            if (in->kind != Incoming::Kind::kResponse || in->id != id) {
                handle_unasked(*in);
                continue;
            }
            return std::move(in->doc);
        }
    }

    /// mcp.55: keeps each listed tool's x-mcp-header annotations for its calls; a tool whose
    /// annotations are invalid is left out of `tools` and logged.
    void keep_annotations(std::vector<Tool>& tools) {
        annotations.clear();
        std::erase_if(tools, [this](const Tool& tool) {
            try {
                rapidjson::Document schema;
                internal::parse_json_guarded(schema, tool.input_schema_json, "an input schema",
                                             json_guard::kMaxDepth);
                auto found = mcp_internal::param_headers(schema);
                if (!found.empty()) annotations[tool.name] = std::move(found);
                return false;
            } catch (const Error& e) {
                NUCLEO_LOG_WARN("{}: tool '{}' left out: its input schema has {}", prefix(),
                                internal::printable_utf8(tool.name), e.what());
                return true;
            }
        });
    }

    // Negotiation and the subscription (negotiation.cpp).
    void negotiate();
    bool discover(Clock::time_point probe_end, Clock::time_point end);
    bool fall_back(const std::string& why);
    void adopt(const mcp_internal::ServerDeclarations& declared);
    void subscribe(Clock::time_point until);
    bool of_subscription(const Incoming& in) const;
    void acknowledged(const Incoming& in);
    void initialize(std::optional<Clock::time_point> until = std::nullopt);
};

}  // namespace nucleo::mcp
