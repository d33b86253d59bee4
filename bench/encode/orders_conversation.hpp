// The 2,000-message request bench/encode's OpenAI and Gemini programs encode: one generator, so
// the two dialects are measured on the same conversation (bench/RESULTS.md).
#pragma once

#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nucleo::bench {

inline std::string quoted(const std::string& s) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return b.GetString();
}

/// `messages` turns shaped like an agent's working conversation: user questions, assistant answers,
/// and every fifth exchange a tool call with its result (messages alternate user/assistant).
inline std::string conversation(int messages) {
    const std::string prose =
        "The quarterly report lists 42 open orders; order 4711 shipped on Monday via DHL, "
        "order 4712 is waiting for stock in warehouse B, and the customer asked whether the "
        "invoice can be split across two cost centres. ";
    std::string turns;
    int call = 0;
    for (int i = 0; i < messages; ++i) {
        const bool user = i % 2 == 0;
        const std::string id = "\"m" + std::to_string(i) + "\"";
        std::string blocks;
        if (!user && i % 10 == 1) {
            const std::string cid = quoted("call_" + std::to_string(++call));
            blocks = R"([{"type":"text","text":"Let me look that up."},{"type":"tool_use","id":)" +
                     cid + R"(,"name":"search_orders","input":{"query":"order 4711","limit":5}}])";
        } else if (user && i % 10 == 2) {
            const std::string cid = quoted("call_" + std::to_string(call));
            blocks = R"([{"type":"tool_result","tool_use_id":)" + cid +
                     R"(,"content":[{"type":"text","text":)" + quoted(prose) +
                     R"(},{"type":"json","json":{"order":4711,"status":"shipped"}}]}])";
        } else {
            blocks = R"([{"type":"text","text":)" + quoted(std::to_string(i) + ". " + prose) + "}]";
        }
        if (!turns.empty()) turns += ",";
        turns += std::string(R"({"role":")") + (user ? "user" : "assistant") +
                 R"(","message_id":)" + id + R"(,"cache":false,"blocks":)" + blocks + "}";
    }
    return R"({"schema_version":1,"model":{"id":"gpt-4.1","wire_model":"gpt-4.1-2025-04-14"},)"
           R"("max_tokens":4096,"thinking":{"active":false,"budget_tokens":0},"stream":false,)"
           R"("cache_ttl":"5m","options":{},"prepared":{"system_blocks":[{"type":"text","text":)" +
           quoted("You are the order desk assistant. " + prose) +
           R"(}],"cache_system":true,"native_tools":true,"cache_plan":{"breakpoints":0,)"
           R"("system_block":null,"turn_anchors":[]},"tool_definitions":[{"name":"search_orders",)"
           R"("description":"Search orders by text.","schema":{"type":"object","properties":)"
           R"({"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}}],)"
           R"("turns":[)" +
           turns + "]}}";
}

}  // namespace nucleo::bench
