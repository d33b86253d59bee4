// decode_event (ABI 1.2): the deltas of one Anthropic server-sent event, so a host sees the
// answer as it arrives. The answer itself stays decode_response's (decode.cpp) over the whole body.
//   message_start         -> usage (the input side: uncached, cache reads, cache writes)
//   content_block_start   -> tool_use (id, name) for a tool call; text / thinking when the block
//                            opens with content
//   content_block_delta   -> text_delta, thinking_delta, input_json_delta (signature_delta: none)
//   message_delta         -> usage (cumulative: output_tokens so far, and the input counts again)
// Anything else (ping, *_stop, error, an event that is not JSON) gives no deltas.
#include <rapidjson/document.h>

#include "anthropic.hpp"
#include "provider_common.hpp"

namespace nucleo::anthropic {
namespace {

using providers::member;
using Value = rapidjson::Value;

std::string_view text(const Value& v, const char* key) {
    return providers::text_or_empty(member(v, key));
}

int64_t count(const Value& v, const char* key) {
    return providers::count_or_zero(member(v, key));
}

void usage(const Value& u, nucleo::plugin::StreamDeltas& out) {
    out.usage(count(u, "input_tokens"), count(u, "output_tokens"),
              count(u, "cache_read_input_tokens"), count(u, "cache_creation_input_tokens"));
}

}  // namespace

void decode_stream_event(std::string_view /*event_name*/, std::string_view data,
                         nucleo::plugin::Sink& out) {
    rapidjson::Document e;
    // limits.120: iterative and depth-bounded; an event off its format carries no delta.
    if (json_guard::parse<rapidjson::kParseValidateEncodingFlag>(e, data) || !e.IsObject()) return;
    const std::string_view type = text(e, "type");
    const Value* index_value = member(e, "index");
    const std::size_t index = index_value != nullptr && index_value->IsUint64()
                                  ? static_cast<std::size_t>(index_value->GetUint64())
                                  : 0;
    nucleo::plugin::StreamDeltas deltas;
    if (type == "message_start") {
        if (const Value* m = member(e, "message")) {
            if (const Value* u = member(*m, "usage")) usage(*u, deltas);
        }
    } else if (type == "content_block_start") {
        if (const Value* b = member(e, "content_block")) {
            const std::string_view kind = text(*b, "type");
            if (kind == "tool_use") deltas.tool_use(index, text(*b, "id"), text(*b, "name"));
            if (kind == "text") deltas.text(index, text(*b, "text"));
            if (kind == "thinking") deltas.thinking(index, text(*b, "thinking"));
        }
    } else if (type == "content_block_delta") {
        if (const Value* d = member(e, "delta")) {
            const std::string_view kind = text(*d, "type");
            if (kind == "text_delta") deltas.text(index, text(*d, "text"));
            if (kind == "thinking_delta") deltas.thinking(index, text(*d, "thinking"));
            if (kind == "input_json_delta") deltas.tool_input(index, text(*d, "partial_json"));
        }
    } else if (type == "message_delta") {
        if (const Value* u = member(e, "usage")) usage(*u, deltas);
    }
    deltas.write(out);
}

}  // namespace nucleo::anthropic
