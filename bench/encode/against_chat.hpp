// Shared by the encode programs of the dialects measured against the Chat Completions dialect
// (issue target: a 2,000-message request costs the dialect at most 1.5× what it costs
// nucleo-openai, in one run): the conversation of orders_conversation.hpp encoded through the ABI
// by a plugin, and rapidjson's Writer writing the body that plugin wrote from a ready DOM.
// Header-only; each program includes it once.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"
#include "orders_conversation.hpp"

namespace nucleo::bench {

/// One loaded plugin and instance per plugin name, for the whole run.
inline const ProviderInstance& instance(const std::string& plugin) {
    struct Loaded {
        Plugin plugin;
        ProviderInstance instance;
    };
    static std::map<std::string, Loaded> loaded;
    auto it = loaded.find(plugin);
    if (it == loaded.end()) {
        Plugin p = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(plugin);
        ProviderInstance i = p.make_provider("{}");
        it = loaded.emplace(plugin, Loaded{std::move(p), std::move(i)}).first;
    }
    return it->second.instance;
}

inline const std::string& request2000() {
    static const std::string r = conversation(2000);
    return r;
}

/// The 2,000-message request encoded by `plugin` through the ABI.
inline void encode2000(benchmark::State& state, const std::string& plugin) {
    const std::string& in = request2000();
    const ProviderInstance& provider = instance(plugin);
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string out = provider.encode(in);
        bytes = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["out_bytes"] = static_cast<double>(bytes);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

/// rapidjson's Writer writing the body `plugin` wrote for the same request, from a ready DOM.
inline void writer_same_body(benchmark::State& state, const std::string& plugin) {
    rapidjson::Document encoded;
    const std::string out = instance(plugin).encode(request2000());
    encoded.Parse(out.c_str(), out.size());
    const rapidjson::Value& body = encoded["body"];
    for (auto _ : state) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        body.Accept(w);
        benchmark::DoNotOptimize(buffer.GetString());
    }
}

}  // namespace nucleo::bench
