// Internal to nucleo-anthropic: the two pure functions behind the plugin's slots, so the plugin
// class stays a thin adapter and each half can be read on its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nucleo/plugin.hpp"

namespace nucleo::anthropic {

/// The wire family of the Messages API (capabilities `wire_family`): a provider block of it is
/// sent back by this plugin (answers.110).
inline constexpr std::string_view kWireFamily = "anthropic-messages";

/// Writes the HTTP request (docs/provider-abi-documents.md "encode → HTTP request") for one
/// provider request document in two parts (abi.106): `head` receives the document without
/// "body", `body` the body's JSON text. Throws nucleo::plugin::Failure(NUCLEO_ERR_INVALID_ARGUMENT)
/// naming what cannot be expressed in the Messages API and where.
void encode_request(std::string_view provider_request_json, nucleo::plugin::Sink& head,
                    nucleo::plugin::Sink& body);

/// encode_request's head and body with the body cut around the turns' wire messages (abi.108).
void encode_split(std::string_view provider_request_json, nucleo::plugin::Sink& head,
                  nucleo::plugin::Sink& open, nucleo::plugin::Sink& turns, nucleo::plugin::Sink& close);

/// The normalized response for one HTTP answer, or a Failure carrying the mapped status, the
/// HTTP status and the provider's own error text (docs/provider-abi-documents.md "decode").
std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body);

/// ABI 1.2 decode_event: the deltas of one server-sent event (stream_event.cpp).
void decode_stream_event(std::string_view event_name, std::string_view data,
                         nucleo::plugin::Sink& out);

}  // namespace nucleo::anthropic
