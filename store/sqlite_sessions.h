#pragma once
// Sessions and sign-ins in the SQLite back-end's own file (FOLDER/server.db, tables `sessions` and
// `sign_ins`, store/session_store.h). One connection, one call at a time.

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/schema_steps.h"
#include "store/session_store.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_sessions_schema();

class SqliteSessions final : public SessionStore {
 public:
  static Result<std::unique_ptr<SqliteSessions>> open(const std::filesystem::path& folder);

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
  explicit SqliteSessions(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
};

}  // namespace kotae::store
