#include "mcp/jsonrpc.hpp"

#include "common/json_text.hpp"
#include "common/utf8.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/wire/json_escape.hpp"

namespace nucleo::mcp_internal {
namespace {

// mcp.13: the depth every wire reader of the core allows (limits.120); a server's 100,000-deep
// answer is refused by the iterative reader without recursing.
constexpr unsigned kMaxDepth = json_guard::kMaxDepth;
// How much of a refusal's list of revisions is quoted.
constexpr std::size_t kMaxNamedRevisions = 200;

[[noreturn]] void refuse(const std::string& what) {
    throw Error(ErrorKind::kProtocol, what);
}

}  // namespace

std::string json_string(std::string_view text) {
    rapidjson::Value v(rapidjson::StringRef(text.data(), text.size()));
    return internal::json_compact(v);
}

namespace {

/// A request (`id` set) or a notification: `head` is what comes before the method.
std::string method_line(std::string head, std::string_view method, std::string_view params_json) {
    head += R"("method":)" + json_string(method);
    if (!params_json.empty()) {
        head += R"(,"params":)";
        head += params_json;
    }
    head += "}\n";
    return head;
}

}  // namespace

std::string request_line(std::int64_t id, std::string_view method, std::string_view params_json) {
    return method_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + ",", method, params_json);
}

std::string notification_line(std::string_view method, std::string_view params_json) {
    return method_line(R"({"jsonrpc":"2.0",)", method, params_json);
}

std::string result_line(std::string_view id_json, std::string_view result_json) {
    return R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"result":)" +
           std::string(result_json) + "}\n";
}

std::string error_line(std::string_view id_json, int code, std::string_view message) {
    return R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"error":{"code":)" +
           std::to_string(code) + R"(,"message":)" + json_string(message) + "}}\n";
}

Incoming parse_incoming(std::string_view line) {
    // conversation.106: text enters the runtime as UTF-8 or not at all.
    const std::size_t bad = internal::first_invalid_utf8_in_json(line);
    if (bad != std::string_view::npos)
        refuse("a message that is not UTF-8 at byte " + std::to_string(bad));
    Incoming in;
    internal::parse_json_guarded(in.doc, line, "a message that is not JSON", kMaxDepth,
                                 ErrorKind::kProtocol);
    if (!in.doc.IsObject()) refuse("a message that is not a JSON object");
    const auto version = in.doc.FindMember("jsonrpc");
    if (version == in.doc.MemberEnd() || !version->value.IsString() ||
        std::string_view(version->value.GetString()) != "2.0")
        refuse("a message without \"jsonrpc\": \"2.0\"");
    const auto method = in.doc.FindMember("method");
    const auto id = in.doc.FindMember("id");
    if (method != in.doc.MemberEnd()) {
        if (!method->value.IsString()) refuse("a message whose method is not a string");
        in.method = method->value.GetString();
        in.kind =
            id == in.doc.MemberEnd() ? Incoming::Kind::kNotification : Incoming::Kind::kRequest;
        return in;
    }
    if (id == in.doc.MemberEnd()) refuse("a message with neither a method nor an id");
    const bool has_result = in.doc.HasMember("result");
    const auto error = in.doc.FindMember("error");
    if (has_result == (error != in.doc.MemberEnd()))
        refuse("a response with both or neither of result and error");
    if (error != in.doc.MemberEnd() && !error->value.IsObject())
        refuse("a response whose error is not an object");
    in.kind = Incoming::Kind::kResponse;
    if (id->value.IsInt64()) in.id = id->value.GetInt64();
    return in;
}

std::string describe_error(const rapidjson::Value& error) {
    std::string out;
    const auto code = error.FindMember("code");
    if (code != error.MemberEnd() && code->value.IsInt())
        out = "code " + std::to_string(code->value.GetInt()) + ": ";
    const auto message = error.FindMember("message");
    if (message != error.MemberEnd() && message->value.IsString())
        out += internal::printable_utf8(message->value.GetString());
    else
        out += "(no message)";
    // mcp.2: an UnsupportedProtocolVersionError (2026-07-28) names the revisions the server
    // speaks; a refusal says them.
    const auto data = error.FindMember("data");
    if (data == error.MemberEnd() || !data->value.IsObject()) return out;
    const auto supported = data->value.FindMember("supported");
    if (supported == data->value.MemberEnd() || !supported->value.IsArray()) return out;
    std::string revisions;
    for (const auto& r : supported->value.GetArray()) {
        if (!r.IsString()) continue;
        if (revisions.size() > kMaxNamedRevisions) {
            revisions += ", ...";
            break;
        }
        revisions += (revisions.empty() ? "" : ", ") + internal::printable_utf8(r.GetString());
    }
    if (!revisions.empty()) out += " (it speaks " + revisions + ")";
    return out;
}

}  // namespace nucleo::mcp_internal
