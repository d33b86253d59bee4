// decode_event (ABI 1.2): the deltas of one Chat Completions stream chunk (`data:
// {chat.completion.chunk}`), so a host sees the answer as it arrives. The answer itself stays
// decode_response's (decode.cpp) over the whole body.
//   choices[0].delta.content                      -> text, block 0
//   choices[0].delta.tool_calls[i] with an id     -> tool_use (id, function.name), block 1 + index
//   choices[0].delta.tool_calls[i].function.arguments -> tool_input, block 1 + index
//   usage (the last chunk, stream_options.include_usage) -> usage, split as decode splits it
// `[DONE]`, an error chunk or data that is not JSON give no deltas.
#include <rapidjson/document.h>

#include "decode.hpp"
#include "nucleo/plugin.hpp"

namespace nucleo::openai {
namespace {

using Value = rapidjson::Value;

const Value* field(const Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string_view text(const Value* v) {
    return v != nullptr && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength())
                                         : std::string_view{};
}

int64_t count(const Value& v, const char* key) {
    const Value* m = field(v, key);
    return m != nullptr && m->IsInt64() ? m->GetInt64() : 0;
}

}  // namespace

void decode_stream_event(std::string_view data, plugin::Sink& out) {
    rapidjson::Document e;
    e.Parse(data.data(), data.size());
    if (e.HasParseError() || !e.IsObject()) return;
    plugin::StreamDeltas deltas;
    const Value* choices = field(e, "choices");
    if (choices != nullptr && choices->IsArray() && !choices->Empty()) {
        if (const Value* delta = field((*choices)[0], "delta")) {
            deltas.text(0, text(field(*delta, "content")));
            const Value* calls = field(*delta, "tool_calls");
            if (calls != nullptr && calls->IsArray()) {
                for (const auto& call : calls->GetArray()) {
                    const Value* i = field(call, "index");
                    const std::size_t block =
                        1 + (i != nullptr && i->IsUint64() ? static_cast<std::size_t>(i->GetUint64()) : 0);
                    const Value* function = field(call, "function");
                    if (const Value* id = field(call, "id"); id != nullptr && id->IsString())
                        deltas.tool_use(block, text(id),
                                        function != nullptr ? text(field(*function, "name")) : "");
                    if (function != nullptr)
                        deltas.tool_input(block, text(field(*function, "arguments")));
                }
            }
        }
    }
    if (const Value* u = field(e, "usage"); u != nullptr && u->IsObject()) {
        int64_t cached = 0;
        if (const Value* details = field(*u, "prompt_tokens_details"))
            cached = count(*details, "cached_tokens");
        deltas.usage(count(*u, "prompt_tokens") - cached, count(*u, "completion_tokens"), cached, 0);
    }
    deltas.write(out);
}

}  // namespace nucleo::openai
