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
  // Version 2: the provider's refresh token (sealed) and when the person was last revalidated.
  static constexpr const char* kVersion2 = R"sql(
ALTER TABLE sessions ADD COLUMN refresh_token TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN checked_at REAL NOT NULL DEFAULT 0;
)sql";
  static constexpr const char* kSteps[] = {kVersion1, kVersion2};
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
      .bind_text(9, s.refresh_token)
      .bind(10, s.checked_at)
      .run();
}

Result<std::optional<SessionRecord>> SqliteSessions::get(const std::string& id_hash) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(session_sql::kGet));
  select.bind_text(1, id_hash);
  if (!KOTAE_TRY_VALUE(select.step())) return std::optional<SessionRecord>();
  SessionRecord record;
  record.id_hash = select.column_text(0);
  record.tenant = select.column_text(1);
  record.person = select.column_text(2);
  record.csrf = select.column_text(3);
  record.id_token = select.column_text(4);
  record.created_at = select.column_double(5);
  record.last_seen = select.column_double(6);
  record.expires_at = select.column_double(7);
  record.refresh_token = select.column_text(8);
  record.checked_at = select.column_double(9);
  return std::optional(std::move(record));
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

Result<bool> SqliteSessions::claim_check(const std::string& id_hash, double now, double checked_before) {
  std::lock_guard lock(mutex_);
  auto claim = KOTAE_TRY_VALUE(db_->prepare(session_sql::kClaimCheck));
  claim.bind(1, now).bind_text(2, id_hash).bind(3, checked_before);
  const bool claimed = KOTAE_TRY_VALUE(claim.step());
  if (claimed) KOTAE_TRY(claim.run());
  return claimed;
}

Result<void> SqliteSessions::revalidated(const std::string& id_hash, const std::string& person,
                                         const std::string& refresh_token) {
  std::lock_guard lock(mutex_);
  auto update = KOTAE_TRY_VALUE(db_->prepare(session_sql::kRevalidated));
  return update.bind_text(1, person).bind_text(2, refresh_token).bind_text(3, id_hash).run();
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
