// `nucleo ask` keeps what it asks: every answered ask is saved to the persistent store (cli.108),
// `nucleo logs` lists them, -c/--continue and --conversation ask again in one (cli.107), and
// -a/--attach sends files as image and document blocks (cli.109). Against the real
// nucleo-emulator and a SQLite store in the test's own folder.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"
#include "emulator_client.hpp"

namespace nucleo::cli_test {
namespace {

namespace fs = std::filesystem;

/// Every other test of this binary runs the shipped config, whose store is a file under $HOME
/// unless NUCLEO_SQLITE_PATH says otherwise: they save into the build tree instead, one file per
/// test process (ctest runs them side by side).
const bool kAsksSavedInTheBuildTree = [] {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "cli" / "asks";
    fs::create_directories(dir);
    const std::string file = (dir / ("asks-" + std::to_string(::getpid()) + ".db")).string();
    return ::setenv("NUCLEO_SQLITE_PATH", file.c_str(), 1) == 0;
}();

/// `nucleo ARGS` with the shipped config, its store the file `db`, the Anthropic provider at
/// `port`.
CliRun run(int port, const fs::path& db, const std::string& args) {
    return test_support::run_command(
        "env ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:" +
        std::to_string(port) + " NUCLEO_SQLITE_PATH=" + quoted(db.string()) +
        " NUCLEO_PLUGIN_PATH=" + NUCLEO_BUILD_PLUGIN_DIR + " '" + NUCLEO_CLI + "' " + args +
        " --config " + quoted(kShippedConfig));
}

rapidjson::Document parsed(const CliRun& r) {
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    EXPECT_FALSE(d.HasParseError()) << r.out << r.err;
    return d;
}

/// The conversation id an `ask --json` saved ("" when none).
std::string saved_id(const CliRun& r) {
    const rapidjson::Document d = parsed(r);
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("conversation_id") ||
        !d["conversation_id"].IsString()) {
        ADD_FAILURE() << "no saved conversation: " << r.out << r.err;
        return "";
    }
    return d["conversation_id"].GetString();
}

std::int64_t input_tokens_of(const CliRun& r) {
    const rapidjson::Document d = parsed(r);
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("usage")) return -1;
    const auto& u = d["usage"];
    return u["input_tokens"].GetInt64() + u["cache_write_tokens"].GetInt64() +
           u["cache_read_tokens"].GetInt64();
}

// cli.108: each answered ask is a conversation of the store, and `nucleo logs` lists them newest
// first with their model and first question; today's main kept nothing and had no logs.
TEST(CliAskStore, EveryAskIsSavedAndLogsListsThemNewestFirst) {
    ASSERT_TRUE(kAsksSavedInTheBuildTree);
    emulator_test::EmulatorProcess emulator;
    const fs::path db = scratch() / "asks.db";
    const CliRun first = run(emulator.port(), db, "ask -m claude-haiku-5-5 'First question'");
    ASSERT_EQ(first.status, 0) << first.err;
    // The usage line names the conversation it was saved as.
    const std::string note = ", conversation ";
    const std::size_t at = first.err.find(note);
    ASSERT_NE(at, std::string::npos) << first.err;
    const std::string first_id =
        first.err.substr(at + note.size(), first.err.find('\n', at) - at - note.size());
    ASSERT_EQ(first_id.rfind("conv-", 0), 0U) << first.err;
    const CliRun second =
        run(emulator.port(), db, "ask --json -m claude-sonnet-5-5 'Second question'");
    ASSERT_EQ(second.status, 0) << second.err;
    const std::string second_id = saved_id(second);
    ASSERT_EQ(second_id.rfind("conv-", 0), 0U) << second.out;

    CliRun logs = run(emulator.port(), db, "logs");
    ASSERT_EQ(logs.status, 0) << logs.err;
    const std::size_t newline = logs.out.find('\n');
    ASSERT_NE(newline, std::string::npos) << logs.out;
    const std::string top = logs.out.substr(0, newline);
    const std::string next = logs.out.substr(newline + 1);
    EXPECT_EQ(top.rfind(second_id + "\t", 0), 0U) << logs.out;
    EXPECT_NE(top.find("\tclaude-sonnet-5-5\tSecond question"), std::string::npos) << logs.out;
    EXPECT_EQ(next.rfind(first_id, 0), 0U) << logs.out;
    EXPECT_NE(next.find("\tclaude-haiku-5-5\tFirst question\n"), std::string::npos) << logs.out;

    logs = run(emulator.port(), db, "logs -n 1");
    ASSERT_EQ(logs.status, 0) << logs.err;
    EXPECT_EQ(logs.out, top + "\n");
    logs = run(emulator.port(), db, "logs --json");
    ASSERT_EQ(logs.status, 0) << logs.err;
    const rapidjson::Document d = parsed(logs);
    ASSERT_TRUE(d.IsObject()) << logs.out;
    ASSERT_EQ(d["conversations"].Size(), 2U) << logs.out;
    EXPECT_EQ(std::string(d["conversations"][0]["id"].GetString()), second_id);
    EXPECT_EQ(std::string(d["conversations"][1]["model"].GetString()), "claude-haiku-5-5");
    EXPECT_EQ(d["conversations"][1]["messages"].GetInt(), 2);
}

// cli.107: -c asks in the latest conversation, with the model that answered it; --conversation
// takes an id or a unique prefix of it, and -m still chooses. Today's main knew neither option.
TEST(CliAskStore, ContinueAndConversationAskInAStoredConversation) {
    emulator_test::EmulatorProcess emulator;
    const fs::path db = scratch() / "asks.db";
    const CliRun first =
        run(emulator.port(), db, "ask --json -m claude-haiku-5-5 'My name is Ada'");
    ASSERT_EQ(first.status, 0) << first.err;
    const std::string id = saved_id(first);

    const CliRun again = run(emulator.port(), db, "ask --json -c 'What is my name'");
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(saved_id(again), id);
    EXPECT_STREQ(parsed(again)["model"].GetString(), "claude-haiku-5-5");
    EXPECT_STREQ(parsed(again)["text"].GetString(),
                 "This is the emulator's answer to: What is my name");
    // The first exchange was sent again before the new question.
    EXPECT_GT(input_tokens_of(again), input_tokens_of(first)) << first.out << again.out;

    const std::string prefix = id.substr(5, 6);  // of the random part after conv-
    const CliRun third = run(emulator.port(), db,
                             "ask --json --conversation " + prefix + " -m claude-sonnet-5-5 third");
    ASSERT_EQ(third.status, 0) << third.err;
    EXPECT_EQ(saved_id(third), id);
    EXPECT_STREQ(parsed(third)["model"].GetString(), "claude-sonnet-5-5");
    const CliRun show = run(emulator.port(), db, "conversations show --json " + id);
    ASSERT_EQ(show.status, 0) << show.err;
    EXPECT_EQ(parsed(show)["messages"].GetInt(), 6) << show.out;

    CliRun r = run(emulator.port(), db, "ask --conversation conv-nope hi");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("--conversation conv-nope: no such conversation for user '"),
              std::string::npos)
        << r.err;
    r = run(emulator.port(), db, "ask -c --conversation " + id + " hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: --conversation and --continue exclude each other\n");
}

/// A 1x1 PNG.
const std::string kPng = std::string(
    "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx"
    "\x9c\x63\x60\0\0\0\x02\0\x01\x54\xa2\x4f\x5d\0\0\0\0IEND\xae\x42\x60\x82",
    67);

// cli.109: -a sends an image and a text file as the question's image and document blocks, kept
// in the saved conversation. Today's main had no -a.
TEST(CliAskStore, AttachedFilesAreImageAndDocumentBlocksOfTheQuestion) {
    emulator_test::EmulatorProcess emulator;
    const fs::path dir = scratch();
    std::ofstream(dir / "dot.png", std::ios::binary) << kPng;
    std::string notes;
    for (int i = 0; i < 100; ++i) notes += "note number " + std::to_string(i) + " of the file\n";
    std::ofstream(dir / "notes.txt") << notes;
    const fs::path db = dir / "asks.db";
    const CliRun plain = run(emulator.port(), db, "ask --json -m claude-sonnet-5-5 Describe these");
    const CliRun r =
        run(emulator.port(), db,
            "ask --json -m claude-sonnet-5-5 -a " + quoted((dir / "dot.png").string()) +
                " --attach " + quoted((dir / "notes.txt").string()) + " Describe these");
    ASSERT_EQ(r.status, 0) << r.err;
    // 100 lines of the file were sent too.
    EXPECT_GT(input_tokens_of(r), input_tokens_of(plain) + 400) << plain.out << r.out;
    const CliRun stored = run(emulator.port(), db, "conversations export " + saved_id(r));
    ASSERT_EQ(stored.status, 0) << stored.err;
    EXPECT_NE(stored.out.find(R"("media_type":"image/png")"), std::string::npos) << stored.out;
    EXPECT_NE(stored.out.find(R"("media_type":"text/plain","name":"notes.txt")"), std::string::npos)
        << stored.out;
}

// cli.109: a file that cannot be attached is a usage error naming it and why; nothing is called
// (nothing listens on port 9: a call would fail with exit 1) and nothing is saved.
TEST(CliAskStore, AFileThatCannotBeAttachedIsAUsageErrorAndNothingIsSent) {
    const fs::path dir = scratch();
    const fs::path db = dir / "asks.db";
    std::ofstream(dir / "doc.pdf", std::ios::binary) << "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
    std::ofstream(dir / "blob.bin", std::ios::binary) << std::string("\x01\x02\0\x03", 4);
    const std::string missing = (dir / "missing.png").string();
    CliRun r = run(9, db, "ask -m claude-sonnet-5-5 -a " + quoted(missing) + " hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: --attach " + missing + ": no such file\n");
    r = run(9, db, "ask -m claude-sonnet-5-5 -a " + quoted((dir / "blob.bin").string()) + " hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: --attach " + (dir / "blob.bin").string() +
                         ": not a type ask attaches (a png, jpeg, gif or webp image; a PDF or "
                         "plain text)\n");
    // gpt-6-luna's record accepts images only.
    r = run(9, db, "ask --json -m gpt-6-luna -a " + quoted((dir / "doc.pdf").string()) + " hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo ask: --attach " + (dir / "doc.pdf").string() +
                         ": model gpt-6-luna does not accept documents (application/pdf); its "
                         "catalog record accepts images only\n");
    EXPECT_STREQ(parsed(r)["error"]["kind"].GetString(), "usage");
    const CliRun logs = run(9, db, "logs");
    ASSERT_EQ(logs.status, 0) << logs.err;
    EXPECT_EQ(logs.out, "");
}

// cli.107-cli.109: the help tells of the options and of logs.
TEST(CliAskStore, TheHelpTellsOfTheNewOptionsAndOfLogs) {
    const CliRun ask = nucleo("ask --help");
    ASSERT_EQ(ask.status, 0) << ask.err;
    for (const char* option : {"-a,--attach", "-c,--continue", "--conversation", "--user"})
        EXPECT_NE(ask.out.find(option), std::string::npos) << option << "\n" << ask.out;
    EXPECT_NE(ask.out.find("nucleo logs lists them"), std::string::npos) << ask.out;
    const CliRun help = nucleo("help");
    ASSERT_EQ(help.status, 0) << help.err;
    EXPECT_NE(help.out.find("\n  logs "), std::string::npos) << help.out;
}

}  // namespace
}  // namespace nucleo::cli_test
