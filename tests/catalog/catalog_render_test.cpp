// The shipped catalog, every model at every depth, rendered by `nucleo render` (catalog.5,
// catalog.6): the thinking and effort fields of each body are what the model's record says, and
// no body carries a form or an effort the record does not list. The bodies are kept under the
// build tree (tests/catalog/bodies/<provider>/) for the SDK type check (sdk_types.catalog).
// Adding a model to config/models.yaml adds its cases.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"
#include "nucleo/thinking.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

fs::path work_dir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "catalog" / "work" / info->name();
    fs::create_directories(dir);
    return dir;
}

test_support::CliRun nucleo(const std::string& args) {
    return test_support::run_command(std::string("\"") + NUCLEO_CLI + "\" " + args +
                                     " --config \"" + NUCLEO_SOURCE_DIR + "/config/nucleo.yaml\"");
}

/// A conversation document at `depth` answering SHORT, with a tool (unless `tools` is false),
/// ending with the user's turn (or, with `prefill`, with an assistant turn after it).
fs::path document(const std::string& name, Depth depth, bool prefill = false, bool tools = true) {
    std::string messages =
        R"({"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "What is 6 times 7?"}]})";
    if (prefill)
        messages +=
            R"(, {"id": "m2", "direction": "incoming", "blocks": [{"type": "text", "text": "The answer is"}]})";
    const std::string doc =
        R"({"schema_version": 1, "conversation_id": "c-catalog", "user_id": "tester",
 "objective": [{"key": "task", "value": "Answer arithmetic questions."}],
 "tools": [)" +
        std::string(tools ? R"({"name": "multiply", "description": "Multiply two numbers.",
            "schema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                       "required": ["a", "b"]}})"
                          : "") +
        R"(],
 "messages": [)" +
        messages + R"(],
 "declarations": {"grade": "SMALL", "depth": ")" +
        std::string(to_string(depth)) + R"(", "output": {"rung": "SHORT"}}})";
    const fs::path path = work_dir() / (name + ".json");
    std::ofstream(path, std::ios::binary) << doc;
    return path;
}

const Config& shipped() {
    static const Config config =
        Config::load(fs::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml");
    return config;
}

std::string provider_family(const ModelSpec& m) {
    return shipped().provider(m.provider).plugin;
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_at(const rapidjson::Value& v, std::initializer_list<const char*> path) {
    const rapidjson::Value* at = &v;
    for (const char* key : path) {
        at = member(*at, key);
        if (at == nullptr) return "";
    }
    return at->IsString() ? at->GetString() : "<not a string>";
}

void keep_body(const std::string& family, const std::string& name, const rapidjson::Value& body) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "catalog" / "bodies" / family;
    fs::create_directories(dir);
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    body.Accept(w);
    std::ofstream(dir / (name + ".json"), std::ios::binary) << buf.GetString();
}

TEST(CatalogRender, EveryModelAtEveryDepthSendsWhatItsRecordSays) {
    // The kept bodies are this run's only (a model taken out of the catalog leaves none behind).
    std::filesystem::remove_all(fs::path(NUCLEO_BINARY_DIR) / "tests" / "catalog" / "bodies");
    std::size_t rendered = 0;
    for (const ModelSpec& m : shipped().catalog().all()) {
        if (m.status == ModelStatus::kRetired) continue;
        const std::string family = provider_family(m);
        for (Depth depth : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
            SCOPED_TRACE(m.id + " at " + to_string(depth));
            ThinkingRequest want = thinking_request(m, depth);
            // catalog.6: with a tool, a model that takes tools only without reasoning gets the
            // effort none, or the call is refused where it has none.
            bool tools = true;
            if (m.refuses_tools_with_reasoning && want.effort != "none" &&
                (!want.effort.empty() || m.thinks_at(depth))) {
                if (!m.thinking.accepts_effort("none")) {
                    const test_support::CliRun refused = nucleo(
                        "render --model " + m.id + " --in \"" +
                        document(m.id + "-tools-" + to_string(depth), depth).string() + "\"");
                    EXPECT_EQ(refused.status, 2) << refused.out;
                    EXPECT_EQ(refused.out, "");
                    EXPECT_NE(refused.err.find("takes function tools only without reasoning"),
                              std::string::npos)
                        << refused.err;
                    tools = false;  // the record's own mapping, checked below without the tool
                } else {
                    want = ThinkingRequest{.form = {}, .effort = "none"};
                }
            }
            const test_support::CliRun run = nucleo(
                "render --model " + m.id + " --in \"" +
                document(m.id + "-" + to_string(depth), depth, false, tools).string() + "\"");
            ASSERT_EQ(run.status, 0) << run.err;
            rapidjson::Document doc;
            doc.Parse(run.out.c_str());
            ASSERT_FALSE(doc.HasParseError()) << run.out;
            const rapidjson::Value* body = member(doc, "body");
            ASSERT_NE(body, nullptr) << run.out;
            // What is sent is what the record allows, read from the record itself.
            if (!want.form.empty()) {
                EXPECT_TRUE(m.thinking.accepts(*parse_thinking_form(want.form))) << want.form;
            }
            if (!want.effort.empty()) {
                EXPECT_TRUE(m.thinking.accepts_effort(want.effort)) << want.effort;
            }
            const std::int64_t reserve =
                m.output_budget_for(OutputSize::kShort) + reasoning_reserved(m, depth);
            if (family == "anthropic") {
                EXPECT_EQ(string_at(*body, {"thinking", "type"}), want.form);
                EXPECT_EQ(string_at(*body, {"output_config", "effort"}), want.effort);
                EXPECT_EQ((*body)["max_tokens"].GetInt64(), std::min(reserve, m.max_output_tokens));
                if (want.form == "enabled") {
                    EXPECT_EQ((*body)["thinking"]["budget_tokens"].GetInt64(),
                              reasoning_reserved(m, depth));
                }
            } else if (family == "openai") {
                EXPECT_EQ(member(*body, "thinking"), nullptr);
                EXPECT_EQ(string_at(*body, {"reasoning_effort"}), want.effort);
            } else if (family == "bedrock") {
                if (m.wire_model.find("amazon.nova") != std::string::npos) {
                    const std::string type = string_at(
                        *body, {"additionalModelRequestFields", "reasoningConfig", "type"});
                    EXPECT_EQ(type, want.effort.empty() ? "" : "enabled");
                    EXPECT_EQ(string_at(*body, {"additionalModelRequestFields", "reasoningConfig",
                                                "maxReasoningEffort"}),
                              want.effort);
                } else {
                    EXPECT_EQ(
                        string_at(*body, {"additionalModelRequestFields", "thinking", "type"}),
                        want.form);
                    EXPECT_EQ(string_at(*body, {"outputConfig", "effort"}), want.effort);
                }
                EXPECT_EQ((*body)["inferenceConfig"]["maxTokens"].GetInt64(),
                          std::min(reserve, m.max_output_tokens));
            } else if (family == "openai-responses") {
                // responses.7: the effort as reasoning.effort, none sent as none; no effort, no
                // reasoning member.
                EXPECT_EQ(member(*body, "thinking"), nullptr);
                EXPECT_EQ(string_at(*body, {"reasoning", "effort"}), want.effort);
                if (want.effort.empty()) {
                    EXPECT_EQ(member(*body, "reasoning"), nullptr);
                }
                EXPECT_EQ((*body)["max_output_tokens"].GetInt64(),
                          std::min(reserve, m.max_output_tokens));
            } else if (family == "gemini") {
                // gemini.5: the effort as thinkingLevel in the wire's upper case; no form is
                // mapped on a Gemini 3 record.
                std::string level = want.effort;
                for (char& c : level)
                    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                EXPECT_EQ(string_at(*body, {"generationConfig", "thinkingConfig", "thinkingLevel"}),
                          level);
                EXPECT_EQ((*body)["generationConfig"]["maxOutputTokens"].GetInt64(),
                          std::min(reserve, m.max_output_tokens));
            } else {
                ADD_FAILURE() << "a provider plugin this test does not know: " << family;
            }
            keep_body(family, m.id + "-" + to_string(depth), *body);
            ++rendered;
        }
    }
    EXPECT_GE(rendered, 3U * 20U);
}

// catalog.2: a retired model is refused before anything is sent, naming its replacement.
TEST(CatalogRender, ARetiredModelIsRefusedNamingItsReplacement) {
    bool any = false;
    for (const ModelSpec& m : shipped().catalog().all()) {
        if (m.status != ModelStatus::kRetired) continue;
        any = true;
        const test_support::CliRun run = nucleo("render --model " + m.id + " --in \"" +
                                                document(m.id, Depth::kImmediate).string() + "\"");
        EXPECT_EQ(run.status, 2) << run.out << run.err;
        EXPECT_EQ(run.out, "");
        EXPECT_NE(run.err.find("was retired by its provider on " + m.retired_on), std::string::npos)
            << run.err;
        EXPECT_NE(run.err.find("use \"" + m.replacement + "\" instead"), std::string::npos)
            << run.err;
    }
    EXPECT_TRUE(any) << "the shipped catalog keeps its retired models, so a user naming one learns "
                        "the replacement";
}

// catalog.6: a prefill where the model refuses it, or with thinking on, is refused before sending.
TEST(CatalogRender, APrefillIsRefusedWhereTheModelOrThinkingForbidsIt) {
    test_support::CliRun run = nucleo("render --model claude-sonnet-5-5 --in \"" +
                                      document("refuses", Depth::kImmediate, true).string() + "\"");
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_NE(run.err.find("refuses prefill"), std::string::npos) << run.err;
    run = nucleo("render --model claude-haiku-4-5 --in \"" +
                 document("thinking", Depth::kStandard, true).string() + "\"");
    EXPECT_EQ(run.status, 2) << run.out;
    EXPECT_NE(run.err.find("thinking is on for this call"), std::string::npos) << run.err;
    // Haiku 4.5 takes a prefill while it does not think.
    run = nucleo("render --model claude-haiku-4-5 --in \"" +
                 document("allowed", Depth::kImmediate, true).string() + "\"");
    EXPECT_EQ(run.status, 0) << run.err;
}

}  // namespace
}  // namespace nucleo
