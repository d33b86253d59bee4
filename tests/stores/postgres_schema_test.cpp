// The PostgreSQL store's schema (persistence.9): created and migrated by numbered, idempotent
// migrations that fail closed on a partial schema. Each test works in a fresh schema
// of the services' database (search_path through the URL's options).
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <string>

#include "nucleo/plugins.hpp"
#include "support.hpp"

namespace {

class PostgresSchema : public ::testing::Test {
  protected:
    void SetUp() override {
        schema_ = store_test::unique("schema");
        for (char& c : schema_) c = c == '-' ? '_' : c;
        sql("CREATE SCHEMA " + schema_);
    }
    void TearDown() override { sql("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE"); }

    void sql(const std::string& statement) {
        PGconn* conn = PQconnectdb(store_test::postgres_url().c_str());
        ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
        PGresult* r = PQexec(conn, statement.c_str());
        EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << statement << ": " << PQerrorMessage(conn);
        PQclear(r);
        PQfinish(conn);
    }

    nucleo::StoreInstance open() {
        nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        const std::string url = store_test::postgres_url() + "?options=-csearch_path%3D" + schema_;
        return loader.load("postgres").make_store(R"({"url":")" + url + R"("})");
    }

    std::string schema_;
};

TEST_F(PostgresSchema, MigrationsAreIdempotent) {
    auto first = open();
    first.create_conversation("u", "c", R"({"snapshot":{"schema_version":1,"messages":[]}})");
    auto second = open();  // finds migration 1 recorded and its tables present
    EXPECT_EQ(second.load_conversation("u", "c"), R"({"schema_version":1,"messages":[]})");
}

TEST_F(PostgresSchema, ATableTheMigrationsDoNotAccountForFailsClosed) {
    sql("CREATE TABLE " + schema_ + ".nucleo_conversations(x integer)");
    std::string message;
    EXPECT_EQ(store_test::error_kind([&] { (void)open(); }, &message), nucleo::ErrorKind::kConfig);
    EXPECT_NE(message.find("nucleo_conversations exists"), std::string::npos) << message;
    EXPECT_NE(message.find("refusing to guess"), std::string::npos) << message;
}

TEST_F(PostgresSchema, ARecordedMigrationWhoseTableIsGoneFailsClosed) {
    (void)open();
    sql("DROP TABLE " + schema_ + ".nucleo_versions");
    std::string message;
    EXPECT_EQ(store_test::error_kind([&] { (void)open(); }, &message), nucleo::ErrorKind::kConfig);
    EXPECT_NE(message.find("nucleo_versions is missing"), std::string::npos) << message;
}

}  // namespace
