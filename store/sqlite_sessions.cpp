#include "store/sqlite_sessions.h"

#include "store/session_sql.h"
#include "store/sqlite_schema.h"

namespace kotae::store {

const SchemaSteps& sqlite_sessions_schema() {
  // Version 1: sessions by the hash of their id, sign-ins by the hash of their state.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE sessions(
  id_hash TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  person TEXT NOT NULL,
  csrf TEXT NOT NULL,
  id_token TEXT NOT NULL,
  created_at REAL NOT NULL,
  last_seen REAL NOT NULL,
  expires_at REAL NOT NULL);
CREATE TABLE sign_ins(
  state_hash TEXT PRIMARY KEY,
  nonce TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  return_to TEXT NOT NULL,
  created_at REAL NOT NULL);
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"sessions", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteSessions>> SqliteSessions::open(const std::filesystem::path& folder) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_sessions_schema()));
  return std::unique_ptr<SqliteSessions>(new SqliteSessions(std::move(db)));
}

Result<void> SqliteSessions::create(const SessionRecord& s) {
  std::lock_guard lock(mutex_);
  auto insert = KOTAE_TRY_VALUE(db_->prepare(session_sql::kCreate));
  return insert.bind_text(1, s.id_hash)
      .bind_text(2, s.tenant)
      .bind_text(3, s.person)
      .bind_text(4, s.csrf)
      .bind_text(5, s.id_token)
      .bind(6, s.created_at)
      .bind(7, s.last_seen)
      .bind(8, s.expires_at)
      .run();
}

Result<std::optional<SessionRecord>> SqliteSessions::get(const std::string& id_hash) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(session_sql::kGet));
  select.bind_text(1, id_hash);
  if (!KOTAE_TRY_VALUE(select.step())) return std::optional<SessionRecord>();
  return std::optional(SessionRecord{std::string(select.column_text(0)), std::string(select.column_text(1)),
                                     std::string(select.column_text(2)), std::string(select.column_text(3)),
                                     std::string(select.column_text(4)), select.column_double(5),
                                     select.column_double(6), select.column_double(7)});
}

Result<void> SqliteSessions::touch(const std::string& id_hash, double now) {
  std::lock_guard lock(mutex_);
  auto update = KOTAE_TRY_VALUE(db_->prepare(session_sql::kTouch));
  return update.bind(1, now).bind_text(2, id_hash).run();
}

Result<void> SqliteSessions::remove(const std::string& id_hash) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare(session_sql::kRemove));
  return remove.bind_text(1, id_hash).run();
}

Result<void> SqliteSessions::trim(double now, double idle_before, double signin_before) {
  std::lock_guard lock(mutex_);
  auto sessions = KOTAE_TRY_VALUE(db_->prepare(session_sql::kTrimSessions));
  KOTAE_TRY(sessions.bind(1, now).bind(2, idle_before).run());
  auto sign_ins = KOTAE_TRY_VALUE(db_->prepare(session_sql::kTrimSignIns));
  return sign_ins.bind(1, signin_before).run();
}

Result<void> SqliteSessions::begin_sign_in(const SignInRecord& s) {
  std::lock_guard lock(mutex_);
  auto insert = KOTAE_TRY_VALUE(db_->prepare(session_sql::kBeginSignIn));
  return insert.bind_text(1, s.state_hash)
      .bind_text(2, s.nonce)
      .bind_text(3, s.code_verifier)
      .bind_text(4, s.return_to)
      .bind(5, s.created_at)
      .run();
}

Result<std::optional<SignInRecord>> SqliteSessions::take_sign_in(const std::string& state_hash) {
  std::lock_guard lock(mutex_);
  auto take = KOTAE_TRY_VALUE(db_->prepare(session_sql::kTakeSignIn));
  take.bind_text(1, state_hash);
  if (!KOTAE_TRY_VALUE(take.step())) return std::optional<SignInRecord>();
  SignInRecord record{std::string(take.column_text(0)), std::string(take.column_text(1)),
                      std::string(take.column_text(2)), std::string(take.column_text(3)), take.column_double(4)};
  KOTAE_TRY(take.run());
  return std::optional(std::move(record));
}

}  // namespace kotae::store
