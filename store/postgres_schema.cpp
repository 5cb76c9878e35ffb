#include "store/postgres_schema.h"

#include <string>

#include "store/postgres_api_keys.h"
#include "store/postgres_audit_trail.h"
#include "store/postgres_conversations.h"
#include "store/postgres_document_files.h"
#include "store/postgres_job_records.h"
#include "store/postgres_members.h"
#include "store/postgres_record_store.h"
#include "store/postgres_sessions.h"

namespace kotae::store {

namespace {

// pg_advisory_lock's two-key form: "Kota", and 0 for the schema (collections lock their own id).
constexpr std::int64_t kLockClass = 0x4b6f7461;

Result<void> migrate(PgConnection& connection, const SchemaSteps& schema) {
  const std::int64_t current = KOTAE_TRY_VALUE(postgres_schema_version(connection, schema.component));
  if (current > schema.version()) {
    return make_error(ErrorCode::unsupported, "the PostgreSQL store (" + connection.server() + ") has " +
                                                  schema.component + " at schema version " + std::to_string(current) +
                                                  ", newer than this build of Kotae reads (" +
                                                  std::to_string(schema.version()) + ")");
  }
  for (std::int64_t step = current; step < schema.version(); ++step) {
    KOTAE_TRY(connection.execute(schema.steps[static_cast<std::size_t>(step)]));
  }
  if (current < schema.version()) {
    KOTAE_TRY(
        connection.query("INSERT INTO kotae_schema_versions(component, version) VALUES ($1, $2) "
                         "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                         PgParams().add(std::string_view(schema.component)).add(schema.version())));
  }
  return {};
}

}  // namespace

Result<std::int64_t> postgres_schema_version(PgConnection& connection, const char* component) {
  auto rows = KOTAE_TRY_VALUE(
      connection.query("SELECT coalesce(max(version), 0)::bigint FROM kotae_schema_versions WHERE component = $1",
                       PgParams().add(std::string_view(component))));
  return rows.int64(0, 0);
}

Result<void> migrate_postgres_schema(PgConnection& connection) {
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(connection));
  KOTAE_TRY(connection.query("SELECT pg_advisory_xact_lock($1::int, 0)", PgParams().add(kLockClass)));
  KOTAE_TRY(connection.execute(
      "CREATE TABLE IF NOT EXISTS kotae_schema_versions(component text PRIMARY KEY, version bigint NOT NULL)"));
  // The records first: document_files refers to collections.
  for (const SchemaSteps* schema :
       {&postgres_records_schema(), &postgres_jobs_schema(), &postgres_api_keys_schema(),
        &postgres_conversations_schema(), &postgres_document_files_schema(), &postgres_audit_schema(),
        &postgres_members_schema(), &postgres_sessions_schema()}) {
    KOTAE_TRY(migrate(connection, *schema));
  }
  return transaction.commit();
}

}  // namespace kotae::store
