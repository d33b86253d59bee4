#include "mcp/stateless.hpp"

#include <algorithm>
#include <cctype>

#include "common/utf8.hpp"
#include "mcp/jsonrpc.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"
#include "nucleo/version.hpp"

namespace nucleo::mcp_internal {
namespace {

std::string base64(std::string_view bytes) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 3; ++k)
            v = (v << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
        for (std::size_t k = 0; k < 4; ++k)
            out += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 0x3f] : '=';
    }
    return out;
}

const rapidjson::Value* member(const rapidjson::Value& object, std::string_view name) {
    if (!object.IsObject()) return nullptr;
    const auto it = object.FindMember(rapidjson::StringRef(name.data(), name.size()));
    return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& object, std::string_view name) {
    const rapidjson::Value* v = member(object, name);
    return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength())
                                         : std::string();
}

}  // namespace

ServerDeclarations read_declarations(const rapidjson::Value& capabilities,
                                     const rapidjson::Value* info) {
    ServerDeclarations out;
    const rapidjson::Value* tools = member(capabilities, "tools");
    out.has_tools = tools != nullptr && tools->IsObject();
    if (out.has_tools) {
        const rapidjson::Value* lc = member(*tools, "listChanged");
        out.list_changed = lc != nullptr && lc->IsBool() && lc->GetBool();
    }
    if (info != nullptr) {
        out.name = string_member(*info, "name");
        out.version = string_member(*info, "version");
    }
    return out;
}

std::string with_request_meta(std::string_view params_json) {
    // schema/2026-07-28/schema.ts RequestMetaObject: protocolVersion and clientCapabilities are
    // required; clientInfo SHOULD be on every request.
    std::string meta = R"("_meta":{")" + std::string(kMetaProtocolVersion) + R"(":)" +
                       json_string(mcp::kStatelessRevision) +
                       R"(,"io.modelcontextprotocol/clientInfo":{"name":"nucleo","version":)" +
                       json_string(nucleo::version()) +
                       R"(},"io.modelcontextprotocol/clientCapabilities":{}})";
    std::string_view rest = params_json;
    if (rest.empty() || rest == "{}") return "{" + meta + "}";
    rest.remove_prefix(1);  // the client's own object: "{...}"
    return "{" + meta + "," + std::string(rest);
}

std::string header_value(std::string_view value) {
    const bool plain =
        !value.empty() && value.front() != ' ' && value.back() != ' ' &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e; }) &&
        !(value.rfind("=?base64?", 0) == 0 && value.size() >= 11 &&
          value.substr(value.size() - 2) == "?=");
    return plain ? std::string(value) : "=?base64?" + base64(value) + "?=";
}

HttpHeaders request_headers(std::string_view method, std::optional<std::string_view> name) {
    HttpHeaders headers;
    headers.emplace_back("Mcp-Method", std::string(method));
    if (name) headers.emplace_back("Mcp-Name", header_value(*name));
    return headers;
}

namespace {

constexpr std::string_view kAnnotation = "x-mcp-header";

/// RFC 9110's tchar.
bool token(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

/// Walks a schema node; `path` is its chain of `properties` keys while it is reachable through
/// them alone (nullopt once the walk went through anything else).
void collect(const rapidjson::Value& node, const std::optional<std::vector<std::string>>& path,
             std::vector<ParamHeader>& out) {
    if (node.IsArray()) {
        for (const auto& v : node.GetArray()) collect(v, std::nullopt, out);
        return;
    }
    if (!node.IsObject()) return;
    if (const rapidjson::Value* a = member(node, kAnnotation)) {
        if (!path || path->empty())
            throw Error(ErrorKind::kProtocol,
                        "an x-mcp-header on a schema not reached through properties alone");
        const std::string where = internal::printable_utf8(path->back());
        if (!a->IsString() || !token(std::string_view(a->GetString(), a->GetStringLength())))
            throw Error(ErrorKind::kProtocol,
                        "an x-mcp-header of '" + where + "' that is not an HTTP token");
        const std::string type = string_member(node, "type");
        if (type != "string" && type != "integer" && type != "boolean")
            throw Error(ErrorKind::kProtocol, "an x-mcp-header on '" + where +
                                                  "', which is not a string, integer or boolean");
        std::string name(a->GetString(), a->GetStringLength());
        const auto lower = [](std::string text) {
            for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return text;
        };
        for (const auto& seen : out)
            if (lower(seen.name) == lower(name))
                throw Error(ErrorKind::kProtocol, "the x-mcp-header '" + name + "' named twice");
        out.push_back(ParamHeader{std::move(name), *path});
    }
    for (const auto& m : node.GetObject()) {
        const std::string_view key(m.name.GetString(), m.name.GetStringLength());
        if (key == kAnnotation) continue;
        if (key == "properties" && path && m.value.IsObject()) {
            for (const auto& p : m.value.GetObject()) {
                std::vector<std::string> deeper = *path;
                deeper.emplace_back(p.name.GetString(), p.name.GetStringLength());
                collect(p.value, deeper, out);
            }
        } else {
            collect(m.value, std::nullopt, out);
        }
    }
}

}  // namespace

std::vector<ParamHeader> param_headers(const rapidjson::Value& input_schema) {
    std::vector<ParamHeader> out;
    collect(input_schema, std::vector<std::string>{}, out);
    return out;
}

void add_param_headers(const std::vector<ParamHeader>& annotated, const rapidjson::Value& arguments,
                       HttpHeaders& out) {
    for (const auto& h : annotated) {
        const rapidjson::Value* v = &arguments;
        for (const auto& key : h.path) {
            v = member(*v, key);
            if (v == nullptr) break;
        }
        if (v == nullptr) continue;
        std::string text;
        if (v->IsString())
            text.assign(v->GetString(), v->GetStringLength());
        else if (v->IsBool())
            text = v->GetBool() ? "true" : "false";
        else if (v->IsInt64())
            text = std::to_string(v->GetInt64());
        else
            continue;  // null, or a type the annotation does not allow
        out.emplace_back("Mcp-Param-" + h.name, header_value(text));
    }
}

std::vector<std::string> read_discover_result(const rapidjson::Value& result,
                                              ServerDeclarations& out) {
    if (!result.IsObject()) throw Error(ErrorKind::kProtocol, "a result that is not an object");
    const rapidjson::Value* versions = member(result, "supportedVersions");
    if (versions == nullptr)
        throw Error(ErrorKind::kProtocol, "a result without supportedVersions");
    if (!versions->IsArray())
        throw Error(ErrorKind::kProtocol, "supportedVersions that is not an array");
    std::vector<std::string> listed;
    for (const auto& v : versions->GetArray()) {
        if (!v.IsString())
            throw Error(ErrorKind::kProtocol,
                        "supportedVersions holding a value that is not a string");
        listed.emplace_back(v.GetString(), v.GetStringLength());
    }
    if (listed.empty()) throw Error(ErrorKind::kProtocol, "an empty supportedVersions");
    const rapidjson::Value* capabilities = member(result, "capabilities");
    if (capabilities == nullptr || !capabilities->IsObject())
        throw Error(ErrorKind::kProtocol, "capabilities that are missing or not an object");
    const rapidjson::Value* meta = member(result, "_meta");
    out = read_declarations(*capabilities,
                            meta != nullptr ? member(*meta, kMetaServerInfo) : nullptr);
    return listed;
}

std::vector<std::string> supported_revisions(const rapidjson::Value& error) {
    std::vector<std::string> out;
    const rapidjson::Value* data = member(error, "data");
    const rapidjson::Value* supported = data != nullptr ? member(*data, "supported") : nullptr;
    if (supported == nullptr || !supported->IsArray()) return out;
    for (const auto& v : supported->GetArray())
        if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
    return out;
}

std::optional<std::string> incomplete_result(const rapidjson::Value& result) {
    const rapidjson::Value* type = member(result, "resultType");
    if (type == nullptr) return std::nullopt;
    if (!type->IsString()) return "a resultType that is not a string";
    const std::string_view t(type->GetString(), type->GetStringLength());
    if (t == "complete") return std::nullopt;
    if (t == "input_required")
        return "a request for input (resultType input_required), which this client does not "
               "offer (it declares no client capabilities)";
    return "a resultType '" + internal::printable_utf8(t) + "' this client does not know";
}

}  // namespace nucleo::mcp_internal
