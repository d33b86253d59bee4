// McpClient's negotiation of the revision (mcp.50: server/discover first, the handshake of
// mcp.2 and mcp.3 when the server does not speak the stateless revision) and its subscription to
// tool list changes in the stateless revision (mcp.52).
#include "mcp/client_impl.hpp"
#include "nucleo/version.hpp"

namespace nucleo::mcp {

using mcp_internal::ServerDeclarations;

namespace {

std::string joined(const std::vector<std::string>& revisions) {
    std::string out;
    for (const auto& r : revisions) out += (out.empty() ? "" : ", ") + internal::printable_utf8(r);
    return out;
}

std::string revisions_list() {
    return joined(std::vector<std::string>(kProtocolRevisions.begin(), kProtocolRevisions.end()));
}

/// mcp.50: the newest handshake revision among `listed`, or nullopt.
std::optional<std::string> handshake_revision_in(const std::vector<std::string>& listed) {
    for (std::size_t i = 1; i < kProtocolRevisions.size(); ++i)
        if (std::find(listed.begin(), listed.end(), kProtocolRevisions[i]) != listed.end())
            return std::string(kProtocolRevisions[i]);
    return std::nullopt;
}

}  // namespace

/// mcp.52: whether a notification carries this client's subscription id in its `_meta`.
bool McpClient::Impl::of_subscription(const Incoming& in) const {
    const auto params = in.doc.FindMember("params");
    if (params == in.doc.MemberEnd() || !params->value.IsObject()) return false;
    const auto meta = params->value.FindMember("_meta");
    if (meta == params->value.MemberEnd() || !meta->value.IsObject()) return false;
    const auto id = meta->value.FindMember(rapidjson::StringRef(
        mcp_internal::kMetaSubscriptionId.data(), mcp_internal::kMetaSubscriptionId.size()));
    return listen_id != 0 && id != meta->value.MemberEnd() && id->value.IsInt64() &&
           id->value.GetInt64() == listen_id;
}

/// mcp.52: the acknowledgment names what the server will send; without toolsListChanged the
/// client does without list changes.
void McpClient::Impl::acknowledged(const Incoming& in) {
    listen_acknowledged = true;
    const rapidjson::Value& params = in.doc["params"];
    const auto filter = params.FindMember("notifications");
    bool tools = false;
    if (filter != params.MemberEnd() && filter->value.IsObject()) {
        const auto t = filter->value.FindMember("toolsListChanged");
        tools = t != filter->value.MemberEnd() && t->value.IsBool() && t->value.GetBool();
    }
    if (!tools) {
        NUCLEO_LOG_WARN("{} did not agree to send tool list changes", prefix());
        list_changed_capability = false;
    }
}

/// mcp.50: `server/discover` first, asking for the stateless revision; the handshake
/// (mcp.2, mcp.3) when the server does not speak it. The probe has half the start's time.
void McpClient::Impl::negotiate() {
    const auto end = Clock::now() + limits.start_timeout;
    if (discover(Clock::now() + limits.start_timeout / 2, end)) return;
    initialize(end);
}

/// mcp.50: whether the server speaks the stateless revision (then its declarations are read
/// and list changes subscribed to, mcp.52); false: it is of the handshake revisions.
bool McpClient::Impl::discover(Clock::time_point probe_end, Clock::time_point end) {
    stateless = true;
    if (http) http->set_protocol_revision(std::string(kStatelessRevision), true);
    std::optional<rapidjson::Document> answer;
    try {
        answer = exchange("server/discover", "", limits.start_timeout, nullptr, "server/discover",
                          true, std::nullopt, probe_end);
    } catch (const Error& e) {
        if (dead && process && e.kind() == ErrorKind::kTransport) {
            // Some servers of the handshake revisions end on any request before initialize:
            // a fresh process is initialized instead, once.
            NUCLEO_LOG_INFO("{} ended at server/discover ({}); starting it again to initialize",
                            prefix(), dead_reason);
            process.reset();
            process.emplace(spec.name, spec.command, spec.env);
            dead = false;
            dead_reason.clear();
            return fall_back(without_prefix(e.what()));
        }
        if (dead) throw;
        // An answer that is garbage is the server's fault whatever it speaks; no answer, or
        // an HTTP refusal without a JSON-RPC error, is a server of the handshake revisions.
        if (e.kind() == ErrorKind::kProtocol)
            give_up(ErrorKind::kProtocol, without_prefix(e.what()));
        return fall_back(without_prefix(e.what()));
    }
    if (!answer) return fall_back("its session ended");
    const auto error = answer->FindMember("error");
    if (error != answer->MemberEnd()) {
        const std::string refusal =
            "refused server/discover: " + mcp_internal::describe_error(error->value);
        const auto code =
            error->value.IsObject() ? error->value.FindMember("code") : error->value.MemberEnd();
        const int number =
            code != error->value.MemberEnd() && code->value.IsInt() ? code->value.GetInt() : 0;
        const std::vector<std::string> supported = mcp_internal::supported_revisions(error->value);
        // A -32022 naming revisions, none of them spoken here: nothing is common. With a
        // handshake revision among them, or naming none, it is a server to initialize, as is
        // any other error (-32020 and -32021 are no sign of the era either).
        if (number == mcp_internal::kUnsupportedProtocolVersion && !supported.empty() &&
            !handshake_revision_in(supported))
            give_up(ErrorKind::kProtocol, refusal + "; this client speaks " + revisions_list());
        return fall_back(refusal);
    }
    ServerDeclarations declared;
    std::vector<std::string> listed;
    try {
        listed = mcp_internal::read_discover_result((*answer)["result"], declared);
    } catch (const Error& e) {
        give_up(ErrorKind::kProtocol, std::string("answered server/discover with ") + e.what());
    }
    if (std::find(listed.begin(), listed.end(), kStatelessRevision) == listed.end()) {
        if (handshake_revision_in(listed)) return fall_back("it lists " + joined(listed));
        give_up(ErrorKind::kProtocol, "speaks protocol revisions " + joined(listed) +
                                          "; this client speaks " + revisions_list());
    }
    revision = std::string(kStatelessRevision);
    adopt(declared);
    if (list_changed_capability) subscribe(std::min(end, Clock::now() + limits.request_timeout));
    return true;
}

/// mcp.50: the server is of the handshake revisions; what the probe set is undone.
bool McpClient::Impl::fall_back(const std::string& why) {
    NUCLEO_LOG_INFO("{} does not speak {} ({}); initializing", prefix(), kStatelessRevision, why);
    stateless = false;
    if (http) http->reset();
    return false;
}

void McpClient::Impl::adopt(const mcp_internal::ServerDeclarations& declared) {
    has_tools = declared.has_tools;
    list_changed_capability = declared.list_changed;
    info_name = declared.name;
    info_version = declared.version;
}

/// mcp.52: `subscriptions/listen` for tool list changes, its acknowledgment awaited until
/// `until`; without it the client does without list changes.
void McpClient::Impl::subscribe(Clock::time_point until) {
    listen_id = next_id++;
    const std::string line = mcp_internal::request_line(
        listen_id, "subscriptions/listen",
        mcp_internal::with_request_meta(R"({"notifications":{"toolsListChanged":true}})"));
    if (http) {
        if (!http->listen(until, listen_id, line,
                          mcp_internal::request_headers("subscriptions/listen", std::nullopt)))
            listen_ended = true;
    } else {
        send(line, "subscriptions/listen");
    }
    while (!listen_acknowledged && !listen_ended && Clock::now() < until) {
        if (http) {
            if (auto item = http->next(until); item && !item->failed) handle_unasked(item->message);
        } else if (auto in = read_one(until, "subscriptions/listen")) {
            handle_unasked(*in);
        }
    }
    if (!listen_acknowledged) {
        NUCLEO_LOG_WARN(
            "{} did not acknowledge subscriptions/listen; its tool list changes "
            "are not followed",
            prefix());
        list_changed_capability = false;
    }
}

/// mcp.2, mcp.3: initialize with the newest handshake revision, accept any of them, then
/// notifications/initialized.
void McpClient::Impl::initialize(std::optional<Clock::time_point> until) {
    const std::string params = R"({"protocolVersion":)" +
                               mcp_internal::json_string(kProtocolRevisions[1]) +
                               R"(,"capabilities":{},"clientInfo":{"name":"nucleo","version":)" +
                               mcp_internal::json_string(nucleo::version()) + "}}";
    rapidjson::Document doc = request("initialize", params, limits.start_timeout, nullptr,
                                      "initialize", false, std::nullopt, until);
    const rapidjson::Value& result = doc["result"];
    if (!result.IsObject()) give_up(ErrorKind::kProtocol, "answered initialize with no object");
    const auto version = result.FindMember("protocolVersion");
    if (version == result.MemberEnd() || !version->value.IsString())
        give_up(ErrorKind::kProtocol, "answered initialize without a protocolVersion");
    revision = version->value.GetString();
    if (revision == kStatelessRevision)
        give_up(ErrorKind::kProtocol, "answered initialize with revision " + revision +
                                          ", which has no handshake, though it did not speak it "
                                          "to server/discover");
    if (std::find(kProtocolRevisions.begin(), kProtocolRevisions.end(), revision) ==
        kProtocolRevisions.end())
        give_up(ErrorKind::kProtocol, "speaks protocol revision '" +
                                          internal::printable_utf8(revision) +
                                          "'; this client speaks " + revisions_list());
    const auto caps = result.FindMember("capabilities");
    const auto info = result.FindMember("serverInfo");
    static const rapidjson::Value kNone;
    adopt(mcp_internal::read_declarations(caps != result.MemberEnd() ? caps->value : kNone,
                                          info != result.MemberEnd() ? &info->value : nullptr));
    if (http) {
        http->set_protocol_revision(revision);
        // mcp.46: the GET stream is open before the server hears it may send (a list change
        // it announces right after notifications/initialized then reaches this client).
        http->listen(Clock::now() + limits.request_timeout);
    }
    send(mcp_internal::notification_line("notifications/initialized", ""),
         "notifications/initialized");
}

}  // namespace nucleo::mcp
