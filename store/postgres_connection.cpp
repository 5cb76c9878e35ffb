#include "store/postgres_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <bit>
#include <charconv>
#include <cstring>

namespace kotae::store {

static_assert(std::endian::native == std::endian::little, "binary results are converted from network order");

namespace {

std::string trimmed(const char* message) {
  std::string text = message == nullptr ? "" : message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// SQLSTATE classes: 08 connection, 57P01-03 shutting down or starting, 53 resources (disk full),
// 23 constraints, 22 data, 40 serialisation and deadlocks (retry).
ErrorCode code_for(std::string_view state, bool connection_lost) {
  if (connection_lost || state.starts_with("08") || state.starts_with("57P") || state.starts_with("40")) {
    return ErrorCode::unavailable;
  }
  if (state == "23505") return ErrorCode::already_exists;
  if (state.starts_with("23") || state.starts_with("22")) return ErrorCode::invalid_argument;
  if (state.starts_with("53")) return ErrorCode::io;
  return ErrorCode::internal;
}

}  // namespace

// --- parameters and results -----------------------------------------------------------------------

PgParams& PgParams::add(std::int64_t value) {
  values_.push_back(std::to_string(value));
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::add_float64(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;  // the shortest exact form, any locale
  values_.emplace_back(text, end);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::add(std::string_view text) {
  values_.emplace_back(text);
  formats_.push_back(0);
  return *this;
}

PgParams& PgParams::add_bytes(std::span<const std::byte> bytes) {
  values_.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  formats_.push_back(1);
  return *this;
}

std::vector<const char*> PgParams::pointers() const {
  std::vector<const char*> pointers;
  for (const auto& value : values_) pointers.push_back(value.data());
  return pointers;
}

std::vector<int> PgParams::lengths() const {
  std::vector<int> lengths;
  for (const auto& value : values_) lengths.push_back(static_cast<int>(value.size()));
  return lengths;
}

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

std::size_t PgResult::rows() const {
  return static_cast<std::size_t>(PQntuples(result_));
}

std::int64_t PgResult::int64(std::size_t row, int column) const {
  const int r = static_cast<int>(row);
  if (PQgetisnull(result_, r, column) || PQgetlength(result_, r, column) != 8) return 0;
  std::uint64_t network = 0;
  std::memcpy(&network, PQgetvalue(result_, r, column), 8);
  return static_cast<std::int64_t>(__builtin_bswap64(network));
}

double PgResult::float64(std::size_t row, int column) const {
  return std::bit_cast<double>(static_cast<std::uint64_t>(int64(row, column)));
}

std::string_view PgResult::text(std::size_t row, int column) const {
  const int r = static_cast<int>(row);
  return {PQgetvalue(result_, r, column), static_cast<std::size_t>(PQgetlength(result_, r, column))};
}

std::span<const std::byte> PgResult::bytes(std::size_t row, int column) const {
  const int r = static_cast<int>(row);
  return {reinterpret_cast<const std::byte*>(PQgetvalue(result_, r, column)),
          static_cast<std::size_t>(PQgetlength(result_, r, column))};
}

// --- connections ----------------------------------------------------------------------------------

Result<std::unique_ptr<PgConnection>> PgConnection::connect(const std::string& url) {
  pg_conn* connection = PQconnectdb(url.c_str());
  if (connection == nullptr) return make_error(ErrorCode::internal, "libpq could not allocate a connection");
  if (PQstatus(connection) != CONNECTION_OK) {
    const std::string message = trimmed(PQerrorMessage(connection));
    PQfinish(connection);
    return make_error(ErrorCode::unavailable, "PostgreSQL at " + redacted_url(url) + " cannot be reached: " + message);
  }
  const char* host = PQhost(connection);
  const char* database = PQdb(connection);
  std::string server = std::string(host ? host : "") + "/" + (database ? database : "");
  // Quiet: notices (IF NOT EXISTS skipping a table) are not errors and need not reach stderr.
  PQsetNoticeProcessor(
      connection, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(connection, std::move(server)));
}

PgConnection::~PgConnection() {
  if (connection_ != nullptr) PQfinish(connection_);
}

bool PgConnection::broken() const {
  return PQstatus(connection_) != CONNECTION_OK;
}

bool PgConnection::usable() {
  if (broken()) return false;
  // A server that restarted or went away closed the socket: it reads as ready (end of file) and
  // PQconsumeInput fails. Found here, before a caller's query fails on it.
  pollfd socket{PQsocket(connection_), POLLIN, 0};
  if (socket.fd < 0) return false;
  if (::poll(&socket, 1, 0) > 0 && (PQconsumeInput(connection_) == 0 || broken())) return false;
  return true;
}

Error PgConnection::error(pg_result* result, std::string_view doing) const {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = trimmed(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(connection_));
  if (message.empty()) message = trimmed(PQerrorMessage(connection_));
  const ErrorCode code = code_for(state ? state : "", broken());
  return make_error(code, "PostgreSQL (" + server_ + ") " + std::string(doing) + ": " + message);
}

Result<PgResult> PgConnection::checked(pg_result* raw, std::string_view sql) {
  PgResult result(raw);
  const ExecStatusType status = raw == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(raw);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    const std::string_view first_line = sql.substr(0, sql.find('\n'));
    return error(raw, "failed on \"" + std::string(first_line.substr(0, 80)) + "\"");
  }
  return result;
}

Result<PgResult> PgConnection::query(std::string_view sql, const PgParams& params) {
  const auto values = params.pointers();
  const auto lengths = params.lengths();
  return checked(PQexecParams(connection_, std::string(sql).c_str(), static_cast<int>(params.size()), nullptr,
                              values.data(), lengths.data(), params.formats_.data(), /*binary results*/ 1),
                 sql);
}

Result<PgResult> PgConnection::prepared(const std::string& sql, const PgParams& params) {
  auto known = statements_.find(sql);
  if (known == statements_.end()) {
    const std::string name = "kotae_" + std::to_string(statements_.size());
    KOTAE_TRY(
        checked(PQprepare(connection_, name.c_str(), sql.c_str(), static_cast<int>(params.size()), nullptr), sql));
    known = statements_.emplace(sql, name).first;
  }
  const auto values = params.pointers();
  const auto lengths = params.lengths();
  return checked(PQexecPrepared(connection_, known->second.c_str(), static_cast<int>(params.size()), values.data(),
                                lengths.data(), params.formats_.data(), /*binary results*/ 1),
                 sql);
}

Result<void> PgConnection::execute(std::string_view sql) {
  KOTAE_TRY(checked(PQexec(connection_, std::string(sql).c_str()), sql));
  return {};
}

Result<std::vector<PgNotification>> PgConnection::wait_for_notifications(std::chrono::milliseconds timeout) {
  auto collect = [&]() -> Result<std::vector<PgNotification>> {
    if (PQconsumeInput(connection_) == 0) return error(nullptr, "lost the connection while listening");
    std::vector<PgNotification> arrived;
    while (PGnotify* notify = PQnotifies(connection_)) {
      arrived.push_back({notify->relname ? notify->relname : "", notify->extra ? notify->extra : ""});
      PQfreemem(notify);
    }
    return arrived;
  };
  auto arrived = KOTAE_TRY_VALUE(collect());
  if (!arrived.empty()) return arrived;
  pollfd socket{PQsocket(connection_), POLLIN, 0};
  if (socket.fd < 0) return error(nullptr, "has no socket to listen on");
  if (::poll(&socket, 1, static_cast<int>(timeout.count())) <= 0) return arrived;
  return collect();
}

// --- transactions and the pool ----------------------------------------------------------------------

Result<PgTransaction> PgTransaction::begin(PgConnection& connection) {
  KOTAE_TRY(connection.execute("BEGIN"));
  return PgTransaction(&connection);
}

PgTransaction::~PgTransaction() {
  if (connection_ != nullptr && !connection_->broken()) (void)connection_->execute("ROLLBACK");
}

Result<void> PgTransaction::commit() {
  PgConnection* connection = connection_;
  connection_ = nullptr;
  return connection->execute("COMMIT");
}

PgPool::PgPool(std::string url, std::size_t limit)
    : Pool([url] { return PgConnection::connect(url); }, limit, [](PgConnection& c) { return c.usable(); },
           "connections to PostgreSQL"),
      url_(std::move(url)) {}

// --- URLs -------------------------------------------------------------------------------------------

bool is_postgres_url(std::string_view location) {
  return location.starts_with("postgres://") || location.starts_with("postgresql://");
}

std::string redacted_url(std::string_view url) {
  // postgres://USER:PASSWORD@HOST/DB → postgres://USER:***@HOST/DB; key=value strings: password=***
  std::string text(url);
  if (is_postgres_url(text)) {
    const std::size_t scheme = text.find("://") + 3;
    const std::size_t at = text.find('@', scheme);
    const std::size_t colon = text.find(':', scheme);
    if (at != std::string::npos && colon != std::string::npos && colon < at)
      text.replace(colon + 1, at - colon - 1, "***");
  }
  if (const std::size_t key = text.find("password="); key != std::string::npos) {
    const std::size_t start = key + 9;
    std::size_t end = text.find_first_of(" &", start);
    if (end == std::string::npos) end = text.size();
    text.replace(start, end - start, "***");
  }
  return text;
}

bool PgPool::reachable(std::chrono::milliseconds wait) {
  auto lease = acquire(wait);
  return lease && (*lease)->query("SELECT 1::bigint").ok();
}

}  // namespace kotae::store
