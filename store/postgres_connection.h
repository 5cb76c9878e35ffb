#pragma once
// A thin RAII layer over libpq for the PostgreSQL back-end: connections, parameterised queries with
// binary results, transactions, a pool, notifications, and the mapping of PostgreSQL's failures onto
// Kotae's error codes (a server that cannot be reached, or went away, is `unavailable`: callers
// answer 503 and retry; the pool replaces a broken connection on the next acquire). libpq stays in
// store/.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/pool.h"
#include "core/result.h"

struct pg_conn;
struct pg_result;

namespace kotae::store {

// Parameters of one query: numbers and text sent as text, bytes as binary.
class PgParams {
 public:
  PgParams& add(std::int64_t value);
  PgParams& add_float64(double value);  // exactly; named apart, so an int argument is never ambiguous
  PgParams& add(std::string_view text);
  PgParams& add_bytes(std::span<const std::byte> bytes);
  std::size_t size() const { return values_.size(); }

 private:
  friend class PgConnection;
  std::vector<const char*> pointers() const;
  std::vector<int> lengths() const;
  std::vector<std::string> values_;
  std::vector<int> formats_;  // 0 text, 1 binary
};

// A query's rows, in binary: integers are bigint (8 bytes), floats double precision, text and bytea their bytes.
class PgResult {
 public:
  explicit PgResult(pg_result* result) : result_(result) {}
  ~PgResult();
  PgResult(PgResult&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  PgResult& operator=(PgResult&&) = delete;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;

  std::size_t rows() const;
  std::int64_t int64(std::size_t row, int column) const;  // a bigint column
  double float64(std::size_t row, int column) const;      // a double precision column
  std::string_view text(std::size_t row, int column) const;
  std::span<const std::byte> bytes(std::size_t row, int column) const;

 private:
  friend class PgConnection;
  pg_result* result_ = nullptr;
};

struct PgNotification {
  std::string channel;
  std::string payload;
};

// One connection. Not for two threads at once: the pool lends each caller its own.
class PgConnection {
 public:
  // `url`: a libpq connection string or URI (postgres://USER@/DB?host=SOCKETDIR). Failing to connect
  // is `unavailable`; the message names the server but never a password.
  static Result<std::unique_ptr<PgConnection>> connect(const std::string& url);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // One statement with parameters ($1, $2, ...); rows in binary.
  Result<PgResult> query(std::string_view sql, const PgParams& params = {});
  // The same for a statement run again and again (the reads every search makes): parsed and planned
  // once per connection, then only executed.
  Result<PgResult> prepared(const std::string& sql, const PgParams& params = {});
  // One or more statements without parameters or results (schema, BEGIN, COMMIT).
  Result<void> execute(std::string_view sql);
  // Whether the connection was lost: the pool drops it rather than lending it again.
  bool broken() const;
  // Not broken, and the server has not closed it since (checked without a round trip).
  bool usable();

  // Notifications: LISTEN first (execute), then wait. Returns what arrived within `timeout` (none
  // when it passed), or `unavailable` when the connection was lost.
  Result<std::vector<PgNotification>> wait_for_notifications(std::chrono::milliseconds timeout);

  const std::string& server() const { return server_; }  // for messages: host or socket and database

 private:
  PgConnection(pg_conn* connection, std::string server) : connection_(connection), server_(std::move(server)) {}
  Error error(pg_result* result, std::string_view doing) const;
  Result<PgResult> checked(pg_result* raw, std::string_view sql);
  pg_conn* connection_ = nullptr;
  std::string server_;
  std::map<std::string, std::string> statements_;  // SQL → its prepared statement's name
};

// BEGIN ... COMMIT on one connection; rolls back when destroyed uncommitted.
class PgTransaction {
 public:
  static Result<PgTransaction> begin(PgConnection& connection);
  ~PgTransaction();
  PgTransaction(PgTransaction&& other) noexcept : connection_(other.connection_) { other.connection_ = nullptr; }
  PgTransaction& operator=(PgTransaction&&) = delete;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  Result<void> commit();

 private:
  explicit PgTransaction(PgConnection* connection) : connection_(connection) {}
  PgConnection* connection_ = nullptr;
};

// Connections to one database, lent one caller at a time and opened on demand, at most `limit` at once
// (PostgreSQL allows 100 by default, shared by every replica): a caller beyond it waits for one to come
// back. A lost connection is dropped when given back, so once the server is back the next acquire
// connects again by itself.
class PgPool : public Pool<PgConnection> {
 public:
  static constexpr std::size_t kDefaultLimit = 16;
  explicit PgPool(std::string url, std::size_t limit = kDefaultLimit);
  // A round trip to the server succeeds now, within `wait` (readiness probes).
  bool reachable(std::chrono::milliseconds wait);
  const std::string& url() const { return url_; }

 private:
  std::string url_;
};

// The URL without its password, for logs and messages.
std::string redacted_url(std::string_view url);
// Whether a --store value names PostgreSQL (postgres:// or postgresql://) rather than a folder.
bool is_postgres_url(std::string_view location);

}  // namespace kotae::store
