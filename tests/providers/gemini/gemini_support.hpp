// Shared helpers of the nucleo-gemini tests: the plugin through the core's loader, provider
// requests built from turns, and JSON parsing.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"

namespace nucleo::gemini_test {

inline const ProviderInstance& provider() {
    static const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("gemini");
    static const ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

inline rapidjson::Document parse(const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str(), json.size());
    EXPECT_FALSE(d.HasParseError()) << "not JSON: " << json.substr(0, 300);
    return d;
}

inline std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

/// The default `thinking` member of a request: no thinking.
inline constexpr const char* kNoThinking = R"({"active":false,"budget_tokens":0})";

/// A provider request for `wire_model` with `turns` (a JSON array), the system blocks `system`
/// (a JSON array), `extra` members appended at the top level (",\"stream\":true") and the
/// `thinking` member.
inline std::string request(const std::string& turns, const std::string& system = "[]",
                           const std::string& extra = "", const std::string& tools = "[]",
                           const std::string& wire_model = "gemini-3.1-pro-preview",
                           const std::string& thinking = kNoThinking) {
    return R"({"schema_version":1,"model":{"id":"m","wire_model":")" + wire_model +
           R"("},"max_tokens":2048,"thinking":)" + thinking + R"(,"options":{})" + extra +
           R"(,"prepared":{"system_blocks":)" + system +
           R"(,"native_tools":true,"cache_plan":{"breakpoints":0,"system_block":null,"turn_anchors":[]},)"
           R"("tool_definitions":)" +
           tools + R"(,"turns":)" + turns + "}}";
}

/// The encoded HTTP request document.
inline rapidjson::Document encode(const std::string& req) {
    return parse(provider().encode(req));
}

}  // namespace nucleo::gemini_test
