#include "store/sqlite_schema.h"

#include <string>

namespace kotae::store {

std::filesystem::path server_database_file(const std::filesystem::path& folder) {
  return folder / "server.db";
}

Result<std::int64_t> sqlite_schema_version(Database& db, const char* component) {
  auto select = KOTAE_TRY_VALUE(db.prepare("SELECT version FROM kotae_schema_versions WHERE component = ?1"));
  select.bind_text(1, component);
  if (!KOTAE_TRY_VALUE(select.step())) return std::int64_t{0};
  return select.column_int64(0);
}

Result<std::unique_ptr<Database>> open_server_database(const std::filesystem::path& folder,
                                                       const SchemaSteps& component) {
  std::error_code ignored;  // a folder that cannot be made is said by the open that follows
  std::filesystem::create_directories(folder, ignored);
  auto db = KOTAE_TRY_VALUE(Database::open(server_database_file(folder), Database::Mode::read_write_create));
  // Under BEGIN IMMEDIATE: two processes opening one file at once take turns, and the second finds
  // the first one's steps done.
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(*db));
  KOTAE_TRY(db->execute(
      "CREATE TABLE IF NOT EXISTS kotae_schema_versions(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"));
  const std::int64_t current = KOTAE_TRY_VALUE(sqlite_schema_version(*db, component.component));
  if (current > component.version()) {
    return make_error(ErrorCode::unsupported, db->path().string() + " has " + component.component +
                                                  " at schema version " + std::to_string(current) +
                                                  ", newer than this build of Kotae reads (" +
                                                  std::to_string(component.version()) + ")");
  }
  for (std::int64_t step = current; step < component.version(); ++step) {
    KOTAE_TRY(db->execute(component.steps[static_cast<std::size_t>(step)]));
  }
  if (current < component.version()) {
    auto record =
        KOTAE_TRY_VALUE(db->prepare("INSERT INTO kotae_schema_versions(component, version) VALUES (?1, ?2) "
                                    "ON CONFLICT (component) DO UPDATE SET version = excluded.version"));
    KOTAE_TRY(record.bind_text(1, component.component).bind(2, component.version()).run());
  }
  KOTAE_TRY(transaction.commit());
  return db;
}

}  // namespace kotae::store
