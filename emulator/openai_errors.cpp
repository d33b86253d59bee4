#include "openai_errors.hpp"

#include "json.hpp"

namespace nucleo::emulator {

using json::quote;

Response envelope(ErrorClass cls, int status, const std::string& type, const ApiError& e) {
    const auto nullable = [](const std::string& s) {
        return s.empty() ? std::string("null") : quote(s);
    };
    return error_response(cls, status,
                          R"({"error":{"message":)" + quote(e.message) + R"(,"type":)" +
                              quote(type) + R"(,"param":)" + nullable(e.param) + R"(,"code":)" +
                              nullable(e.code) + "}}");
}

std::optional<Response> OpenAiDialect::check_auth(const Request& req) const {
    const std::string auth = req.header("authorization");
    if (!auth.starts_with("Bearer ") || auth.size() <= 7) {
        return error(ErrorClass::kAuthentication, "");
    }
    return std::nullopt;
}

std::pair<std::string, std::string> OpenAiDialect::request_id(std::uint64_t n) const {
    return {"x-request-id", "req_emu" + hex_id(n, 25)};
}

Response OpenAiDialect::error(ErrorClass cls, const std::string& message) const {
    const auto text = [&message](const char* fallback) {
        return message.empty() ? std::string(fallback) : message;
    };
    switch (cls) {
        case ErrorClass::kInvalidRequest:
            return envelope(cls, 400, "invalid_request_error", {text("Invalid request"), "", ""});
        case ErrorClass::kAuthentication:
            return envelope(
                cls, 401, "invalid_request_error",
                {text("You didn't provide an API key. You need to provide your API key in an "
                      "Authorization header using Bearer auth (i.e. Authorization: Bearer "
                      "YOUR_KEY), or as the password field (with blank username) if you're "
                      "accessing the API from your browser and are prompted for a username and "
                      "password. You can obtain an API key from "
                      "https://platform.openai.com/account/api-keys."),
                 "", ""});
        case ErrorClass::kRateLimited:
            return envelope(cls, 429, "requests",
                            {text("Rate limit reached for requests per min (RPM): Limit 1, Used "
                                  "1, Requested 1. Please try again in 1s. Visit "
                                  "https://platform.openai.com/account/rate-limits to learn more."),
                             "", "rate_limit_exceeded"});
        case ErrorClass::kServer:
            return envelope(cls, 500, "server_error",
                            {text("The server had an error while processing your request. "
                                  "Sorry about that!"),
                             "", ""});
        case ErrorClass::kOverloaded:
            return envelope(
                cls, 503, "server_error",
                {text("The engine is currently overloaded, please try again later"), "", ""});
    }
    return envelope(cls, 500, "server_error", {text("Internal error"), "", ""});
}

}  // namespace nucleo::emulator
