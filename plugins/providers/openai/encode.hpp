// The OpenAI Chat Completions encoder of nucleo-openai: a provider request document in, the HTTP
// request document out (docs/provider-abi-documents.md "encode"). The rendering rules and every
// decision the contract leaves open are listed in openai.cpp's header comment.
#pragma once

#include <string_view>

#include <rapidjson/stringbuffer.h>

#include "provider_common.hpp"

namespace nucleo::openai {

/// Renders `provider_request_json` in two parts (abi.106): {"schema_version":1, "method":"POST",
/// "path", "headers"} into `head` and the body's JSON text into `body`. Throws plugin::Failure NUCLEO_ERR_INVALID_ARGUMENT naming the field, turn
/// or block that cannot be expressed (channel.1: the plugin renders what it
/// is handed and decides nothing, so it refuses rather than repairs). Returns where the turns'
/// wire messages lie in the body (abi.108).
providers::TurnSpan encode_request(std::string_view provider_request_json, rapidjson::StringBuffer& head,
                                   rapidjson::StringBuffer& body);

}  // namespace nucleo::openai
