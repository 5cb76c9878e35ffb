#pragma once
// API keys in the SQLite back-end's own file (FOLDER/server.db, table `api_keys`, store/api_key_store.h):
// `kotae keygen --store FOLDER` adds one while the server runs, and the server reads them again as soon
// as its change follower hears the commit (store/sqlite_change_follower.h).

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/api_key_store.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_api_keys_schema();

class SqliteApiKeys final : public ApiKeyStore {
 public:
  static Result<std::unique_ptr<SqliteApiKeys>> open(const std::filesystem::path& folder);

  Result<nlohmann::json> entries() override;
  Result<void> put(const nlohmann::json& entry) override;

 private:
  explicit SqliteApiKeys(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
};

}  // namespace kotae::store
