// `nucleo conversations` over a sqlite file named by a config: a conversation
// saved through ConversationService, then read, exported, imported and deleted by the command.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli_run.hpp"
#include "nucleo/document.hpp"
#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

namespace fs = std::filesystem;
using nucleo::Message;

using nucleo::test_support::CliRun;
using nucleo::test_support::slurp;

class ConversationsCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(NUCLEO_BINARY_DIR) / "tests" / "service" /
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "conversations.db").string();
        std::ofstream(dir_ / "nucleo.yaml")
            << "plugins:\n  paths:\n    - \"" << NUCLEO_BUILD_PLUGIN_DIR << "\"\n"
            << "stores:\n  persistent:\n    plugin: sqlite\n    options:\n      path: \"" << db_
            << "\"\n";
    }
    void TearDown() override { fs::remove_all(dir_); }

    CliRun nucleo(const std::string& args, const std::string& config = "nucleo.yaml") const {
        return nucleo::test_support::run_command(std::string("\"") + NUCLEO_CLI +
                                                 "\" conversations " + args + " --config \"" +
                                                 (dir_ / config).string() + "\"");
    }

    // A conversation of two versions saved through the service, as an application would.
    std::string save_two_versions() const {
        nucleo::ConversationServiceOptions options;
        options.persistent.emplace(store_test::make_store("sqlite", db_));
        options.cleanup_thread = false;
        nucleo::ConversationService service(std::move(options));
        auto t = service_test::thinker("Chat", "alice");
        const std::string id = t->mint_conversation_id();
        auto ctx = service.obtain_conversation(id, t).get();
        Message preamble = Message::outgoing_text("You speak to Acme support.");
        preamble.app_authored = true;
        ctx->add_message(preamble);
        ctx->add_message(Message::outgoing_text("Where is parcel 42?"));
        service.save_conversation(*ctx, *t);
        ctx->add_message(Message::incoming_text("Parcel 42 left the depot."));
        service.save_conversation(*ctx, *t);
        service.release(*t);
        return id;
    }

    fs::path dir_;
    std::string db_;
};

TEST_F(ConversationsCommand, ListShowHistoryTranscriptExport) {
    const std::string id = save_two_versions();
    CliRun r = nucleo("--user alice list");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\t', id.size() + 1)), id + "\tWhere is parcel 42?");

    r = nucleo("--user alice show " + id);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("title: Where is parcel 42?\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("versions: 2\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("messages: 3\n"), std::string::npos) << r.out;

    r = nucleo("--user alice history " + id);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
    EXPECT_EQ(r.out.substr(0, 2), "1\t");

    r = nucleo("--user alice transcript " + id);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Parcel 42 left the depot."), std::string::npos) << r.out;
    r = nucleo("--user alice transcript " + id + " --version 1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Where is parcel 42?"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Parcel 42 left the depot."), std::string::npos) << r.out;

    r = nucleo("--user alice export " + id);
    ASSERT_EQ(r.status, 0) << r.err;
    const nucleo::PersistentStore store(store_test::make_store("sqlite", db_));
    EXPECT_EQ(r.out, store.load_document("alice", id) + "\n");
}

TEST_F(ConversationsCommand, ImportThenDelete) {
    const std::string id = save_two_versions();
    CliRun exported = nucleo("--user alice export " + id);
    ASSERT_EQ(exported.status, 0) << exported.err;
    // The same document under another id, imported for another user.
    std::string doc = exported.out;
    const auto at = doc.find(id);
    ASSERT_NE(at, std::string::npos);
    doc.replace(at, id.size(), "imported-1");
    std::ofstream(dir_ / "doc.json") << doc;

    CliRun r = nucleo("--user bob import " + (dir_ / "doc.json").string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "imported imported-1 version 1\n");
    r = nucleo("--user bob list");
    EXPECT_EQ(r.out.substr(0, r.out.find('\t', 11)), "imported-1\tWhere is parcel 42?");
    r = nucleo("--user bob import " + (dir_ / "doc.json").string());
    EXPECT_EQ(r.status, 2) << r.out;  // it exists already

    r = nucleo("--user bob delete imported-1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "deleted imported-1\n");
    r = nucleo("--user bob show imported-1");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
    // alice's conversation is untouched.
    EXPECT_EQ(nucleo("--user alice show " + id).status, 0);
}

TEST_F(ConversationsCommand, AnotherUsersConversationIsNotFound) {
    const std::string id = save_two_versions();
    CliRun r = nucleo("--user mallory list");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    for (const char* verb : {"show", "history", "transcript", "export", "delete"}) {
        r = nucleo(std::string("--user mallory ") + verb + " " + id);
        EXPECT_EQ(r.status, 2) << verb << ": " << r.out;
        EXPECT_NE(r.err.find("nucleo conversations: "), std::string::npos) << r.err;
    }
    EXPECT_EQ(nucleo("--user alice history " + id).status, 0);
}

TEST_F(ConversationsCommand, BadInputExitsTwo) {
    EXPECT_EQ(nucleo("list").status, 2);                     // no --user
    EXPECT_EQ(nucleo("--user alice").status, 2);             // no verb
    EXPECT_EQ(nucleo("--user alice frobnicate").status, 2);  // unknown verb
    EXPECT_EQ(nucleo("--user alice show").status, 2);        // no id
    EXPECT_EQ(nucleo("--user alice import /no/such/file.json").status, 2);
    std::ofstream(dir_ / "bare.yaml") << "plugins:\n  paths: []\n";
    const CliRun r = nucleo("--user alice list", "bare.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("stores.persistent is not configured"), std::string::npos) << r.err;
}

}  // namespace
