#pragma once
// Over a shared store, sessions and sign-ins in PostgreSQL (tables `sessions` and `sign_ins`), so a
// sign-in begun on one replica ends on another and every replica knows every session
// (store/session_store.h).

#include <memory>

#include "store/postgres_connection.h"
#include "store/postgres_schema.h"
#include "store/session_store.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_sessions_schema();

class PostgresSessions final : public SessionStore {
 public:
  explicit PostgresSessions(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  Result<void> create(const SessionRecord& session) override;
  Result<std::optional<SessionRecord>> get(const std::string& id_hash) override;
  Result<void> touch(const std::string& id_hash, double now) override;
  Result<void> remove(const std::string& id_hash) override;
  Result<bool> claim_check(const std::string& id_hash, double now, double checked_before) override;
  Result<void> revalidated(const std::string& id_hash, const std::string& person,
                           const std::string& refresh_token) override;
  Result<void> trim(double now, double idle_before, double signin_before) override;
  Result<void> begin_sign_in(const SignInRecord& sign_in) override;
  Result<std::optional<SignInRecord>> take_sign_in(const std::string& state_hash) override;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
