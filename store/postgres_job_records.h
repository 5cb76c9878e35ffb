#pragma once
// Over a shared store, ingestion jobs' records in PostgreSQL (store/job_record_store.h; table `jobs`,
// the queued files' bytes in `uploads` until a worker is done with them), with the replica that runs
// each and whether a cancel was asked; and the work queue's operations on them.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/job_record_store.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_jobs_schema();

// What an update does to the job's row and its uploads, decided from the record under the row lock.
struct JobChange {
  std::string record;                    // the record to store
  std::optional<std::size_t> drop_file;  // this file's upload leaves the store...
  bool keep_as_document = false;         // ...kept first as the document `document_path` of the job's collection
  std::string document_path;
};

class PostgresJobRecords final : public JobRecordStore {
 public:
  // `replica` names who runs the jobs this process saves (host name and process id), for operators.
  explicit PostgresJobRecords(std::shared_ptr<PgPool> pool, std::string replica = "queue")
      : pool_(std::move(pool)), replica_(std::move(replica)) {}

  // A replica's own job, saved again after every file.
  Result<void> save(const JobRow& job) override;
  Result<std::optional<std::string>> get(const std::string& id, const std::string& tenant) override;
  Result<std::optional<std::string>> get(const std::string& id);  // any tenant's: the workers'
  Result<std::vector<std::string>> list(const std::string& tenant, std::size_t limit) override;
  Result<std::vector<std::string>> of_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> remove_collection(const std::string& tenant, const std::string& collection) override;
  Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to) override;
  // Marks the job for cancelling; its record, or nullopt when the tenant has no such job.
  Result<std::optional<std::string>> request_cancel(const std::string& id, const std::string& tenant);
  Result<bool> cancel_requested(const std::string& id);
  // The tenant's jobs queued or running on any replica.
  Result<std::size_t> active(const std::string& tenant);
  // Those of one collection (a rename waits for none).
  Result<std::size_t> active_on(const std::string& tenant, const std::string& collection);
  Result<void> forget_finished(const std::string& tenant, std::size_t kept) override;

  // A job for the work queue: its record and its files' bytes, in one transaction.
  Result<void> insert_queued(const JobRow& job, const std::vector<std::string_view>& files);
  Result<void> remove(const std::string& id) override;
  // Runs `change` on the record under the row's lock and stores what it returns, in one transaction;
  // nullopt when there is no such job.
  using Change = std::function<Result<JobChange>(const std::string& record, bool cancel_requested)>;
  Result<std::optional<std::string>> update(const std::string& id, const Change& change);
  // A queued file's bytes; nullopt once they have left the store.
  Result<std::optional<std::string>> upload(const std::string& id, std::size_t file);

 private:
  std::shared_ptr<PgPool> pool_;
  std::string replica_;
};

}  // namespace kotae::store
