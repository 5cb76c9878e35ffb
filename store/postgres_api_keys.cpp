#include "store/postgres_api_keys.h"

#include "store/postgres_record_store.h"  // kChangeChannel

namespace kotae::store {

const SchemaSteps& postgres_api_keys_schema() {
  // Version 1: each key's entry by the SHA-256 of the key.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS api_keys(
  sha256 text PRIMARY KEY,
  entry text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"api_keys", kSteps};
  return schema;
}

Result<nlohmann::json> PostgresApiKeys::entries() {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query("SELECT entry FROM api_keys ORDER BY created_at"));
  nlohmann::json entries = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    auto entry = nlohmann::json::parse(rows.text(i, 0), nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object())
      return make_error(ErrorCode::corrupt, "an API key entry in PostgreSQL is not a JSON object");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<void> PostgresApiKeys::put(const nlohmann::json& entry) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(
      "INSERT INTO api_keys(sha256, entry) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE SET entry = excluded.entry",
      PgParams().add(entry.value("sha256", "")).add(entry.dump())));
  // Replicas read the keys again at once rather than at their next periodic check.
  KOTAE_TRY(lease->query("SELECT pg_notify($1, 'keys')", PgParams().add(std::string_view(kChangeChannel))));
  return {};
}

}  // namespace kotae::store
