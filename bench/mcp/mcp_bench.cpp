// What the MCP client adds to a tool call and to a server's tool list: a tools/call round trip
// over stdio to a server that answers at once (so the time is the client's, the pipes' and the
// kernel's), the same over Streamable HTTP on loopback (the fixture closes every connection, so
// each call includes a TCP connect and a thread of the client's), and listing 1,000 tools (two
// pages) and declaring them to a conversation.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "http_support.hpp"

#include "nucleo/conversation.hpp"
#include "nucleo/mcp.hpp"

namespace {

nucleo::mcp::ServerSpec server(const char* mode) {
    nucleo::mcp::ServerSpec spec;
    spec.name = "bench";
    spec.command = {MCP_SERVER, mode};
    return spec;
}

void BM_McpCallRoundTrip(benchmark::State& state) {
    nucleo::mcp::McpClient client(server("well"));
    for (auto _ : state) {
        nucleo::mcp::CallResult r = client.call_tool("echo", R"({"text":"ping"})");
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_McpCallRoundTrip)->Unit(benchmark::kMicrosecond);

void BM_McpHttpCallRoundTrip(benchmark::State& state) {
    std::unique_ptr<mcp_test::ServerProcess> process;
    nucleo::mcp::ServerSpec spec;
    spec.name = "bench";
    spec.url = mcp_test::start_hostile_http(process);
    if (spec.url.empty()) {
        state.SkipWithError("the HTTP fixture server named no port");
        return;
    }
    nucleo::mcp::McpClient client(spec);
    for (auto _ : state) {
        nucleo::mcp::CallResult r = client.call_tool("echo", R"({"text":"ping"})");
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK(BM_McpHttpCallRoundTrip)->Unit(benchmark::kMicrosecond);

void BM_McpListAndDeclare1000Tools(benchmark::State& state) {
    nucleo::mcp::McpClient client(server("thousand"));
    for (auto _ : state) {
        const std::vector<nucleo::mcp::Tool> tools = client.list_tools();
        std::vector<nucleo::ToolDefinitionBlock> definitions;
        definitions.reserve(tools.size());
        for (const auto& t : tools)
            definitions.push_back({t.name, t.description, t.input_schema_json});
        nucleo::ConversationContext conversation("c-bench", "alice");
        benchmark::DoNotOptimize(conversation.add_tools(std::move(definitions)));
    }
}
BENCHMARK(BM_McpListAndDeclare1000Tools)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
