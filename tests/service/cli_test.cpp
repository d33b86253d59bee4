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
#include "nucleo/store.hpp"
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

TEST_F(ConversationsCommand, TheUserDefaultsToUserAsInChat) {
    const std::string id = save_two_versions();  // alice's
    const std::string config = " --config \"" + (dir_ / "nucleo.yaml").string() + "\"";
    CliRun r = nucleo::test_support::run_command(std::string("env USER=alice \"") + NUCLEO_CLI +
                                                 "\" conversations list" + config);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(id + "\t", 0), 0u) << r.out;
    r = nucleo::test_support::run_command(std::string("env USER=mallory \"") + NUCLEO_CLI +
                                          "\" conversations list" + config);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST_F(ConversationsCommand, BadInputExitsTwo) {
    EXPECT_EQ(nucleo("--user alice").status, 2);             // no verb
    EXPECT_EQ(nucleo("--user alice frobnicate").status, 2);  // unknown verb
    EXPECT_EQ(nucleo("--user alice show").status, 2);        // no id
    EXPECT_EQ(nucleo("--user alice import /no/such/file.json").status, 2);
    std::ofstream(dir_ / "bare.yaml") << "plugins:\n  paths: []\n";
    const CliRun r = nucleo("--user alice list", "bare.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("stores.persistent is not configured"), std::string::npos) << r.err;
}

// The line (1-based) of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
    const auto at = text.find(needle);
    return at == std::string::npos
               ? 0
               : 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

// persistence.106: stores.session is opened at start; a bad choice fails there, naming the
// file and line of the choice; a usable one is used (delete drops its entry).
TEST_F(ConversationsCommand, TheSessionStoreChoiceIsUsedAndABadOneFailsAtStartNamingItsLine) {
    const std::string base = slurp(dir_ / "nucleo.yaml");
    auto with_session = [&](const std::string& file, const std::string& choice) {
        const std::string text = base + "  session:\n" + choice;
        std::ofstream(dir_ / file) << text;
        return file + ":" + std::to_string(line_of(text, choice.substr(0, choice.find('\n')))) +
               ":5: stores.session (";
    };
    std::string where = with_session("unknown.yaml", "    plugin: redisx\n");
    CliRun r = nucleo("--user alice list", "unknown.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(where + "redisx)"), std::string::npos) << where << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line

    where = with_session("down.yaml",
                         "    plugin: redis\n    options:\n      url: "
                         "\"redis://:s3cr3t-pw@127.0.0.1:1/0\"\n");
    r = nucleo("--user alice list", "down.yaml");
    EXPECT_EQ(r.status, 1) << "not bad input: a server that does not answer";
    EXPECT_NE(r.err.find(where + "redis)"), std::string::npos) << where << "\n" << r.err;
    EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("s3cr3t-pw"), std::string::npos) << "the password is redacted: " << r.err;

    // A reachable Redis: the command uses it.
    with_session("redis.yaml", "    plugin: redis\n    options:\n      url: \"" +
                                   store_test::redis_url() + "\"\n");
    const std::string id = save_two_versions();
    const nucleo::SessionStore session(store_test::make_store("redis"));
    nucleo::ConversationParts cached;
    cached.conversation_id = id;
    session.put("alice", cached, "2", 60'000);
    ASSERT_TRUE(session.get("alice", id).has_value());
    r = nucleo("--user alice delete " + id, "redis.yaml");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(session.get("alice", id).has_value()) << "delete dropped the session entry";
}

// persistence.105: a store error names the store and its file.
TEST_F(ConversationsCommand, AStoreErrorNamesTheStoreAndItsFile) {
    const CliRun r = nucleo("--user alice show no-such-conversation");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("plugin 'sqlite' (file " + db_ + ")"), std::string::npos) << r.err;
    // A database whose folder cannot be made: the error names the file, not the config.
    std::ofstream(dir_ / "blocker") << "a file where a folder should be";
    std::ofstream(dir_ / "blocked.yaml")
        << "plugins:\n  paths:\n    - \"" << NUCLEO_BUILD_PLUGIN_DIR << "\"\n"
        << "stores:\n  persistent:\n    plugin: sqlite\n    options:\n      path: \""
        << (dir_ / "blocker" / "x.db").string() << "\"\n";
    const CliRun blocked = nucleo("--user alice list", "blocked.yaml");
    EXPECT_EQ(blocked.status, 2);
    EXPECT_NE(blocked.err.find("file " + (dir_ / "blocker" / "x.db").string()), std::string::npos)
        << blocked.err;
}

// persistence.107: the shipped config keeps the database under the XDG data folder, else
// ~/.local/share, whatever the current folder.
TEST_F(ConversationsCommand, TheDefaultDatabaseLivesInTheUsersDataFolder) {
    const std::string config = std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml";
    const std::string cli = std::string("\"") + NUCLEO_CLI + "\" conversations --user alice list";
    const std::string base = "cd '" + dir_.string() + "' && env -u NUCLEO_SQLITE_PATH ";
    CliRun r = nucleo::test_support::run_command(
        base + "XDG_DATA_HOME='" + (dir_ / "xdg").string() + "' " + cli + " --config '" +
        config + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir_ / "xdg" / "nucleo" / "nucleo.db"));
    r = nucleo::test_support::run_command(base + "-u XDG_DATA_HOME HOME='" +
                                          (dir_ / "home").string() + "' " + cli + " --config '" +
                                          config + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir_ / "home" / ".local" / "share" / "nucleo" / "nucleo.db"));
    EXPECT_FALSE(fs::exists(dir_ / "nucleo.db")) << "nothing in the current folder";
}

}  // namespace
