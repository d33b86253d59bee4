// `nucleo chat` coming back to a conversation, through pipes against the real nucleo-emulator:
// readable ids and their prefixes (cli.106), the model a resumed conversation keeps (chat.113).
//
// Every read is bounded (chat_support.hpp): no sleeps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat_support.hpp"
#include "emulator_client.hpp"

namespace nucleo {
namespace {

using namespace chat_test;

/// `nucleo conversations --user alice ARGS...` with the shipped config.
std::vector<std::string> conversations_argv(std::vector<std::string> args) {
    std::vector<std::string> argv = {
        NUCLEO_CLI, "conversations",
        "--config", std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml",
        "--user",   "alice"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// ownership.1, cli.106: a new id reads conv-…, without a class name; a unique prefix of it (or of
// its part after conv-) resumes it; an ambiguous prefix lists the candidates; an unknown one is
// named. An id minted before (ChatThinker-conv-…) still resolves, in full and by prefix.
TEST(ChatPipe, ReadableIdsAndTheirUniquePrefixesResumeAConversation) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun first = run_piped(emulator.port(), dir.path, {"--new"}, "first question\n");
    ASSERT_EQ(first.status, 0) << first.err;
    const std::string id = minted_id(first.err);
    ASSERT_TRUE(id.starts_with("conv-")) << first.err;
    EXPECT_EQ(id.find("Thinker"), std::string::npos) << id;

    for (const std::string& prefix : {id.substr(0, 9), id.substr(5, 6)}) {
        const ChatRun r =
            run_piped(emulator.port(), dir.path, {"--conversation", prefix}, "/history\n");
        ASSERT_EQ(r.status, 0) << prefix << ": " << r.err;
        EXPECT_NE(r.err.find("conversation " + id + " (resumed, 2 messages)"), std::string::npos)
            << prefix << ": " << r.err;
        EXPECT_NE(r.out.find("1. user: first question\n"), std::string::npos) << r.out;
    }

    // A conversation stored under an id of the old shape.
    const ChatRun exported =
        run_command(conversations_argv({"export", id}), emulator.port(), dir.path, "");
    ASSERT_EQ(exported.status, 0) << exported.err;
    const std::string old_id = "ChatThinker-conv-0ld0-123456789abc";
    std::string document = exported.out;
    document.replace(document.find(id), id.size(), old_id);
    const ChatRun imported =
        run_command(conversations_argv({"import", "-"}), emulator.port(), dir.path, document);
    ASSERT_EQ(imported.status, 0) << imported.err;

    for (const std::string& given : {old_id, std::string("ChatThinker"), std::string("0ld0")}) {
        const ChatRun r = run_piped(emulator.port(), dir.path, {"--conversation", given}, "");
        EXPECT_EQ(r.status, 0) << given << ": " << r.err;
        EXPECT_NE(r.err.find("conversation " + old_id + " (resumed, 2 messages)"),
                  std::string::npos)
            << given << ": " << r.err;
    }
    const ChatRun shown =
        run_command(conversations_argv({"show", "0ld0"}), emulator.port(), dir.path, "");
    EXPECT_EQ(shown.status, 0) << shown.err;
    EXPECT_NE(shown.out.find("conversation: " + old_id + "\n"), std::string::npos) << shown.out;

    // With a second new conversation, "conv-" starts both new ids: ambiguous, both listed,
    // nothing sent.
    const ChatRun second = run_piped(emulator.port(), dir.path, {"--new"}, "second question\n");
    ASSERT_EQ(second.status, 0) << second.err;
    const std::string second_id = minted_id(second.err);
    const auto calls_before = emulator.get("/stats").body;
    const ChatRun ambiguous =
        run_piped(emulator.port(), dir.path, {"--conversation", "conv-"}, "hello\n");
    EXPECT_EQ(ambiguous.status, 2) << ambiguous.err;
    EXPECT_NE(ambiguous.err.find("--conversation conv-: 2 conversations of user 'alice' start "
                                 "with it: "),
              std::string::npos)
        << ambiguous.err;
    EXPECT_NE(ambiguous.err.find(id), std::string::npos) << ambiguous.err;
    EXPECT_NE(ambiguous.err.find(second_id), std::string::npos) << ambiguous.err;
    EXPECT_EQ(ambiguous.err.find(old_id), std::string::npos) << ambiguous.err;
    EXPECT_EQ(emulator.get("/stats").body, calls_before);

    const ChatRun none = run_piped(emulator.port(), dir.path, {"--conversation", "conv-zzz"}, "");
    EXPECT_EQ(none.status, 2) << none.err;
    EXPECT_NE(none.err.find("--conversation conv-zzz: no such conversation for user 'alice'"),
              std::string::npos)
        << none.err;
}

// chat.113: -c and --conversation keep the model that answered the conversation, unless --model
// says otherwise.
TEST(ChatPipe, AResumedConversationKeepsItsModelUnlessModelIsGiven) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const std::string openai = "OPENAI_API_KEY=sk-test\nOPENAI_BASE_URL=" + emulator.url("/v1");
    const ChatRun first = run_piped(emulator.port(), dir.path,
                                    {"--default-model", "--model", "gpt-4.1"}, "hello\n", openai);
    ASSERT_EQ(first.status, 0) << first.err;
    const std::string id = minted_id(first.err);
    ASSERT_FALSE(id.empty()) << first.err;

    // Without --model the default would be Anthropic's first model (its key is set too).
    const ChatRun resumed =
        run_piped(emulator.port(), dir.path, {"--default-model", "-c"}, "again\n", openai);
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    const ChatRun by_id = run_piped(emulator.port(), dir.path,
                                    {"--default-model", "--conversation", id}, "more\n", openai);
    ASSERT_EQ(by_id.status, 0) << by_id.err;
    auto stats = emulator.get("/stats").body;
    EXPECT_NE(stats.find("\"openai\":3,"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"anthropic\":0,"), std::string::npos) << stats;

    // --model wins over the conversation's.
    const ChatRun other =
        run_piped(emulator.port(), dir.path,
                  {"--default-model", "--model", "claude-sonnet-5-5", "-c"}, "and now\n", openai);
    ASSERT_EQ(other.status, 0) << other.err;
    stats = emulator.get("/stats").body;
    EXPECT_NE(stats.find("\"anthropic\":1,"), std::string::npos) << stats;
}

// chat.115: /model switches the model that answers the same conversation; a bad id changes
// nothing; /cost counts across the switch; -c then resumes with the model that answered last.
TEST(ChatPipe, ModelSwitchesTheModelThatAnswersTheConversation) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const std::string openai = "OPENAI_API_KEY=sk-test\nOPENAI_BASE_URL=" + emulator.url("/v1");
    const ChatRun r = run_piped(emulator.port(), dir.path, {},
                                "hello\n/model gpt-4.1\nagain\n/model no-such-model\n/model\n"
                                "/history\n/cost\n",
                                openai);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string id = minted_id(r.err);
    auto stats = emulator.get("/stats").body;
    EXPECT_NE(stats.find("\"anthropic\":1,"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"openai\":1,"), std::string::npos) << stats;
    EXPECT_NE(r.err.find("[model gpt-4.1 (provider openai) answers from now on]"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("no-such-model"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("model: gpt-4.1 (provider openai)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3. user: again\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cost: 2 turns"), std::string::npos) << r.out;

    const ChatRun resumed =
        run_piped(emulator.port(), dir.path, {"--default-model", "-c"}, "more\n", openai);
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("conversation " + id + " (resumed, 4 messages)"), std::string::npos)
        << resumed.err;
    stats = emulator.get("/stats").body;
    EXPECT_NE(stats.find("\"openai\":2,"), std::string::npos) << stats;
}

// chat.116: /system replaces the conversation's instructions after it has been answered; they
// are saved, the next turn goes out with them, and a resumed session shows them.
TEST(ChatPipe, SystemReplacesTheInstructionsOfTheConversation) {
    emulator_test::EmulatorProcess emulator;
    TempDir dir;
    const ChatRun r =
        run_piped(emulator.port(), dir.path, {}, "hello\n/system Answer like a pirate.\nagain\n");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string id = minted_id(r.err);
    EXPECT_NE(r.err.find("[the instructions of conversation " + id + " are replaced"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("This is the emulator's answer to: again"), std::string::npos) << r.out;
    EXPECT_NE(emulator.get("/stats").body.find("\"anthropic\":2,"), std::string::npos);

    const ChatRun exported =
        run_command(conversations_argv({"export", id}), emulator.port(), dir.path, "");
    ASSERT_EQ(exported.status, 0) << exported.err;
    EXPECT_NE(exported.out.find("Answer like a pirate."), std::string::npos) << exported.out;
    EXPECT_EQ(exported.out.find("a helpful assistant in a terminal chat"), std::string::npos)
        << exported.out;

    const ChatRun shown = run_piped(emulator.port(), dir.path, {"-c"}, "/system\n");
    ASSERT_EQ(shown.status, 0) << shown.err;
    EXPECT_EQ(shown.out, "Answer like a pirate.\n");
}

}  // namespace
}  // namespace nucleo
