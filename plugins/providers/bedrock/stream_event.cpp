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

namespace nucleo::bedrock {
namespace {

using Value = rapidjson::Value;

const Value* field(const Value* v, const char* key) {
    if (v == nullptr || !v->IsObject()) return nullptr;
    const auto it = v->FindMember(key);
    return it == v->MemberEnd() ? nullptr : &it->value;
}

std::string_view text(const Value* v) {
    return v != nullptr && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                                         : std::string_view{};
}

int64_t count(const Value* v, const char* key) {
    const Value* m = field(v, key);
    return m != nullptr && m->IsInt64() ? m->GetInt64() : 0;
}

}  // namespace

void decode_stream_event(std::string_view event_name, std::string_view data,
                         nucleo::plugin::Sink& out) {
    rapidjson::Document e;
    e.Parse(data.data(), data.size());
    if (e.HasParseError() || !e.IsObject()) return;
    const Value* index_value = field(&e, "contentBlockIndex");
    const std::size_t index = index_value != nullptr && index_value->IsUint64()
                                  ? static_cast<std::size_t>(index_value->GetUint64())
                                  : 0;
    nucleo::plugin::StreamDeltas deltas;
    if (event_name == "contentBlockStart") {
        if (const Value* tool = field(field(&e, "start"), "toolUse"))
            deltas.tool_use(index, text(field(tool, "toolUseId")), text(field(tool, "name")));
    } else if (event_name == "contentBlockDelta") {
        const Value* delta = field(&e, "delta");
        deltas.text(index, text(field(delta, "text")));
        deltas.tool_input(index, text(field(field(delta, "toolUse"), "input")));
        deltas.thinking(index, text(field(field(delta, "reasoningContent"), "text")));
    } else if (event_name == "metadata") {
        if (const Value* u = field(&e, "usage")) {
            deltas.usage(count(u, "inputTokens"), count(u, "outputTokens"),
                         count(u, "cacheReadInputTokens"), count(u, "cacheWriteInputTokens"));
        }
    }
    deltas.write(out);
}

}  // namespace nucleo::bedrock
