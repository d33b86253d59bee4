// OpenAI's error envelope, credential check and request ids, shared by the Chat Completions
// (openai.cpp) and Responses (responses.cpp, responses.30) dialects of nucleo-emulator:
// {"error": {"message", "type", "param", "code"}} with the API's usual texts per class.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "emulator.hpp"

namespace nucleo::emulator {

/// error.message, error.param and error.code of an OpenAI error ("" renders as null).
struct ApiError {
    std::string message;
    std::string param;
    std::string code;
};

/// An OpenAI error answer with `status` and error.type `type`.
Response envelope(ErrorClass cls, int status, const std::string& type, const ApiError& e);

/// What both OpenAI dialects answer alike: the bearer key, x-request-id, the error texts.
class OpenAiDialect : public Dialect {
  public:
    std::optional<Response> check_auth(const Request& req) const override;
    std::pair<std::string, std::string> request_id(std::uint64_t n) const override;
    Response error(ErrorClass cls, const std::string& message) const override;
};

}  // namespace nucleo::emulator
