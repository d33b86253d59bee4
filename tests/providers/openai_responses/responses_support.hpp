// Shared helpers of the nucleo-openai-responses tests: the plugin through the core's loader,
// provider requests built from turns, and JSON parsing.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugins.hpp"

namespace nucleo::responses_test {

inline const ProviderInstance& provider() {
    static const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("openai-responses");
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

/// A provider request for `model` (the record's members, a JSON object's inside) with `turns`
/// (a JSON array), the system blocks `system`, `extra` members appended at the top level
/// (",\"stream\":true"), the tool definitions and the cache plan.
inline std::string request(
    const std::string& turns, const std::string& system = "[]", const std::string& extra = "",
    const std::string& tools = "[]", const std::string& model = R"("wire_model":"gpt-6-sol")",
    const std::string& plan = R"({"breakpoints":0,"system_block":null,"turn_anchors":[]})") {
    return R"({"schema_version":1,"model":{)" + model +
           R"(},"max_tokens":2048,"thinking":{"active":false,"budget_tokens":0},"options":{})" +
           extra + R"(,"prepared":{"system_blocks":)" + system +
           R"(,"native_tools":true,"cache_plan":)" + plan + R"(,"tool_definitions":)" + tools +
           R"(,"turns":)" + turns + "}}";
}

/// The encoded HTTP request document.
inline rapidjson::Document encode(const std::string& req) {
    return parse(provider().encode(req));
}

}  // namespace nucleo::responses_test
