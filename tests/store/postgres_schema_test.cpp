// The PostgreSQL store's schema (store/postgres_schema.h: each part owns its tables, one version table)
// against the real server CTest starts: a fresh database, one left by Kotae 0.1 (its schema frozen in
// tests/store/data/postgres_schema_0.1.sql, with rows in every table, at its version 2 and at its
// version 1), and one a newer Kotae wrote. Each in a PostgreSQL schema of its own (search_path), so the
// database the other tests share is not touched.

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "store/postgres_connection.h"
#include "store/postgres_schema.h"
#include "support/fixture_url.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

class PostgresSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string url = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
    ASSERT_FALSE(url.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
    auto connected = PgConnection::connect(url);
    ASSERT_OK(connected);
    connection_ = std::move(*connected);
    schema_ = "migration_" + std::to_string(::getpid());
    ASSERT_OK(connection_->execute("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " + schema_ +
                                   "; SET search_path TO " + schema_));
  }
  void TearDown() override {
    if (connection_) (void)connection_->execute("SET search_path TO DEFAULT; DROP SCHEMA " + schema_ + " CASCADE");
  }

  std::string value(const std::string& sql) {
    auto rows = connection_->query(sql);
    if (!rows) return "(" + rows.error().message + ")";
    return rows->rows() == 1 ? std::string(rows->text(0, 0)) : std::string("(no row)");
  }
  std::string versions() {
    return value("SELECT string_agg(component || '=' || version, ',' ORDER BY component) FROM kotae_schema_versions");
  }
  std::string tables() {
    return value(
        "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name <> 'kotae_schema' AND table_name <> "
        "'kotae_schema_versions'");
  }
  // Kotae 0.1's database with a row in every table.
  void release_0_1() {
    std::ifstream in(KOTAE_TEST_DATA_DIR "/postgres_schema_0.1.sql");
    ASSERT_TRUE(in) << "missing " KOTAE_TEST_DATA_DIR "/postgres_schema_0.1.sql";
    std::ostringstream sql;
    sql << in.rdbuf();
    ASSERT_OK(connection_->execute(sql.str()));
    ASSERT_OK(connection_->execute(
        "INSERT INTO collections(tenant, name, embedder_id, dimension, chunk_tokens, overlap_tokens, format_version) "
        "VALUES ('t', 'kept', 'e', 4, 256, 32, 1);"
        "INSERT INTO jobs(id, tenant, collection, replica, record) VALUES ('job_1', 't', 'kept', 'r', '{}');"
        "INSERT INTO uploads(job_id, file, bytes) VALUES ('job_1', 0, '\\x2523'::bytea);"
        "INSERT INTO api_keys(sha256, entry) VALUES ('abc', '{\"tenant\": \"t\"}');"
        "INSERT INTO conversations VALUES ('c1', 't', 'kept', 'title', 1, 2, 1, '[]');"
        "INSERT INTO document_files(collection_id, path, bytes) SELECT id, 'a.pdf', '\\x25504446'::bytea "
        "FROM collections"));
  }

  std::unique_ptr<PgConnection> connection_;
  std::string schema_;
};

constexpr const char* kAllCurrent =
    "api_keys=1,audit=1,conversations=2,document_files=1,jobs=1,members=1,records=3,sessions=2";
constexpr const char* kAllTables =
    "api_keys,audit_events,change_log,chunks,collection_members,collections,conversations,document_files,documents,"
    "jobs,sessions,sign_ins,uploads";

TEST_F(PostgresSchemaTest, AFreshDatabaseGetsEveryPartsTablesAndVersion) {
  ASSERT_OK(migrate_postgres_schema(*connection_));
  EXPECT_EQ(versions(), kAllCurrent);
  EXPECT_EQ(tables(), kAllTables);
  ASSERT_OK(migrate_postgres_schema(*connection_));  // again: nothing changes
  EXPECT_EQ(versions(), kAllCurrent);
}

TEST_F(PostgresSchemaTest, ARelease0_1DatabaseKeepsEveryRow) {
  release_0_1();
  ASSERT_OK(migrate_postgres_schema(*connection_));
  EXPECT_EQ(versions(), kAllCurrent);
  EXPECT_EQ(tables(), kAllTables);
  EXPECT_EQ(value("SELECT name FROM collections"), "kept");
  EXPECT_EQ(value("SELECT record FROM jobs"), "{}");
  EXPECT_EQ(value("SELECT count(*)::text FROM uploads"), "1");
  EXPECT_EQ(value("SELECT entry FROM api_keys"), "{\"tenant\": \"t\"}");
  EXPECT_EQ(value("SELECT title FROM conversations"), "title");
  EXPECT_EQ(value("SELECT path FROM document_files"), "a.pdf");
  // document_files still belongs to its collection: deleting the collection deletes its files.
  ASSERT_OK(connection_->execute("DELETE FROM collections"));
  EXPECT_EQ(value("SELECT count(*)::text FROM document_files"), "0");
}

TEST_F(PostgresSchemaTest, ARelease0_1DatabaseAtItsVersion1GainsTheLaterTables) {
  release_0_1();
  ASSERT_OK(connection_->execute("DROP TABLE conversations, document_files; UPDATE kotae_schema SET version = 1"));
  ASSERT_OK(migrate_postgres_schema(*connection_));
  EXPECT_EQ(versions(), kAllCurrent);
  EXPECT_EQ(tables(), kAllTables);
  EXPECT_EQ(value("SELECT name FROM collections"), "kept");
}

TEST_F(PostgresSchemaTest, APartNewerThanThisBuildIsRefusedByName) {
  ASSERT_OK(migrate_postgres_schema(*connection_));
  ASSERT_OK(connection_->execute("UPDATE kotae_schema_versions SET version = 7 WHERE component = 'jobs'"));
  auto refused = migrate_postgres_schema(*connection_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::unsupported);
  EXPECT_NE(refused.error().message.find("jobs at schema version 7"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace kotae::store
