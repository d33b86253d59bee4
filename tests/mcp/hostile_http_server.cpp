// A hostile MCP server over Streamable HTTP, for tests/mcp: it listens on 127.0.0.1 on a port the
// system picks, writes "PORT <n>" on its stdout once it accepts connections, speaks enough MCP to
// be connected to (a session id, JSON and event-stream answers), and misbehaves on request. Its
// first argument picks its GET endpoint:
//   well      GET answers 405 (no server stream; the default)
//   listen    GET opens an event stream, where `grow` announces its new tool
//   badid     initialize names the session "s 1" (not visible ASCII), and requests without a
//             session are served
//   modern    a server of the stateless revision 2026-07-28 only (docs/spec/mcp.md, mcp.50 to
//             mcp.54): no session (its server/discover answer names one, which the client must
//             not send back), initialize refused with HTTP 400 and an
//             UnsupportedProtocolVersionError, and every POST refused with HTTP 400 and -32020
//             (HeaderMismatch) unless MCP-Protocol-Version, Mcp-Method and Mcp-Name mirror the
//             body and its `_meta` is the revision's; `subscriptions/listen` answers an event
//             stream that stays open, where `grow` announces its new tool tagged with the
//             subscription's id; it also lists `region` (three parameters annotated with
//             x-mcp-header, answered with the Mcp-Param-* headers it got, refused when
//             Mcp-Param-Region is missing beside a region) and `badheader` (an annotation under
//             `items`, which makes the tool invalid)
//   badutf8   `modern`, but its server/discover answer is not UTF-8
// A second argument, comma-separated tool names, lists those first (the emulator calls the first
// declared tool).
// Tools: echo (a JSON answer), sse_echo (an event-stream answer with a log notification first),
// slow (never answers), fail500 (HTTP 500), html (200 text/html), cut (an event stream cut before
// the answer, which a GET with Last-Event-ID then gives), cutdead (cut, with no event ids), huge
// (a JSON answer of 1 MiB), huge_event (one event of 1 MiB), garbage (a body that is not JSON),
// expire (ends the first session with 404; in a later session answers its number),
// expire_always (ends every session with 404), expire_refuse (ends the session with 404 and
// answers every later initialize with HTTP 500), expire_upgrade (ends the session with 404 and
// answers every later initialize as `modern` does), cancelled (names the request ids it was told
// were cancelled), heard (the Authorization, MCP-Protocol-Version and Mcp-Session-Id headers of
// the call, the sessions ended with DELETE, and the Mcp-Method and Mcp-Name headers), refuse400
// (HTTP 400 whose JSON body is the error answering the call), bad400 (HTTP 400 with a JSON-RPC
// error of no id), grow (adds a tool and announces it on the GET stream), grow_sse (adds a tool and
// announces it in its own event-stream answer, before the answer), long (a text of 20,000 bytes or
// so).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fixture_meta.hpp"

namespace {

std::string mode = "well";
std::mutex state_mutex;
int session_count = 0;
std::set<std::string> sessions;    // the live ones
std::vector<std::string> deleted;  // ended with DELETE
std::vector<std::string> cancelled_ids;
std::vector<std::string> extra_tools;
// Sockets of open GET streams (no id) and, in `modern`, of subscriptions/listen streams (with
// the subscription's id, which tags what is sent on it).
std::vector<std::pair<int, std::string>> listeners;
std::vector<std::string> front;  // tools listed first
bool refuse_initialize = false;  // set by expire_refuse
bool upgraded = false;           // set by expire_upgrade: initialize answered as `modern` does

struct Request {
    std::string method;
    std::map<std::string, std::string> headers;  // names lowercased
    std::string body;
    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

bool write_all(int fd, const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
        if (n <= 0) return false;
        at += static_cast<std::size_t>(n);
    }
    return true;
}

bool read_request(int fd, Request& r) {
    std::string in;
    char buf[4096];
    std::size_t end = std::string::npos;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return false;
        in.append(buf, static_cast<std::size_t>(n));
    }
    const std::string head = in.substr(0, end);
    r.method = head.substr(0, head.find(' '));
    std::size_t at = head.find("\r\n");
    while (at != std::string::npos && at < head.size()) {
        const std::size_t next = head.find("\r\n", at + 2);
        const std::string line =
            head.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2);
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos) {
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.headers[name] = value;
        }
        at = next;
    }
    r.body = in.substr(end + 4);
    const std::size_t length =
        r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    while (r.body.size() < length) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return false;
        r.body.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

void answer(int fd, int status, const std::string& type, const std::string& body,
            const std::string& extra_headers = {}) {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " X\r\nConnection: close\r\n";
    if (!type.empty()) head += "Content-Type: " + type + "\r\n";
    head += extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    write_all(fd, head + body);
}

/// An event-stream answer's head: no length, the stream ends when the connection closes.
void sse_head(int fd, const std::string& extra_headers = {}) {
    write_all(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n" +
                      extra_headers + "\r\n");
}

std::string json_text(const std::string& text) {
    rapidjson::Value v(rapidjson::StringRef(text.data(), text.size()));
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return b.GetString();
}

std::string result(const std::string& id, const std::string& body) {
    return R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + body + "}";
}

std::string text_result(const std::string& id, const std::string& text) {
    return result(id, R"({"content":[{"type":"text","text":)" + json_text(text) + "}]}");
}

std::string tool(const std::string& name) {
    return R"({"name":")" + name + R"(","inputSchema":{"type":"object"}})";
}

/// Waits until the client closes the connection (a cancelled or abandoned request).
void hold(int fd) {
    char buf[256];
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
}

void call(int fd, const Request& r, const std::string& id, const std::string& name,
          const rapidjson::Value& args, const std::string& session) {
    if (name == "slow") return hold(fd);
    std::lock_guard<std::mutex> lock(state_mutex);
    if (name == "echo") {
        const std::string text = args.HasMember("text") ? args["text"].GetString() : "";
        answer(fd, 200, "application/json", text_result(id, "echo: " + text));
    } else if (name == "sse_echo") {
        sse_head(fd);
        write_all(
            fd,
            "id: e1\ndata: " +
                std::string(
                    R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}})") +
                "\n\nid: e2\ndata: " + text_result(id, "sse: done") + "\n\n");
    } else if (name == "fail500") {
        answer(fd, 500, "text/plain", "internal trouble");
    } else if (name == "html") {
        answer(fd, 200, "text/html", "<html>not MCP</html>");
    } else if (name == "cut") {
        // The priming event names an id; the answer waits for the resumption.
        sse_head(fd);
        write_all(fd, "id: cut-" + id + "\nretry: 10\ndata:\n\n");
    } else if (name == "cutdead") {
        sse_head(fd);
        write_all(
            fd,
            "data: " +
                std::string(
                    R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}})") +
                "\n\n");
    } else if (name == "huge") {
        write_all(fd,
                  "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n" +
                      text_result(id, std::string(1 << 20, 'x')));
    } else if (name == "huge_event") {
        sse_head(fd);
        write_all(fd, "data: " + text_result(id, std::string(1 << 20, 'x')) + "\n\n");
    } else if (name == "garbage") {
        answer(fd, 200, "application/json", "this is not JSON");
    } else if (name == "expire") {
        if (session == "s1") {
            sessions.clear();
            answer(fd, 404, "application/json",
                   R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}})");
        } else {
            answer(fd, 200, "application/json", text_result(id, "session " + session));
        }
    } else if (name == "long") {
        std::string text;
        for (int i = 0; text.size() < 20000; ++i)
            text += "line " + std::to_string(i) + " of the long result\n";
        answer(fd, 200, "application/json", text_result(id, text));
    } else if (name == "expire_always" || name == "expire_refuse" || name == "expire_upgrade") {
        sessions.clear();
        if (name == "expire_refuse") refuse_initialize = true;
        if (name == "expire_upgrade") upgraded = true;
        answer(fd, 404, "application/json",
               R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}})");
    } else if (name == "refuse400") {
        answer(fd, 400, "application/json",
               R"({"jsonrpc":"2.0","id":)" + id +
                   R"(,"error":{"code":-32602,"message":"Invalid arguments"}})");
    } else if (name == "bad400") {
        answer(fd, 400, "application/json",
               R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad request"}})");
    } else if (name == "cancelled") {
        std::string text;
        for (const auto& c : cancelled_ids) text += (text.empty() ? "" : ",") + c;
        answer(fd, 200, "application/json", text_result(id, "cancelled: " + text));
    } else if (name == "heard") {
        std::string text = "authorization=" + r.header("authorization") +
                           " version=" + r.header("mcp-protocol-version") +
                           " session=" + r.header("mcp-session-id") + " deleted=";
        for (const auto& d : deleted) text += d + ";";
        text += " method=" + r.header("mcp-method") + " name=" + r.header("mcp-name");
        answer(fd, 200, "application/json", text_result(id, text));
    } else if (name == "grow") {
        extra_tools.push_back("extra_" + std::to_string(extra_tools.size() + 1));
        for (const auto& [l, subscription] : listeners) {
            const std::string params =
                subscription.empty()
                    ? std::string()
                    : R"(,"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)" +
                          subscription + "}}";
            write_all(
                l,
                "data: " +
                    std::string(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed")") +
                    params + "}\n\n");
        }
        answer(fd, 200, "application/json", text_result(id, "grew " + extra_tools.back()));
    } else if (name == "grow_sse") {
        extra_tools.push_back("extra_" + std::to_string(extra_tools.size() + 1));
        sse_head(fd);
        write_all(fd, "data: " +
                          std::string(
                              R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})") +
                          "\n\ndata: " + text_result(id, "grew " + extra_tools.back()) + "\n\n");
    } else {
        answer(fd, 200, "application/json",
               R"({"jsonrpc":"2.0","id":)" + id +
                   R"(,"error":{"code":-32602,"message":"Unknown tool"}})");
    }
}

std::string id_of(const rapidjson::Value& message) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    message["id"].Accept(w);
    return b.GetString();
}

/// Keeps `fd` among the listeners until the client closes it.
void listen_on(int fd, const std::string& subscription) {
    {
        std::lock_guard<std::mutex> lock(state_mutex);
        listeners.emplace_back(fd, subscription);
    }
    hold(fd);
    std::lock_guard<std::mutex> lock(state_mutex);
    listeners.erase(
        std::find(listeners.begin(), listeners.end(), std::make_pair(fd, subscription)));
}

std::string tool_list(const std::string& head);

/// `modern`: one POST of the stateless revision; what is wrong with its headers or `_meta` is a
/// 400 naming it.
void serve_modern(int fd, const Request& r, const rapidjson::Document& doc) {
    const std::string method = doc["method"].GetString();
    if (!doc.HasMember("id")) return answer(fd, 202, "", "");
    const std::string id = id_of(doc);
    const auto refuse = [&](int status, int code, const std::string& message) {
        answer(fd, status, "application/json",
               R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":{"code":)" + std::to_string(code) +
                   R"(,"message":)" + json_text(message) + "}}");
    };
    static const rapidjson::Value empty(rapidjson::kObjectType);
    const rapidjson::Value& params = doc.HasMember("params") ? doc["params"] : empty;
    if (method == "initialize") {
        return refuse(400, -32022, "Unsupported protocol version");
    }
    if (r.header("mcp-protocol-version") != "2026-07-28")
        return refuse(400, -32020, "MCP-Protocol-Version is not 2026-07-28");
    if (r.header("mcp-method") != method) return refuse(400, -32020, "Mcp-Method is not " + method);
    if (method == "tools/call" &&
        (!params.HasMember("name") || r.header("mcp-name") != params["name"].GetString()))
        return refuse(400, -32020, "Mcp-Name does not mirror params.name");
    if (!r.header("mcp-session-id").empty())
        return refuse(400, -32020, "a session id, which the stateless revision has none of");
    if (const std::string fault = mcp_fixture::meta_fault(params); !fault.empty())
        return refuse(400, -32602, fault);
    if (method == "server/discover" && mode == "badutf8") {
        return answer(fd, 200, "application/json",
                      result(id, R"({"resultType":"complete","supportedVersions":["caf)" +
                                     std::string("\xC3\x28") + R"("],"capabilities":{}})"));
    }
    if (method == "server/discover") {
        // A session id the client must not send back (mcp.51).
        return answer(
            fd, 200, "application/json",
            result(
                id,
                R"({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hostile-http-modern","version":"2"}}})"),
            "Mcp-Session-Id: m1\r\n");
    }
    if (method == "subscriptions/listen") {
        sse_head(fd);
        write_all(
            fd,
            "data: " +
                std::string(
                    R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)") +
                id + R"(},"notifications":{"toolsListChanged":true}}})" + "\n\n");
        return listen_on(fd, id);
    }
    if (method == "tools/list")
        return answer(
            fd, 200, "application/json",
            result(id, tool_list(R"("resultType":"complete","ttlMs":0,"cacheScope":"private",)")));
    if (method == "tools/call") {
        const rapidjson::Value& args = params.HasMember("arguments") ? params["arguments"] : empty;
        const std::string name = params["name"].GetString();
        if (name == "region") {
            if (args.HasMember("region") && r.header("mcp-param-region").empty())
                return refuse(400, -32020, "Mcp-Param-Region is missing");
            return answer(fd, 200, "application/json",
                          text_result(id, "region=" + r.header("mcp-param-region") +
                                              " zone=" + r.header("mcp-param-zone") +
                                              " floor=" + r.header("mcp-param-floor")));
        }
        return call(fd, r, id, name, args, "");
    }
    refuse(404, -32601, "Method not found");
}

/// A tools/list result: `head` (members before the list, each followed by a comma), then the
/// tools, those of `front` first.
std::string tool_list(const std::string& head) {
    std::string list = "{" + head + R"("tools":[)";
    std::vector<std::string> names = {
        "echo",     "sse_echo",   "slow",          "fail500",       "html",      "cut",   "cutdead",
        "huge",     "huge_event", "garbage",       "expire",        "cancelled", "heard", "grow",
        "grow_sse", "long",       "expire_always", "expire_refuse", "refuse400", "bad400"};
    for (auto f = front.rbegin(); f != front.rend(); ++f) {
        const auto at = std::find(names.begin(), names.end(), *f);
        if (at == names.end()) continue;
        names.erase(at);
        names.insert(names.begin(), *f);
    }
    {
        std::lock_guard<std::mutex> lock(state_mutex);
        names.insert(names.end(), extra_tools.begin(), extra_tools.end());
    }
    for (std::size_t i = 0; i < names.size(); ++i) list += (i > 0 ? "," : "") + tool(names[i]);
    if (mode == "modern") {
        // x-mcp-header: `region` mirrors two parameters, one nested; `badheader` annotates an
        // array's items, which makes its definition invalid.
        list +=
            R"(,{"name":"region","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"},"floor":{"type":"integer","x-mcp-header":"Floor"}}}}}})"
            R"(,{"name":"badheader","inputSchema":{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}})";
    }
    return list + "]}";
}

void serve(int fd) {
    Request r;
    if (!read_request(fd, r)) return void(::close(fd));
    const std::string session = r.header("mcp-session-id");
    bool known = false;
    {
        std::lock_guard<std::mutex> lock(state_mutex);
        known = sessions.count(session) > 0;
    }
    if (r.method == "DELETE") {
        std::lock_guard<std::mutex> lock(state_mutex);
        deleted.push_back(session);
        sessions.erase(session);
        answer(fd, 200, "", "");
        return void(::close(fd));
    }
    if (r.method == "GET") {
        const std::string last = r.header("last-event-id");
        if (last.rfind("cut-", 0) == 0) {
            // The resumption of `cut`'s stream: the answer it owed.
            sse_head(fd);
            write_all(fd, "id: done-" + last.substr(4) + "\ndata: " +
                              text_result(last.substr(4), "resumed after " + last) + "\n\n");
            return void(::close(fd));
        }
        if (mode != "listen" || !known) {
            answer(fd, 405, "", "");
            return void(::close(fd));
        }
        sse_head(fd);
        listen_on(fd, "");
        return void(::close(fd));
    }
    rapidjson::Document doc;
    doc.Parse(r.body.c_str(), r.body.size());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("method")) {
        answer(fd, 202, "", "");  // a response to a request of ours (none are sent)
        return void(::close(fd));
    }
    const std::string method = doc["method"].GetString();
    bool modern = mode == "modern";
    {
        std::lock_guard<std::mutex> lock(state_mutex);
        modern = modern || upgraded;
    }
    if (mode == "modern" || mode == "badutf8") {
        serve_modern(fd, r, doc);
        return void(::close(fd));
    }
    if (method == "initialize" && modern) {
        answer(
            fd, 400, "application/json",
            R"({"jsonrpc":"2.0","id":)" + id_of(doc) +
                R"(,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}})");
        return void(::close(fd));
    }
    if (method == "initialize") {
        std::string id;
        {
            std::lock_guard<std::mutex> lock(state_mutex);
            if (refuse_initialize) {
                answer(fd, 500, "text/plain", "no more sessions");
                return void(::close(fd));
            }
            id = mode == "badid" ? "s 1" : "s" + std::to_string(++session_count);
            sessions.insert(id);
        }
        answer(
            fd, 200, "application/json",
            result(
                id_of(doc),
                R"({"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile-http","version":"1"}})"),
            "Mcp-Session-Id: " + id + "\r\n");
        return void(::close(fd));
    }
    if ((session.empty() && mode != "badid") || (!session.empty() && !known)) {
        answer(fd, session.empty() ? 400 : 404, "application/json",
               R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"}})");
        return void(::close(fd));
    }
    if (!doc.HasMember("id")) {
        if (method == "notifications/cancelled") {
            std::lock_guard<std::mutex> lock(state_mutex);
            rapidjson::StringBuffer b;
            rapidjson::Writer<rapidjson::StringBuffer> w(b);
            doc["params"]["requestId"].Accept(w);
            cancelled_ids.emplace_back(b.GetString());
        }
        answer(fd, 202, "", "");
        return void(::close(fd));
    }
    const std::string id = id_of(doc);
    if (method == "tools/list") {
        answer(fd, 200, "application/json", result(id, tool_list("")));
    } else if (method == "tools/call") {
        static const rapidjson::Value empty(rapidjson::kObjectType);
        const rapidjson::Value& params = doc["params"];
        const rapidjson::Value& args = params.HasMember("arguments") ? params["arguments"] : empty;
        call(fd, r, id, params["name"].GetString(), args, session);
    } else if (method == "ping") {
        answer(fd, 200, "application/json", result(id, "{}"));
    } else {
        answer(fd, 200, "application/json",
               R"({"jsonrpc":"2.0","id":)" + id +
                   R"(,"error":{"code":-32601,"message":"Method not found"}})");
    }
    ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) mode = argv[1];
    if (argc > 2) {
        std::string list = argv[2];
        for (std::size_t at = 0; at <= list.size();) {
            const std::size_t comma = std::min(list.find(',', at), list.size());
            front.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
    }
    const int server = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(server, 64) != 0)
        return 1;
    socklen_t len = sizeof addr;
    ::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
    std::printf("PORT %d\n", ntohs(addr.sin_port));
    std::fflush(stdout);
    for (;;) {
        const int fd = ::accept(server, nullptr, nullptr);
        if (fd < 0) continue;
        std::thread(serve, fd).detach();
    }
}
