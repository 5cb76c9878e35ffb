// The PostgreSQL store's schema (store/postgres_record_store.cpp, migrate_postgres_schema) against the
// real server CTest starts: version 2 (conversations, document_files) on a fresh database and on one
// left at version 1 by an older Kotae, each in a PostgreSQL schema of its own (search_path), so the
// database the other tests share is not touched.

#include <gtest/gtest.h>
#include <unistd.h>

#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"
#include "support/fixture_url.h"

namespace kotae::store {
namespace {

#define ASSERT_OK(result) ASSERT_TRUE((result).ok()) << (result).error().message

TEST(PostgresSchema, AFreshDatabaseAndAVersion1OneBothMigrateToVersion2) {
  const std::string url = kotae::testing::fixture_url(KOTAE_TEST_POSTGRES_URL_FILE);
  ASSERT_FALSE(url.empty()) << "no PostgreSQL server: " << KOTAE_TEST_POSTGRES_URL_FILE;
  auto connected = PgConnection::connect(url);
  ASSERT_OK(connected);
  PgConnection& connection = **connected;
  const std::string schema = "migration_" + std::to_string(::getpid());
  ASSERT_OK(connection.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema +
                               "; SET search_path TO " + schema));
  auto value = [&](const std::string& sql) {
    auto rows = connection.query(sql);
    if (!rows) return "(" + rows.error().message + ")";
    return rows->rows() == 1 ? std::string(rows->text(0, 0)) : std::string("(no row)");
  };
  auto tables = [&] {
    return value(
        "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name IN ('conversations', 'document_files')");
  };
  const std::string version = "SELECT version::text FROM kotae_schema";
  ASSERT_OK(migrate_postgres_schema(connection));
  EXPECT_EQ(value(version), "2");
  EXPECT_EQ(tables(), "conversations,document_files");

  // Back to version 1 as an older Kotae left it: without the two tables, with a collection in it.
  ASSERT_OK(
      connection.execute("DROP TABLE conversations, document_files; UPDATE kotae_schema SET version = 1; "
                         "INSERT INTO collections(tenant, name, embedder_id, dimension, chunk_tokens, "
                         "overlap_tokens, format_version) VALUES ('t', 'kept', 'e', 4, 256, 32, 1)"));
  EXPECT_EQ(tables(), "") << "string_agg of no rows: null";
  ASSERT_OK(migrate_postgres_schema(connection));
  EXPECT_EQ(value(version), "2");
  EXPECT_EQ(value("SELECT count(*)::text FROM kotae_schema"), "1");
  EXPECT_EQ(tables(), "conversations,document_files");
  EXPECT_EQ(value("SELECT name FROM collections"), "kept");
  // document_files belongs to its collection: deleting the collection deletes its files.
  ASSERT_OK(
      connection.execute("INSERT INTO document_files(collection_id, path, bytes) "
                         "SELECT id, 'a.pdf', '\\x25504446'::bytea FROM collections; DELETE FROM collections"));
  EXPECT_EQ(value("SELECT count(*)::text FROM document_files"), "0");
  ASSERT_OK(migrate_postgres_schema(connection));  // once at version 2, again changes nothing
  EXPECT_EQ(value(version), "2");
  ASSERT_OK(connection.execute("SET search_path TO DEFAULT; DROP SCHEMA " + schema + " CASCADE"));
}

}  // namespace
}  // namespace kotae::store
