#pragma once
// The SQLite back-end's own file beside the collections, FOLDER/server.db (the --store folder, else the
// data directory): the tables of the parts that are not a collection (conversations, ingestion jobs'
// records, API keys). Each part owns its steps (store/schema_steps.h); one table,
// kotae_schema_versions (component, version), says how far each has come, as in PostgreSQL
// (store/postgres_schema.h). Each collection is a SQLite file of its own, versioned by its
// user_version (store/schema.h).

#include <cstdint>
#include <filesystem>
#include <memory>

#include "core/result.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

std::filesystem::path server_database_file(const std::filesystem::path& folder);

// A connection to FOLDER/server.db (created with the folder when missing), `component` brought to this
// build's version in one write transaction; unsupported when the file has it at a newer version.
Result<std::unique_ptr<Database>> open_server_database(const std::filesystem::path& folder,
                                                       const SchemaSteps& component);

// The version kotae_schema_versions records for `component` (0: none yet).
Result<std::int64_t> sqlite_schema_version(Database& db, const char* component);

}  // namespace kotae::store
