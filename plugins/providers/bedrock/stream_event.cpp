// decode_event (ABI 1.2): the deltas of one ConverseStream event (an AWS event-stream message the
// host framed: its :event-type header and JSON payload), so a host sees the answer as it
// arrives. The answer itself stays decode_response's (decode.cpp) over the whole body.
//   contentBlockStart {start.toolUse{toolUseId,name}}  -> tool_use
//   contentBlockDelta {delta.text}                     -> text
//   contentBlockDelta {delta.toolUse.input}            -> tool_input
//   contentBlockDelta {delta.reasoningContent.text}    -> thinking
//   metadata {usage}                                   -> usage, split as decode splits it
// messageStart, contentBlockStop, messageStop, exceptions and payloads that are not JSON give no
// deltas. The block is the event's contentBlockIndex.
#include <rapidjson/document.h>

#include "converse.hpp"
#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::bedrock {
namespace {

using providers::member;
using providers::text_or_empty;
using Value = rapidjson::Value;

int64_t count(const Value* v, const char* key) {
    return providers::count_or_zero(member(v, key));
}

}  // namespace

void decode_stream_event(std::string_view event_name, std::string_view data,
                         nucleo::plugin::Sink& out) {
    rapidjson::Document e;
    // limits.120: iterative and depth-bounded; an event off its format carries no delta.
    if (json_guard::parse<rapidjson::kParseValidateEncodingFlag>(e, data) || !e.IsObject()) return;
    const Value* index_value = member(&e, "contentBlockIndex");
    const std::size_t index = index_value != nullptr && index_value->IsUint64()
                                  ? static_cast<std::size_t>(index_value->GetUint64())
                                  : 0;
    nucleo::plugin::StreamDeltas deltas;
    if (event_name == "contentBlockStart") {
        if (const Value* tool = member(member(&e, "start"), "toolUse"))
            deltas.tool_use(index, text_or_empty(member(tool, "toolUseId")), text_or_empty(member(tool, "name")));
    } else if (event_name == "contentBlockDelta") {
        const Value* delta = member(&e, "delta");
        deltas.text(index, text_or_empty(member(delta, "text")));
        deltas.tool_input(index, text_or_empty(member(member(delta, "toolUse"), "input")));
        deltas.thinking(index, text_or_empty(member(member(delta, "reasoningContent"), "text")));
    } else if (event_name == "metadata") {
        if (const Value* u = member(&e, "usage")) {
            deltas.usage(count(u, "inputTokens"), count(u, "outputTokens"),
                         count(u, "cacheReadInputTokens"), count(u, "cacheWriteInputTokens"));
        }
    }
    deltas.write(out);
}

}  // namespace nucleo::bedrock
