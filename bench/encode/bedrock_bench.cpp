// Encode benchmark of nucleo-bedrock: a 2,000-message conversation
// encoded through the ABI (PluginLoader -> ProviderInstance::encode -> the plugin's encode slot
// -> host sink) against rapidjson's Writer writing the same output body from a ready DOM, in one
// run. Target: encode <= 2x the Writer. Both tool dialects of Converse are measured: native
// (toolConfig, toolUse/toolResult blocks) and text (tools.11: the default for Converse: calls and
// results rendered as text). The ratios are printed after the runs (bench/RESULTS.md).
// The plugin is built with RapidJSON's SSE2 scanning on x86-64 (plugins/providers/bedrock); the
// Writer baseline gets the same, so both sides run the same RapidJSON.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"
#include "ratio_main.hpp"

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void text_block(Writer& w, const std::string& text) {
    w.StartObject();
    w.Key("type");
    w.String("text");
    w.Key("text");
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    w.EndObject();
}

/// The provider request of a 2,000-message agent conversation: questions and answers with
/// quotes, line breaks and non-ASCII text; every tenth exchange a tool call and its result; a
/// system breakpoint and three turn anchors, as the core's plan would place them.
std::string provider_request(int messages, bool native) {
    const std::string prose =
        "The quarterly report lists 42 open orders; order 4711 shipped on Monday via DHL,\n"
        "order 4712 waits for stock in warehouse \"B\" (Köln), and the customer asked whether "
        "the invoice can be split across two cost centres. ";
    rapidjson::StringBuffer b;
    Writer w(b);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("model");
    w.StartObject();
    w.Key("id");
    w.String("bedrock-claude-haiku-4-5");
    w.Key("wire_model");
    w.String("global.anthropic.claude-haiku-4-5-20251001-v1:0");
    w.EndObject();
    w.Key("max_tokens");
    w.Int(4096);
    w.Key("thinking");
    w.StartObject();
    w.Key("active");
    w.Bool(false);
    w.Key("budget_tokens");
    w.Int(0);
    w.EndObject();
    w.Key("stream");
    w.Bool(false);
    w.Key("cache_ttl");
    w.String("5m");
    w.Key("options");
    w.StartObject();
    w.EndObject();
    w.Key("prepared");
    w.StartObject();
    w.Key("system_blocks");
    w.StartArray();
    text_block(w, "You are the order desk assistant. " + prose);
    w.EndArray();
    w.Key("cache_system");
    w.Bool(true);
    w.Key("native_tools");
    w.Bool(native);
    w.Key("cache_plan");
    w.StartObject();
    w.Key("breakpoints");
    w.Int(4);
    w.Key("system_block");
    w.Int(0);
    w.Key("turn_anchors");
    w.StartArray();
    for (const int turn : {1000, 1500, messages - 2}) {
        w.StartObject();
        w.Key("turn");
        w.Int(turn);
        w.Key("block");
        w.Int(0);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.Key("tool_definitions");
    w.StartArray();
    if (native) {
        w.StartObject();
        w.Key("name");
        w.String("search_orders");
        w.Key("description");
        w.String("Search orders by text.");
        w.Key("schema");
        w.StartObject();
        w.Key("type");
        w.String("object");
        w.Key("properties");
        w.StartObject();
        w.Key("query");
        w.StartObject();
        w.Key("type");
        w.String("string");
        w.EndObject();
        w.EndObject();
        w.EndObject();
        w.EndObject();
    }
    w.EndArray();
    w.Key("turns");
    w.StartArray();
    int call = 0;
    for (int i = 0; i < messages; ++i) {
        const bool user = i % 2 == 0;
        w.StartObject();
        w.Key("role");
        w.String(user ? "user" : "assistant");
        w.Key("message_id");
        const std::string id = "m" + std::to_string(i);
        w.String(id.c_str());
        w.Key("cache");
        w.Bool(i == 1000 || i == 1500 || i == messages - 2);
        w.Key("blocks");
        w.StartArray();
        if (!user && i % 10 == 1) {
            ++call;
            const std::string cid = "call_search_orders_0_t" + std::to_string(i);
            text_block(
                w, native
                       ? "Let me look that up."
                       : R"({"tool_calls":[{"name":"search_orders","input":{"query":"4711"}}]})");
            w.StartObject();
            w.Key("type");
            w.String("tool_use");
            w.Key("id");
            w.String(cid.c_str());
            w.Key("name");
            w.String("search_orders");
            w.Key("input");
            w.StartObject();
            w.Key("query");
            w.String("4711");
            w.EndObject();
            w.EndObject();
        } else if (user && i % 10 == 2) {
            const std::string cid = "call_search_orders_0_t" + std::to_string(i - 1);
            w.StartObject();
            w.Key("type");
            w.String("tool_result");
            w.Key("tool_use_id");
            w.String(cid.c_str());
            w.Key("content");
            w.StartArray();
            text_block(w, prose);
            w.StartObject();
            w.Key("type");
            w.String("json");
            w.Key("json");
            w.StartObject();
            w.Key("order");
            w.Int(4711);
            w.Key("status");
            w.String("shipped");
            w.EndObject();
            w.EndObject();
            w.EndArray();
            w.EndObject();
        } else {
            text_block(w, std::to_string(i) + ". " + prose);
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndObject();
    return {b.GetString(), b.GetSize()};
}

const nucleo::ProviderInstance& bedrock() {
    static const nucleo::Plugin plugin =
        nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("bedrock");
    static const nucleo::ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

const std::string& request(bool native) {
    static const std::string n = provider_request(2000, true);
    static const std::string t = provider_request(2000, false);
    return native ? n : t;
}

void encode_through_abi(benchmark::State& state, bool native) {
    const std::string& in = request(native);
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string out = bedrock().encode(in);
        bytes = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["in_bytes"] = static_cast<double>(in.size());
    state.counters["out_bytes"] = static_cast<double>(bytes);
}

void writer_same_body(benchmark::State& state, bool native) {
    const std::string out = bedrock().encode(request(native));
    rapidjson::Document encoded;
    encoded.Parse(out.c_str(), out.size());
    const rapidjson::Value& body = encoded["body"];
    std::size_t bytes = 0;
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        Writer w(buffer);
        body.Accept(w);
        bytes = buffer.GetSize();
        benchmark::DoNotOptimize(buffer.GetString());
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
}

void BM_BedrockEncode2000Native(benchmark::State& s) {
    encode_through_abi(s, true);
}
void BM_WriterSameBodyNative(benchmark::State& s) {
    writer_same_body(s, true);
}
void BM_BedrockEncode2000Text(benchmark::State& s) {
    encode_through_abi(s, false);
}
void BM_WriterSameBodyText(benchmark::State& s) {
    writer_same_body(s, false);
}
BENCHMARK(BM_BedrockEncode2000Native)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WriterSameBodyNative)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BedrockEncode2000Text)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WriterSameBodyText)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
    std::printf("request: %zu bytes native, %zu bytes text, 2000 messages each\n",
                request(true).size(), request(false).size());
    return nucleo::bench::run_with_ratios(
        argc, argv,
        {{"BM_BedrockEncode2000Native", "BM_WriterSameBodyNative"},
         {"BM_BedrockEncode2000Text", "BM_WriterSameBodyText"}});
}
