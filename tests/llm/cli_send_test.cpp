// `nucleo render` (the wire request) and `nucleo send` (one call) over a conversation document,
// against the real nucleo-emulator with the shipped config.
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "cli_run.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

using nucleo::test_support::CliRun;
using nucleo::test_support::slurp;

/// Runs the CLI with `env` prepended (VAR=value ...) and `config`, capturing stdout and stderr.
CliRun nucleo(const std::string& env, const std::string& args,
              const std::string& config = std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml") {
    return test_support::run_command("env " + env + " NUCLEO_PLUGIN_PATH=" +
                                     NUCLEO_BUILD_PLUGIN_DIR + " " + NUCLEO_CLI + " " + args +
                                     " --config " + config);
}

const std::string kDoc = std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/minimal.json";

/// A file unique to this process under the temporary folder, removed when the test ends.
struct TempPath {
    explicit TempPath(const std::string& name)
        : path(fs::temp_directory_path() / ("nucleo-cli-send-" + std::to_string(::getpid()) + "-" + name)) {}
    ~TempPath() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    TempPath(const TempPath&) = delete;
    TempPath& operator=(const TempPath&) = delete;
    fs::path path;
};

/// The minimal fixture asking for `tokens` output tokens, written to `into`.
void write_doc_asking(const fs::path& into, int tokens) {
    std::string text = slurp(kDoc);
    const std::string declared = R"("output": {"tokens": 1024})";
    const std::size_t at = text.find(declared);
    ASSERT_NE(at, std::string::npos) << "the fixture's output declaration moved";
    text.replace(at, declared.size(), R"("output": {"tokens": )" + std::to_string(tokens) + "}");
    std::ofstream(into) << text;
}

TEST(CliRender, PrintsTheWireRequestWithSecretsAsStars) {
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-ant-very-secret ANTHROPIC_BASE_URL=http://127.0.0.1:9",
                         "render --in " + kDoc + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("sk-ant-very-secret"), std::string::npos);
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_STREQ(d["method"].GetString(), "POST");
    EXPECT_STREQ(d["url"].GetString(), "http://127.0.0.1:9/v1/messages");
    EXPECT_STREQ(d["headers"]["x-api-key"].GetString(), "***");
    EXPECT_STREQ(d["body"]["model"].GetString(), "claude-sonnet-5-5");
    EXPECT_EQ(d["body"]["max_tokens"].GetInt(), 1024);  // the document's output declaration
}

TEST(CliSend, AppendsTheAnswerAndReportsUsageAndCost) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                             std::to_string(emulator.port()),
                         "send --in " + kDoc + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    const auto& messages = d["messages"];
    ASSERT_EQ(messages.Size(), 4U);  // the fixture's three and the answer
    EXPECT_STREQ(messages[3]["direction"].GetString(), "incoming");
    EXPECT_NE(r.err.find("cost $"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stop end_turn"), std::string::npos) << r.err;
}

// config.3: one default level, warn, for every command as for the library: `send` and `compact`
// wrote an [info] gen_ai line per call by default while `ask` and `chat` did not.
TEST(CliSend, TheCallRecordsAreLoggedOnlyWhenTheLogLevelAsksForThem) {
    emulator_test::EmulatorProcess emulator;
    const std::string env =
        "-u NUCLEO_LOG_LEVEL ANTHROPIC_API_KEY=sk-test "
        "ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port());
    CliRun r = nucleo(env, "send --in " + kDoc + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("gen_ai"), std::string::npos) << r.err;
    r = nucleo(env + " NUCLEO_LOG_LEVEL=info", "send --in " + kDoc + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("[info] gen_ai call status=ok"), std::string::npos) << r.err;
}

// obs.102, obs.106: `--log-format json` makes every log line one JSON object; the call's record is
// one of them, with the GenAI attributes beside the message. An unknown format is a usage error.
TEST(CliSend, LogFormatJsonWritesTheCallRecordAsOneJsonLine) {
    emulator_test::EmulatorProcess emulator;
    const std::string env = "ANTHROPIC_API_KEY=sk-test NUCLEO_LOG_LEVEL=info ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                            std::to_string(emulator.port());
    const CliRun r = nucleo(env, "send --log-format json --in " + kDoc + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    bool found = false;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("\"nucleo.record\":\"call\"") == std::string::npos) continue;
        found = true;
        rapidjson::Document d;
        d.Parse(line.c_str());
        ASSERT_FALSE(d.HasParseError()) << line;
        EXPECT_STREQ(d["level"].GetString(), "info");
        EXPECT_STREQ(d["gen_ai.provider.name"].GetString(), "anthropic");
        EXPECT_STREQ(d["nucleo.model.id"].GetString(), "claude-sonnet-5-5");
        EXPECT_GT(d["gen_ai.usage.output_tokens"].GetInt64(), 0);
        EXPECT_EQ(std::string(d["nucleo.provider.request_id"].GetString()).rfind("req_emu_", 0), 0U);
    }
    EXPECT_TRUE(found) << r.err;

    const CliRun bad = nucleo(env, "send --log-format yaml --in " + kDoc + " --model claude-sonnet-5-5");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--log-format: unknown log format 'yaml' (text or json)"), std::string::npos)
        << bad.err;
    const CliRun bad_env = nucleo(env + " NUCLEO_LOG_FORMAT=xml", "send --in " + kDoc + " --model claude-sonnet-5-5");
    EXPECT_EQ(bad_env.status, 2);
    EXPECT_NE(bad_env.err.find("NUCLEO_LOG_FORMAT: unknown log format 'xml'"), std::string::npos) << bad_env.err;
}

/// A question with a tool, for Gemini.
const char* const kGeminiToolDoc =
    R"({"schema_version": 1, "conversation_id": "c-gemini", "user_id": "alice",
 "objective": [{"key": "task", "value": "Answer customer questions about their orders."}],
 "tools": [{"name": "search_orders", "description": "Search orders by text.",
            "schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}],
 "messages": [{"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "Where is order 42?"}]}],
 "declarations": {"grade": "LARGE", "depth": "IMMEDIATE", "output": {"rung": "SHORT"}}})";

// gemini.6, answers.110: a Gemini answer's thought signature is kept in the conversation as a
// provider block, goes back on the function call it came on (not the stand-in for calls Gemini
// did not write), is left out for another provider, and the next call is answered.
TEST(CliSend, GeminiThoughtSignaturesAreKeptAndGoBackOnTheirCall) {
    emulator_test::EmulatorProcess emulator;
    const std::string env = "GEMINI_API_KEY=gm-test GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:" +
                            std::to_string(emulator.port()) + " OPENAI_API_KEY=sk-test";
    const TempPath question("gemini-q.json");
    std::ofstream(question.path) << kGeminiToolDoc;
    const CliRun first =
        nucleo(env, "send --in " + question.path.string() + " --model gemini-3-1-pro");
    ASSERT_EQ(first.status, 0) << first.err;
    rapidjson::Document doc;
    doc.Parse(first.out.c_str());
    ASSERT_FALSE(doc.HasParseError()) << first.out;
    ASSERT_EQ(doc["messages"].Size(), 2U);
    // The thought summary (includeThoughts), the signature, then the call it came on.
    const auto& answer = doc["messages"][1]["blocks"];
    ASSERT_EQ(answer.Size(), 3U) << first.out;
    EXPECT_STREQ(answer[0]["type"].GetString(), "thinking");
    ASSERT_STREQ(answer[1]["type"].GetString(), "provider_block");
    EXPECT_STREQ(answer[1]["wire_family"].GetString(), "gemini-generate");
    const std::string signature = answer[1]["block"]["thoughtSignature"].GetString();
    EXPECT_NE(signature, "skip_thought_signature_validator");
    ASSERT_STREQ(answer[2]["type"].GetString(), "tool_use");
    const std::string call_id = answer[2]["id"].GetString();

    // The tool's result, appended as the next outgoing message.
    auto& a = doc.GetAllocator();
    rapidjson::Document result(&a);
    result.Parse(
        (R"({"id": "m3", "direction": "outgoing", "blocks": [{"type": "tool_result", "tool_use_id": ")" +
         call_id + R"(", "content": [{"type": "text", "text": "Order 42 shipped on Monday"}]}]})")
            .c_str());
    ASSERT_FALSE(result.HasParseError());
    doc["messages"].PushBack(rapidjson::Value(result, a), a);
    const TempPath next("gemini-next.json");
    {
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        doc.Accept(w);
        std::ofstream(next.path) << b.GetString();
    }
    const CliRun rendered =
        nucleo(env, "render --in " + next.path.string() + " --model gemini-3-1-pro");
    ASSERT_EQ(rendered.status, 0) << rendered.err;
    rapidjson::Document request;
    request.Parse(rendered.out.c_str());
    ASSERT_FALSE(request.HasParseError()) << rendered.out;
    const auto& call_part = request["body"]["contents"][1]["parts"][0];
    ASSERT_TRUE(call_part.HasMember("functionCall")) << rendered.out;
    EXPECT_EQ(std::string(call_part["thoughtSignature"].GetString()), signature);
    // Another provider gets no Gemini signature.
    const CliRun openai = nucleo(env, "render --in " + next.path.string() + " --model gpt-4.1");
    ASSERT_EQ(openai.status, 0) << openai.err;
    EXPECT_EQ(openai.out.find(signature), std::string::npos) << openai.out;
    // And Gemini answers the round.
    const CliRun second =
        nucleo(env, "send --in " + next.path.string() + " --model gemini-3-1-pro");
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_NE(second.out.find("The tool search_orders returned: Order 42 shipped on Monday"),
              std::string::npos)
        << second.out;
}

/// The number that follows the first `key` at or after `from` in `text`; -1 when `key` is absent.
double number_after(const std::string& text, const std::string& key, std::size_t from = 0) {
    const std::size_t at = text.find(key, from);
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + key.size()));
}

/// A question at STANDARD answering SHORT, for a LARGE model.
const char* const kThinkingDoc =
    R"({"schema_version": 1, "conversation_id": "c-think", "user_id": "alice",
 "objective": [{"key": "task", "value": "Answer arithmetic questions."}],
 "messages": [{"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "What is 6 times 7?"}]}],
 "declarations": {"grade": "LARGE", "depth": "STANDARD", "output": {"rung": "SHORT"}}})";

TEST(CliSend, AnAlwaysThinkingModelAtShortIsAnsweredWithoutEscalation) {
    // budget.5, catalog.5: Opus 5.5 always thinks, and its thinking comes out of max_tokens. The
    // reserve books the record's thinking budget beside the SHORT rung, so the emulator's adaptive
    // thinking at medium (2,000 tokens, wire.190) and the answer fit in one call.
    const TempPath doc("thinking.json");
    std::ofstream(doc.path) << kThinkingDoc;
    emulator_test::EmulatorProcess emulator;
    const std::string env = "ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                            std::to_string(emulator.port());
    const CliRun r = nucleo(env, "send --in " + doc.path.string() + " --model claude-opus-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("stop end_turn"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("billed calls"), std::string::npos) << "no truncation escalation: " << r.err;
    EXPECT_GE(number_after(r.err, ", output "), 2000) << "the thinking was spent: " << r.err;

    // The same model with a record that books almost no thinking: the thinking eats the SHORT
    // answer's room, the answer is cut at max_tokens and the budget escalates (what the booking
    // prevents).
    const TempPath config("unbooked");
    fs::create_directories(config.path);
    std::string shipped = slurp(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
    std::ofstream(config.path / "nucleo.yaml") << shipped;
    std::ofstream(config.path / "models.yaml")
        << "models:\n"
           "  - id: opus-unbooked\n"
           "    provider: anthropic\n"
           "    wire_model: claude-opus-5-5\n"
           "    grade: LARGE\n"
           "    max_context_tokens: 1000000\n"
           "    max_output_tokens: 128000\n"
           "    output_budget: {SHORT: 1024, MEDIUM: 4096, LONG: 16384, EXTENDED: 64000}\n"
           "    thinking:\n"
           "      forms: [adaptive]\n"
           "      always: true\n"
           "      efforts: [low, medium, high, xhigh, max]\n"
           "      depth: {IMMEDIATE: low, STANDARD: medium, DEEP: high}\n"
           "      budget: {IMMEDIATE: 1, STANDARD: 1, DEEP: 1}\n"
           "    prices: {input: 4.00, output: 20.00, cache_write: 5.00, cache_read: 0.20}\n";
    const CliRun cut = nucleo(env, "send --in " + doc.path.string() + " --model opus-unbooked",
                              (config.path / "nucleo.yaml").string());
    ASSERT_EQ(cut.status, 0) << cut.err;
    EXPECT_NE(cut.err.find("over 2 billed calls"), std::string::npos) << cut.err;
    EXPECT_NE(cut.err.find("truncated at 1025: "), std::string::npos) << cut.err;
}

TEST(CliSend, AnEscalationShowsTheSumAndEachBilledCall) {
    // The fixture asks for 4 output tokens: the emulator cuts its answer there (max_tokens), the
    // budget rises to the model's ceiling (64000) and the second call answers. Both are billed:
    // `send` prints the sum and then each call (answers.105).
    const TempPath doc("escalation.json");
    write_doc_asking(doc.path, 4);
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                                std::to_string(emulator.port()),
                            "send --in " + doc.path.string() + " --model claude-sonnet-5-5");
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    ASSERT_EQ(d["messages"].Size(), 4U) << "the retry's answer is appended, the cut one is not";

    ASSERT_NE(r.err.find("over 2 billed calls"), std::string::npos) << r.err;
    const std::size_t truncated = r.err.find("truncated at 4: ");
    const std::size_t answered = r.err.find("answered at 128000: ");  // Sonnet 5.5's ceiling
    ASSERT_NE(truncated, std::string::npos) << r.err;
    ASSERT_NE(answered, std::string::npos) << r.err;
    ASSERT_LT(truncated, answered) << "the calls are listed in order";
    const double first_output = number_after(r.err, "output ", truncated);
    const double second_output = number_after(r.err, "output ", answered);
    EXPECT_EQ(first_output, 4) << r.err;
    EXPECT_GT(second_output, 4) << r.err;
    EXPECT_EQ(number_after(r.err, ", output "), first_output + second_output)
        << "the headline output is the sum: " << r.err;
    const double first_cost = number_after(r.err, "$", truncated);
    const double second_cost = number_after(r.err, "$", answered);
    EXPECT_GT(first_cost, 0) << r.err;
    EXPECT_NEAR(number_after(r.err, "cost $"), first_cost + second_cost, 2e-6)
        << "the headline cost is the sum: " << r.err;
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"total\":2"), std::string::npos) << stats.body;
}

TEST(CliSend, AFailedEscalationPrintsWhatWasBilledOnTheErrorLine) {
    // A model whose ceiling is 8 output tokens: the answer is cut at the 4 asked for, then again
    // at the ceiling, so the escalation fails (uncorrectable) after two billed calls. The error's
    // one line says what they cost (answers.109).
    const TempPath dir("config");
    fs::create_directories(dir.path);
    fs::copy_file(fs::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml", dir.path / "nucleo.yaml");
    std::ofstream(dir.path / "models.yaml")
        << slurp(fs::path(NUCLEO_SOURCE_DIR) / "config" / "models.yaml")
        << "\n  - id: claude-tiny-output\n"
           "    provider: anthropic\n"
           "    wire_model: claude-sonnet-5-5\n"
           "    grade: MEDIUM\n"
           "    max_context_tokens: 200000\n"
           "    max_output_tokens: 8\n"
           "    output_budget: {SHORT: 4, MEDIUM: 8, LONG: 8, EXTENDED: 8}\n"
           "    supports_caching: true\n"
           "    min_cacheable_tokens: 1024\n"
           "    native_tools: true\n"
           "    prices: {input: 3.00, output: 15.00, cache_write: 3.75, cache_read: 0.30}\n";
    const fs::path doc = dir.path / "conversation.json";
    write_doc_asking(doc, 4);
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
                                std::to_string(emulator.port()),
                            "send --in " + doc.string() + " --model claude-tiny-output",
                            (dir.path / "nucleo.yaml").string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    // The escalation's log line comes first; the error is the one line that names the command.
    const std::size_t at = r.err.find("nucleo send: ");
    ASSERT_NE(at, std::string::npos) << r.err;
    const std::string line = r.err.substr(at);
    EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << r.err;
    EXPECT_NE(line.find("truncated at its own output ceiling of 8 tokens"), std::string::npos) << line;
    const std::size_t note = line.find("(billed before the failure: 2 calls, ");
    ASSERT_NE(note, std::string::npos) << line;
    EXPECT_EQ(number_after(line, "output ", note), 4 + 8) << line;
    const double input = number_after(line, "input ", note);
    EXPECT_GT(input, 0) << line;
    EXPECT_NEAR(number_after(line, "cost $", note), (input * 3.0 + 12 * 15.0) / 1e6, 2e-6) << line;
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"total\":2"), std::string::npos) << stats.body;
}

TEST(CliSend, AMissingKeyIsOneLineAndExitTwoBeforeAnyRequest) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = nucleo("ANTHROPIC_API_KEY= ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(emulator.port()),
                         "send --in " + kDoc + " --model claude-sonnet-5-5");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no api_key"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"total\":0"), std::string::npos) << stats.body;
}

// answers.113: Bedrock's Converse answer names no model; the answer's wire model is the one called,
// never empty, and the dialects whose answers name one keep theirs.
TEST(CliSend, TheWireModelOfAnAnswerIsNeverEmpty) {
    const std::string env =
        "env -u NUCLEO_EMULATOR -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u AWS_ACCESS_KEY_ID "
        "-u AWS_SECRET_ACCESS_KEY NUCLEO_PLUGIN_PATH=" +
        std::string(NUCLEO_BUILD_PLUGIN_DIR) + " " + NUCLEO_CLI + " ";
    const std::string config = std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml";
    for (const auto& [model, wire] :
         {std::pair<std::string, std::string>{"bedrock-claude-haiku-5-5",
                                              "us.anthropic.claude-haiku-5-5"},
          {"claude-sonnet-5-5", "claude-sonnet-5-5"},
          {"gpt-6-luna", "gpt-6-luna"}}) {
        const CliRun r = test_support::run_command(env + "ask --emulator --json --model " + model +
                                                   " --config " + config + " Hello");
        ASSERT_EQ(r.status, 0) << model << ": " << r.err;
        rapidjson::Document d;
        d.Parse(r.out.c_str());
        ASSERT_FALSE(d.HasParseError()) << r.out;
        ASSERT_TRUE(d.HasMember("wire_model") && d["wire_model"].IsString()) << r.out;
        EXPECT_EQ(std::string(d["wire_model"].GetString()), wire) << model;
    }
}

}  // namespace
}  // namespace nucleo
