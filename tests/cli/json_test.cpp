// Every `--json` output of `nucleo` parses as one compact document and matches the JSON Schema
// docs/cli-json.md gives for it (the schemas are read from that file, so the doc and the program
// cannot drift apart).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli_support.hpp"
#include "emulator_client.hpp"

namespace nucleo::cli_test {
namespace {

namespace fs = std::filesystem;

/// The schemas of docs/cli-json.md by heading ("nucleo models --json"): the first ```json block
/// after each "### `...`" heading.
std::map<std::string, std::string> documented_schemas() {
    const std::string doc = test_support::slurp(fs::path(NUCLEO_SOURCE_DIR) / "docs" / "cli-json.md");
    std::map<std::string, std::string> out;
    std::size_t at = 0;
    while ((at = doc.find("\n### `", at)) != std::string::npos) {
        const std::size_t name_start = at + 6;
        const std::size_t name_end = doc.find('`', name_start);
        const std::size_t block = doc.find("```json\n", name_end);
        const std::size_t next = doc.find("\n### ", name_end);
        at = name_end;
        if (block == std::string::npos || (next != std::string::npos && block > next)) continue;
        const std::size_t end = doc.find("```", block + 8);
        out[doc.substr(name_start, name_end - name_start)] = doc.substr(block + 8, end - block - 8);
    }
    return out;
}

/// The subset of JSON Schema docs/cli-json.md uses: type, const, enum, required, properties,
/// additionalProperties (false or a schema), items. Returns "" or the first mismatch's path.
std::string check(const rapidjson::Value& schema, const rapidjson::Value& v, const std::string& at) {
    auto type_ok = [&](const std::string& t) {
        if (t == "object") return v.IsObject();
        if (t == "array") return v.IsArray();
        if (t == "string") return v.IsString();
        if (t == "integer") return v.IsInt64() || v.IsUint64();
        if (t == "number") return v.IsNumber();
        if (t == "boolean") return v.IsBool();
        if (t == "null") return v.IsNull();
        return false;
    };
    if (schema.HasMember("type")) {
        const auto& t = schema["type"];
        bool ok = false;
        if (t.IsString()) {
            ok = type_ok(t.GetString());
        } else {
            for (const auto& one : t.GetArray()) ok = ok || type_ok(one.GetString());
        }
        if (!ok) return at + ": not of the documented type";
    }
    if (schema.HasMember("const") && !(schema["const"] == v)) return at + ": not the documented constant";
    if (schema.HasMember("enum")) {
        bool found = false;
        for (const auto& e : schema["enum"].GetArray()) found = found || e == v;
        if (!found) return at + ": not one of the documented values";
    }
    if (v.IsObject()) {
        if (schema.HasMember("required")) {
            for (const auto& r : schema["required"].GetArray()) {
                if (!v.HasMember(r.GetString())) return at + "." + r.GetString() + ": missing";
            }
        }
        for (const auto& m : v.GetObject()) {
            const std::string key = m.name.GetString();
            if (schema.HasMember("properties") && schema["properties"].HasMember(key.c_str())) {
                std::string e = check(schema["properties"][key.c_str()], m.value, at + "." + key);
                if (!e.empty()) return e;
            } else if (schema.HasMember("additionalProperties")) {
                const auto& extra = schema["additionalProperties"];
                if (extra.IsBool() && !extra.GetBool()) return at + "." + key + ": not documented";
                if (extra.IsObject()) {
                    std::string e = check(extra, m.value, at + "." + key);
                    if (!e.empty()) return e;
                }
            }
        }
    }
    if (v.IsArray() && schema.HasMember("items")) {
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
            std::string e = check(schema["items"], v[i], at + "[" + std::to_string(i) + "]");
            if (!e.empty()) return e;
        }
    }
    return "";
}

/// Runs `nucleo ARGS` (with `env`, "VAR=value ...", when given), expects exit 0 and one compact
/// JSON document matching the schema docs/cli-json.md documents under `heading`; returns it.
rapidjson::Document expect_documented(const std::string& args, const std::string& heading,
                                      const std::string& env = "") {
    static const auto schemas = documented_schemas();
    const auto schema_text = schemas.find(heading);
    EXPECT_NE(schema_text, schemas.end()) << "docs/cli-json.md documents no " << heading;
    const CliRun r = env.empty() ? nucleo(args)
                                 : test_support::run_command("env " + env + " '" + NUCLEO_CLI + "' " + args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << args;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << args << ": not one compact line: " << r.out;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_FALSE(doc.HasParseError()) << args << ": " << r.out;
    if (schema_text == schemas.end() || doc.HasParseError()) return doc;
    rapidjson::Document schema;
    schema.Parse(schema_text->second.c_str());
    EXPECT_FALSE(schema.HasParseError()) << heading << "'s schema does not parse";
    EXPECT_EQ(check(schema, doc, "$"), "") << args << ": " << r.out;
    return doc;
}

TEST(CliJson, SchemasOfTheDocParse) {
    const auto schemas = documented_schemas();
    EXPECT_GE(schemas.size(), 10u);
    for (const auto& [name, text] : schemas) {
        rapidjson::Document d;
        d.Parse(text.c_str());
        EXPECT_FALSE(d.HasParseError()) << name;
    }
}

TEST(CliJson, VersionModelsPluginsConfigTokens) {
    const std::string config = " --config " + quoted(kShippedConfig);
    expect_documented("version --json", "nucleo version --json");
    const auto models = expect_documented("models --json" + config, "nucleo models --json");
    EXPECT_GT(models["models"].Size(), 3u);
    const auto plugins = expect_documented("plugins --json", "nucleo plugins --json");
    EXPECT_GT(plugins["plugins"].Size(), 3u);
    const auto conf = expect_documented("config --json" + config, "nucleo config --json");
    EXPECT_EQ(std::string(conf["config"].GetString()), kShippedConfig);
    const auto text =
        expect_documented("tokens --json --model gpt-4o-mini --text 'hello world'" + config,
                          "nucleo tokens --json");
    EXPECT_EQ(text["total"].GetInt64(), 2);
    EXPECT_FALSE(text.HasMember("parts"));
    const std::string doc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/every_block.json";
    const auto breakdown = expect_documented(
        "tokens --json --model gpt-4o-mini --in " + quoted(doc) + config, "nucleo tokens --json");
    ASSERT_TRUE(breakdown.HasMember("messages"));
    EXPECT_EQ(breakdown["messages"].Size(), 5u);
}

TEST(CliJson, PluginCheckReportIsDocumented) {
    const auto report = expect_documented(std::string("plugin check '") + NUCLEO_BUILD_PLUGIN_DIR +
                                              "/nucleo-extractive.so' --json",
                                          "nucleo plugin check --json");
    ASSERT_TRUE(report.IsObject());
    EXPECT_GE(report["cases"].GetUint(), 9U);
    EXPECT_EQ(report["failed"].GetUint(), 0U);
}

TEST(CliJson, Ask) {
    emulator_test::EmulatorProcess emulator;
    const auto answer = expect_documented(
        "ask --json --model claude-sonnet-5-5 --system 'Be brief.' Hello there --config " +
            quoted(kShippedConfig),
        "nucleo ask --json",
        "ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(emulator.port()) +
            " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR);
    ASSERT_TRUE(answer.IsObject());
    EXPECT_STREQ(answer["text"].GetString(), "This is the emulator's answer to: Hello there");
    EXPECT_EQ(answer["calls"].GetInt(), 1);
}

// cli.108: what `nucleo ask` saved, listed by `nucleo logs --json`.
TEST(CliJson, Logs) {
    emulator_test::EmulatorProcess emulator;
    const std::string env = "ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                            std::to_string(emulator.port()) +
                            " NUCLEO_SQLITE_PATH=" + quoted((scratch() / "asks.db").string()) +
                            " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR;
    const std::string config = " --config " + quoted(kShippedConfig);
    const auto asked = expect_documented("ask --json -m claude-sonnet-5-5 Hello" + config,
                                         "nucleo ask --json", env);
    ASSERT_TRUE(asked.IsObject());
    const auto logs = expect_documented("logs --json" + config, "nucleo logs --json", env);
    ASSERT_TRUE(logs.IsObject());
    ASSERT_EQ(logs["conversations"].Size(), 1u);
    EXPECT_EQ(std::string(logs["conversations"][0]["id"].GetString()),
              asked["conversation_id"].GetString());
    EXPECT_EQ(std::string(logs["conversations"][0]["title"].GetString()), "Hello");
}

TEST(CliJson, Conversations) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "cli" / "conversations-json";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "nucleo.yaml") << "plugins:\n  paths:\n    - \"" << NUCLEO_BUILD_PLUGIN_DIR
                                       << "\"\nstores:\n  persistent:\n    plugin: sqlite\n"
                                       << "    options:\n      path: \""
                                       << (dir / "c.db").string() << "\"\n";
    const std::string tail = " --user bob --json --config " + quoted((dir / "nucleo.yaml").string());
    const std::string doc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/every_block.json";
    const auto imported = expect_documented("conversations import " + quoted(doc) + tail,
                                            "nucleo conversations import --json");
    EXPECT_EQ(std::string(imported["id"].GetString()), "c-every");
    const auto list = expect_documented("conversations list" + tail, "nucleo conversations list --json");
    ASSERT_EQ(list["conversations"].Size(), 1u);
    EXPECT_EQ(std::string(list["conversations"][0]["id"].GetString()), "c-every");
    const auto show =
        expect_documented("conversations show c-every" + tail, "nucleo conversations show --json");
    EXPECT_EQ(show["messages"].GetInt64(), 5);
    const auto history = expect_documented("conversations history c-every" + tail,
                                           "nucleo conversations history --json");
    EXPECT_EQ(history["versions"].Size(), 1u);
    expect_documented("conversations delete c-every" + tail, "nucleo conversations delete --json");
    const auto empty = expect_documented("conversations list" + tail, "nucleo conversations list --json");
    EXPECT_EQ(empty["conversations"].Size(), 0u);
    fs::remove_all(dir);
}

TEST(CliJson, Mcp) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "cli" / "mcp-json";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "nucleo.yaml") << "mcp_servers:\n  hostile:\n    command: \""
                                       << HOSTILE_MCP_SERVER << "\"\n    args: [paged]\n"
                                       << "    env: {HOSTILE_TOKEN: secret-value}\n";
    const std::string tail = " --json --config " + quoted((dir / "nucleo.yaml").string());
    const auto list = expect_documented("mcp list" + tail, "nucleo mcp list --json");
    ASSERT_EQ(list["servers"].Size(), 1u);
    EXPECT_EQ(std::string(list["servers"][0]["env"][0].GetString()), "HOSTILE_TOKEN");
    const auto tools = expect_documented("mcp tools hostile" + tail, "nucleo mcp tools --json");
    EXPECT_EQ(tools["tools"].Size(), 15u);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace nucleo::cli_test
