#include "support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nucleo::anthropic_test {

const ProviderInstance& provider() {
    static const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("anthropic");
    static const ProviderInstance instance = plugin.make_provider("{}");
    return instance;
}

std::filesystem::path fixtures() {
    return ANTHROPIC_FIXTURES;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const std::filesystem::path& path, std::string_view text) {
    std::ofstream(path, std::ios::binary) << text;
}

rapidjson::Document parse(std::string_view json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    EXPECT_FALSE(d.HasParseError()) << "not JSON: " << json.substr(0, 300);
    return d;
}

std::string compact(const rapidjson::Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    value.Accept(w);
    return buf.GetString();
}

std::string pretty(const rapidjson::Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    value.Accept(w);
    return std::string(buf.GetString()) + "\n";
}

int count_cache_control(const rapidjson::Value& value) {
    int n = 0;
    if (value.IsObject()) {
        for (const auto& m : value.GetObject()) {
            if (std::string_view(m.name.GetString()) == "cache_control") ++n;
            n += count_cache_control(m.value);
        }
    } else if (value.IsArray()) {
        for (const auto& v : value.GetArray()) n += count_cache_control(v);
    }
    return n;
}

std::string encode_body(std::string_view provider_request) {
    const rapidjson::Document http = parse(provider().encode(provider_request));
    if (!http.IsObject() || !http.HasMember("body")) {
        ADD_FAILURE() << "the HTTP request has no body";
        return "";
    }
    return compact(http["body"]);
}

bool wire_validator_present() {
    return std::filesystem::exists(std::filesystem::path(NUCLEO_SOURCE_DIR) / ".." / "shared" /
                                   "tools" / "validate_wire.py");
}

}  // namespace nucleo::anthropic_test
