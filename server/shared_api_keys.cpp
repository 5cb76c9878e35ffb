#include "server/shared_api_keys.h"

#include "store/postgres_record_store.h"  // kChangeChannel

namespace kotae::server {

Result<nlohmann::json> load_shared_key_entries(store::PgConnection& connection) {
  auto rows = KOTAE_TRY_VALUE(connection.query("SELECT entry FROM api_keys ORDER BY created_at"));
  nlohmann::json entries = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    auto entry = nlohmann::json::parse(rows.text(i, 0), nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object())
      return make_error(ErrorCode::corrupt, "an API key entry in PostgreSQL is not a JSON object");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<void> store_shared_key_entry(store::PgConnection& connection, const nlohmann::json& entry) {
  KOTAE_TRY(connection.query(
      "INSERT INTO api_keys(sha256, entry) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE SET entry = excluded.entry",
      store::PgParams().add(entry.value("sha256", "")).add(entry.dump())));
  // Replicas read the keys again at once rather than at their next periodic check.
  KOTAE_TRY(
      connection.query("SELECT pg_notify($1, 'keys')", store::PgParams().add(std::string_view(store::kChangeChannel))));
  return {};
}

}  // namespace kotae::server
