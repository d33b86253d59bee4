#include "support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "emulator_client.hpp"

namespace nucleo::bedrock_test {

namespace fs = std::filesystem;

const ProviderInstance& provider() {
    static const ProviderInstance instance = [] {
        const PluginLoader loader({fs::path(NUCLEO_BUILD_PLUGIN_DIR)});
        const Plugin plugin =
            loader.load((fs::path(NUCLEO_BUILD_PLUGIN_DIR) / "nucleo-bedrock.so").string());
        return plugin.make_provider("{}");
    }();
    return instance;
}

fs::path fixture_dir(std::string_view sub) {
    return fs::path(NUCLEO_SOURCE_DIR) / "tests" / "providers" / "bedrock" / "fixtures" / sub;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const fs::path& path, std::string_view text) {
    std::ofstream(path, std::ios::binary) << text;
}

rapidjson::Document parse(std::string_view json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    EXPECT_FALSE(d.HasParseError())
        << "not JSON at byte " << d.GetErrorOffset() << ": " << json.substr(0, 300);
    if (d.HasParseError()) d.SetNull();
    return d;
}

std::string pretty(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(b);
    w.SetIndent(' ', 2);
    v.Accept(w);
    return std::string(b.GetString(), b.GetSize()) + "\n";
}

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

std::vector<std::string> fixture_names(std::string_view sub, std::string_view suffix) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(fixture_dir(sub))) {
        const std::string name = entry.path().filename().string();
        if (name.size() > suffix.size() && name.ends_with(suffix)) {
            names.push_back(name.substr(0, name.size() - suffix.size()));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

rapidjson::Document encode(std::string_view provider_request) {
    return parse(provider().encode(provider_request));
}

namespace {
void walk(const rapidjson::Value& v, std::size_t& points, std::vector<std::string>* texts) {
    if (v.IsObject()) {
        for (const auto& m : v.GetObject()) {
            const std::string_view name(m.name.GetString(), m.name.GetStringLength());
            if (name == "cachePoint") ++points;
            if (texts != nullptr && name == "text" && m.value.IsString()) {
                texts->emplace_back(m.value.GetString(), m.value.GetStringLength());
            }
            walk(m.value, points, texts);
        }
    } else if (v.IsArray()) {
        for (const auto& e : v.GetArray()) walk(e, points, texts);
    }
}
}  // namespace

std::size_t count_cache_points(const rapidjson::Value& body) {
    std::size_t points = 0;
    walk(body, points, nullptr);
    return points;
}

std::vector<std::string> texts(const rapidjson::Value& body) {
    std::size_t points = 0;
    std::vector<std::string> out;
    walk(body, points, &out);
    return out;
}

bool published_schema_validator_present() {
    return fs::exists(fs::path(NUCLEO_SOURCE_DIR) / ".." / "shared" / "tools" / "validate_wire.py");
}

std::string validate_bodies(const std::vector<std::string>& bodies) {
    if (!published_schema_validator_present()) {
        std::cout << "[ NOTE ] ../shared/tools/validate_wire.py is absent: the " << bodies.size()
                  << " Converse bodies were NOT validated against the published schema\n";
        return "";
    }
    return emulator_test::validate_wire("bedrock", bodies);
}

}  // namespace nucleo::bedrock_test
