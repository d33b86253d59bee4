// The OpenAI Responses dialect's three functions (docs/spec/openai-responses.md): encode renders
// the core's provider request as a POST /responses call, decode turns the answer (one JSON body,
// or the SSE body of a streamed answer) into the normalized response, decode_stream_event turns
// one streamed event into display deltas. Pure functions of their input; they throw
// plugin::Failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nucleo/plugin.hpp"

namespace nucleo::responses {

/// The wire family this dialect declares (wire.149) and stamps on its provider blocks.
inline constexpr std::string_view kWireFamily = "openai-responses";
/// responses.5: the provider block kind that carries a reasoning item as it came.
inline constexpr std::string_view kReasoningBlock = "reasoning_item";

/// responses.5: a model's family for its reasoning items: the wire model without a dated
/// snapshot suffix ("-YYYY-MM-DD").
std::string_view model_family(std::string_view wire_model);

/// responses.15 (abi.108): where the turns' input items lie in a body, [begin, end): their items
/// comma-separated, with no leading or trailing comma.
struct TurnSpan {
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// responses.1-responses.8: the HTTP request document's head (without body) into `head`; returns
/// the body bytes, a view of this thread's buffer valid until the thread's next encode_request.
/// `span`, when given, receives where the turns' input items lie in them (responses.15).
std::string_view encode_request(std::string_view request_json, std::string& head,
                                TurnSpan* span = nullptr);

/// responses.9-responses.12: the normalized response of an HTTP answer.
std::string decode_response(int32_t http_status, std::string_view headers_json,
                            std::string_view body);

/// responses.12: one SSE event's deltas (nothing for an event that carries none).
void decode_stream_event(std::string_view data, plugin::Sink& out);

}  // namespace nucleo::responses
