#pragma once
// Over a shared store, every replica's ingestion jobs in PostgreSQL (table `jobs`), beside the files
// each replica keeps for the jobs it runs: a client polling GET /v1/jobs/{id} through a load balancer
// reaches any replica and sees the record as the replica running the job last saved it (after every
// file), and a cancel asked of another replica is recorded here and heard by the running one before
// its next file. Each tenant keeps its newest `finished_kept` finished jobs here too, as each replica
// does in memory: the table cannot grow without bound.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "jobs/job_status.h"
#include "store/postgres_job_records.h"

namespace kotae::jobs {

class SharedJobRecords {
 public:
  // `replica`: who runs the jobs this process publishes (host name and process id), for operators.
  SharedJobRecords(std::shared_ptr<store::PgPool> pool, std::string replica, std::size_t finished_kept);

  // A finished record forgets its tenant's oldest finished ones beyond the bound.
  Result<void> publish(const JobStatus& status);
  Result<std::optional<JobStatus>> get(const std::string& id, const std::string& tenant);
  // The tenant's most recent jobs, newest first.
  Result<std::vector<JobStatus>> list(const std::string& tenant, std::size_t limit);
  // Asks whichever replica runs it to cancel it; the record, or nullopt when there is no such job.
  Result<std::optional<JobStatus>> request_cancel(const std::string& id, const std::string& tenant);
  Result<bool> cancel_requested(const std::string& id);
  // The tenant's jobs queued or running on any replica (its quota of queued jobs).
  Result<std::size_t> active(const std::string& tenant);
  // Those of one collection, on any replica (a rename waits for none).
  Result<std::size_t> active_on(const std::string& tenant, const std::string& collection);
  // A renamed collection's jobs follow it.
  Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to);

 private:
  store::PostgresJobRecords records_;
  std::size_t finished_kept_;
};

}  // namespace kotae::jobs
