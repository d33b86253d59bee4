// Internal interface of nucleo-bedrock between its entry (bedrock.cpp), the request encoder
// (encode.cpp), the answer decoder (decode.cpp) and the AWS event-stream reader
// (event_stream.cpp). Nothing here leaves the plugin: it is built with hidden visibility.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::bedrock {

/// The two parts of an HTTP request (abi.106): the document without "body" and the body's JSON,
/// and where in the body the turns' wire messages lie (abi.108). The views point into the two
/// scratch buffers it holds (limits.134), valid while it lives.
struct EncodedRequest {
    nucleo::providers::Scratch<rapidjson::StringBuffer> head_buffer;
    nucleo::providers::Scratch<rapidjson::StringBuffer> body_buffer;
    std::string_view head;
    std::string_view body;
    nucleo::providers::TurnSpan turns;
};

/// The provider request (docs/provider-abi-documents.md "encode ← provider request") rendered as
/// the HTTP request for POST /model/{modelId}/converse (or /converse-stream). Throws
/// nucleo::plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT) naming what and where when the request
/// cannot be expressed in Converse.
[[nodiscard]] EncodedRequest encode_request(std::string_view provider_request_json);

/// The HTTP answer turned into the normalized response document. A non-2xx answer throws
/// Failure with the mapped status and the HTTP status; a 2xx body off the wire format throws
/// Failure(NUCLEO_ERR_PROTOCOL) quoting its first bytes.
[[nodiscard]] std::string decode_response(int32_t http_status, std::string_view headers_json,
                                          std::string_view body);

/// One message of an AWS event stream (application/vnd.amazon.eventstream): its `:event-type`
/// (or `:exception-type`), its `:message-type` and its payload.
struct StreamEvent {
    std::string event_type;
    std::string message_type;
    std::string payload;
};

/// Splits a whole ConverseStream body into its messages, checking the prelude and message
/// CRC32s. Throws Failure(NUCLEO_ERR_PROTOCOL) on a cut-off or corrupt frame.
[[nodiscard]] std::vector<StreamEvent> read_event_stream(std::string_view body);

/// ABI 1.2 decode_event: the deltas of one ConverseStream event (stream_event.cpp).
void decode_stream_event(std::string_view event_name, std::string_view data,
                         nucleo::plugin::Sink& out);

}  // namespace nucleo::bedrock
