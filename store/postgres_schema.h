#pragma once
// The PostgreSQL back-end's schema. Each part of the store that keeps tables there (the collections'
// records, ingestion jobs, API keys, conversations, kept document files) owns them: its .cpp holds
// their SQL and their migration steps (store/schema_steps.h). One table, kotae_schema_versions (component,
// version), says how far each has come; migrate_postgres_schema brings every part to this build's
// version, in one transaction under an advisory lock, whoever comes first.
//
// Upgrading from 0.1's single `kotae_schema` (version 2): each part's first step creates its tables
// IF NOT EXISTS, exactly as 0.1 did, so an existing database keeps every row and only gains the
// version table (tests/store/postgres_schema_test.cpp starts from 0.1's schema).

#include <cstdint>

#include "core/result.h"
#include "store/postgres_connection.h"
#include "store/schema_steps.h"

namespace kotae::store {

// Every part's tables created or brought forward; unsupported when a part is newer than this build.
Result<void> migrate_postgres_schema(PgConnection& connection);
// The version kotae_schema_versions records for `component` (0: none yet).
Result<std::int64_t> postgres_schema_version(PgConnection& connection, const char* component);

}  // namespace kotae::store
