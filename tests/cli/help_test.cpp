// `nucleo --help`, `nucleo help CMD`, `nucleo CMD -h/--help`, `nucleo --version` and the usage
// errors: what a newcomer types first, each exiting with the status docs/cli-json.md gives.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "cli_support.hpp"

namespace nucleo::cli_test {
namespace {

TEST(CliHelp, EveryCommandTakesHelpAndHelpCommandPrintsTheSame) {
    for (const std::string& name : all_commands()) {
        const CliRun long_form = nucleo(name + " --help");
        EXPECT_EQ(long_form.status, 0) << name << ": " << long_form.err;
        EXPECT_NE(long_form.out.find("nucleo " + name), std::string::npos) << long_form.out;
        EXPECT_NE(long_form.out.find("-h,--help"), std::string::npos) << long_form.out;
        EXPECT_EQ(long_form.err, "") << name;
        const CliRun short_form = nucleo(name + " -h");
        EXPECT_EQ(short_form.status, 0) << name << ": " << short_form.err;
        EXPECT_EQ(short_form.out, long_form.out) << name;
        const CliRun help = nucleo("help " + name);
        EXPECT_EQ(help.status, 0) << name << ": " << help.err;
        EXPECT_EQ(help.out, long_form.out) << name;
    }
}

TEST(CliHelp, GlobalHelpListsEveryCommandAlignedWithoutTabs) {
    for (const char* form : {"--help", "-h", "help"}) {
        const CliRun r = nucleo(form);
        ASSERT_EQ(r.status, 0) << form << ": " << r.err;
        EXPECT_EQ(r.out.find('\t'), std::string::npos) << r.out;
        // Each command's summary starts in one column.
        std::size_t column = std::string::npos;
        for (const std::string& name : all_commands()) {
            const std::size_t at = r.out.find("\n  " + name + " ");
            ASSERT_NE(at, std::string::npos) << name << " not listed:\n" << r.out;
            const std::size_t start = at + 1;
            const std::size_t summary = r.out.find_first_not_of(' ', start + 2 + name.size());
            if (column == std::string::npos) column = summary - start;
            EXPECT_EQ(summary - start, column) << name << " misaligned:\n" << r.out;
        }
        EXPECT_NE(r.out.find("Exit status: 0 success, 1 a call or runtime failure, 2 usage or bad input"),
                  std::string::npos)
            << r.out;
    }
    // With nothing to do, the help goes to stderr and the status is usage.
    const CliRun bare = nucleo("");
    EXPECT_EQ(bare.status, 2);
    EXPECT_EQ(bare.out, "");
    EXPECT_NE(bare.err.find("chat"), std::string::npos) << bare.err;
}

TEST(CliHelp, VersionFlagPrintsTheVersionLine) {
    const CliRun flag = nucleo("--version");
    ASSERT_EQ(flag.status, 0) << flag.err;
    EXPECT_EQ(flag.out.rfind("nucleo ", 0), 0u) << flag.out;
    EXPECT_NE(flag.out.find("(plugin ABI "), std::string::npos) << flag.out;
    EXPECT_EQ(flag.out, nucleo("version").out);
}

TEST(CliHelp, UsageErrorsExitTwoWithOneLine) {
    CliRun r = nucleo("frobnicate");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("nucleo: unknown command 'frobnicate'\n", 0), 0u) << r.err;
    r = nucleo("help frobnicate");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo help: unknown command 'frobnicate'\n");
    r = nucleo("models --config");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo models: option --config needs a value\n");
    r = nucleo("models --colour red");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo models: unknown option --colour\n");
    r = nucleo("version extra");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo version: unexpected argument 'extra'\n");
    r = nucleo("--frobnicate");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("nucleo: unknown option --frobnicate\n", 0), 0u) << r.err;
}

// cli.101: an unknown command is the word typed, not the last one, with the command it was
// likely meant as; usage errors still exit 2.
TEST(CliHelp, AnUnknownCommandIsNamedWithTheNearestCommand) {
    CliRun r = nucleo("aks hi");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("nucleo: unknown command 'aks' (did you mean 'ask'?)\n", 0), 0u) << r.err;
    r = nucleo("conversation list");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("nucleo: unknown command 'conversation' (did you mean 'conversations'?)\n", 0),
              0u)
        << r.err;
    r = nucleo("help chta");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "nucleo help: unknown command 'chta' (did you mean 'chat'?)\n");
    r = nucleo("--verison");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("nucleo: unknown option --verison (did you mean '--version'?)\n", 0), 0u) << r.err;
    // A verb of a command: the misspelled one, not the last word.
    r = nucleo("conversations lst --config " + quoted(kShippedConfig));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err,
              "nucleo conversations: unknown verb 'lst' (did you mean 'list'?); verbs: list, show, "
              "history, transcript, export, import, delete\n");
}

TEST(CliHelp, DidYouMeanTakesTheNearestWordOrTheOnlyOneBegun) {
    const std::vector<std::string> words = {"ask", "chat", "compact", "config", "conversations"};
    EXPECT_EQ(cli::did_you_mean("aks", words), "ask");            // a swap counts 1
    EXPECT_EQ(cli::did_you_mean("Chat", words), "chat");          // case does not count
    EXPECT_EQ(cli::did_you_mean("conversation", words), "conversations");
    EXPECT_EQ(cli::did_you_mean("conv", words), "conversations");  // the only one it begins
    EXPECT_EQ(cli::did_you_mean("co", words), std::nullopt);       // begins three: no guess
    EXPECT_EQ(cli::did_you_mean("frobnicate", words), std::nullopt);
    EXPECT_EQ(cli::did_you_mean("ask", words), std::nullopt);      // not unknown
    EXPECT_EQ(cli::did_you_mean("", words), std::nullopt);
    EXPECT_EQ(cli::unknown_word("command", "aks", words), "unknown command 'aks' (did you mean 'ask'?)");
    EXPECT_EQ(cli::unknown_word("command", "zzz", words), "unknown command 'zzz'");
}

TEST(CliHelp, CountsArePluralOnlyAboveOne) {
    EXPECT_EQ(cli::count_of(0, "message"), "0 messages");
    EXPECT_EQ(cli::count_of(1, "message"), "1 message");
    EXPECT_EQ(cli::count_of(2, "message"), "2 messages");
    EXPECT_EQ(cli::count_of(1, "summary", "summaries"), "1 summary");
    EXPECT_EQ(cli::count_of(3, "summary", "summaries"), "3 summaries");
}

}  // namespace
}  // namespace nucleo::cli_test
