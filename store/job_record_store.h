#pragma once
// Where ingestion jobs' records are kept. A record is the job's JSON text as jobs/ writes it; a store
// keeps it with the columns it is looked up by (id, tenant, collection) and bounds each tenant's
// finished jobs. It never reads a record's fields, except to order and count (created, finished_at,
// state). SQLite: FOLDER/server.db, the jobs this server runs (store/sqlite_job_records.h);
// PostgreSQL: table `jobs`, every replica's and the work queue's (store/postgres_job_records.h).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae::store {

struct JobRow {
  std::string id, tenant, collection;
  std::string record;  // JSON text
};

class JobRecordStore {
 public:
  virtual ~JobRecordStore() = default;
  // Inserted, or replaced when the job is there already; durable when it returns.
  virtual Result<void> save(const JobRow& job) = 0;
  virtual Result<std::optional<std::string>> get(const std::string& id, const std::string& tenant) = 0;
  // The tenant's most recent jobs' records, newest first.
  virtual Result<std::vector<std::string>> list(const std::string& tenant, std::size_t limit) = 0;
  // Every record of one collection, oldest first (what a server resumes at start).
  virtual Result<std::vector<std::string>> of_collection(const std::string& tenant, const std::string& collection) = 0;
  virtual Result<void> remove(const std::string& id) = 0;
  // The records of a collection being deleted.
  virtual Result<void> remove_collection(const std::string& tenant, const std::string& collection) = 0;
  // The records of a renamed collection follow it: the collection column and the record's own
  // "collection" field (the one field a store writes).
  virtual Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to) = 0;
  // Deletes the tenant's finished jobs beyond its newest `kept`.
  virtual Result<void> forget_finished(const std::string& tenant, std::size_t kept) = 0;
  // 0.1 kept a server's records as COLLECTION_FOLDER/jobs/ID.json: the SQLite store takes them in once
  // (the number taken); a store that never had such files has nothing to take.
  virtual Result<std::size_t> import_0_1_records(const std::filesystem::path& /*collection_folder*/,
                                                 const std::string& /*tenant*/, const std::string& /*collection*/) {
    return std::size_t{0};
  }
};

}  // namespace kotae::store
