// A hostile MCP server over stdio, for tests/mcp: it speaks enough MCP to be connected to, and
// misbehaves on request. The first argument picks how it starts:
//   well      a server with the tools below (the default)
//   silent    reads and never answers
//   exit      exits with status 3 before answering
//   old       answers initialize with revision 2024-11-05
//   paged     lists its tools three per page
//   many      lists 10,000 tools, 500 per page
//   thousand  lists 1,000 tools, 500 per page (bench/mcp)
//   collide   also lists a tool named `lookup_order` (a host tool's name)
// Every mode above is a server of the handshake revisions, which answers `server/discover` with
// -32601 (method not found). These speak the stateless revision 2026-07-28 (docs/spec/mcp.md,
// mcp.50 to mcp.55):
//   modern       answers `server/discover` listing 2026-07-28 only, refuses `initialize` (-32022)
//                and `ping`, and refuses (-32602) any request whose `_meta` lacks the revision,
//                clientInfo or clientCapabilities; list changes (grow, drop) are sent only on a
//                `subscriptions/listen` subscription, tagged with its id; the tool `input`
//                answers input_required
//   future       refuses `server/discover` and `initialize` with -32022 naming 2027-01-01 only
//   listslegacy  answers `server/discover` listing 2025-11-25 only, and initialize as `well`
//   noversions   answers `server/discover` without supportedVersions
//   badversions  answers `server/discover` with supportedVersions a string
//   badutf8      answers `server/discover` with a serverInfo name that is not UTF-8
//   exitprobe    a server of the handshake revisions that exits (status 0) on `server/discover`,
//                as some SDKs' servers end on any request before `initialize`
// A second argument, comma-separated tool names, lists those first (the emulator calls the first
// declared tool).
// Tools (well, paged, collide): echo (text), image (a PNG), structured (structuredContent only),
// fails (isError), hang (never answers), crash (aborts), deep (100,000-deep result), bad_utf8,
// huge (writes until killed), garbage (a line that is not JSON), grow (each call adds a tool and
// announces the change), cancelled (names the request ids it was told were cancelled), drop
// (removes `echo` and announces the change), spawn (starts a child that waits forever in the
// server's process group and names its pid), asks (sends the client a ping and a roots/list
// request, and answers with what the client answered them).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fixture_meta.hpp"

namespace {

std::string mode = "well";
std::vector<std::string> front;
std::vector<std::string> extra_tools;
std::vector<std::string> cancelled_ids;
bool echo_dropped = false;
std::string asks_call_id;  // the `asks` call waiting for the client's two answers
std::vector<std::string> asks_answers;
std::string listen_id;  // modern: the id of the subscriptions/listen request, once one came

bool modern() {
    return mode == "modern";
}

void send(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

std::string id_text(const rapidjson::Value& id) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    id.Accept(w);
    return b.GetString();
}

void result(const std::string& id, const std::string& body) {
    send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + body + "}");
}

std::string tool(const std::string& name) {
    return R"({"name":")" + name + R"(","description":"The )" + name +
           R"( tool.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}})";
}

std::vector<std::string> tool_names() {
    std::vector<std::string> names;
    if (mode == "many" || mode == "thousand") {
        const int count = mode == "many" ? 10000 : 1000;
        for (int i = 0; i < count; ++i) names.push_back("t" + std::to_string(i));
        return names;
    }
    for (const char* n :
         {"echo", "image", "structured", "fails", "hang", "crash", "deep", "bad_utf8", "huge",
          "garbage", "grow", "cancelled", "drop", "spawn", "asks"}) {
        if (std::string(n) == "echo" && echo_dropped) continue;
        names.emplace_back(n);
    }
    if (mode == "collide") names.emplace_back("lookup_order");
    if (modern()) names.emplace_back("input");
    for (const auto& e : extra_tools) names.push_back(e);
    std::vector<std::string> ordered;
    for (const auto& f : front) {
        for (auto it = names.begin(); it != names.end(); ++it) {
            if (*it != f) continue;
            ordered.push_back(f);
            names.erase(it);
            break;
        }
    }
    ordered.insert(ordered.end(), names.begin(), names.end());
    return ordered;
}

void list(const std::string& id, const rapidjson::Value& params) {
    const std::vector<std::string> names = tool_names();
    const std::size_t per_page = mode == "many" || mode == "thousand" ? 500
                                 : mode == "paged"                    ? 3
                                                                      : names.size();
    std::size_t start = 0;
    if (params.IsObject() && params.HasMember("cursor") && params["cursor"].IsString())
        start = std::stoul(std::string(params["cursor"].GetString()).substr(5));
    std::string body =
        modern() ? R"({"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[)"
                 : R"({"tools":[)";
    const std::size_t end = std::min(names.size(), start + per_page);
    for (std::size_t i = start; i < end; ++i) body += (i > start ? "," : "") + tool(names[i]);
    body += "]";
    if (end < names.size()) body += R"(,"nextCursor":"page-)" + std::to_string(end) + "\"";
    result(id, body + "}");
}

std::string text_content(const std::string& text) {
    rapidjson::Value v(rapidjson::StringRef(text.data(), text.size()));
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return R"({"content":[{"type":"text","text":)" + std::string(b.GetString()) + "}]}";
}

/// A list change: as ever in the handshake modes; in `modern` only on the subscription.
void announce_list_change() {
    if (!modern()) {
        send(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    } else if (!listen_id.empty()) {
        send(
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)" +
            listen_id + "}}}");
    }
}

void error(const std::string& id, int code, const std::string& message) {
    send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":{"code":)" + std::to_string(code) +
         R"(,"message":")" + message + R"("}})");
}

void unsupported(const std::string& id, const std::string& supported) {
    send(
        R"({"jsonrpc":"2.0","id":)" + id +
        R"(,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[")" +
        supported + R"("],"requested":"?"}}})");
}

/// `server/discover` as each mode answers it; false: the mode does not know the method.
bool discover(const std::string& id) {
    const std::string info =
        R"(,"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hostile-modern","version":"2.0"}}})";
    if (mode == "modern")
        result(id, R"({"resultType":"complete","supportedVersions":["2026-07-28"])" + info);
    else if (mode == "listslegacy")
        result(id, R"({"resultType":"complete","supportedVersions":["2025-11-25"])" + info);
    else if (mode == "noversions")
        result(id, R"({"resultType":"complete")" + info);
    else if (mode == "badversions")
        result(id, R"({"resultType":"complete","supportedVersions":"2026-07-28")" + info);
    else if (mode == "badutf8")
        result(
            id,
            R"({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"caf)" +
                std::string("\xC3\x28") + R"(","version":"1"}}})");
    else if (mode == "future")
        unsupported(id, "2027-01-01");
    else
        return false;
    return true;
}

void call(const std::string& id, const rapidjson::Value& params) {
    const std::string name = params["name"].GetString();
    const rapidjson::Value* args = params.HasMember("arguments") ? &params["arguments"] : nullptr;
    const std::string text =
        args != nullptr && args->HasMember("text") && (*args)["text"].IsString()
            ? (*args)["text"].GetString()
            : "";
    if (name == "echo" || name == "lookup_order" || name.rfind("extra_", 0) == 0) {
        result(id, text_content(name + ": " + text));
    } else if (name == "image") {
        result(
            id,
            R"({"content":[{"type":"text","text":"a dot"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]})");
    } else if (name == "structured") {
        result(id, R"({"content":[],"structuredContent":{"temperature":21.5}})");
    } else if (name == "fails") {
        result(id, R"({"content":[{"type":"text","text":"the disk is full"}],"isError":true})");
    } else if (name == "hang") {
        // answers nothing
    } else if (name == "crash") {
        std::abort();
    } else if (name == "deep") {
        std::string deep(100000, '[');
        deep += std::string(100000, ']');
        send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"content":)" + deep + "}}");
    } else if (name == "bad_utf8") {
        send(R"({"jsonrpc":"2.0","id":)" + id +
             R"(,"result":{"content":[{"type":"text","text":"caf)" + std::string("\xC3\x28") +
             R"("}]}})");
    } else if (name == "huge") {
        // A 1 GB answer, written until the reader gives up and kills the server.
        std::string chunk(1 << 20, 'x');
        std::fputs(R"({"jsonrpc":"2.0","id":)", stdout);
        for (int i = 0; i < 1024; ++i) std::fwrite(chunk.data(), 1, chunk.size(), stdout);
        std::fflush(stdout);
    } else if (name == "garbage") {
        send("this is not JSON-RPC");
    } else if (name == "grow") {
        extra_tools.push_back("extra_" + std::to_string(extra_tools.size() + 1));
        announce_list_change();
        result(id, text_content("added " + extra_tools.back()));
    } else if (name == "drop") {
        echo_dropped = true;
        announce_list_change();
        result(id, text_content("echo removed"));
    } else if (name == "spawn") {
        const pid_t child = ::fork();
        if (child == 0) {
            for (;;) ::pause();
        }
        result(id, text_content(std::to_string(child)));
    } else if (name == "asks") {
        asks_call_id = id;
        asks_answers.clear();
        send(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})");
        send(R"({"jsonrpc":"2.0","id":"s2","method":"roots/list"})");
    } else if (name == "input" && modern()) {
        result(
            id,
            R"({"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}}})");
    } else if (name == "cancelled") {
        std::string joined;
        for (const auto& c : cancelled_ids) joined += (joined.empty() ? "" : ",") + c;
        result(id, text_content(joined));
    } else {
        send(R"({"jsonrpc":"2.0","id":)" + id +
             R"(,"error":{"code":-32602,"message":"Unknown tool: )" + name + "\"}}");
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) mode = argv[1];
    if (argc > 2) {
        std::string list = argv[2];
        for (std::size_t start = 0; start <= list.size();) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            front.push_back(list.substr(start, comma - start));
            start = comma + 1;
        }
    }
    std::fprintf(stderr, "hostile MCP server started in mode %s\n", mode.c_str());
    if (mode == "exit") return 3;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (mode == "silent") continue;
        rapidjson::Document d;
        d.Parse(line.c_str());
        if (d.HasParseError() || !d.IsObject()) continue;
        if (!d.HasMember("method")) {
            // The client's answer to one of our requests: the result, or the error's code.
            if (asks_call_id.empty() || !d.HasMember("id")) continue;
            asks_answers.push_back(
                id_text(d["id"]) + "=" +
                (d.HasMember("result") ? id_text(d["result"]) : id_text(d["error"]["code"])));
            if (asks_answers.size() == 2) {
                result(asks_call_id, text_content(asks_answers[0] + " " + asks_answers[1]));
                asks_call_id.clear();
            }
            continue;
        }
        const std::string method = d["method"].GetString();
        const rapidjson::Value empty(rapidjson::kObjectType);
        const rapidjson::Value& params = d.HasMember("params") ? d["params"] : empty;
        if (method == "notifications/cancelled") {
            cancelled_ids.push_back(id_text(params["requestId"]));
            continue;
        }
        if (!d.HasMember("id")) continue;
        const std::string id = id_text(d["id"]);
        if (method == "server/discover" && mode == "exitprobe") return 0;
        if (method == "server/discover" && discover(id)) continue;
        if (modern() || mode == "future") {
            // 2026-07-28: no handshake, no ping; every request carries its _meta.
            if (method == "initialize") {
                unsupported(id, mode == "future" ? "2027-01-01" : "2026-07-28");
                continue;
            }
            if (mode == "future") continue;
            if (const std::string fault = mcp_fixture::meta_fault(params); !fault.empty()) {
                error(id, -32602, fault + " (" + method + ")");
                continue;
            }
            if (method == "subscriptions/listen") {
                listen_id = id;
                send(
                    R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)" +
                    id + R"(},"notifications":{"toolsListChanged":true}}})");
                continue;
            }
            if (method == "ping") {
                error(id, -32601, "Method not found");
                continue;
            }
        }
        if (method == "initialize") {
            const std::string version =
                mode == "old" ? "2024-11-05" : params["protocolVersion"].GetString();
            result(
                id,
                R"({"protocolVersion":")" + version +
                    R"(","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile","version":"1.0"}})");
        } else if (method == "tools/list") {
            list(id, params);
        } else if (method == "tools/call") {
            call(id, params);
        } else if (method == "ping") {
            result(id, "{}");
        } else {
            send(R"({"jsonrpc":"2.0","id":)" + id +
                 R"(,"error":{"code":-32601,"message":"Method not found"}})");
        }
    }
    return 0;
}
