#pragma once
// Over a shared store, ingestion jobs' records in PostgreSQL (table `jobs`; the queued files' bytes in
// `uploads` until a worker is done with them). A record is the job's JSON text as jobs/ writes it; this
// part keeps it with the columns it is looked up by (id, tenant, collection, the replica that runs it,
// whether a cancel was asked), and bounds each tenant's finished jobs. It never reads a record's
// fields, except to order and count (finished_at, state).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const PgSchema& postgres_jobs_schema();

struct JobRow {
  std::string id, tenant, collection;
  std::string record;  // JSON text
};

// What an update does to the job's row and its uploads, decided from the record under the row lock.
struct JobChange {
  std::string record;                    // the record to store
  std::optional<std::size_t> drop_file;  // this file's upload leaves the store...
  bool keep_as_document = false;         // ...kept first as the document `document_path` of the job's collection
  std::string document_path;
};

class PostgresJobRecords {
 public:
  explicit PostgresJobRecords(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  // A replica's own job, saved again after every file (inserted or replaced, `replica` naming who runs it).
  Result<void> publish(const JobRow& job, const std::string& replica);
  Result<std::optional<std::string>> get(const std::string& id, const std::string& tenant);
  Result<std::optional<std::string>> get(const std::string& id);  // any tenant's: the workers'
  // The tenant's most recent jobs' records, newest first.
  Result<std::vector<std::string>> list(const std::string& tenant, std::size_t limit);
  // Marks the job for cancelling; its record, or nullopt when the tenant has no such job.
  Result<std::optional<std::string>> request_cancel(const std::string& id, const std::string& tenant);
  Result<bool> cancel_requested(const std::string& id);
  // The tenant's jobs queued or running on any replica.
  Result<std::size_t> active(const std::string& tenant);
  // Deletes the tenant's finished jobs beyond its newest `kept`.
  Result<void> forget_finished(const std::string& tenant, std::size_t kept);

  // A job for the work queue: its record and its files' bytes, in one transaction.
  Result<void> insert_queued(const JobRow& job, const std::vector<std::string_view>& files);
  Result<void> remove(const std::string& id);
  // Runs `change` on the record under the row's lock and stores what it returns, in one transaction;
  // nullopt when there is no such job.
  using Change = std::function<Result<JobChange>(const std::string& record, bool cancel_requested)>;
  Result<std::optional<std::string>> update(const std::string& id, const Change& change);
  // A queued file's bytes; nullopt once they have left the store.
  Result<std::optional<std::string>> upload(const std::string& id, std::size_t file);

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
