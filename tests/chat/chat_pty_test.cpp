// `nucleo chat` at a terminal, through a pseudo-terminal against the real nucleo-emulator: line
// editing and the kept history, escape sequences in an answer, Ctrl-C during a turn.
//
// Every read is bounded (chat_support.hpp): no sleeps.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "chat_support.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

using namespace chat_test;

/// chat.108: the resume command printed on the way out, without the config path.
std::string resume_line(const std::string& id) {
    return "--user alice --conversation " + id;
}

// chat.102, chat.103: the arrows edit the line, Up recalls an earlier line, and the history is
// there again in the next session.
TEST(ChatTerminal, LineEditingAndAHistoryKeptAcrossSessions) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    std::string id;
    {
        PtyChat chat(emulator.port(), dir.path, {});
        ASSERT_TRUE(chat.started());
        id = minted_id(chat.until(kPrompt));
        // "hello wrld", three Left arrows, "o": the model gets "hello world".
        chat.edit("hello wrld\x1b[D\x1b[D\x1b[Do\r");
        EXPECT_NE(chat.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
                  std::string::npos);
        chat.edit("\x1b[A\r");  // Up: the line again
        EXPECT_NE(chat.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
                  std::string::npos);
        chat.type("/history");
        const std::string history = chat.until(kPrompt);
        EXPECT_NE(history.find("3. user: hello world"), std::string::npos) << history;
        EXPECT_EQ(history.find("wrld"), std::string::npos) << history;
        chat.type("/exit");  // the session ends as a user ends it, the resume line printed
        EXPECT_EQ(chat.finish(), 0) << chat.everything();
        EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
    }
    const fs::path file = dir.path / "state" / "nucleo" / "chat_history";
    ASSERT_TRUE(fs::exists(file));
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    std::ifstream in(file);
    const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(std::regex_search(saved, std::regex("hello(\\\\040| )world"))) << saved;

    PtyChat again(emulator.port(), dir.path, {"--conversation", id});
    ASSERT_TRUE(again.started());
    again.until(kPrompt);
    // Up as many times as the saved history holds entries after the last "hello world" (the
    // slash commands typed after it are history too), then Enter: the last session's line.
    std::vector<std::string> entries;
    {
        std::istringstream lines(saved);
        for (std::string entry; std::getline(lines, entry);)
            if (!entry.empty() && !entry.starts_with("_HiStOrY_")) entries.push_back(entry);
    }
    std::size_t ups = 0;
    for (std::size_t i = entries.size(); i-- > 0;) {
        ++ups;
        if (std::regex_search(entries[i], std::regex("hello(\\\\040| )world"))) break;
    }
    ASSERT_GT(ups, 0U) << saved;
    std::string keys;
    for (std::size_t i = 0; i < ups; ++i) keys += "\x1b[A";
    again.edit(keys + "\r");
    EXPECT_NE(again.until(kPrompt).find("This is the emulator's answer to: hello world\r\n"),
              std::string::npos);
    again.type("/exit");
    EXPECT_EQ(again.finish(), 0) << again.everything();
}

// chat.101: an escape sequence in an answer is shown, never obeyed; a typed line holding an
// escape character (Ctrl-V Esc inserts one, as a paste would) is sent like any text.
TEST(ChatTerminal, AnEscapeSequenceInAnAnswerLeavesTheScreenIntact) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    chat.until(kPrompt);
    chat.edit("wipe \x16\x1b[2J now\r");
    const std::string answer = chat.until(kPrompt);
    EXPECT_NE(answer.find("This is the emulator's answer to: wipe \\x1b[2J now"), std::string::npos)
        << answer;
    EXPECT_EQ(answer.find("\x1b[2J"), std::string::npos) << "the screen was cleared: " << answer;
    EXPECT_EQ(answer.find("the turn failed"), std::string::npos) << answer;
    chat.type("/transcript");
    const std::string transcript = chat.until(kPrompt);
    EXPECT_NE(transcript.find("wipe \\x1b[2J now"), std::string::npos) << transcript;
    EXPECT_EQ(transcript.find("\x1b[2J"), std::string::npos) << transcript;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.104, chat.105: while the provider takes its time the status line says why the turn
// waits; Ctrl-C cancels the turn (the conversation keeps the user's message, no answer), the
// session goes on, and Ctrl-C at the prompt ends it.
TEST(ChatTerminal, CtrlCCancelsAWaitingTurnWhoseStatusLineSaysWhy) {
    // The emulator answers after 10 s: the turn is cancelled long before.
    emulator_test::EmulatorProcess emulator({"--latency-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type("a slow question");
    chat.until("connecting to anthropic (claude-sonnet-5-5)");
    chat.keys("\x03");
    const std::string cancelled = chat.until(kPrompt);
    EXPECT_NE(
        cancelled.find("[cancelled before the answer; conversation " + id + " holds your message]"),
        std::string::npos)
        << cancelled;
    EXPECT_EQ(cancelled.find("the turn failed"), std::string::npos) << cancelled;
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: a slow question"), std::string::npos) << history;
    EXPECT_EQ(history.find("2. "), std::string::npos) << history;
    chat.edit("\x03");  // at the prompt: the end
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
    EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
}

// chat.104: Ctrl-C while the answer streams: what was shown stays, marked as cut, and is not
// kept in the conversation.
TEST(ChatTerminal, CtrlCWhileTheAnswerStreamsLeavesItCutAndNotKept) {
    // The emulator's stream stops for 10 s halfway: part of the answer is on screen.
    emulator_test::EmulatorProcess emulator({"--stream-stall-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type(
        "tell me a long story about parcels and depots and the people who sort them at night");
    chat.until("This is the emulator's answer to: tell me");
    chat.keys("\x03");
    const std::string rest = chat.until(kPrompt);
    EXPECT_NE(rest.find("[cancelled: the answer above is cut and was not kept; conversation " + id +
                        " holds your message]"),
              std::string::npos)
        << rest;
    EXPECT_EQ(rest.find("who sort them at night\r\n"), std::string::npos)
        << "the whole answer came: " << rest;
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: tell me a long story"), std::string::npos) << history;
    EXPECT_EQ(history.find("2. "), std::string::npos) << history;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.104: a second Ctrl-C right after the first ends the session (at once when the turn is
// still winding down, at the prompt when it has): the answer that takes 10 s never comes.
TEST(ChatTerminal, ASecondCtrlCDuringATurnEndsTheSession) {
    emulator_test::EmulatorProcess emulator({"--latency-ms", "10000"});
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    chat.type("another slow question");
    chat.until("connecting to anthropic");
    chat.keys("\x03");
    chat.until("cancelling");
    chat.keys("\x03");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
    EXPECT_EQ(chat.everything().find("This is the emulator's answer"), std::string::npos)
        << chat.everything();
    EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
}

/// How many requests the emulator answered for Anthropic's dialect (its /stats).
int anthropic_calls(emulator_test::EmulatorProcess& emulator) {
    const std::string stats = emulator.get("/stats").body;
    std::smatch m;
    return std::regex_search(stats, m, std::regex("\"anthropic\":(\\d+)")) ? std::stoi(m[1]) : -1;
}

// chat.114: a bracketed paste of three lines is one message, sent by Enter; Alt-Enter puts a
// newline in a typed message.
TEST(ChatTerminal, APasteOfSeveralLinesIsOneMessage) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    chat.until(kPrompt);
    chat.edit("\x1b[200~line one\rline two\rline three\x1b[201~\r");
    EXPECT_NE(chat.until(kPrompt).find("This is the emulator's answer to: line one"),
              std::string::npos);
    EXPECT_EQ(anthropic_calls(emulator), 1);
    chat.edit("first part\x1b\rsecond part\r");
    chat.until(kPrompt);
    EXPECT_EQ(anthropic_calls(emulator), 2);
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: line one line two line three"), std::string::npos) << history;
    EXPECT_NE(history.find("3. user: first part second part"), std::string::npos) << history;
    EXPECT_EQ(history.find("5. "), std::string::npos) << history;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.114: Ctrl-C at a half-typed line clears it and the session goes on; at an empty line it
// ends the session (chat.104).
TEST(ChatTerminal, CtrlCClearsAHalfTypedLineAndEndsTheSessionAtAnEmptyOne) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    const std::string id = minted_id(chat.until(kPrompt));
    // Ctrl-C once the line is on screen: the terminal flushes keys not yet read when it sends
    // SIGINT, as it would after a person's slower typing.
    chat.edit("a half-typed thought");
    chat.until("a half-typed thought");
    chat.keys("\x03");
    chat.until(kPrompt);  // a fresh prompt, the session still on
    chat.edit("kept\r");
    const std::string answer = chat.until(kPrompt);
    EXPECT_NE(answer.find("This is the emulator's answer to: kept\r\n"), std::string::npos)
        << answer;
    EXPECT_EQ(answer.find("half-typed thought kept"), std::string::npos) << answer;
    EXPECT_EQ(anthropic_calls(emulator), 1);
    chat.edit("\x03");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
    EXPECT_NE(chat.everything().find(resume_line(id)), std::string::npos) << chat.everything();
}

// chat.117: the records the library logs during a turn (here the transport's retry warnings: the
// emulator answers after 1.5 s, the instance gives up on a silence of 300 ms) each start a line
// of their own: the status line was erased first, never left for a record to run into.
TEST(ChatTerminal, ALogRecordDuringATurnNeverSharesTheStatusLine) {
    emulator_test::EmulatorProcess emulator({"--latency-ms", "1500"});
    TempDir dir;
    const fs::path config = dir.path / "nucleo.yaml";
    std::ofstream(config) << "include: " << NUCLEO_SOURCE_DIR << "/config/models.yaml\n"
                          << "providers:\n"
                          << "  anthropic:\n"
                          << "    plugin: anthropic\n"
                          << "    base_url: ${ANTHROPIC_BASE_URL}\n"
                          << "    api_key: ${ANTHROPIC_API_KEY}\n"
                          << "    transport: {idle_timeout_ms: 300, deadline_ms: 4000}\n"
                          << "  openai: {plugin: openai}\n"
                          << "  openai-responses: {plugin: openai-responses}\n"
                          << "  bedrock: {plugin: bedrock}\n"
                          << "  gemini: {plugin: gemini}\n";
    PtyChat chat(emulator.port(), dir.path, {"--config", config.string()});
    ASSERT_TRUE(chat.started());
    chat.until(kPrompt);
    chat.type("hello");
    const std::string turn = chat.until(kPrompt);
    std::size_t records = 0;
    for (std::size_t at = turn.find("[warning] "); at != std::string::npos;
         at = turn.find("[warning] ", at + 1)) {
        ++records;
        // What came just before the record: the status line's erasure or a line's end.
        const std::string before = turn.substr(0, at);
        EXPECT_TRUE(before.ends_with("\r\x1b[2K") || before.ends_with("\n"))
            << "record " << records << ":\n"
            << turn;
    }
    EXPECT_GE(records, 1U) << turn;
    EXPECT_NE(turn.find("retrying"), std::string::npos) << turn;
    chat.type("/quit");
    chat.finish();
}

// chat.112: /retry at a terminal asks the last message again and replaces its answer.
TEST(ChatTerminal, RetryReplacesTheLastAnswer) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    PtyChat chat(emulator.port(), dir.path, {});
    ASSERT_TRUE(chat.started());
    chat.until(kPrompt);
    chat.type("once more");
    chat.until(kPrompt);
    chat.type("/retry");
    const std::string retried = chat.until(kPrompt);
    EXPECT_NE(retried.find("[took back \"once more\" and 1 message after it]"), std::string::npos)
        << retried;
    EXPECT_NE(retried.find("This is the emulator's answer to: once more"), std::string::npos)
        << retried;
    EXPECT_EQ(anthropic_calls(emulator), 2);
    chat.type("/history");
    const std::string history = chat.until(kPrompt);
    EXPECT_NE(history.find("1. user: once more"), std::string::npos) << history;
    EXPECT_EQ(history.find("3. "), std::string::npos) << history;
    chat.type("/quit");
    EXPECT_EQ(chat.finish(), 0) << chat.everything();
}

// chat.106, chat.109, --system: /history labels tool results as such; -c resumes the user's
// latest conversation; /help lists every command.
TEST(ChatPipe, ContinueResumesTheLatestConversationAndHistoryLabelsToolResults) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first = run_piped(emulator.port(), dir.path, {}, "an older one\n");
    ASSERT_EQ(first.status, 0) << first.err;
    const fs::path tools = dir.path / "docs";
    fs::create_directories(tools);
    std::ofstream(tools / "notes.txt") << "hello\n";
    const ChatRun second = run_piped(emulator.port(), dir.path,
                                     {"--tools-dir", tools.string(), "--system", "Be brief."},
                                     "what is in the folder\n");
    ASSERT_EQ(second.status, 0) << second.err;
    const std::string latest = minted_id(second.err);
    ASSERT_FALSE(latest.empty()) << second.err;
    {
        // --system is the conversation's objective: the stored document holds it.
        std::string bytes;
        for (const char* file : {"chat.db", "chat.db-wal"}) {
            std::ifstream db(dir.path / file, std::ios::binary);
            bytes.append(std::istreambuf_iterator<char>(db), std::istreambuf_iterator<char>());
        }
        EXPECT_NE(bytes.find("Be brief."), std::string::npos);
    }

    const ChatRun resumed = run_piped(emulator.port(), dir.path, {"-c"}, "/history\n/help\n");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("conversation " + latest + " (resumed, 4 messages)"),
              std::string::npos)
        << resumed.err;
    EXPECT_NE(resumed.out.find("1. user: what is in the folder\n"), std::string::npos)
        << resumed.out;
    EXPECT_NE(resumed.out.find("3. tool result: [tool result of "), std::string::npos)
        << resumed.out;
    const auto help_at = resumed.out.find("\n/history ");
    ASSERT_NE(help_at, std::string::npos) << resumed.out;
    const std::string help = resumed.out.substr(help_at);
    for (const char* c :
         {"/history", "/transcript", "/compact", "/cost", "/new", "/quit", "/exit", "/help"}) {
        EXPECT_NE(help.find(c), std::string::npos) << c << ": " << help;
    }

    const ChatRun nobody =
        run_piped(emulator.port(), dir.path, {"--continue", "--user", "bob"}, "");
    EXPECT_EQ(nobody.status, 0) << nobody.err;
    EXPECT_NE(nobody.err.find("user 'bob' has no conversation in stores.persistent (sqlite"),
              std::string::npos)
        << nobody.err;
    const ChatRun both = run_piped(emulator.port(), dir.path, {"-c", "--new"}, "");
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("--conversation, --continue and --new exclude each other"),
              std::string::npos)
        << both.err;
}

// chat.107: without --model, the first model whose provider has its key: here only OpenAI's is
// set, so the chat talks to gpt-4.1 rather than failing on Anthropic's missing key.
TEST(ChatPipe, TheDefaultModelIsOneWhoseKeyIsSet) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r = run_piped(
        emulator.port(), dir.path, {"--default-model"}, "hello\n/cost\n",
        "ANTHROPIC_API_KEY=\nOPENAI_API_KEY=sk-test\nOPENAI_BASE_URL=" + emulator.url("/v1"));
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    const auto stats = emulator.get("/stats");
    EXPECT_NE(stats.body.find("\"openai\":1,"), std::string::npos) << stats.body;
    EXPECT_NE(stats.body.find("\"anthropic\":0,"), std::string::npos) << stats.body;
}

// cli.102: --emulator talks to an emulator of the session's own, whatever the config's base URLs
// and keys say (here: no key, and nothing listens at Anthropic's base URL).
TEST(ChatPipe, TheEmulatorOptionTalksToAnEmulatorOfItsOwn) {
    TempDir dir;
    const ChatRun r = run_piped(9, dir.path, {"--emulator", "--new"}, "hello\n/cost\n",
                                "ANTHROPIC_API_KEY=\nOPENAI_API_KEY=\nAWS_ACCESS_KEY_ID=");
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: hello\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.rfind("nucleo chat: answers come from nucleo-emulator at http://127.0.0.1:", 0),
              0U)
        << r.err;
}

}  // namespace
}  // namespace nucleo
