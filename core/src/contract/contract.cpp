// The family dispatch, the generic checks and the audit after encode (wire.115, wire.149-wire.163).
#include "contract/contract.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "contract/contract_internal.hpp"

namespace nucleo::contract {

using internal::array;
using internal::broken;
using internal::has_non_whitespace;
using internal::member;
using internal::str;
using internal::Value;

WireFamily wire_family_from_name(std::string_view name) noexcept {
    if (name == "anthropic-messages") return WireFamily::kAnthropicMessages;
    if (name == "openai-chat") return WireFamily::kOpenAIChat;
    if (name == "bedrock-converse") return WireFamily::kBedrockConverse;
    return WireFamily::kUnknown;
}

std::string_view wire_family_name(WireFamily family) noexcept {
    switch (family) {
        case WireFamily::kAnthropicMessages: return "anthropic-messages";
        case WireFamily::kOpenAIChat: return "openai-chat";
        case WireFamily::kBedrockConverse: return "bedrock-converse";
        case WireFamily::kUnknown: break;
    }
    return "unknown";
}

std::string Violation::line() const {
    return rule + (where.empty() ? "" : " at " + where) + ": " + message;
}

bool valid_tool_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    });
}

std::optional<Violation> check_request(WireFamily family, const rapidjson::Value& body,
                                       Scope scope) {
    switch (family) {
        case WireFamily::kAnthropicMessages: return internal::check_anthropic(body);
        case WireFamily::kOpenAIChat: return internal::check_openai(body, scope);
        case WireFamily::kBedrockConverse: return internal::check_bedrock(body);
        case WireFamily::kUnknown: break;
    }
    return std::nullopt;
}

std::size_t published_size_limit(WireFamily family) noexcept {
    // Anthropic publishes 32 MB for the Messages API; the other two publish no byte limit for a
    // chat request.
    return family == WireFamily::kAnthropicMessages ? 32U * 1000U * 1000U : 0U;
}

std::optional<Violation> check_size(WireFamily family, std::size_t bytes) {
    const std::size_t limit = published_size_limit(family);
    if (limit == 0 || bytes <= limit) return std::nullopt;
    return broken("wire.115", "body", "Request exceeds the maximum allowed number of bytes.");
}

namespace {

bool has_control(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// wire.150: relative to the base URL, nothing that names another host or climbs out of it.
std::optional<Violation> check_path(std::string_view path) {
    const auto bad = [&](const std::string& why) {
        return broken("wire.150", "path",
                      "the request path \"" + std::string(path.substr(0, 80)) + "\" " + why +
                          "; a path starts with a single '/' and stays under the base URL");
    };
    if (path.empty() || path.front() != '/') return bad("does not start with '/'");
    if (path.size() > 1 && (path[1] == '/' || path[1] == '\\')) return bad("names an authority");
    if (path.find("://") != std::string_view::npos) return bad("carries a scheme");
    if (path.find('@') != std::string_view::npos) return bad("carries '@' (user info)");
    if (path.find('\\') != std::string_view::npos) return bad("carries a backslash");
    if (path.find_first_of(std::string_view("\r\n\0 \t", 5)) != std::string_view::npos)
        return bad("carries a control character or a space");
    std::string lower(path);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* dots : {"/../", "/..?", "/..#", "/%2e%2e", "/.%2e", "/%2e."}) {
        if (lower.find(dots) != std::string::npos) return bad("climbs with '..'");
    }
    if (lower.size() >= 3 && lower.compare(lower.size() - 3, 3, "/..") == 0)
        return bad("climbs with '..'");
    return std::nullopt;
}

// wire.151
std::optional<Violation> check_headers(const std::vector<std::pair<std::string, std::string>>* headers) {
    if (headers == nullptr) return std::nullopt;
    for (const auto& [name, value] : *headers) {
        if (name.empty() || has_control(name)) {
            return broken("wire.151", "header name",
                          "a header name is empty or carries CR, LF or NUL, which would split or "
                          "end the HTTP header block");
        }
        if (has_control(value)) {
            return broken("wire.151", "header " + name,
                          "the value of header '" + name +
                              "' carries CR, LF or NUL, which would split the HTTP header block");
        }
    }
    return std::nullopt;
}

/// The text of a content value: a string, or the texts of its text blocks / parts.
void texts_of(const Value& content, std::vector<std::string_view>& out) {
    if (content.IsString()) {
        out.emplace_back(content.GetString(), content.GetStringLength());
        return;
    }
    if (!content.IsArray()) return;
    for (const auto& b : content.GetArray()) {
        const Value* t = member(b, "text");
        if (t != nullptr && t->IsString()) out.emplace_back(t->GetString(), t->GetStringLength());
    }
}

/// The system channel of the family and every turn's texts.
struct Channels {
    std::vector<std::string_view> system;
    std::vector<std::string_view> turns;
};

Channels channels(WireFamily family, const Value& body) {
    Channels c;
    if (const Value* s = member(body, "system"); s != nullptr && family != WireFamily::kOpenAIChat)
        texts_of(*s, c.system);
    if (const Value* messages = array(body, "messages")) {
        for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
            const Value& m = (*messages)[i];
            const Value* content = member(m, "content");
            if (content == nullptr) continue;
            const std::string_view role = str(m, "role");
            const bool leading_system = family == WireFamily::kOpenAIChat && i == 0 &&
                                        (role == "system" || role == "developer");
            texts_of(*content, leading_system ? c.system : c.turns);
        }
    }
    return c;
}

// wire.161
std::optional<Violation> check_system(WireFamily family, const Value& body, const CallPlan& plan) {
    const Channels c = channels(family, body);
    std::string channel;
    for (const auto t : c.system) channel.append(t).append("\n\n");
    const char* place = family == WireFamily::kOpenAIChat ? "the leading system message"
                                                          : "the system field";
    std::string joined;
    for (std::size_t i = 0; i < plan.system_texts.size(); ++i) {
        const std::string& want = plan.system_texts[i];
        if (!has_non_whitespace(want)) continue;
        if (channel.find(want) == std::string::npos) {
            return broken("wire.161", "system",
                          "system block " + std::to_string(i) +
                              " the core prepared is missing from " + place +
                              ", where this wire family carries the system content");
        }
        joined.append(joined.empty() ? "" : "\n\n").append(want);
    }
    if (joined.empty()) {
        if (std::any_of(c.system.begin(), c.system.end(),
                        [](std::string_view t) { return has_non_whitespace(t); })) {
            return broken("wire.161", "system",
                          std::string(place) + " carries text although the core prepared no "
                                               "system content");
        }
        return std::nullopt;
    }
    for (const auto t : c.turns) {
        if (t.size() >= joined.size() && t.compare(0, joined.size(), joined) == 0 &&
            (t.size() == joined.size() || t[joined.size()] == '\n')) {
            return broken("wire.161", "messages",
                          "a turn repeats the system content, which belongs only in " +
                              std::string(place));
        }
    }
    return std::nullopt;
}

// wire.160
std::optional<Violation> check_breakpoints(WireFamily family, const Value& body, const CallPlan& plan) {
    if (family == WireFamily::kOpenAIChat) return std::nullopt;  // no marks on this wire
    std::size_t n = 0;
    const char* mark = family == WireFamily::kAnthropicMessages ? "cache_control" : "cachePoint";
    const auto count = [&](const Value* arr, auto&& self) -> void {
        if (arr == nullptr) return;
        for (const auto& b : arr->GetArray()) {
            const Value* m = member(b, mark);
            if (m != nullptr && !m->IsNull()) ++n;
            if (family == WireFamily::kAnthropicMessages) self(array(b, "content"), self);
        }
    };
    if (family == WireFamily::kBedrockConverse) {
        if (const Value* tc = member(body, "toolConfig")) count(array(*tc, "tools"), count);
    } else {
        count(array(body, "tools"), count);
    }
    count(array(body, "system"), count);
    if (const Value* messages = array(body, "messages"))
        for (const auto& m : messages->GetArray()) count(array(m, "content"), count);
    if (n == plan.breakpoints) return std::nullopt;
    return broken("wire.160", mark,
                  "the body carries " + std::to_string(n) + " " + mark + " mark(s) but the core's " +
                      "cache plan decided " + std::to_string(plan.breakpoints));
}

// wire.163
std::optional<Violation> check_max_tokens(WireFamily family, const Value& body, const CallPlan& plan) {
    if (plan.max_tokens <= 0) return std::nullopt;
    std::vector<std::pair<const char*, const Value*>> fields;
    if (family == WireFamily::kAnthropicMessages) fields.emplace_back("max_tokens", member(body, "max_tokens"));
    if (family == WireFamily::kOpenAIChat) {
        const Value* a = member(body, "max_completion_tokens");
        const Value* b = member(body, "max_tokens");
        if (a != nullptr || b == nullptr) fields.emplace_back("max_completion_tokens", a);
        if (b != nullptr) fields.emplace_back("max_tokens", b);
    }
    if (family == WireFamily::kBedrockConverse) {
        const Value* ic = member(body, "inferenceConfig");
        fields.emplace_back("inferenceConfig.maxTokens", ic == nullptr ? nullptr : member(*ic, "maxTokens"));
    }
    for (const auto& [name, v] : fields) {
        if (v != nullptr && v->IsInt64() && v->GetInt64() == plan.max_tokens) continue;
        const std::string got = v == nullptr ? "nothing" : v->IsInt64() ? std::to_string(v->GetInt64()) : "a non-integer";
        return broken("wire.163", name,
                      std::string(name) + " is " + got + " but the core reserved an output budget of " +
                          std::to_string(plan.max_tokens));
    }
    return std::nullopt;
}

}  // namespace

std::optional<Violation> audit_request(WireFamily family, const OutgoingRequest& request,
                                       const CallPlan& plan) {
    if (auto e = check_path(request.path)) return e;
    if (auto e = check_headers(request.headers)) return e;
    if (request.body.size() > plan.max_body_bytes) {
        return broken("wire.153", "body",
                      "the body is " + std::to_string(request.body.size()) +
                          " bytes, over the cap of " + std::to_string(plan.max_body_bytes) +
                          " (raise request_body_limit or shorten the conversation)");
    }
    rapidjson::Document own;
    const Value* body = request.parsed;
    if (body == nullptr) {
        own.Parse(request.body.data(), request.body.size());
        if (own.HasParseError() || !own.IsObject())
            return broken("wire.152", "body", "the body is not a JSON object");
        body = &own;
    }
    if (family == WireFamily::kUnknown) return std::nullopt;
    if (auto e = check_size(family, request.body.size())) return e;
    if (auto e = check_system(family, *body, plan)) return e;
    if (auto e = check_breakpoints(family, *body, plan)) return e;
    if (auto e = check_max_tokens(family, *body, plan)) return e;
    return check_request(family, *body, Scope::kCore);
}

}  // namespace nucleo::contract
