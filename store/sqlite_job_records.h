#pragma once
// Ingestion jobs' records in the SQLite back-end's own file (FOLDER/server.db, store/sqlite_schema.h):
// the jobs this server runs, saved after every file so that a server killed at any moment resumes them
// at its next start. One connection, one call at a time; WAL and a busy timeout.

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/job_record_store.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_jobs_schema();

class SqliteJobRecords final : public JobRecordStore {
 public:
  static Result<std::unique_ptr<SqliteJobRecords>> open(const std::filesystem::path& folder);

  Result<void> save(const JobRow& job) override;
  Result<std::optional<std::string>> get(const std::string& id, const std::string& tenant) override;
  Result<std::vector<std::string>> list(const std::string& tenant, std::size_t limit) override;
  Result<std::vector<std::string>> of_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> remove(const std::string& id) override;
  Result<void> remove_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to) override;
  Result<void> forget_finished(const std::string& tenant, std::size_t kept) override;

  // Each COLLECTION_FOLDER/jobs/ID.json saved here, then the files and the folder removed; a file that
  // is not such a record leaves the folder as it is.
  Result<std::size_t> import_0_1_records(const std::filesystem::path& collection_folder, const std::string& tenant,
                                         const std::string& collection) override;

 private:
  explicit SqliteJobRecords(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
};

}  // namespace kotae::store
