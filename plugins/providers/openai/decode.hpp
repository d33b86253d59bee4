// The OpenAI Chat Completions decoder of nucleo-openai: an HTTP answer in, the normalized
// response out (docs/provider-abi-documents.md "decode"). Decisions are listed in openai.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nucleo/plugin.hpp"

namespace nucleo::openai {

/// The normalized response of a 2xx answer (a chat.completion object, or the
/// `data: {chat.completion.chunk}` stream of a streamed call). Throws plugin::Failure:
/// a non-2xx answer with its mapped status (429 rate limited, 5xx/529 overloaded, 400/413/422
/// invalid argument, 401/403 config, 404 not found) and the provider's own message; a 2xx body
/// that is not JSON, is cut off or lacks a field with NUCLEO_ERR_PROTOCOL naming what and quoting
/// the first bytes. err->http_status is the answer's status in both cases.
std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body);

/// ABI 1.2 decode_event: the deltas of one stream chunk (stream_event.cpp).
void decode_stream_event(std::string_view data, plugin::Sink& out);

}  // namespace nucleo::openai
