#include "store/sqlite_database.h"

#include <sqlite3.h>

#include <cerrno>
#include <utility>

#include "core/assert.h"

namespace kotae::store {

// --- errors -----------------------------------------------------------------------------------------

Error sqlite_error(int rc, int system_errno, std::string_view sqlite_message, const std::filesystem::path& path,
                   std::string_view doing) {
  std::string where = std::string(doing) + " (" + path.string() + "): " + std::string(sqlite_message);
  const int primary = rc & 0xff;
  if (primary == SQLITE_FULL || system_errno == ENOSPC || system_errno == EFBIG) {
    return make_error(ErrorCode::io, "disk full or file too large while " + where);
  }
  // A failed write or sync usually means a full disk or a file size limit, but SQLite reports the errno
  // only when it is still current; say what the user should check.
  if (rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC || rc == SQLITE_IOERR_TRUNCATE ||
      rc == SQLITE_IOERR_SHMSIZE || rc == SQLITE_IOERR_SHORT_READ) {
    return make_error(ErrorCode::io, "cannot write: disk full, file too large, or a device error while " + where);
  }
  switch (primary) {
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL: return make_error(ErrorCode::io, "cannot access the database while " + where);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return make_error(ErrorCode::corrupt, "damaged or not a database while " + where);
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH: return make_error(ErrorCode::invalid_argument, "rejected while " + where);
    case SQLITE_NOMEM: return make_error(ErrorCode::io, "out of memory while " + where);
    default: return make_error(ErrorCode::internal, "SQLite failed while " + where);
  }
}

// --- Statement --------------------------------------------------------------------------------------

Statement::~Statement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)), bind_error_(other.bind_error_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (statement_ != nullptr) sqlite3_finalize(statement_);
    db_ = other.db_;
    statement_ = std::exchange(other.statement_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

namespace {
void keep_first_error(int& kept, int rc) {
  if (rc != SQLITE_OK && kept == 0) kept = rc;
}
}  // namespace

Statement& Statement::bind(int index, std::int64_t value) {
  keep_first_error(bind_error_, sqlite3_bind_int64(statement_, index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  keep_first_error(bind_error_, sqlite3_bind_double(statement_, index, value));
  return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
  // A null pointer would bind NULL; an empty text must stay an empty string.
  keep_first_error(bind_error_, sqlite3_bind_text64(statement_, index, value.empty() ? "" : value.data(), value.size(),
                                                    SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_blob(int index, std::span<const std::byte> value) {
  if (value.empty()) {
    keep_first_error(bind_error_, sqlite3_bind_zeroblob(statement_, index, 0));
  } else {
    keep_first_error(bind_error_, sqlite3_bind_blob64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT));
  }
  return *this;
}

Statement& Statement::bind_null(int index) {
  keep_first_error(bind_error_, sqlite3_bind_null(statement_, index));
  return *this;
}

Result<bool> Statement::step() {
  if (bind_error_ != 0) {
    const int rc = std::exchange(bind_error_, 0);
    return sqlite_error(rc, 0, sqlite3_errstr(rc), sqlite3_db_filename(db_, "main"), "binding a value");
  }
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Error error = sqlite_error(rc, sqlite3_system_errno(db_), sqlite3_errmsg(db_), sqlite3_db_filename(db_, "main"),
                             std::string("running \"") + sqlite3_sql(statement_) + "\"");
  sqlite3_reset(statement_);
  return error;
}

Result<void> Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return row.error();
    if (!*row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bind_error_ = 0;
}

std::int64_t Statement::column_int64(int index) const {
  return sqlite3_column_int64(statement_, index);
}
double Statement::column_double(int index) const {
  return sqlite3_column_double(statement_, index);
}

std::string_view Statement::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, index));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, index))};
}

std::span<const std::byte> Statement::column_blob(int index) const {
  const auto* blob = static_cast<const std::byte*>(sqlite3_column_blob(statement_, index));
  if (blob == nullptr) return {};
  return {blob, static_cast<std::size_t>(sqlite3_column_bytes(statement_, index))};
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(statement_, index) == SQLITE_NULL;
}

// --- Database ---------------------------------------------------------------------------------------

Result<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path, Mode mode, bool query_only) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::read_write_create) flags |= SQLITE_OPEN_CREATE;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, raw ? sqlite3_system_errno(raw) : 0, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc),
                               path, "opening");
    sqlite3_close(raw);
    return error;
  }
  std::unique_ptr<Database> db(new Database(raw, path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, 5000);
  // journal_mode is the first statement that reads the file: a file that is not a database fails here.
  if (auto done = db->execute("PRAGMA journal_mode=WAL"); !done) return done.error();
  if (auto done = db->execute("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"); !done) return done.error();
  if (query_only) {
    // Readers map the file: search results read a few rows at random from a database of hundreds of
    // MB, and a read() per page was most of the time spent fetching them.
    if (auto done = db->execute("PRAGMA query_only=ON; PRAGMA mmap_size=1073741824"); !done) return done.error();
  }
  return db;
}

Database::~Database() {
  sqlite3_close_v2(db_);
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
  if (rc != SQLITE_OK) return error(rc, "preparing \"" + std::string(sql) + "\"");
  KOTAE_ASSERT(statement != nullptr);  // our SQL is never empty
  return Statement(db_, statement);
}

Result<void> Database::execute(std::string_view sql) {
  const std::string terminated(sql);
  const int rc = sqlite3_exec(db_, terminated.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(rc, "running \"" + terminated + "\"");
  return {};
}

Result<std::optional<std::int64_t>> Database::query_int64(std::string_view sql) {
  auto statement = prepare(sql);
  if (!statement) return statement.error();
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row || statement->column_is_null(0)) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(statement->column_int64(0));
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

Error Database::error(int rc, std::string_view doing) const {
  return sqlite_error(rc, sqlite3_system_errno(db_), sqlite3_errmsg(db_), path_, doing);
}

// --- Transaction ------------------------------------------------------------------------------------

Result<Transaction> Transaction::begin(Database& db) {
  if (auto begun = db.execute("BEGIN IMMEDIATE"); !begun) return begun.error();
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->execute("ROLLBACK");
}

Result<void> Transaction::commit() {
  KOTAE_ASSERT(db_ != nullptr);
  auto committed = db_->execute("COMMIT");
  if (!committed) {
    // A failed COMMIT (disk full) may leave the transaction open; the destructor rolls it back.
    return committed.error();
  }
  db_ = nullptr;
  return {};
}

}  // namespace kotae::store
