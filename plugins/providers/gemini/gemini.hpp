// The Gemini dialect's three functions (docs/spec/gemini.md): encode renders the core's provider
// request as a generateContent call, decode turns the answer (one JSON body, or the SSE body of a
// streamed answer) into the normalized response, decode_stream_event turns one streamed chunk into
// display deltas. Pure functions of their input; they throw plugin::Failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nucleo/plugin.hpp"

namespace nucleo::gemini {

/// The wire family this dialect declares (wire.149) and stamps on its provider blocks.
inline constexpr std::string_view kWireFamily = "gemini-generate";
/// gemini.6: the provider block kind that carries a thought signature.
inline constexpr std::string_view kSignatureBlock = "thought_signature";

/// gemini.15 (abi.108): where the turns' `contents` entries lie in a body, [begin, end): their
/// entries comma-separated, with no leading or trailing comma.
struct TurnSpan {
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// gemini.1-gemini.8: the HTTP request document's head (without body) and the body bytes;
/// `span`, when given, receives where the turns' entries lie in them (gemini.15).
void encode_request(std::string_view request_json, std::string& head, std::string& body,
                    TurnSpan* span = nullptr);

/// gemini.9-gemini.12: the normalized response of an HTTP answer.
std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body);

/// gemini.12: one SSE chunk's deltas (nothing for a chunk that is not an answer).
void decode_stream_event(std::string_view data, plugin::Sink& out);

}  // namespace nucleo::gemini
