// The SQLite layer: failures map onto Kotae's error codes with messages a person can act on.

#include "store/sqlite_database.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cerrno>

#include "tests/store/store_test_support.h"

namespace kotae::store {
namespace {

TEST(SqliteDatabase, MapsAFullDiskToAnIoErrorThatSaysSo) {
  for (auto [rc, system_errno] :
       {std::pair{SQLITE_FULL, 0}, std::pair{SQLITE_IOERR_WRITE, EFBIG}, std::pair{SQLITE_IOERR_WRITE, ENOSPC}}) {
    const Error error = sqlite_error(rc, system_errno, "database or disk is full", "/data/kotae.db", "committing");
    EXPECT_EQ(error.code, ErrorCode::io);
    EXPECT_NE(error.message.find("disk full"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("/data/kotae.db"), std::string::npos) << error.message;
  }
  EXPECT_EQ(sqlite_error(SQLITE_IOERR_READ, EIO, "disk I/O error", "x.db", "reading").code, ErrorCode::io);
  EXPECT_EQ(sqlite_error(SQLITE_CORRUPT, 0, "malformed", "x.db", "reading").code, ErrorCode::corrupt);
  EXPECT_EQ(sqlite_error(SQLITE_NOTADB, 0, "not a database", "x.db", "opening").code, ErrorCode::corrupt);
  EXPECT_EQ(sqlite_error(SQLITE_CONSTRAINT_UNIQUE, 0, "UNIQUE", "x.db", "inserting").code, ErrorCode::invalid_argument);
}

TEST(SqliteDatabase, RunsStatementsAndRollsBackAnUncommittedTransaction) {
  testing::TempDir temp;
  auto opened = Database::open(temp.path() / "t.db", Database::Mode::read_write_create);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Database& db = **opened;
  ASSERT_TRUE(db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)").ok());
  {
    auto transaction = Transaction::begin(db);
    ASSERT_TRUE(transaction.ok());
    auto insert = db.prepare("INSERT INTO t(name, data) VALUES (?, ?)");
    ASSERT_TRUE(insert.ok());
    const std::byte bytes[] = {std::byte{1}, std::byte{0}, std::byte{255}};
    insert->bind_text(1, "").bind_blob(2, bytes);
    ASSERT_TRUE(insert->run().ok());
    ASSERT_TRUE(transaction->commit().ok());
  }
  {
    auto transaction = Transaction::begin(db);
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(db.execute("INSERT INTO t(name) VALUES ('dropped')").ok());
  }  // not committed
  auto count = db.query_int64("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->value_or(-1), 1);

  auto select = db.prepare("SELECT name, data FROM t");
  ASSERT_TRUE(select.ok());
  auto row = select->step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_FALSE(select->column_is_null(0));  // an empty text stays a text, not NULL
  EXPECT_EQ(select->column_text(0), "");
  ASSERT_EQ(select->column_blob(1).size(), 3u);
  EXPECT_EQ(select->column_blob(1)[2], std::byte{255});

  auto duplicate = db.execute("INSERT INTO t(name) VALUES ('')");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code, ErrorCode::invalid_argument);
  auto bad_sql = db.prepare("SELEKT nothing");
  ASSERT_FALSE(bad_sql.ok());
  EXPECT_NE(bad_sql.error().message.find("SELEKT"), std::string::npos);

  auto reader = Database::open(temp.path() / "t.db", Database::Mode::read_write, /*query_only=*/true);
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE((*reader)->execute("DELETE FROM t").ok());
  auto missing = Database::open(temp.path() / "absent.db", Database::Mode::read_write);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::io);
}

}  // namespace
}  // namespace kotae::store
