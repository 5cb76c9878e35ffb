#pragma once
// Background ingestion of uploaded files. A job outlives the request that started it (the client may
// disconnect and poll GET /v1/jobs/{id}); it holds its collection's writer lock while it runs, reports
// per-file progress and errors, and can be cancelled (it stops before its next file: a file being
// indexed is one transaction, committed whole or not at all).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "server/collection_registry.h"

namespace kotae::server {

struct JobFile {
  std::string name;
  std::string status = "queued";  // queued, indexing, indexed, unchanged, failed, cancelled
  std::size_t chunks = 0;
  std::uint64_t bytes = 0;
  std::string error;
};

struct JobStatus {
  std::string id;
  std::string tenant;
  std::string collection;
  std::string state = "queued";  // queued, running, succeeded, partial (some files failed), failed (all did), cancelled
  std::vector<JobFile> files;
  std::size_t files_done = 0;
  std::size_t chunks = 0;
  std::uint64_t bytes_done = 0, bytes_total = 0;
  double created = 0, started = 0, finished = 0;  // Unix seconds; 0 until it happens
};

// Receives every indexed file's byte and chunk counts (metrics).
using IngestObserver = std::function<void(std::uint64_t bytes, std::size_t chunks, double seconds)>;

class IngestJobs {
 public:
  // `finished_kept`: finished jobs remembered per tenant (the oldest are forgotten first).
  explicit IngestJobs(std::size_t threads = 1, std::size_t finished_kept = 1000);
  ~IngestJobs();  // cancels what waits, lets running jobs stop at their next file, joins

  // `incoming` holds the uploaded files (named as they will be stored); the job moves them into the
  // collection's uploads/ folder and indexes them there.
  JobStatus submit(std::shared_ptr<ServedCollection> collection, const std::filesystem::path& incoming,
                   std::vector<std::string> files);
  std::optional<JobStatus> get(const std::string& id, const std::string& tenant) const;
  std::vector<JobStatus> list(const std::string& tenant) const;
  std::size_t active(const std::string& tenant) const;  // queued or running
  std::optional<JobStatus> cancel(const std::string& id, const std::string& tenant);
  void set_observer(IngestObserver observer) { observer_ = std::move(observer); }

 private:
  struct Job {
    JobStatus status;
    std::shared_ptr<ServedCollection> collection;
    std::filesystem::path incoming;
    bool cancel = false;
  };
  void work();
  void run(Job& job);

  const std::size_t finished_kept_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::map<std::string, std::deque<std::string>> finished_order_;  // per tenant, oldest first
  bool stopping_ = false;
  IngestObserver observer_;
  std::vector<std::thread> threads_;
};

}  // namespace kotae::server
