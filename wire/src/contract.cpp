// The family dispatch, the generic checks and the audit after encode (wire.115, wire.149-wire.163).
#include "nucleo/wire/contract.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "contract_internal.hpp"
#include "nucleo/wire/json_guard.hpp"

namespace nucleo::contract {

using internal::Block;
using internal::broken;
using internal::has_non_whitespace;
using internal::Kind;
using internal::Msg;
using internal::Num;
using internal::Shape;

WireFamily wire_family_from_name(std::string_view name) noexcept {
    if (name == "anthropic-messages") return WireFamily::kAnthropicMessages;
    if (name == "openai-chat") return WireFamily::kOpenAIChat;
    if (name == "bedrock-converse") return WireFamily::kBedrockConverse;
    if (name == "gemini-generate") return WireFamily::kGeminiGenerate;
    if (name == "openai-responses") return WireFamily::kOpenAIResponses;
    return WireFamily::kUnknown;
}

std::string_view wire_family_name(WireFamily family) noexcept {
    switch (family) {
        case WireFamily::kAnthropicMessages: return "anthropic-messages";
        case WireFamily::kOpenAIChat: return "openai-chat";
        case WireFamily::kBedrockConverse: return "bedrock-converse";
        case WireFamily::kGeminiGenerate:
            return "gemini-generate";
        case WireFamily::kOpenAIResponses:
            return "openai-responses";
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

namespace internal {

std::optional<Violation> check_shape(const Shape& body, Scope scope) {
    switch (body.family) {
        case WireFamily::kAnthropicMessages: return check_anthropic(body);
        case WireFamily::kOpenAIChat: return check_openai(body, scope);
        case WireFamily::kBedrockConverse: return check_bedrock(body);
        case WireFamily::kGeminiGenerate:  // read from the DOM (check_gemini), never a Shape
        case WireFamily::kOpenAIResponses:  // wire.213: read from the DOM (check_responses)
        case WireFamily::kUnknown: break;
    }
    return std::nullopt;
}

}  // namespace internal

std::optional<Violation> check_request(WireFamily family, const rapidjson::Value& body,
                                       Scope scope) {
    if (family == WireFamily::kUnknown) return std::nullopt;
    if (family == WireFamily::kGeminiGenerate) return internal::check_gemini(body);
    if (family == WireFamily::kOpenAIResponses) return internal::check_responses(body);
    Shape shape;
    if (!internal::shape_of(family, body, shape)) return std::nullopt;
    return internal::check_shape(shape, scope);
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

/// The texts of a content value: a string, or the texts of its text blocks / parts.
template <class F>
void texts_of(const Shape& body, const Msg& m, F&& f) {
    if (m.content == Kind::kString) f(m.content_text);
    for (const Block* b = body.begin(m); b != body.end(m); ++b)
        if (b->text_is_string) f(b->text);
}

}  // namespace

namespace internal {

std::string system_joined(const CallPlan& plan) {
    std::string joined;
    for (const std::string& want : plan.system_texts) {
        if (!has_non_whitespace(want)) continue;
        joined.append(joined.empty() ? "" : "\n\n").append(want);
    }
    return joined;
}

bool repeats_system(const Shape& body, std::size_t from, std::string_view joined) {
    bool repeated = false;
    const auto repeats = [&](std::string_view t) {
        repeated =
            repeated || (t.size() >= joined.size() && t.compare(0, joined.size(), joined) == 0 &&
                         (t.size() == joined.size() || t[joined.size()] == '\n'));
    };
    for (std::size_t i = from; i < body.messages.size() && !repeated; ++i)
        texts_of(body, body.messages[i], repeats);
    return repeated;
}

std::size_t breakpoint_marks(const Shape& body, bool all) {
    const bool anthropic = body.family == WireFamily::kAnthropicMessages;
    std::size_t n = 0;
    const auto count = [&](const Block& b) {
        n += (b.mark_set ? 1U : 0U) + (anthropic ? b.nested_marks : 0U);
    };
    if (all) {
        for (const Block& b : body.tools) count(b);  // a Tool is a Block
        for (const Block& b : body.system_blocks) count(b);
        if (anthropic && body.request_mark.mark_set) ++n;
    }
    for (const Block& b : body.blocks) count(b);
    return n;
}

}  // namespace internal

namespace {

// wire.161
std::optional<Violation> check_system(const Shape& body, const CallPlan& plan) {
    const bool openai = body.family == WireFamily::kOpenAIChat;
    // The system channel of the family: the system field, or OpenAI's leading system message.
    std::string channel;
    std::size_t turns_from = 0;
    if (!openai) {
        if (body.system == Kind::kString) channel.append(body.system_text).append("\n\n");
        for (const Block& b : body.system_blocks)
            if (b.text_is_string) channel.append(b.text).append("\n\n");
    } else if (!body.messages.empty() &&
               (body.messages[0].role == "system" || body.messages[0].role == "developer")) {
        texts_of(body, body.messages[0], [&](std::string_view t) { channel.append(t).append("\n\n"); });
        turns_from = 1;
    }
    const char* place = openai ? "the leading system message" : "the system field";
    for (std::size_t i = 0; i < plan.system_texts.size(); ++i) {
        const std::string& want = plan.system_texts[i];
        if (!has_non_whitespace(want)) continue;
        if (channel.find(want) == std::string::npos) {
            return broken("wire.161", "system",
                          "system block " + std::to_string(i) +
                              " the core prepared is missing from " + place +
                              ", where this wire family carries the system content");
        }
    }
    const std::string joined = internal::system_joined(plan);
    if (joined.empty()) {
        if (has_non_whitespace(channel)) {
            return broken("wire.161", "system",
                          std::string(place) + " carries text although the core prepared no "
                                               "system content");
        }
        return std::nullopt;
    }
    if (internal::repeats_system(body, turns_from, joined)) {
        return broken("wire.161", "messages",
                      "a turn repeats the system content, which belongs only in " + std::string(place));
    }
    return std::nullopt;
}

// wire.160, wire.165: the family's cache marks in the body (Anthropic's request-level mark of
// automatic caching among them) against the plan's breakpoints.
std::optional<Violation> check_breakpoints(const Shape& body, const CallPlan& plan) {
    if (body.family == WireFamily::kOpenAIChat) return std::nullopt;  // no marks on this wire
    const std::size_t n = internal::breakpoint_marks(body, true);
    if (n == plan.breakpoints) return std::nullopt;
    const char* mark =
        body.family == WireFamily::kAnthropicMessages ? "cache_control" : "cachePoint";
    return broken("wire.160", mark,
                  "the body carries " + std::to_string(n) + " " + mark + " mark(s) but the core's " +
                      "cache plan decided " + std::to_string(plan.breakpoints));
}

// wire.163
std::optional<Violation> check_max_tokens(const Shape& body, const CallPlan& plan) {
    if (plan.max_tokens <= 0) return std::nullopt;
    std::vector<std::pair<const char*, const Num*>> fields;
    if (body.family == WireFamily::kAnthropicMessages) fields.emplace_back("max_tokens", &body.max_tokens);
    if (body.family == WireFamily::kOpenAIChat) {
        const Num& a = body.max_completion_tokens;
        const Num& b = body.max_tokens;
        if (a.present || !b.present) fields.emplace_back("max_completion_tokens", &a);
        if (b.present) fields.emplace_back("max_tokens", &b);
    }
    if (body.family == WireFamily::kBedrockConverse) fields.emplace_back("inferenceConfig.maxTokens", &body.inference_max_tokens);
    for (const auto& [name, v] : fields) {
        if (v->is_int64 && v->value == plan.max_tokens) continue;
        const std::string got = !v->present ? "nothing" : v->is_int64 ? std::to_string(v->value) : "a non-integer";
        return broken("wire.163", name,
                      std::string(name) + " is " + got + " but the core reserved an output budget of " +
                          std::to_string(plan.max_tokens));
    }
    return std::nullopt;
}

}  // namespace

namespace internal {

std::optional<Violation> generic_checks(const OutgoingRequest& request, std::size_t body_bytes,
                                        const CallPlan& plan) {
    if (auto e = check_path(request.path)) return e;
    if (auto e = check_headers(request.headers)) return e;
    if (body_bytes > plan.max_body_bytes) {
        return broken("wire.153", "body",
                      "the body is " + std::to_string(body_bytes) + " bytes, over the cap of " +
                          std::to_string(plan.max_body_bytes) +
                          " (raise request_body_limit or shorten the conversation)");
    }
    return std::nullopt;
}

std::optional<Violation> body_checks(WireFamily family, std::size_t body_bytes, const Shape& shape,
                                     const CallPlan& plan) {
    if (family == WireFamily::kUnknown) return std::nullopt;
    if (auto e = check_size(family, body_bytes)) return e;
    if (auto e = check_system(shape, plan)) return e;
    if (auto e = check_breakpoints(shape, plan)) return e;
    if (auto e = check_max_tokens(shape, plan)) return e;
    return check_shape(shape, Scope::kCore);
}

std::optional<Violation> system_check(const Shape& body, const CallPlan& plan) {
    return check_system(body, plan);
}
std::optional<Violation> max_tokens_check(const Shape& body, const CallPlan& plan) {
    return check_max_tokens(body, plan);
}

std::optional<Violation> audit_parsed(const OutgoingRequest& request, const CallPlan& plan,
                                      ParsedPlanCheck plan_checks, ParsedCheck rules) {
    if (auto e = generic_checks(request, request.body.size(), plan)) return e;
    rapidjson::Document parsed;
    const rapidjson::Value* body = request.parsed;
    if (body == nullptr) {
        if (json_guard::parse(parsed, request.body)) return not_an_object();
        body = &parsed;
    }
    if (!body->IsObject()) return not_an_object();
    if (auto e = plan_checks(*body, plan)) return e;
    return rules(*body);
}

std::optional<Violation> not_an_object() { return broken("wire.152", "body", "the body is not a JSON object"); }

}  // namespace internal

std::optional<Violation> audit_request(WireFamily family, const OutgoingRequest& request,
                                       const CallPlan& plan) {
    if (family == WireFamily::kGeminiGenerate)
        return internal::audit_parsed(request, plan, internal::gemini_plan, internal::check_gemini);
    if (family == WireFamily::kOpenAIResponses)
        return internal::audit_parsed(request, plan, internal::responses_plan,
                                      internal::check_responses);
    if (auto e = internal::generic_checks(request, request.body.size(), plan)) return e;
    // wire.164: one walk over the body (its bytes, validated as JSON on the way, or the value
    // the caller parsed) gathers what every check below reads.
    thread_local Shape shape;
    struct Release {
        ~Release() { internal::release_large_reader(); }
    } release;  // after the checks, which read views into the reader's buffers
    if (request.parsed != nullptr) {
        if (!internal::shape_of(family, *request.parsed, shape)) return internal::not_an_object();
    } else if (internal::shape_of_bytes(family, request.body, request.readable, shape) != internal::BytesRead::kOk) {
        return internal::not_an_object();
    }
    internal::fold_system_messages(shape);  // wire.210
    return internal::body_checks(family, request.body.size(), shape, plan);
}

}  // namespace nucleo::contract
