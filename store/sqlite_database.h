#pragma once
// A thin RAII layer over the SQLite C API for the store: a connection, prepared statements, a
// transaction guard, and the mapping of SQLite failures onto Kotae's error codes (a full disk is
// an io error that says so; a file that is not a database is corrupt). SQLite types stay in store/.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kotae::store {

// A prepared statement. Binding never fails on its own: the first bind error is kept and reported
// by the next step(), so call sites read as one chain of binds and a checked step.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind_text(int index, std::string_view value);  // copied by SQLite
  Statement& bind_blob(int index, std::span<const std::byte> value);
  Statement& bind_null(int index);

  // Runs to the next row: true when there is one, false when the statement is done.
  Result<bool> step();
  // Runs a statement that returns no rows (or whose rows do not matter) to completion.
  Result<void> run();
  // Makes the statement ready to run again with new bindings.
  void reset();

  // Columns are 0-based. Views are valid until the next step() or reset().
  std::int64_t column_int64(int index) const;
  double column_double(int index) const;
  std::string_view column_text(int index) const;
  std::span<const std::byte> column_blob(int index) const;
  bool column_is_null(int index) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
  int bind_error_ = 0;  // SQLite result code of the first failed bind, 0 when none
};

// One SQLite connection. Not for concurrent use from several threads: the store gives each
// thread its own (see ReaderPool) or guards one with a mutex.
class Database {
 public:
  enum class Mode { read_write, read_write_create };

  // Opens the file and applies the store's connection settings: WAL, synchronous=FULL (a commit is
  // on disk when it returns, so what a client was told is committed survives even a power loss),
  // foreign keys on, a 5 s busy timeout. `query_only` refuses writes on reader connections.
  static Result<std::unique_ptr<Database>> open(const std::filesystem::path& path, Mode mode, bool query_only = false);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Result<Statement> prepare(std::string_view sql);
  // Runs one or more statements without results (DDL, pragmas).
  Result<void> execute(std::string_view sql);
  // The first column of the first row of a query, or nullopt when it returns no row.
  Result<std::optional<std::int64_t>> query_int64(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  const std::filesystem::path& path() const { return path_; }

  // The error for the connection's last failure, `rc` being the code SQLite returned.
  Error error(int rc, std::string_view doing) const;

 private:
  Database(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// Maps a SQLite result code (and the errno behind it, when there is one) onto a Kotae error:
// SQLITE_FULL, ENOSPC and EFBIG → io "disk full"; other I/O failures → io; SQLITE_CORRUPT and
// SQLITE_NOTADB → corrupt; constraint violations and oversized values → invalid_argument.
Error sqlite_error(int rc, int system_errno, std::string_view sqlite_message, const std::filesystem::path& path,
                   std::string_view doing);

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed uncommitted (an error path returned early).
class Transaction {
 public:
  static Result<Transaction> begin(Database& db);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result<void> commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;  // null once committed or rolled back
};

}  // namespace kotae::store
