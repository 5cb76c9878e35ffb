#include "store/sqlite_api_keys.h"

#include "store/sqlite_schema.h"

namespace kotae::store {
const SchemaSteps& sqlite_api_keys_schema() {
  // Version 1: each key's entry by the SHA-256 of the key, in the order they were added.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE api_keys(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sha256 TEXT NOT NULL UNIQUE,
  entry TEXT NOT NULL);
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"api_keys", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteApiKeys>> SqliteApiKeys::open(const std::filesystem::path& folder) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_api_keys_schema()));
  return std::unique_ptr<SqliteApiKeys>(new SqliteApiKeys(std::move(db)));
}

Result<nlohmann::json> SqliteApiKeys::entries() {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare("SELECT entry FROM api_keys ORDER BY seq"));
  nlohmann::json entries = nlohmann::json::array();
  while (KOTAE_TRY_VALUE(select.step())) {
    auto entry = nlohmann::json::parse(select.column_text(0), nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object()) {
      return make_error(ErrorCode::corrupt, "an API key entry in " + db_->path().string() + " is not a JSON object");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<void> SqliteApiKeys::put(const nlohmann::json& entry) {
  std::lock_guard lock(mutex_);
  auto upsert = KOTAE_TRY_VALUE(db_->prepare(
      "INSERT INTO api_keys(sha256, entry) VALUES (?1, ?2) ON CONFLICT (sha256) DO UPDATE SET entry = excluded.entry"));
  return upsert.bind_text(1, entry.value("sha256", "")).bind_text(2, entry.dump()).run();
}

}  // namespace kotae::store
