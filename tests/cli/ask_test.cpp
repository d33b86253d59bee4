// `nucleo ask` against the real nucleo-emulator, and the config's `defaults:` that let a
// conversation declaring nothing be sent (budget.102, budget.103).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"
#include "emulator_client.hpp"

namespace nucleo::cli_test {
namespace {

namespace fs = std::filesystem;

/// `nucleo ARGS --config CONFIG` with the Anthropic provider pointed at `port`.
CliRun ask_at(int port, const std::string& args, const std::string& config = kShippedConfig) {
    return test_support::run_command(
        "env ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(port) + " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" +
        NUCLEO_CLI + "' " + args + " --config " + quoted(config));
}

/// A config that includes the shipped one and adds `extra` (a `defaults:` block from line 2),
/// written into `dir`.
std::string config_with(const fs::path& dir, const std::string& extra) {
    const fs::path file = dir / "nucleo.yaml";
    std::ofstream(file) << "include: " << quoted(kShippedConfig) << "\n" << extra;
    return file.string();
}

TEST(CliAsk, StreamsTheAnswerOfOnePromptFromArgumentsOrStdin) {
    emulator_test::EmulatorProcess emulator;
    CliRun r = ask_at(emulator.port(), "ask --model claude-sonnet-5-5 What is a nucleus");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "This is the emulator's answer to: What is a nucleus\n");
    EXPECT_NE(r.err.find("model claude-sonnet-5-5"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cost $"), std::string::npos) << r.err;

    r = test_support::run_command(
        "printf 'From stdin\\nsecond line' | env ANTHROPIC_API_KEY=sk-test "
        "ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " '" + NUCLEO_CLI +
        "' ask --model claude-sonnet-5-5 --config " + quoted(kShippedConfig));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "This is the emulator's answer to: From stdin\n");
}

// A person asking sees the answer and one usage line; the call records (obs.101) are there at
// NUCLEO_LOG_LEVEL=info.
TEST(CliAsk, TheCallRecordsAreLoggedOnlyWhenTheLogLevelAsksForThem) {
    emulator_test::EmulatorProcess emulator;
    const std::string env =
        "env -u NUCLEO_LOG_LEVEL ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " ";
    const std::string ask = "'" + std::string(NUCLEO_CLI) +
                            "' ask --model claude-sonnet-5-5 --config " + quoted(kShippedConfig) +
                            " Hello";
    CliRun r = test_support::run_command(env + ask);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("model claude-sonnet-5-5", 0), 0U) << r.err;
    r = test_support::run_command(env + "NUCLEO_LOG_LEVEL=info " + ask);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("[info] gen_ai call status=ok gen_ai.provider.name=anthropic"),
              std::string::npos)
        << r.err;
}

TEST(CliAsk, JsonIsOneDocumentWithTextUsageAndCost) {
    emulator_test::EmulatorProcess emulator;
    const CliRun r = ask_at(
        emulator.port(), "ask --json --model claude-sonnet-5-5 --system 'Be brief.' Hello there");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_EQ(d["schema_version"].GetInt(), 1);
    EXPECT_STREQ(d["model"].GetString(), "claude-sonnet-5-5");
    EXPECT_STREQ(d["text"].GetString(), "This is the emulator's answer to: Hello there");
    EXPECT_STREQ(d["stop_reason"].GetString(), "end_turn");
    EXPECT_GT(d["usage"]["input_tokens"].GetInt64(), 0);
    EXPECT_GT(d["usage"]["output_tokens"].GetInt64(), 0);
    EXPECT_GT(d["cost"].GetDouble(), 0.0);
}

/// `nucleo ask` at the emulator with `input` piped into it (`PIPE | nucleo ...`).
CliRun piped_ask_at(int port, const std::string& input, const std::string& args) {
    return test_support::run_command(
        "printf '%s' " + quoted(input) + " | env ANTHROPIC_API_KEY=sk-test " +
        "ANTHROPIC_BASE_URL=http://127.0.0.1:" + std::to_string(port) + " '" + NUCLEO_CLI + "' " +
        args + " --config " + quoted(kShippedConfig));
}

/// The input tokens of one `ask --json` run, wherever the provider counted them (read, written to
/// its cache, or neither).
std::int64_t input_tokens_of(const CliRun& r) {
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("usage")) {
        ADD_FAILURE() << "no ask document: " << r.out << r.err;
        return -1;
    }
    const auto& u = d["usage"];
    return u["input_tokens"].GetInt64() + u["cache_write_tokens"].GetInt64() +
           u["cache_read_tokens"].GetInt64();
}

// cli.105: `git diff | nucleo ask review` asks about the diff: the prompt first, then the piped
// text; today's main sent the prompt alone (same tokens, exit 0).
TEST(CliAsk, APromptAndPipedTextAreOneQuestionThePromptFirst) {
    emulator_test::EmulatorProcess emulator;
    std::string diff;
    for (int i = 0; i < 200; ++i) diff += "+ line " + std::to_string(i) + " of the diff\n";
    const std::string args = "ask --json -m claude-sonnet-5-5 Review this change:";
    const CliRun alone = ask_at(emulator.port(), args);
    const CliRun with_diff = piped_ask_at(emulator.port(), diff, args);
    ASSERT_EQ(with_diff.status, 0) << with_diff.err;
    // The answer echoes the question's first line: the prompt's, so the prompt came first.
    EXPECT_NE(with_diff.out.find("This is the emulator's answer to: Review this change:"),
              std::string::npos)
        << with_diff.out;
    // 200 lines of at least 4 words each were sent too.
    EXPECT_GT(input_tokens_of(with_diff), input_tokens_of(alone) + 800)
        << alone.out << with_diff.out;
    // Piped text alone is the question, as before.
    const CliRun only_piped =
        piped_ask_at(emulator.port(), "From stdin\nsecond", "ask -m claude-sonnet-5-5");
    ASSERT_EQ(only_piped.status, 0) << only_piped.err;
    EXPECT_EQ(only_piped.out, "This is the emulator's answer to: From stdin\n");
}

// Short options, the answer's declarations and `--` (cli.105).
TEST(CliAsk, ShortOptionsDepthMaxTokensAndTheEndOfOptions) {
    emulator_test::EmulatorProcess emulator;
    CliRun r = test_support::run_command(
        "env ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " '" + NUCLEO_CLI + "' ask --config " +
        quoted(kShippedConfig) +
        " -m claude-sonnet-5-5 -s 'Be brief.' --depth standard --max-tokens 300 -- --why is -x "
        "an option");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "This is the emulator's answer to: --why is -x an option\n");
    r = ask_at(emulator.port(), "ask -m claude-sonnet-5-5 --depth sideways hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: --depth must be IMMEDIATE, STANDARD or DEEP, got 'sideways'\n");
    r = ask_at(emulator.port(), "ask -m claude-sonnet-5-5 --max-tokens 0 hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--max-tokens must be a positive whole number, got '0'"),
              std::string::npos)
        << r.err;
}

// config.2: without --model, NUCLEO_MODEL, then the config's defaults.model, then the first
// model whose provider has a key.
TEST(CliAsk, TheModelIsNucleoModelThenTheConfigsDefault) {
    emulator_test::EmulatorProcess emulator;
    const fs::path dir = scratch();
    const std::string config = config_with(dir, "defaults: {model: claude-haiku-5-5}\n");
    CliRun r = ask_at(emulator.port(), "ask hi", config);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.rfind("model claude-haiku-5-5 ", 0), 0U) << r.err;
    r = test_support::run_command(
        "env NUCLEO_MODEL=claude-sonnet-5-5 ANTHROPIC_API_KEY=sk-test "
        "ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " '" + NUCLEO_CLI + "' ask hi --config " +
        quoted(config));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.rfind("model claude-sonnet-5-5 ", 0), 0U) << r.err;
    r = test_support::run_command("env NUCLEO_MODEL=claude-nope '" + std::string(NUCLEO_CLI) +
                                  "' ask hi --config " + quoted(config));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("nucleo ask: NUCLEO_MODEL: \"claude-nope\" is no model of the catalog"),
              std::string::npos)
        << r.err;
}

// cli.103: with --json a failure is a JSON document on stdout too.
TEST(CliAsk, AFailureWithJsonIsAJsonDocument) {
    CliRun r = ask_at(9, "ask --json -m claude-sonnet-5-5 hello");
    EXPECT_EQ(r.status, 1) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_EQ(d["schema_version"].GetInt(), 1);
    EXPECT_STREQ(d["error"]["kind"].GetString(), "transport");
    EXPECT_EQ(d["error"]["exit_status"].GetInt(), 1);
    EXPECT_NE(r.err.find(d["error"]["message"].GetString()), std::string::npos) << r.err;
    r = ask_at(9, "ask --json -m no-such-model hello");
    EXPECT_EQ(r.status, 2);
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_STREQ(d["error"]["kind"].GetString(), "not_found");
    EXPECT_NE(std::string(d["error"]["message"].GetString()).find("no model \"no-such-model\""),
              std::string::npos);
}

TEST(CliAsk, NoPromptIsAUsageError) {
    const CliRun r = test_support::run_command("printf '  \\n' | '" + std::string(NUCLEO_CLI) +
                                               "' ask --config " + quoted(kShippedConfig));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: no prompt: give it as arguments or on stdin\n");
}

TEST(CliAsk, AFailedCallExitsOne) {
    // Nothing listens on port 9 of the loopback: the call fails after its retries.
    const CliRun r = ask_at(9, "ask --model claude-sonnet-5-5 hello");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("nucleo ask: "), std::string::npos) << r.err;
}

/// True when something accepts a TCP connection on 127.0.0.1:`port`.
bool listening(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool connected =
        ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return connected;
}

// cli.102: --emulator starts an emulator of the run's own and aims every provider at it: no key
// and no server needed (the configured base URLs point nowhere), any family answers, and the
// emulator is gone when ask returns.
TEST(CliAsk, TheEmulatorOptionAnswersFromAnEmulatorOfItsOwn) {
    const std::string env =
        "env -u NUCLEO_EMULATOR -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u AWS_ACCESS_KEY_ID "
        "-u AWS_SECRET_ACCESS_KEY ANTHROPIC_BASE_URL=http://127.0.0.1:9 "
        "OPENAI_BASE_URL=http://127.0.0.1:9/v1 AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:9 "
        "NUCLEO_PLUGIN_PATH=" +
        std::string(NUCLEO_BUILD_PLUGIN_DIR) + " '" + NUCLEO_CLI + "' ";
    for (const char* model :
         {"claude-sonnet-5-5", "gpt-6-luna", "gpt-6-luna-responses", "bedrock-claude-haiku-5-5",
          "gemini-3-1-pro"}) {
        const CliRun r =
            test_support::run_command(env + "ask --emulator --model " + model + " --config " +
                                      quoted(kShippedConfig) + " Hello");
        ASSERT_EQ(r.status, 0) << model << ": " << r.err;
        EXPECT_EQ(r.out, "This is the emulator's answer to: Hello\n") << model;
        const std::string note =
            "nucleo ask: answers come from nucleo-emulator at http://127.0.0.1:";
        ASSERT_EQ(r.err.rfind(note, 0), 0U) << r.err;
        const int port = std::stoi(r.err.substr(note.size()));
        EXPECT_EQ(r.err.substr(note.size() + std::to_string(port).size(), 15), " (--emulator)\nm")
            << r.err;
        EXPECT_FALSE(listening(port)) << "the emulator outlived ask";
    }
    // --json: the document alone on stdout, the note on stderr.
    const CliRun json = test_support::run_command(env + "ask --emulator --json --config " +
                                                  quoted(kShippedConfig) + " Hello");
    ASSERT_EQ(json.status, 0) << json.err;
    rapidjson::Document d;
    d.Parse(json.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << json.out;
    EXPECT_STREQ(d["text"].GetString(), "This is the emulator's answer to: Hello");
}

// answers.112: a base URL that answers 404 is named with the config key and the variable that
// set it, on the error's one line.
TEST(CliAsk, A404AtTheBaseUrlNamesTheUrlAndWhatToCheck) {
    emulator_test::EmulatorProcess emulator;
    const std::string at = "http://127.0.0.1:" + std::to_string(emulator.port());
    // OpenAI's base URL without its /v1.
    CliRun r = test_support::run_command("env OPENAI_API_KEY=sk-test OPENAI_BASE_URL=" + at +
                                         " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" +
                                         NUCLEO_CLI + "' ask --model gpt-6-luna --config " +
                                         quoted(kShippedConfig) + " Hello");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("nucleo ask: ", 0), 0U) << r.err;
    EXPECT_NE(r.err.find("; 404 at " + at + "/chat/completions: check providers.openai.base_url (" +
                         kShippedConfig + ":"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(", from ${OPENAI_BASE_URL}; an OpenAI base URL usually ends in /v1)\n"),
              std::string::npos)
        << r.err;
    // Anthropic's with a /v1 too many: the same hint, without OpenAI's note.
    r = ask_at(emulator.port(), "ask --model claude-sonnet-5-5 Hello");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test_support::run_command("env ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=" + at +
                                  "/v1 NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" +
                                  NUCLEO_CLI + "' ask --model claude-sonnet-5-5 --config " +
                                  quoted(kShippedConfig) + " Hello");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(
        r.err.find("; 404 at " + at + "/v1/v1/messages: check providers.anthropic.base_url ("),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(", from ${ANTHROPIC_BASE_URL})\n"), std::string::npos) << r.err;
}

// obs.109: a cost is written rounded to 10 decimal places, never with the noise of its sum
// (1e-6 * (11 * 0.15 + 9 * 0.6) is 7.0499999999999986e-06 in binary floating point).
TEST(CliAsk, ACostIsWrittenWithoutFloatingPointNoise) {
    const fs::path dir = scratch();
    const std::string config = config_with(
        dir,
        "models:\n"
        "  - id: cheap-test\n"
        "    provider: anthropic\n"
        "    wire_model: claude-haiku-5-5\n"
        "    grade: SMALL\n"
        "    max_context_tokens: 200000\n"
        "    max_output_tokens: 64000\n"
        "    output_budget: {SHORT: 1024, MEDIUM: 4096, LONG: 16384, EXTENDED: 64000}\n"
        "    prices: {input: 0.15, output: 0.60, cache_write: 0.1875, cache_read: 0.015}\n");
    emulator_test::EmulatorProcess emulator;
    const CliRun r =
        ask_at(emulator.port(), "ask --json --log-format json --model cheap-test hi", config);
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    ASSERT_EQ(d["usage"]["input_tokens"].GetInt64(), 11) << r.out;
    ASSERT_EQ(d["usage"]["output_tokens"].GetInt64(), 9) << r.out;
    EXPECT_NE(r.out.find(R"("cost":0.00000705,)"), std::string::npos) << r.out;
    EXPECT_EQ(d["cost"].GetDouble(), 7.05e-6);

    // The call record's cost, in the JSON log.
    const CliRun logged = test_support::run_command(
        "env NUCLEO_LOG_LEVEL=info ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(emulator.port()) + " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" +
        NUCLEO_CLI + "' ask --log-format json --model cheap-test --config " + quoted(config) +
        " hi");
    ASSERT_EQ(logged.status, 0) << logged.err;
    EXPECT_NE(logged.err.find(R"("nucleo.cost.usd":0.00000705)"), std::string::npos) << logged.err;
}

// catalog.10: a model of an OpenAI-compatible server (Ollama, vLLM) is three fields under a
// provider instance of the openai plugin; here the server is nucleo-emulator's /v1.
TEST(CliAsk, AnOpenAICompatibleServersModelNeedsThreeFields) {
    const fs::path dir = scratch();
    emulator_test::EmulatorProcess emulator;
    const fs::path config = dir / "nucleo.yaml";
    std::ofstream(config) << "providers:\n"
                             "  local:\n"
                             "    plugin: openai\n"
                             "    base_url: http://127.0.0.1:"
                          << emulator.port()
                          << "/v1\n"
                             "    api_key: ollama\n"
                             "models:\n"
                             "  - {id: llama3, provider: local, wire_model: \"llama3.1:8b\"}\n";
    const CliRun r = test_support::run_command(
        "env NUCLEO_PLUGIN_PATH=" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + " '" + NUCLEO_CLI +
        "' ask -m llama3 hi --config " + quoted(config.string()));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "This is the emulator's answer to: hi\n");
    EXPECT_NE(r.err.find("model llama3"), std::string::npos) << r.err;
}

/// `nucleo render` of a document that declares neither depth nor output under `config`.
CliRun render_undeclared(const std::string& config) {
    const fs::path doc = fs::path(config).parent_path() / "undeclared.json";
    std::ofstream(doc)
        << R"({"schema_version": 1, "conversation_id": "c-undeclared", "messages": [)"
        << R"({"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "Hi"}]}]})";
    return test_support::run_command(
        "env NUCLEO_PLUGIN_PATH=" + std::string(NUCLEO_BUILD_PLUGIN_DIR) + " '" + NUCLEO_CLI +
        "' render --model claude-sonnet-5-5 --in " + quoted(doc.string()) + " --config " +
        quoted(config));
}

TEST(CliDefaults, ADocumentThatDeclaresNothingGetsImmediateAndMedium) {
    const fs::path dir = scratch();
    CliRun r = render_undeclared(config_with(dir, ""));
    ASSERT_EQ(r.status, 0) << r.err;
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    // claude-sonnet-5-5's MEDIUM rung in config/models.yaml, and at IMMEDIATE its record's lowest
    // setting, between_tools (catalog.5): no up-front thinking, no budget, no effort.
    EXPECT_EQ(d["body"]["max_tokens"].GetInt(), 4096) << r.out;
    ASSERT_TRUE(d["body"].HasMember("thinking")) << r.out;
    EXPECT_STREQ(d["body"]["thinking"]["type"].GetString(), "between_tools") << r.out;
    EXPECT_FALSE(d["body"]["thinking"].HasMember("budget_tokens")) << r.out;
    EXPECT_FALSE(d["body"].HasMember("output_config")) << r.out;

    r = render_undeclared(config_with(dir, "defaults:\n  output: 700\n  depth: IMMEDIATE\n"));
    ASSERT_EQ(r.status, 0) << r.err;
    d.Parse(r.out.c_str());
    ASSERT_FALSE(d.HasParseError()) << r.out;
    EXPECT_EQ(d["body"]["max_tokens"].GetInt(), 700) << r.out;
}

TEST(CliDefaults, AConfigThatOptsOutKeepsNoDefault) {
    const fs::path dir = scratch();
    const CliRun r =
        render_undeclared(config_with(dir, "defaults:\n  output: none\n  depth: none\n"));
    // budget.2's refusal, an uncorrectable error of the call (exit 1), names the conversation.
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("conversation 'c-undeclared' declares no"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("declares no"), std::string::npos) << r.err;
}

TEST(CliDefaults, ABadDefaultNamesFileLineAndTheExpectedValues) {
    const fs::path dir = scratch();
    const std::string config = config_with(dir, "defaults:\n  output: HUGE\n");
    const CliRun r = render_undeclared(config);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(config + ":3:11: defaults.output: expected SHORT, MEDIUM, LONG, EXTENDED, "
                                  "a positive token count or none, got \"HUGE\""),
              std::string::npos)
        << r.err;
    const CliRun depth = render_undeclared(config_with(dir, "defaults:\n  depth: deepest\n"));
    EXPECT_EQ(depth.status, 2);
    EXPECT_NE(
        depth.err.find(":3:10: defaults.depth: expected IMMEDIATE, STANDARD, DEEP or none, got "
                       "\"deepest\""),
        std::string::npos)
        << depth.err;
}

}  // namespace
}  // namespace nucleo::cli_test
