#include "store/postgres_sessions.h"

#include "store/session_sql.h"

namespace kotae::store {

const SchemaSteps& postgres_sessions_schema() {
  // Version 1: sessions by the hash of their id, sign-ins by the hash of their state (times unix seconds).
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS sessions(
  id_hash text PRIMARY KEY,
  tenant text NOT NULL,
  person text NOT NULL,
  csrf text NOT NULL,
  id_token text NOT NULL,
  created_at double precision NOT NULL,
  last_seen double precision NOT NULL,
  expires_at double precision NOT NULL);
CREATE TABLE IF NOT EXISTS sign_ins(
  state_hash text PRIMARY KEY,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  return_to text NOT NULL,
  created_at double precision NOT NULL);
)sql";
  // Version 2: the provider's refresh token (sealed) and when the person was last revalidated.
  static constexpr const char* kVersion2 =
      "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS refresh_token text NOT NULL DEFAULT '', "
      "ADD COLUMN IF NOT EXISTS checked_at double precision NOT NULL DEFAULT 0;";
  static constexpr const char* kSteps[] = {kVersion1, kVersion2};
  static const SchemaSteps schema{"sessions", kSteps};
  return schema;
}

Result<void> PostgresSessions::create(const SessionRecord& s) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(session_sql::kCreate, PgParams()
                                                      .add(s.id_hash)
                                                      .add(s.tenant)
                                                      .add(s.person)
                                                      .add(s.csrf)
                                                      .add(s.id_token)
                                                      .add_float64(s.created_at)
                                                      .add_float64(s.last_seen)
                                                      .add_float64(s.expires_at)
                                                      .add(s.refresh_token)
                                                      .add_float64(s.checked_at)));
  return {};
}

Result<std::optional<SessionRecord>> PostgresSessions::get(const std::string& id_hash) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(session_sql::kGet, PgParams().add(id_hash)));
  if (rows.rows() == 0) return std::optional<SessionRecord>();
  SessionRecord record;
  record.id_hash = rows.text(0, 0);
  record.tenant = rows.text(0, 1);
  record.person = rows.text(0, 2);
  record.csrf = rows.text(0, 3);
  record.id_token = rows.text(0, 4);
  record.created_at = rows.float64(0, 5);
  record.last_seen = rows.float64(0, 6);
  record.expires_at = rows.float64(0, 7);
  record.refresh_token = rows.text(0, 8);
  record.checked_at = rows.float64(0, 9);
  return std::optional(std::move(record));
}

Result<void> PostgresSessions::touch(const std::string& id_hash, double now) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(session_sql::kTouch, PgParams().add_float64(now).add(id_hash)));
  return {};
}

Result<void> PostgresSessions::remove(const std::string& id_hash) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(session_sql::kRemove, PgParams().add(id_hash)));
  return {};
}

Result<bool> PostgresSessions::claim_check(const std::string& id_hash, double now, double checked_before) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->prepared(session_sql::kClaimCheck, PgParams().add_float64(now).add(id_hash).add_float64(checked_before)));
  return rows.rows() > 0;
}

Result<void> PostgresSessions::revalidated(const std::string& id_hash, const std::string& person,
                                           const std::string& refresh_token) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(session_sql::kRevalidated, PgParams().add(person).add(refresh_token).add(id_hash)));
  return {};
}

Result<void> PostgresSessions::trim(double now, double idle_before, double signin_before) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(session_sql::kTrimSessions, PgParams().add_float64(now).add_float64(idle_before)));
  KOTAE_TRY(lease->query(session_sql::kTrimSignIns, PgParams().add_float64(signin_before)));
  return {};
}

Result<void> PostgresSessions::begin_sign_in(const SignInRecord& s) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->prepared(
      session_sql::kBeginSignIn,
      PgParams().add(s.state_hash).add(s.nonce).add(s.code_verifier).add(s.return_to).add_float64(s.created_at)));
  return {};
}

Result<std::optional<SignInRecord>> PostgresSessions::take_sign_in(const std::string& state_hash) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(session_sql::kTakeSignIn, PgParams().add(state_hash)));
  if (rows.rows() == 0) return std::optional<SignInRecord>();
  return std::optional(SignInRecord{std::string(rows.text(0, 0)), std::string(rows.text(0, 1)),
                                    std::string(rows.text(0, 2)), std::string(rows.text(0, 3)), rows.float64(0, 4)});
}

}  // namespace kotae::store
