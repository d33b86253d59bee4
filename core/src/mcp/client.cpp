// McpClient: the lifecycle (initialize, initialized, close), requests with their deadlines and
// cancellation, and what the server sends unasked (mcp.1 to mcp.15).
#include <algorithm>
#include <cctype>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>

#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "mcp/http_session.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/results.hpp"
#include "mcp/stdio_process.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"
#include "nucleo/version.hpp"

namespace nucleo::mcp {

using mcp_internal::Clock;
using mcp_internal::HttpItem;
using mcp_internal::HttpSession;
using mcp_internal::Incoming;
using mcp_internal::StdioProcess;

namespace {

// How often a request waiting for its answer looks at its cancellation token.
constexpr std::chrono::milliseconds kCancelCheck{50};
// mcp.42: an HTTP exchange's own deadline lies this far past the client's, so that the client's
// timeout (mcp.12) is what a caller sees.
constexpr std::chrono::milliseconds kExchangeGrace{5000};

bool http_url(std::string_view url) {
    return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

std::string revisions_list() {
    std::string out;
    for (auto r : kProtocolRevisions) out += (out.empty() ? "" : ", ") + std::string(r);
    return out;
}

}  // namespace

struct McpClient::Impl {
    // Public calls are serialized: turns of one Agent on several conversations may share a
    // server, whose one stdin/stdout pair carries one exchange at a time here.
    std::mutex mutex;
    ServerSpec spec;
    ClientLimits limits;
    std::optional<StdioProcess> process;
    std::unique_ptr<HttpSession> http;  // the Streamable HTTP transport instead (mcp.42)
    std::atomic<bool> dead{false};  // alive() reads it without the lock
    std::string dead_reason;
    std::int64_t next_id = 1;
    std::string revision;
    std::string info_name;
    std::string info_version;
    bool has_tools = false;
    bool list_changed_capability = false;
    std::uint64_t list_changes = 0;

    std::string prefix() const { return "MCP server '" + spec.name + "'"; }

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
            if (in.method == "notifications/tools/list_changed") ++list_changes;  // mcp.8
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
    rapidjson::Document request(std::string_view method, const std::string& params,
                                std::chrono::milliseconds timeout, const CancellationToken* cancel,
                                const std::string& during, bool cancellable = true) {
        require_alive();
        std::optional<rapidjson::Document> answer =
            exchange(method, params, timeout, cancel, during, cancellable);
        if (answer) return std::move(*answer);
        // mcp.47: the server ended the session (404): a new one, once, and the request again.
        if (method == "initialize")
            give_up(ErrorKind::kTransport, "answered HTTP 404 to initialize");
        NUCLEO_LOG_INFO("{}: its session ended; initializing a new one", prefix());
        http->reset();
        try {
            initialize();
        } catch (const Error& e) {
            if (dead) throw;
            std::string why = e.what();
            // The server's name is said once, in front ("... refused initialize: ...").
            if (why.rfind(prefix() + ": ", 0) == 0)
                why.erase(0, prefix().size() + 2);
            else if (why.rfind(prefix() + " ", 0) == 0)
                why.erase(0, prefix().size() + 1);
            give_up(e.kind(), "could not begin a new session: " + why);
        }
        answer = exchange(method, params, timeout, cancel, during, cancellable);
        if (!answer)
            give_up(ErrorKind::kTransport, "ended the new session too, at once, during " + during);
        return std::move(*answer);
    }

    /// One request and its answer; nullopt when an HTTP server answered that the session ended.
    std::optional<rapidjson::Document> exchange(std::string_view method, const std::string& params,
                                                std::chrono::milliseconds timeout,
                                                const CancellationToken* cancel,
                                                const std::string& during, bool cancellable) {
        const std::int64_t id = next_id++;
        const auto deadline = Clock::now() + timeout;
        if (http)
            http->post_request(id, mcp_internal::request_line(id, method, params),
                               deadline + kExchangeGrace);
        else
            send(mcp_internal::request_line(id, method, params), during);
        for (;;) {
            const bool was_cancelled = cancel != nullptr && cancel->cancelled();
            if (was_cancelled || Clock::now() >= deadline) {
                const std::string why =
                    was_cancelled ? "cancelled"
                                  : "no answer within " + std::to_string(timeout.count()) + " ms";
                if (!cancellable) give_up(ErrorKind::kTransport, "gave " + why + " to " + during);
                if (http) http->abandon(id);
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
            const auto error = in->doc.FindMember("error");
            if (error != in->doc.MemberEnd())
                throw Error(ErrorKind::kProtocol, prefix() + " refused " + during + ": " +
                                                      mcp_internal::describe_error(error->value));
            return std::move(in->doc);
        }
    }

    /// mcp.2, mcp.3: initialize with the newest revision, accept any of kProtocolRevisions, then
    /// notifications/initialized.
    void initialize() {
        const std::string params =
            R"({"protocolVersion":)" + mcp_internal::json_string(kProtocolRevisions.front()) +
            R"(,"capabilities":{},"clientInfo":{"name":"nucleo","version":)" +
            mcp_internal::json_string(nucleo::version()) + "}}";
        rapidjson::Document doc =
            request("initialize", params, limits.start_timeout, nullptr, "initialize", false);
        const rapidjson::Value& result = doc["result"];
        if (!result.IsObject()) give_up(ErrorKind::kProtocol, "answered initialize with no object");
        const auto version = result.FindMember("protocolVersion");
        if (version == result.MemberEnd() || !version->value.IsString())
            give_up(ErrorKind::kProtocol, "answered initialize without a protocolVersion");
        revision = version->value.GetString();
        if (std::find(kProtocolRevisions.begin(), kProtocolRevisions.end(), revision) ==
            kProtocolRevisions.end())
            give_up(ErrorKind::kProtocol, "speaks protocol revision '" +
                                              internal::printable_utf8(revision) +
                                              "'; this client speaks " + revisions_list());
        const auto caps = result.FindMember("capabilities");
        if (caps != result.MemberEnd() && caps->value.IsObject()) {
            const auto tools = caps->value.FindMember("tools");
            has_tools = tools != caps->value.MemberEnd() && tools->value.IsObject();
            if (has_tools) {
                const auto lc = tools->value.FindMember("listChanged");
                list_changed_capability =
                    lc != tools->value.MemberEnd() && lc->value.IsBool() && lc->value.GetBool();
            }
        }
        const auto info = result.FindMember("serverInfo");
        if (info != result.MemberEnd() && info->value.IsObject()) {
            const auto n = info->value.FindMember("name");
            if (n != info->value.MemberEnd() && n->value.IsString())
                info_name = n->value.GetString();
            const auto v = info->value.FindMember("version");
            if (v != info->value.MemberEnd() && v->value.IsString())
                info_version = v->value.GetString();
        }
        if (http) {
            http->set_protocol_revision(revision);
            // mcp.46: the GET stream is open before the server hears it may send (a list change
            // it announces right after notifications/initialized then reaches this client).
            http->listen(Clock::now() + limits.request_timeout);
        }
        send(mcp_internal::notification_line("notifications/initialized", ""),
             "notifications/initialized");
    }
};

ServerSpec server_spec(const McpServerConfig& config) {
    ServerSpec spec;
    spec.name = config.name;
    if (!config.command.empty()) {  // an HTTP server has a URL instead (mcp.48)
        spec.command.push_back(config.command);
        spec.command.insert(spec.command.end(), config.args.begin(), config.args.end());
    }
    spec.env = config.env;
    spec.url = config.url;
    spec.headers = config.headers;
    return spec;
}

McpClient::McpClient(ServerSpec spec, ClientLimits limits) : impl_(std::make_unique<Impl>()) {
    const bool name_ok =
        !spec.name.empty() && spec.name.size() <= 32 &&
        std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
        });
    if (!name_ok)
        throw Error(ErrorKind::kInvalidArgument,
                    "MCP server name '" + internal::printable_utf8(spec.name) +
                        "' is not 1 to 32 of A-Z, a-z, 0-9, '_' and '-' (mcp.21 puts it in tool "
                        "names)");
    if (spec.url.empty() == spec.command.empty())
        throw Error(ErrorKind::kInvalidArgument, "MCP server '" + spec.name +
                                                     "' needs a command or a URL, not " +
                                                     (spec.url.empty() ? "neither" : "both"));
    if (!spec.url.empty() && !http_url(spec.url))
        throw Error(ErrorKind::kInvalidArgument, "MCP server '" + spec.name + "': the URL " +
                                                     redact_url(spec.url) +
                                                     " is not http:// or https://");
    impl_->spec = std::move(spec);
    impl_->limits = limits;
    if (impl_->spec.url.empty()) {
        impl_->process.emplace(impl_->spec.name, impl_->spec.command, impl_->spec.env);
    } else {
        HttpHeaders headers(impl_->spec.headers.begin(), impl_->spec.headers.end());
        impl_->http = std::make_unique<HttpSession>(impl_->spec.url, std::move(headers),
                                                    limits.max_message_bytes);
    }
    impl_->initialize();
    NUCLEO_LOG_INFO("{} ({} {}) speaks revision {}", impl_->prefix(), impl_->info_name,
                    impl_->info_version, impl_->revision);
}

McpClient::~McpClient() = default;

const std::string& McpClient::name() const noexcept {
    return impl_->spec.name;
}
const std::string& McpClient::protocol_revision() const noexcept {
    return impl_->revision;
}
const std::string& McpClient::server_info_name() const noexcept {
    return impl_->info_name;
}
const std::string& McpClient::server_info_version() const noexcept {
    return impl_->info_version;
}
bool McpClient::announces_list_changes() const noexcept {
    return impl_->list_changed_capability;
}
bool McpClient::alive() const noexcept {
    return !impl_->dead;
}

std::vector<Tool> McpClient::list_tools() {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->require_alive();
    std::vector<Tool> tools;
    if (!impl_->has_tools) return tools;
    std::string cursor;
    std::set<std::string> seen;
    // mcp.7: every page, bounded in pages and tools; a cursor seen before is a loop.
    for (std::size_t page = 0;; ++page) {
        if (page >= impl_->limits.max_pages)
            throw Error(ErrorKind::kProtocol, impl_->prefix() + ": tools/list has more than " +
                                                  std::to_string(impl_->limits.max_pages) +
                                                  " pages");
        const std::string params =
            cursor.empty() ? "{}" : R"({"cursor":)" + mcp_internal::json_string(cursor) + "}";
        rapidjson::Document doc = impl_->request(
            "tools/list", params, impl_->limits.request_timeout, nullptr, "tools/list");
        const rapidjson::Value& result = doc["result"];
        try {
            mcp_internal::read_tools(result, impl_->spec.name, tools);
        } catch (const Error& e) {
            throw Error(ErrorKind::kProtocol, impl_->prefix() + " answered " + e.what());
        }
        if (tools.size() > impl_->limits.max_tools)
            throw Error(ErrorKind::kProtocol, impl_->prefix() + " lists more than " +
                                                  std::to_string(impl_->limits.max_tools) +
                                                  " tools");
        const auto next = result.FindMember("nextCursor");
        if (next == result.MemberEnd() || !next->value.IsString()) break;
        cursor = next->value.GetString();
        if (!seen.insert(cursor).second)
            throw Error(ErrorKind::kProtocol,
                        impl_->prefix() + ": tools/list gave the same cursor twice");
    }
    return tools;
}

CallResult McpClient::call_tool(std::string_view name, std::string_view arguments_json,
                                const CancellationToken* cancel,
                                std::chrono::milliseconds timeout) {
    const std::string during = "tools/call '" + internal::printable_utf8(name) + "'";
    rapidjson::Document args;
    internal::parse_json_guarded(args, arguments_json.empty() ? "{}" : arguments_json,
                                 "the arguments of " + during, json_guard::kMaxDepth);
    if (!args.IsObject())
        throw Error(ErrorKind::kInvalidArgument,
                    "the arguments of " + during + " are not a JSON object");
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    const std::string params = R"({"name":)" + mcp_internal::json_string(name) +
                               R"(,"arguments":)" + internal::json_compact(args) + "}";
    rapidjson::Document doc =
        impl_->request("tools/call", params,
                       timeout.count() > 0 ? timeout : impl_->limits.call_timeout, cancel, during);
    try {
        return mcp_internal::read_call_result(doc["result"]);
    } catch (const Error& e) {
        throw Error(ErrorKind::kProtocol,
                    impl_->prefix() + " answered " + during + " with " + e.what());
    }
}

void McpClient::ping() {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->request("ping", "", impl_->limits.request_timeout, nullptr, "ping");
}

std::uint64_t McpClient::list_changes() {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->dead) return impl_->list_changes;
    if (impl_->http) {
        while (auto item = impl_->http->next(Clock::now()))
            if (!item->failed) impl_->handle_unasked(item->message);
    } else {
        while (auto in = impl_->read_one(Clock::now(), "a wait between calls"))
            impl_->handle_unasked(*in);
    }
    return impl_->list_changes;
}

}  // namespace nucleo::mcp
