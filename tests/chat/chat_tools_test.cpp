// `nucleo chat`'s folder tools (cli/commands/chat_tools.hpp): read-only and confined to the
// folder given with --tools-dir. What the model may ask is arbitrary, so every way out of the
// folder must come back as an is_error result, never as a file's content or a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "commands/chat_tools.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::cli {
namespace {

namespace fs = std::filesystem;

class FolderTools : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "nucleo-chat-tools-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        base_ = tmpl;
        root_ = base_ / "docs";
        fs::create_directories(root_ / "guide");
        std::ofstream(root_ / "readme.md") << "# Nucleo\nhello\n";
        std::ofstream(root_ / "guide" / "start.md") << "start here\n";
        std::ofstream(base_ / "secret.txt") << "the key\n";
        std::ofstream(base_ / "docs2.txt") << "next door\n";
        tools_ = folder_tools(root_);
        ASSERT_EQ(tools_.size(), 2U);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(base_, ec);
    }

    ToolOutput call(const std::string& name, const std::string& input) {
        for (const AgentTool& t : tools_) {
            if (t.definition.name == name) return t.run(input, cancel_);
        }
        ADD_FAILURE() << "no tool " << name;
        return {};
    }

    fs::path base_;
    fs::path root_;
    std::vector<AgentTool> tools_;
    CancellationToken cancel_;
};

TEST_F(FolderTools, ListsAFolderSortedWithFoldersMarked) {
    EXPECT_EQ(tools_[0].definition.name, "list_files");  // first: what a model sees first
    const ToolOutput all = call("list_files", "{}");
    EXPECT_FALSE(all.is_error) << all.text;
    EXPECT_EQ(all.text, "guide/\nreadme.md\n");
    const ToolOutput sub = call("list_files", R"({"path":"guide"})");
    EXPECT_EQ(sub.text, "start.md\n");
}

TEST_F(FolderTools, ReadsAFileInsideTheFolder) {
    const ToolOutput r = call("read_file", R"({"path":"guide/start.md"})");
    EXPECT_FALSE(r.is_error) << r.text;
    EXPECT_EQ(r.text, "start here\n");
    const ToolOutput through = call("read_file", R"({"path":"guide/../readme.md"})");
    EXPECT_EQ(through.text, "# Nucleo\nhello\n");
}

TEST_F(FolderTools, EveryWayOutOfTheFolderIsAnErrorResult) {
    const std::string secret = (base_ / "secret.txt").string();
    fs::create_symlink(base_ / "secret.txt", root_ / "link.txt");
    for (const std::string& path :
         {std::string("../secret.txt"), secret, std::string("guide/../../secret.txt"),
          std::string("link.txt"), std::string("../docs2.txt")}) {
        const ToolOutput r = call("read_file", R"({"path":")" + path + R"("})");
        EXPECT_TRUE(r.is_error) << path << ": " << r.text;
        EXPECT_EQ(r.text.find("the key"), std::string::npos) << path;
        EXPECT_EQ(r.text.find("next door"), std::string::npos) << path;
        EXPECT_NE(r.text.find("outside the tools folder"), std::string::npos) << r.text;
    }
    const ToolOutput up = call("list_files", R"({"path":".."})");
    EXPECT_TRUE(up.is_error) << up.text;
}

TEST_F(FolderTools, MissingFilesAndFoldersAreErrorResultsNamingThePath) {
    const ToolOutput missing = call("read_file", R"({"path":"nope.md"})");
    EXPECT_TRUE(missing.is_error);
    EXPECT_EQ(missing.text, "nope.md: not a file");
    const ToolOutput folder = call("read_file", R"({"path":"guide"})");
    EXPECT_TRUE(folder.is_error);
    const ToolOutput not_folder = call("list_files", R"({"path":"readme.md"})");
    EXPECT_TRUE(not_folder.is_error);
    EXPECT_EQ(not_folder.text, "readme.md: not a folder");
}

TEST_F(FolderTools, AFileOverTheLimitIsCutAndSaysSo) {
    std::ofstream(root_ / "big.txt") << std::string(kChatReadLimit + 10, 'x');
    const ToolOutput r = call("read_file", R"({"path":"big.txt"})");
    EXPECT_FALSE(r.is_error);
    EXPECT_EQ(r.text.substr(0, kChatReadLimit), std::string(kChatReadLimit, 'x'));
    EXPECT_NE(r.text.find("(cut at 65536 bytes)"), std::string::npos);
}

TEST(FolderToolsSetup, AMissingFolderIsRefusedNamingIt) {
    try {
        (void)folder_tools("no-such-folder-for-nucleo-chat-tools");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        EXPECT_NE(std::string(e.what()).find("--tools-dir no-such-folder-for-nucleo-chat-tools"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace nucleo::cli
