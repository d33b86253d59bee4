// `nucleo chat`, the built binary against the real nucleo-emulator with the
// shipped config and an SQLite store in a temporary folder: a scripted session through a
// pseudo-terminal (a real tty: prompts, streamed answer, /cost, /history, /quit), and scripts
// through pipes (two messages, then a second process resuming the conversation; an unknown slash
// command; tool calls; a provider that is down; start-up errors).
//
// Every read is bounded: poll() with the time left of one generous deadline per test, which
// fails the test (and kills the child) when reached. No sleeps.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "chat_support.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

using namespace chat_test;

// ---- the tests --------------------------------------------------------------------------------

TEST(ChatTerminal, AScriptedSessionStreamsAnswersAndReportsCostAndHistory) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string greeting = chat.until(kPrompt);
    EXPECT_NE(minted_id(greeting), "") << greeting;
    EXPECT_NE(greeting.find("\x1b["), std::string::npos) << "a terminal gets colour";

    chat.type("Where is my parcel");
    const std::string answer = chat.until(kPrompt);
    EXPECT_NE(answer.find("This is the emulator's answer to: Where is my parcel"),
              std::string::npos)
        << answer;
    EXPECT_NE(answer.find("1 round"), std::string::npos) << answer;
    // The answer came as a stream: the emulator served a streamed response.
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"streams\":1"), std::string::npos) << stats.body;

    chat.type("/cost");
    const std::string cost = chat.until(kPrompt);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        cost, m,
        std::regex("cost: 1 turn, 1 round; tokens in ([0-9]+) \\(cache read [0-9]+, cache write "
                   "[0-9]+\\), out ([0-9]+); cache hit rate [0-9.]+%; spend \\$([0-9.]+)")))
        << cost;
    EXPECT_GT(std::stoll(m[1].str()), 0);
    EXPECT_GT(std::stoll(m[2].str()), 0);
    EXPECT_GT(std::stod(m[3].str()), 0.0);

    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: Where is my parcel"), std::string::npos) << history;
    EXPECT_NE(history.find("2. assistant: This is the emulator's answer to: Where is my parcel"),
              std::string::npos)
        << history;

    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

TEST(ChatPipe, TwoMessagesThenASecondProcessResumesTheConversation) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first =
        run_piped(emulator.port(), dir.path, {"--new"}, "first question\nsecond question\n");
    ASSERT_FALSE(first.timed_out);
    ASSERT_EQ(first.status, 0) << first.err;
    // stdout is for scripts: the two answers, one line each, no prompt, no ANSI.
    EXPECT_EQ(first.out,
              "This is the emulator's answer to: first question\n"
              "This is the emulator's answer to: second question\n");
    const std::string id = minted_id(first.err);
    ASSERT_FALSE(id.empty()) << first.err;

    const ChatRun second = run_piped(emulator.port(), dir.path, {"--conversation", id},
                                     "/history\nthird question\n/history\n");
    ASSERT_FALSE(second.timed_out);
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_NE(second.err.find("conversation " + id + " (resumed, 4 messages)"), std::string::npos)
        << second.err;
    EXPECT_EQ(second.out.find("\x1b["), std::string::npos);
    EXPECT_EQ(second.out.find(kPrompt), std::string::npos);
    const std::string restored =
        "1. user: first question\n"
        "2. assistant: This is the emulator's answer to: first question\n"
        "3. user: second question\n"
        "4. assistant: This is the emulator's answer to: second question\n";
    EXPECT_EQ(second.out, restored + "This is the emulator's answer to: third question\n" +
                              restored +
                              "5. user: third question\n"
                              "6. assistant: This is the emulator's answer to: third question\n");
}

TEST(ChatPipe, AnUnknownSlashCommandIsNamedAndTheSessionGoesOn) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r =
        run_piped(emulator.port(), dir.path, {}, "/frobnicate now\n/compact 10x\nhello\n/cost\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("unknown command '/frobnicate'"), std::string::npos) << r.err;
    for (const char* c : {"/history", "/transcript", "/compact", "/cost", "/new", "/quit"}) {
        EXPECT_NE(r.err.find(c), std::string::npos) << c << " not listed: " << r.err;
    }
    EXPECT_NE(
        r.err.find("nucleo chat: /compact: TOKENS must be a positive whole number, got '10x'"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cost: 1 turn"), std::string::npos) << r.out;
}

// chat.112: /undo takes back the last exchange and saves; /retry asks the last message again and
// replaces its answer; both are kept when the conversation is resumed.
TEST(ChatPipe, UndoTakesBackTheLastExchangeAndRetryReplacesItsAnswer) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first = run_piped(emulator.port(), dir.path, {"--new"},
                                    "first question\nsecond question\n/undo\n/history\n"
                                    "third question\n/retry\n/history\n");
    ASSERT_FALSE(first.timed_out);
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_NE(first.err.find("[took back \"second question\" and 1 message after it]"),
              std::string::npos)
        << first.err;
    EXPECT_NE(first.err.find("[took back \"third question\" and 1 message after it]"),
              std::string::npos)
        << first.err;
    const std::string after_undo =
        "1. user: first question\n"
        "2. assistant: This is the emulator's answer to: first question\n";
    const std::string after_retry =
        after_undo +
        "3. user: third question\n"
        "4. assistant: This is the emulator's answer to: third question\n";
    EXPECT_EQ(first.out,
              "This is the emulator's answer to: first question\n"
              "This is the emulator's answer to: second question\n" +
                  after_undo +
                  "This is the emulator's answer to: third question\n"
                  "This is the emulator's answer to: third question\n" +
                  after_retry);
    const std::string id = minted_id(first.err);
    ASSERT_FALSE(id.empty()) << first.err;

    // Saved: a second process resumes the conversation as the first left it; --system there is
    // said to be unused.
    const ChatRun second = run_piped(emulator.port(), dir.path,
                                     {"--conversation", id, "--system", "Be terse."}, "/history\n");
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_EQ(second.out, after_retry);
    EXPECT_NE(second.err.find("--system is not applied: conversation " + id +
                              " keeps the instructions it was started with"),
              std::string::npos)
        << second.err;

    // Nothing of the user's to take back: said, nothing changes.
    const ChatRun empty = run_piped(emulator.port(), dir.path, {"--new"}, "/undo\n/history\n");
    EXPECT_EQ(empty.status, 0) << empty.err;
    EXPECT_NE(empty.err.find("nothing to take back"), std::string::npos) << empty.err;
    EXPECT_EQ(empty.out, "(no messages yet)\n");
}

TEST(ChatPipe, AnUnknownConversationIdIsAStartUpErrorNamingItAndTheStore) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path,
                                {"--conversation", "ChatThinker-conv-nope"}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("ChatThinker-conv-nope"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("user 'alice'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stores.persistent (sqlite)"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

// persistence.106: the config's stores.session is opened at start; a plugin that does not exist
// is a start-up error naming the file and line of the choice, before any request.
TEST(ChatPipe, ASessionStoreThatCannotBeOpenedIsAStartUpErrorNamingItsLine) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    std::ifstream in(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto swap = [&](const std::string& from, const std::string& to) {
        const auto at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    swap("include: models.yaml",
         "include: \"" + std::string(NUCLEO_SOURCE_DIR) + "/config/models.yaml\"");
    swap("  session:\n    plugin: memory\n", "  session:\n    plugin: redisx\n");
    const fs::path config = dir.path / "session.yaml";
    std::ofstream(config) << text;
    const auto line =
        1 + std::count(text.begin(), text.begin() + text.find("    plugin: redisx"), '\n');
    const ChatRun r =
        run_piped(emulator.port(), dir.path, {"--config", config.string()}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("session.yaml:" + std::to_string(line) + ":5: stores.session (redisx)"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

TEST(ChatPipe, ABadModelIdIsAStartUpErrorListingTheCatalog) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--model", "no-such-model"}, "hello\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("no-such-model"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("claude-sonnet-5-5"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ChatPipe, AMissingApiKeyIsAStartUpErrorBeforeAnyRequest) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(emulator.port(), dir.path, {}, "hello\n", "ANTHROPIC_API_KEY=");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(count_lines(r.err), 1U) << r.err;
    EXPECT_NE(r.err.find("provider 'anthropic' has no api_key"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"total\":0"), std::string::npos);
}

TEST(ChatPipe, AFailedTurnIsOneLineIsNotKeptAndTheScriptExitsOne) {
    // Nothing listens on the discard port: the turn fails after the client's retries. The
    // session goes on, the failed message is not in the conversation (ownership.105), and a
    // script learns of the failure from the exit status (chat.110).
    TempDir dir;
    const ChatRun r = run_piped(9, dir.path, {}, "hello\n/history\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 1) << r.err;
    const auto failed = r.err.find(
        "nucleo chat: model claude-sonnet-5-5 (provider anthropic): the turn failed "
        "and was not kept");
    ASSERT_NE(failed, std::string::npos) << r.err;
    EXPECT_EQ(count_lines(r.err.substr(failed)), 1U) << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:9"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "(no messages yet)\n");
}

TEST(ChatPipe, AReaderThatGoesAwayDoesNotEndTheSessionBeforeItSaves) {
    // chat.111: `nucleo chat | head -1` -- stdout's reader is gone before the first answer. The
    // child starts with SIGPIPE at its default (as from a shell), and chat ignores it, so each
    // turn completes and is saved and the session ends normally at end of input.
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    int in[2], out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    const auto argv = chat_argv({});
    const auto env = chat_env(emulator.port(), dir.path, false);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(null, 2);
        for (int fd : {in[0], in[1], out[0], out[1], null}) ::close(fd);
        exec_child(argv, env);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(out[0]);  // the reader is gone
    ::signal(SIGPIPE, SIG_IGN);
    const std::string input = "hello\nhello again\n";
    EXPECT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    ::close(in[1]);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    ASSERT_FALSE(WIFSIGNALED(st)) << "chat ended by signal " << WTERMSIG(st);
    EXPECT_EQ(WEXITSTATUS(st), 0);
    // Both turns were saved: -c resumes the conversation and /history lists them.
    const ChatRun r = run_piped(emulator.port(), dir.path, {"-c"}, "/history\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_NE(r.out.find("1. user: hello\n"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.out.find("3. user: hello again\n"), std::string::npos) << r.out << r.err;
}

TEST(ChatPipe, ToolCallsShowAsTheyHappenAndTheAnswerUsesTheResult) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = dir.path / "docs";
    fs::create_directories(tools);
    std::ofstream(tools / "notes.txt") << "hello\n";
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "what is in the folder\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    // The emulator calls the first declared tool (list_files) with no arguments (none required).
    EXPECT_NE(r.err.find("[tool list_files {}] ok\n"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "The tool list_files returned: notes.txt\n");
    EXPECT_NE(r.err.find("2 rounds"), std::string::npos) << r.err;
}

TEST(ChatPipe, TheWholeConversationIsCachedSoTheHitRateClimbsOverTurns) {
    // Every turn resends the conversation; marked for caching, the next turn reads the prefix
    // from the cache (the emulator's prefix cache, above the model's 1,024-token minimum).
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\nagain\nonce more\n/cost\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<long long> reads;
    const std::regex turn_note("rounds, [0-9]+ in \\(cache read ([0-9]+)\\)");
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), turn_note);
         it != std::sregex_iterator(); ++it) {
        reads.push_back(std::stoll((*it)[1].str()));
    }
    ASSERT_EQ(reads.size(), 3U) << r.err;
    EXPECT_LT(reads[0], reads[1]) << r.err;
    EXPECT_LT(reads[1], reads[2]) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("cache hit rate ([0-9.]+)%"))) << r.out;
    EXPECT_GT(std::stod(m[1].str()), 0.0);
}

TEST(ChatPipe, CompactReportsTheLevelAndNewStartsAnotherConversation) {
    // The user's messages and the final answers are non-compactable: what /compact can shrink is
    // a tool result, so the model lists a folder of many long names first.
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\n/compact\n/transcript\n/new\n/history\n/transcript\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m,
        std::regex("compaction: level ([A-Z]+), ([0-9]+) -> ([0-9]+) tokens \\(target ([0-9]+), "
                   "(met|NOT met)\\)")))
        << r.out;
    EXPECT_NE(m[1].str(), "NONE");
    EXPECT_LT(std::stoll(m[3].str()), std::stoll(m[2].str()));
    EXPECT_EQ(std::stoll(m[4].str()), std::stoll(m[2].str()) / 2);
    // compaction.106: whether the target was met follows from the numbers printed.
    EXPECT_EQ(m[5].str(), std::stoll(m[3].str()) <= std::stoll(m[4].str()) ? "met" : "NOT met");
    // The transcript after compaction: the question and the answer word for word, the listing
    // no longer whole.
    const std::string after = r.out.substr(static_cast<std::size_t>(m.position(0)));
    EXPECT_NE(after.find("user:\nlist them\n"), std::string::npos) << after;
    EXPECT_NE(after.find("assistant:\nThe tool list_files returned: quarterly-shipment-report"),
              std::string::npos)
        << after;
    EXPECT_EQ(after.find("depot-number-79-with"), std::string::npos) << after;
    // /new: a second id minted; its history is empty and its transcript too.
    const std::string first = minted_id(r.err);
    const std::string second = minted_id(r.err.substr(r.err.find(first) + first.size()));
    EXPECT_FALSE(second.empty()) << r.err;
    EXPECT_NE(first, second);
    EXPECT_TRUE(r.out.ends_with("(no messages yet)\n")) << r.out;
}

// caching.131, caching.132: the shipped default model takes cache diagnostics; the turn after
// /compact, whose earlier messages changed, gets one line saying why its cache missed and that
// Nucleo placed its marks anew, and the turns before it none.
TEST(ChatPipe, ATurnWhoseCacheMissedSaysWhyInOneLine) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const fs::path tools = many_long_names(dir.path);
    const ChatRun r = run_piped(emulator.port(), dir.path, {"--tools-dir", tools.string()},
                                "list them\nagain\n/compact\nonce more\n");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::regex missed(
        "\\[cache missed in round [0-9]+: an earlier message changed since the previous answer "
        "\\(about ([0-9]+) input tokens not read from the cache\\); Nucleo placed its marks "
        "anew after compaction or an edit rewrote earlier messages\\]");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, missed)) << r.err;
    EXPECT_GT(std::stoll(m[1].str()), 0);
    // Only the turn after the compaction missed: one note in the session.
    EXPECT_NE(r.out.find("compaction: level"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("[cache missed", static_cast<std::size_t>(m.position(0)) + 1),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.substr(0, static_cast<std::size_t>(m.position(0))).find("[cache missed"),
              std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace nucleo
