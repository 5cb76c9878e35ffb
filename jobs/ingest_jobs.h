#pragma once
// Background ingestion of uploaded files. A job outlives the request that started it (the client may
// disconnect and poll GET /v1/jobs/{id}) and the process: its files are on disk, synced, and its record
// in the job record store (store/job_record_store.h) before the upload is acknowledged, and the record follows every
// file, so a server killed at any moment runs its unfinished jobs again at the next start (recover). A job holds its
// collection's writer lock, across processes too (store/writer_lock.h), while it runs; a file is one transaction,
// committed whole or not at all. Each file has a time budget, and a job can be cancelled: both are
// heard between pages and between batches of chunks.
//
// Scheduling, so that no tenant's big job stalls another's small one: `threads` workers take the next
// job round robin over tenants (the tenant served longest ago first, then its oldest job), and one more
// worker, the express lane, takes only jobs of at most express_bytes (a few documents, not a 200-page
// scan). No worker takes a job whose collection another running job is writing: it would only wait for
// that job's writer lock.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "assembly/collection_registry.h"
#include "core/result.h"
#include "jobs/job_status.h"
#include "store/job_record_store.h"

namespace kotae::jobs {

class SharedJobRecords;

struct IngestJobsOptions {
  std::size_t threads = 1;                   // jobs of any size running at once (and the express lane's one)
  std::uint64_t express_bytes = 4ull << 20;  // the largest job the express lane runs (a few documents); 0: none
  std::size_t finished_kept = 1000;          // finished jobs remembered per tenant (the oldest are forgotten first)
  double max_seconds_per_file = 600;         // a file still loading or embedding after this fails; the job goes on
  std::string ocr_languages = "eng";         // Tesseract's for scans and images ("eng+deu"; "": no OCR)
  std::chrono::seconds writer_wait{300};     // for another process (the CLI) writing the same collection
};

// Receives every indexed file's byte and chunk counts (metrics).
using IngestObserver = std::function<void(std::uint64_t bytes, std::size_t chunks, double seconds)>;
// Keeps an indexed upload (its name in the collection, its file here) where every replica finds it.
using FileKeeper = std::function<Result<void>(const assembly::ServedCollection& collection, const std::string& name,
                                              const std::filesystem::path& file)>;

class IngestJobs {
 public:
  // `records`: where this process keeps its jobs' records (store/job_record_store.h).
  IngestJobs(IngestJobsOptions options, std::shared_ptr<store::JobRecordStore> records);
  ~IngestJobs();  // stop(), waiting as long as it takes

  // The folder a new job's files go to before submit (uploads/.incoming/ID).
  static std::filesystem::path incoming_dir(const assembly::ServedCollection& collection, const std::string& id);

  // The files (their names, and each one's own metadata) are in incoming_dir(id), written and synced;
  // `metadata_json` is the caller's metadata for all of them ("" for none). Records the job (synced)
  // before it returns: a job returned here is never forgotten. An io error when the record cannot be
  // written.
  Result<JobStatus> submit(const std::string& id, std::shared_ptr<assembly::ServedCollection> collection,
                           std::vector<JobFile> files, std::string metadata_json = "");
  // At start, per open collection: its unfinished jobs are queued again (a file that was being indexed
  // starts over), its finished ones are remembered, and incoming folders that no job names (uploads
  // never acknowledged) are removed.
  void recover(const std::shared_ptr<assembly::ServedCollection>& collection);

  std::optional<JobStatus> get(const std::string& id, const std::string& tenant) const;
  std::vector<JobStatus> list(const std::string& tenant) const;
  std::size_t active(const std::string& tenant) const;  // queued or running
  std::optional<JobStatus> cancel(const std::string& id, const std::string& tenant);
  // A deleted collection's records go; its jobs' statuses stay in memory until the bound pushes them out.
  void forget_collection(const std::string& tenant, const std::string& collection);
  // The collection's jobs queued or running in this process (a rename waits for none).
  std::size_t active_on(const std::string& tenant, const std::string& collection) const;
  // A renamed collection's finished jobs, their records and statuses, follow it to its new name.
  Result<void> rename_collection(const std::string& tenant, const std::string& from, const std::string& to);
  void set_observer(IngestObserver observer) { observer_ = std::move(observer); }
  void set_keeper(FileKeeper keeper) { keeper_ = std::move(keeper); }
  // Over a shared store (before any job is submitted or recovered): every record saved is published
  // there too, and a cancel asked of another replica is heard before each file.
  void share_records(std::shared_ptr<SharedJobRecords> shared) { shared_ = std::move(shared); }

  // Tells every job to stop (queued ones stay queued in their records; a running one stops at its
  // next page or batch and runs again, from that file, at the next start), then waits up to
  // `deadline`. false when a job was still running then: the caller may exit anyway, its record says
  // where to resume.
  void request_stop();
  bool wait_stopped(std::chrono::milliseconds deadline);

 private:
  struct Job {
    JobStatus status;
    std::shared_ptr<assembly::ServedCollection> collection;  // null once finished: it holds the collection open
    std::atomic<bool> stop{false};  // cancelled or shutting down: heard between pages and batches
    bool cancelled = false;         // by a client (under mutex_): the job ends as cancelled
  };
  void work(bool express);
  // Under mutex_: the job a worker runs next, taken from the queue, or null when none suits it.
  std::shared_ptr<Job> take_next(bool express);
  void run(const std::shared_ptr<Job>& job);
  void enqueue(std::shared_ptr<Job> job);
  void remember_finished(
      const std::shared_ptr<Job>& job);         // under mutex_; forgets the tenant's oldest beyond the bound
  void publish(const JobStatus& status) const;  // to the shared records, when there are
  bool cancelled_elsewhere(const std::string& id) const;

  const IngestJobsOptions options_;
  std::shared_ptr<store::JobRecordStore> records_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> queue_;                            // oldest first
  std::map<std::string, std::uint64_t> served_;                       // per tenant: when it last got a worker
  std::uint64_t turns_ = 0;                                           // counts the jobs handed to workers
  std::set<const assembly::ServedCollection*> writing_;               // collections a running job writes
  std::map<std::string, std::deque<std::shared_ptr<Job>>> finished_;  // per tenant, oldest first
  bool stopping_ = false;
  std::size_t workers_left_ = 0;
  IngestObserver observer_;
  FileKeeper keeper_;
  std::shared_ptr<SharedJobRecords> shared_;
  std::vector<std::thread> threads_;
};

}  // namespace kotae::jobs
