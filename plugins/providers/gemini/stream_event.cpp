// decode_event: one streamGenerateContent chunk → display deltas (gemini.12). Stateless: a chunk
// names no block index, so the thought text is index 0, the answer text index 1 and each call
// 2 + its place in the chunk; the answer kept is decode's over the whole body.
#include <string>
#include <string_view>

#include "gemini.hpp"
#include "json.hpp"

namespace nucleo::gemini {

void decode_stream_event(std::string_view data, plugin::Sink& out) {
    rapidjson::Document d;
    std::string why;
    if (!json::parse(data, d, why) || !d.IsObject() || json::member(d, "error") != nullptr) return;
    plugin::StreamDeltas deltas;
    const json::Value* cands = json::member(d, "candidates");
    if (cands != nullptr && cands->IsArray() && !cands->Empty()) {
        const json::Value* parts = json::member(json::member((*cands)[0], "content"), "parts");
        std::size_t call = 0;
        if (parts != nullptr && parts->IsArray()) {
            for (const auto& p : parts->GetArray()) {
                if (const json::Value* c = json::member(p, "functionCall");
                    c != nullptr && c->IsObject()) {
                    const std::size_t index = 2 + call++;
                    deltas.tool_use(index, json::text(json::member(c, "id")),
                                    json::text(json::member(c, "name")));
                    const json::Value* args = json::member(c, "args");
                    deltas.tool_input(
                        index, args != nullptr && args->IsObject() ? json::compact(*args) : "{}");
                    continue;
                }
                const json::Value* t = json::member(p, "text");
                if (t == nullptr || !t->IsString()) continue;
                const json::Value* thought = json::member(p, "thought");
                if (thought != nullptr && thought->IsTrue())
                    deltas.thinking(0, json::view(*t));
                else
                    deltas.text(1, json::view(*t));
            }
        }
    }
    if (const json::Value* u = json::member(d, "usageMetadata"); u != nullptr && u->IsObject()) {
        const std::int64_t prompt = json::count(json::member(u, "promptTokenCount")) +
                                    json::count(json::member(u, "toolUsePromptTokenCount"));
        const std::int64_t cached = json::count(json::member(u, "cachedContentTokenCount"));
        deltas.usage(prompt > cached ? prompt - cached : 0,
                     json::count(json::member(u, "candidatesTokenCount")) +
                         json::count(json::member(u, "thoughtsTokenCount")),
                     cached, 0);
    }
    deltas.write(out);
}

}  // namespace nucleo::gemini
