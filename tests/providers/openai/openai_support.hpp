// Shared helpers of the nucleo-openai tests: the plugin loaded through the core's loader, the
// golden fixtures, JSON comparison, and the provider requests the emulator tests send (built here
// so the schema test can validate exactly those bodies without a network).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "emulator_client.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::openai_test {

namespace fs = std::filesystem;

inline fs::path fixtures() {
    return fs::path(NUCLEO_SOURCE_DIR) / "tests" / "providers" / "openai" / "fixtures";
}

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot read " << p;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
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
    return std::string(b.GetString(), b.GetSize());
}

inline std::string pretty(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(b);
    w.SetIndent(' ', 2);
    v.Accept(w);
    return std::string(b.GetString(), b.GetSize());
}

/// The golden comparison: `actual` equals the fixture file `expected_file` as JSON values (member
/// order aside), both shown in full on a mismatch.
inline void expect_golden(const std::string& actual, const fs::path& expected_file) {
    const rapidjson::Document expected = parse(read_file(expected_file));
    const rapidjson::Document got = parse(actual);
    EXPECT_TRUE(got == expected) << expected_file.filename() << " expected:\n"
                                 << pretty(expected) << "\nactual:\n"
                                 << pretty(got);
}

/// The plugin as the core loads it: from the build's plugin folder, through PluginLoader.
inline const ProviderInstance& provider() {
    static const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("openai");
    static const ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

/// The compact wire body of an encoded HTTP request document.
inline std::string body_of(const std::string& http_request) {
    const rapidjson::Document d = parse(http_request);
    return compact(d["body"]);
}

/// Names of the fixtures in `folder` ending in `suffix`, without it, sorted.
inline std::vector<std::string> fixture_names(const std::string& folder,
                                              const std::string& suffix) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fixtures() / folder)) {
        const std::string f = e.path().filename().string();
        if (f.size() > suffix.size() && f.ends_with(suffix)) {
            names.push_back(f.substr(0, f.size() - suffix.size()));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

/// Validates wire bodies against the published CreateChatCompletionRequest schema with
/// ../shared/tools/validate_wire.py. Without ../shared it says so and checks nothing (never a
/// faked pass of that check).
inline void expect_schema_valid(const std::vector<std::string>& bodies) {
    const fs::path tool =
        fs::path(NUCLEO_SOURCE_DIR) / ".." / "shared" / "tools" / "validate_wire.py";
    if (!fs::exists(tool)) {
        std::cout << "[   NOTE   ] ../shared/tools/validate_wire.py is absent: the "
                  << bodies.size()
                  << " request bodies were NOT validated against the published schema\n";
        return;
    }
    EXPECT_EQ(emulator_test::validate_wire("openai", bodies), "");
}

// ---- provider requests (docs/provider-abi-documents.md "encode ← provider request") --------

/// A provider request around `prepared` (a PreparedConversation as JSON text).
inline std::string provider_request(const std::string& prepared, bool stream = false,
                                    const std::string& wire_model = "gpt-4.1-2025-04-14") {
    return R"({"schema_version":1,"model":{"id":"gpt-4.1","wire_model":")" + wire_model +
           R"("},"max_tokens":1024,"thinking":{"active":false,"budget_tokens":0},"stream":)" +
           (stream ? "true" : "false") + R"(,"cache_ttl":"5m","options":{},"prepared":)" +
           prepared + "}";
}

inline std::string json_string(const std::string& s) {
    rapidjson::Value v(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return compact(v);
}

inline const char* kSearchTool =
    R"({"name":"search_orders","description":"Search orders by text.",)"
    R"("schema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}})";

/// A user question with the search tool declared: the emulator answers with a tool call.
inline std::string tool_question_request(bool stream = false) {
    return provider_request(
        std::string(R"({"system_blocks":[{"type":"text","text":"You look orders up."}],)"
                    R"("tool_definitions":[)") +
            kSearchTool +
            R"(],"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text",)"
            R"("text":"Where is order 42"}]}]})",
        stream);
}

/// The same conversation one round later: the model's call and its result (is_error optional).
inline std::string tool_result_request(const std::string& call_id, const std::string& input_json,
                                       const std::string& result, bool is_error = false) {
    return provider_request(
        std::string(R"({"system_blocks":[{"type":"text","text":"You look orders up."}],)"
                    R"("tool_definitions":[)") +
        kSearchTool +
        R"(],"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text",)"
        R"("text":"Where is order 42"}]},)"
        R"({"role":"assistant","message_id":"m2","blocks":[{"type":"tool_use","id":)" +
        json_string(call_id) + R"(,"name":"search_orders","input":)" + input_json +
        R"(}]},{"role":"user","message_id":"m3","blocks":[{"type":"tool_result","tool_use_id":)" +
        json_string(call_id) + R"(,"is_error":)" + (is_error ? "true" : "false") +
        R"(,"content":[{"type":"text","text":)" + json_string(result) + "}]}]}]}");
}

/// A conversation that grows by one exchange per `rounds`, behind a long standing objective
/// (past the 1,024-token minimum OpenAI caches from).
inline std::string growing_request(int rounds) {
    std::string objective;
    for (int i = 0; objective.size() < 6000; ++i) {
        objective += "Rule " + std::to_string(i) + ": answer precisely and cite the order number. ";
    }
    std::string turns =
        R"([{"role":"user","message_id":"u0","blocks":[{"type":"text","text":"Hello"}]})";
    for (int r = 1; r <= rounds; ++r) {
        const std::string n = std::to_string(r);
        turns += R"(,{"role":"assistant","message_id":"a)" + n +
                 R"(","blocks":[{"type":"text","text":"Answer )" + n +
                 R"("}]},{"role":"user","message_id":"u)" + n +
                 R"(","blocks":[{"type":"text","text":"Question )" + n + R"("}]})";
    }
    return provider_request(R"({"system_blocks":[{"type":"text","text":)" + json_string(objective) +
                            R"(}],"turns":)" + turns + "]}");
}

/// An assistant tool call left without its result: the provider must refuse it.
inline std::string unanswered_call_request() {
    return provider_request(
        std::string(R"({"tool_definitions":[)") + kSearchTool +
        R"(],"turns":[{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Hi"}]},)"
        R"({"role":"assistant","message_id":"m2","blocks":[{"type":"tool_use","id":"call_x",)"
        R"("name":"search_orders","input":{"query":"x"}}]},)"
        R"({"role":"user","message_id":"m3","blocks":[{"type":"text","text":"Well?"}]}]})");
}

}  // namespace nucleo::openai_test
