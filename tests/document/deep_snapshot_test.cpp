// A stored snapshot nested 88,000 levels deep (written into the sqlite file behind the store's
// back, as a damaged or hostile file would hold it): loading it is refused naming the depth limit
// (limits.120), the process goes on, and the file is not changed.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

namespace {

namespace fs = std::filesystem;

nucleo::StoreInstance sqlite_store(const std::string& path) {
    static const nucleo::Plugin plugin = nucleo::PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("sqlite");
    return plugin.make_store(R"({"path":")" + path + R"("})");
}

/// A conversation of two text messages, m1 and m2.
nucleo::ConversationParts two_messages(const std::string& id) {
    nucleo::ConversationParts parts;
    parts.conversation_id = id;
    parts.messages.push_back(nucleo::Message::outgoing_text("Where is parcel 42?"));
    parts.messages.back().id = "m1";
    parts.messages.push_back(nucleo::Message::incoming_text("On its way."));
    parts.messages.back().id = "m2";
    return parts;
}

std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(DeepSnapshot, LoadingAnEightyEightThousandDeepSnapshotIsRefusedAndChangesNothing) {
    const fs::path dir = fs::path(NUCLEO_BINARY_DIR) / "tests" / "document" / "deep-snapshot";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string path = (dir / "store.db").string();
    const std::string id = "deep-1";
    {
        const nucleo::PersistentStore store(sqlite_store(path));
        (void)store.create("alice", two_messages(id), "deep");
    }
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        const std::string body = R"({"id":"m1","direction":"outgoing","deep":)" +
                                 std::string(88000, '[') + std::string(88000, ']') + "}";
        sqlite3_stmt* s = nullptr;
        ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE messages SET body=?1 WHERE pos=0", -1, &s, nullptr),
                  SQLITE_OK);
        sqlite3_bind_text(s, 1, body.c_str(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
        ASSERT_EQ(sqlite3_step(s), SQLITE_DONE);
        sqlite3_finalize(s);
        ASSERT_EQ(sqlite3_changes(db), 1);
        sqlite3_close(db);
    }
    const std::string before = bytes_of(path);
    const nucleo::PersistentStore store(sqlite_store(path));
    std::string message;
    try {
        (void)store.load("alice", id);
    } catch (const nucleo::Error& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("nesting deeper than 640 levels (the JSON depth limit)"), std::string::npos)
        << message.substr(0, 1000);
    // The process goes on: the store still answers, and the file is as it was.
    EXPECT_FALSE(store.load_document("alice", id).empty());
    EXPECT_EQ(bytes_of(path), before);
    fs::remove_all(dir);
}

}  // namespace
