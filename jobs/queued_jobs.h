#pragma once
// Ingestion through the work queue (`serve --queue`, beside a PostgreSQL store): an upload's files go
// into PostgreSQL (table `uploads`) with the job's record (table `jobs`) in one transaction, then one
// entry per file into the tenant's Redis stream, and only then is the upload acknowledged. Workers
// (worker/ingest_worker.h) take the entries on any machine; every change to a file's state is one
// transaction on the job's row (SELECT ... FOR UPDATE), so workers on several machines update one job
// without losing each other's progress, and every replica answers GET /v1/jobs/{id} from that row.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "jobs/job_status.h"
#include "jobs/uploaded_file.h"
#include "queue/work_queue_pool.h"
#include "store/postgres_job_records.h"

namespace kotae::jobs {

// The fields of a queue entry: which file of which job.
inline constexpr const char* kJobField = "job";
inline constexpr const char* kFileField = "file";

struct FileTask {
  JobStatus job;  // as it stands, the file marked indexing
  std::size_t file = 0;
  std::string bytes;  // the upload's
};

struct QueuedJobsOptions {
  // Entries waiting in the whole queue beyond which an upload is refused (503, Retry-After): work the
  // workers cannot get to soon is better not accepted. 0: no bound.
  std::size_t max_waiting = 100000;
  std::chrono::milliseconds stats_ttl{1000};  // how long the queue's figures are reused (metrics, the bound)
  std::size_t finished_kept = 1000;  // finished jobs kept per tenant: a submit forgets the tenant's oldest beyond it
};

class QueuedJobs {
 public:
  QueuedJobs(std::shared_ptr<store::PgPool> pool, std::shared_ptr<queue::WorkQueuePool> queue,
             QueuedJobsOptions options = {});

  // API side. Stores the files and the job (with the caller's metadata for all files, `metadata_json`,
  // and each file's own, both checked already; "" for none), then queues one entry per file in
  // `priority`'s band. A queue over its bound is `overloaded`; Redis or PostgreSQL out of reach is
  // `unavailable` (nothing of the upload is kept).
  Result<JobStatus> submit(const std::string& tenant, const std::string& collection,
                           const std::vector<UploadedFile>& files, const std::string& metadata_json,
                           queue::Priority priority);
  // Cancels what no worker has started yet (at once, in the record) and asks the workers to skip the
  // rest; nullopt when the tenant has no such job.
  Result<std::optional<JobStatus>> cancel(const std::string& id, const std::string& tenant);
  // The queue's figures, at most stats_ttl old.
  Result<queue::QueueStats> stats();
  const std::string& queue_name() const { return queue_->options().name; }
  // A round trip to PostgreSQL succeeds now (a worker's readiness).
  bool store_reachable() const { return pool_->reachable(std::chrono::milliseconds(500)); }
  const std::shared_ptr<queue::WorkQueuePool>& queues() const { return queue_; }

  // Worker side. The file's bytes with the job, the file marked indexing (attempt `attempt`); nullopt
  // when there is nothing to do: the file is done already (a second delivery of its entry) or its job
  // was cancelled (the file is marked so), or the job is gone.
  Result<std::optional<FileTask>> begin_file(const std::string& job_id, std::size_t file);
  // The file's result (and its OCR's last figures, when it had pages to OCR); its bytes leave the
  // store. The job as it stands then.
  Result<JobStatus> finish_file(const std::string& job_id, std::size_t file, const std::string& status,
                                std::size_t chunks, const std::string& error, const OcrTally& ocr = {});
  // The file's OCR so far (text::LoadLimits::on_ocr_page, tallied), while it is indexing: every replica's
  // GET /v1/jobs/{id} shows it. The caller bounds how often (a transaction on the job's row each).
  Result<void> ocr_progress(const std::string& job_id, std::size_t file, std::uint32_t pages_done, std::uint32_t pages);
  // An attempt that failed in a way a later one may cure: the file waits again, saying why.
  Result<void> retry_file(const std::string& job_id, std::size_t file, const std::string& error);
  // Why the file's last attempt failed ("" when none said: its worker died).
  Result<std::string> last_error(const std::string& job_id, std::size_t file);

 private:
  // Runs `change` on the job's record under its row lock and saves it; nullopt when there is no job.
  Result<std::optional<JobStatus>> update(const std::string& job_id,
                                          const std::function<void(JobStatus&, bool cancel_requested)>& change,
                                          std::optional<std::size_t> drop_upload = std::nullopt);

  std::shared_ptr<store::PgPool> pool_;
  store::PostgresJobRecords records_;
  std::shared_ptr<queue::WorkQueuePool> queue_;
  QueuedJobsOptions options_;
};

}  // namespace kotae::jobs
