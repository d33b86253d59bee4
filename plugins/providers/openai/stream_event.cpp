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
#include "provider_common.hpp"

namespace nucleo::openai {
namespace {

using providers::member;
using providers::text_or_empty;
using Value = rapidjson::Value;

int64_t count(const Value& v, const char* key) {
    return providers::count_or_zero(member(v, key));
}

}  // namespace

void decode_stream_event(std::string_view data, plugin::Sink& out) {
    rapidjson::Document e;
    // limits.120: iterative and depth-bounded; an event off its format carries no delta.
    if (json_guard::parse<rapidjson::kParseValidateEncodingFlag>(e, data) || !e.IsObject()) return;
    plugin::StreamDeltas deltas;
    const Value* choices = member(e, "choices");
    if (choices != nullptr && choices->IsArray() && !choices->Empty()) {
        if (const Value* delta = member((*choices)[0], "delta")) {
            deltas.text(0, text_or_empty(member(*delta, "content")));
            const Value* calls = member(*delta, "tool_calls");
            if (calls != nullptr && calls->IsArray()) {
                for (const auto& call : calls->GetArray()) {
                    const Value* i = member(call, "index");
                    const std::size_t block = 1 + (i != nullptr && i->IsUint64()
                                                       ? static_cast<std::size_t>(i->GetUint64())
                                                       : 0);
                    const Value* function = member(call, "function");
                    if (const Value* id = member(call, "id"); id != nullptr && id->IsString())
                        deltas.tool_use(
                            block, text_or_empty(id),
                            function != nullptr ? text_or_empty(member(*function, "name")) : "");
                    if (function != nullptr)
                        deltas.tool_input(block, text_or_empty(member(*function, "arguments")));
                }
            }
        }
    }
    if (const Value* u = member(e, "usage"); u != nullptr && u->IsObject()) {
        int64_t cached = 0;
        int64_t written = 0;
        if (const Value* details = member(*u, "prompt_tokens_details")) {
            cached = count(*details, "cached_tokens");
            written = count(*details, "cache_write_tokens");  // caching.117
        }
        deltas.usage(count(*u, "prompt_tokens") - cached - written, count(*u, "completion_tokens"),
                     cached, written);
    }
    deltas.write(out);
}

}  // namespace nucleo::openai
