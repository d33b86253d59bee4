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
#include "mcp/client_impl.hpp"
#include "mcp/results.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"
#include "nucleo/version.hpp"

namespace nucleo::mcp {

namespace {

bool http_url(std::string_view url) {
    return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

}  // namespace

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
    impl_->negotiate();
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
    if (impl_->http && impl_->stateless) impl_->keep_annotations(tools);
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
    HttpHeaders mirrored;  // mcp.55
    if (const auto a = impl_->annotations.find(std::string(name)); a != impl_->annotations.end())
        mcp_internal::add_param_headers(a->second, args, mirrored);
    rapidjson::Document doc = impl_->request(
        "tools/call", params, timeout.count() > 0 ? timeout : impl_->limits.call_timeout, cancel,
        during, true, name, std::nullopt, mirrored);
    try {
        return mcp_internal::read_call_result(doc["result"]);
    } catch (const Error& e) {
        throw Error(ErrorKind::kProtocol,
                    impl_->prefix() + " answered " + during + " with " + e.what());
    }
}

void McpClient::ping() {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    // mcp.53: the stateless revision has no ping; server/discover, which every server of it
    // answers, stands for it.
    if (impl_->stateless)
        impl_->request("server/discover", "", impl_->limits.request_timeout, nullptr,
                       "server/discover");
    else
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
