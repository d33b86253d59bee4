// decode_event: one Responses stream event → display deltas (responses.12). Each output item is
// one block, at its output_index: reasoning summary text is thinking, output text and refusals
// are text, a function call is a tool_use with its arguments as they stream; the terminal event
// carries the usage.
#include <cstdint>
#include <string>
#include <string_view>

#include "json.hpp"
#include "responses.hpp"

namespace nucleo::responses {

void decode_stream_event(std::string_view data, plugin::Sink& out) {
    rapidjson::Document d;
    std::string why;
    if (!json::parse(data, d, why) || !d.IsObject()) return;
    const std::string_view type = json::text(json::member(d, "type"));
    const json::Value* index_value = json::member(d, "output_index");
    const std::int64_t index = json::count(index_value);
    const std::string_view delta = json::text(json::member(d, "delta"));
    const bool is_delta = type.ends_with(".delta");
    if (is_delta && delta.empty()) return;
    plugin::StreamDeltas deltas;
    const auto at = static_cast<std::size_t>(index);
    if (type == "response.output_text.delta") {
        deltas.text(at, delta);
    } else if (type == "response.refusal.delta") {
        deltas.text(at, delta);
    } else if (type == "response.reasoning_summary_text.delta") {
        deltas.thinking(at, delta);
    } else if (type == "response.output_item.added") {
        const json::Value* item = json::member(d, "item");
        if (json::text(json::member(item, "type")) != "function_call") return;
        deltas.tool_use(at, json::text(json::member(item, "call_id")),
                        json::text(json::member(item, "name")));
        if (const std::string_view args = json::text(json::member(item, "arguments"));
            !args.empty())
            deltas.tool_input(at, args);
    } else if (type == "response.function_call_arguments.delta") {
        deltas.tool_input(at, delta);
    } else if (type == "response.completed" || type == "response.incomplete") {
        const json::Value* u = json::member(json::member(d, "response"), "usage");
        if (u == nullptr || !u->IsObject()) return;
        const std::int64_t input = json::count(json::member(u, "input_tokens"));
        const json::Value* details = json::member(u, "input_tokens_details");
        const std::int64_t cached = json::count(json::member(details, "cached_tokens"));
        const std::int64_t written = json::count(json::member(details, "cache_write_tokens"));
        deltas.usage(input > cached + written ? input - cached - written : 0,
                     json::count(json::member(u, "output_tokens")), cached, written);
    } else {
        return;
    }
    deltas.write(out);
}

}  // namespace nucleo::responses
