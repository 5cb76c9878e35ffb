#pragma once
// A worker process's ingestion: threads that take file entries from the Redis work queue (queue/),
// read the upload from PostgreSQL, load, chunk and embed it, commit the document in one transaction,
// record the file's result on its job (jobs/queued_jobs.h), and only then acknowledge the entry.
//
// Exactly once: a worker that dies after the commit but before the acknowledgement leaves its entry
// pending; another worker claims it after it has been idle for the claim time, and finds the document
// already stored with the upload's SHA-256, so nothing is stored twice (an entry delivered again after
// the file's result was recorded is acknowledged without work). A file whose attempt failed in a way a
// later one may cure (the store out of reach, the file over its time budget) waits for its backoff and
// is tried again; past the queue's attempts it goes to the dead-letter stream and fails with the reason.
// While a thread works on a file, a heartbeat keeps its entry from being claimed by another worker.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "assembly/collection_registry.h"
#include "jobs/queued_jobs.h"
#include "worker/queue_consumer.h"

namespace kotae::worker {

struct IngestWorkerOptions {
  std::string queue_url;
  queue::WorkQueueOptions queue;
  std::size_t concurrency = 1;           // files indexed at once (they share the embedder's batches)
  std::string consumer;                  // this process in the consumer group (host and process id)
  double max_seconds_per_file = 600;     // an attempt still loading or embedding after this fails (retried)
  std::string ocr_languages = "eng";     // Tesseract's for scans and images ("eng+deu"; "": no OCR)
  std::chrono::milliseconds block{500};  // how long a take waits for new entries
};

struct WorkerCounters {
  std::atomic<std::uint64_t> indexed{0}, unchanged{0}, failed{0}, retried{0}, dead_lettered{0}, chunks{0};
};

class IngestWorker {
 public:
  IngestWorker(IngestWorkerOptions options, assembly::CollectionRegistry& collections, jobs::QueuedJobs& jobs);

  // Stops taking entries and waits for the files being indexed; entries taken but not begun are left
  // for other workers (claimed after the claim time).
  void stop() { consumer_.stop(); }
  // The last round trip to Redis succeeded.
  bool ready() const { return consumer_.ready(); }
  const WorkerCounters& counters() const { return counters_; }
  std::size_t busy() const { return consumer_.busy(); }  // files being indexed now

 private:
  void handle(queue::WorkQueue& queue, const queue::QueueEntry& entry);

  IngestWorkerOptions options_;
  assembly::CollectionRegistry& collections_;
  jobs::QueuedJobs& jobs_;
  WorkerCounters counters_;
  QueueConsumer consumer_;  // last: its threads start once the rest is made
};

}  // namespace kotae::worker
