#include "worker/ingest_worker.h"

#include <algorithm>
#include <chrono>

#include "core/log.h"
#include "rag/ingester.h"
#include "text/loaders/loader.h"

namespace kotae::worker {

namespace {

using Milliseconds = std::chrono::milliseconds;

constexpr Milliseconds kPostgresReconnectWait{1000};  // after PostgreSQL was out of reach
constexpr Milliseconds kOcrRecordInterval{1000};      // a file's OCR progress written to its job at most this often

}  // namespace

IngestWorker::IngestWorker(IngestWorkerOptions options, assembly::CollectionRegistry& collections,
                           jobs::QueuedJobs& jobs)
    : options_(std::move(options)),
      collections_(collections),
      jobs_(jobs),
      consumer_({.queue_url = options_.queue_url,
                 .queue = options_.queue,
                 .threads = options_.concurrency,
                 .consumer = options_.consumer,
                 .block = options_.block},
                [this](queue::WorkQueue& queue, const queue::QueueEntry& entry) { handle(queue, entry); }) {}

void IngestWorker::handle(queue::WorkQueue& queue, const queue::QueueEntry& entry) {
  const auto field = [&](const char* name) {
    auto it = entry.fields.find(name);
    return it == entry.fields.end() ? std::string() : it->second;
  };
  const std::string job_id = field(jobs::kJobField);
  std::size_t file = 0;
  try {
    file = std::stoul(field(jobs::kFileField));
  } catch (...) {
    (void)queue.dead_letter(entry, "not an entry of an ingestion job");
    return;
  }
  const nlohmann::json where{{"job", job_id}, {"file", file}, {"entry", entry.id}, {"attempt", entry.attempts}};
  auto retry = [&](const std::string& why) {  // left pending: claimed again after its backoff
    ++counters_.retried;
    log_event("file_retry", {{"where", where}, {"reason", why}}, LogLevel::warn);
    if (auto recorded = jobs_.retry_file(job_id, file, why); !recorded)
      consumer_.sleep_unless_stopped(kPostgresReconnectWait);
  };

  if (queue.exhausted(entry)) {
    auto last = jobs_.last_error(job_id, file);
    if (!last) {
      consumer_.sleep_unless_stopped(kPostgresReconnectWait);
      return;
    }
    const std::string reason =
        "gave up after " + std::to_string(entry.attempts - 1) +
        " attempts: " + (last->empty() ? "its worker stopped while indexing it (killed, or out of memory)" : *last);
    // The letter is written before the job shows the file failed: whoever sees that finds the letter.
    if (!queue.write_dead_letter(entry, reason)) {
      consumer_.sleep_unless_stopped(kPostgresReconnectWait);
      return;
    }
    if (!jobs_.finish_file(job_id, file, "failed", 0, reason)) return;
    (void)queue.acknowledge(entry);  // lost: delivered again, dead-lettered again
    ++counters_.dead_lettered;
    ++counters_.failed;
    log_event("file_dead_lettered", {{"where", where}, {"reason", reason}}, LogLevel::error);
    return;
  }
  auto task = jobs_.begin_file(job_id, file);
  if (!task) return retry(task.error().message);
  if (!*task) {  // done already, cancelled, or its job is gone
    (void)queue.acknowledge(entry);
    return;
  }
  const jobs::JobStatus& job = (*task)->job;
  const std::string& name = job.files[file].name;
  auto collection = collections_.get(job.tenant, job.collection);
  if (!collection && collection.error().code != ErrorCode::not_found) return retry(collection.error().message);
  if (!collection) {
    if (jobs_.finish_file(job_id, file, "failed", 0, "the collection was deleted before this file was indexed")) {
      (void)queue.acknowledge(entry);
    }
    return;
  }
  assembly::ServedCollection& c = **collection;
  rag::IngestOptions ingest;
  ingest.chunking.max_tokens = c.store->info().chunk_tokens;
  ingest.chunking.overlap_tokens = c.store->info().overlap_tokens;
  ingest.max_seconds_per_file = options_.max_seconds_per_file;
  ingest.limits.ocr_languages = options_.ocr_languages;
  ingest.limits.ocr_threads = static_cast<std::uint32_t>(options_.concurrency);
  // The file's OCR: every page, from the loader's OCR threads (one call at a time), tallied here and
  // written to the job's row at most about once a second.
  jobs::OcrTally ocr;
  auto ocr_recorded = std::chrono::steady_clock::now();
  ingest.limits.on_ocr_page = [&](std::uint32_t done, std::uint32_t pages) {
    ocr.report(done, pages);
    const auto now = std::chrono::steady_clock::now();
    if (now - ocr_recorded < kOcrRecordInterval) return;
    ocr_recorded = now;
    if (auto recorded = jobs_.ocr_progress(job_id, file, ocr.done, ocr.pages); !recorded) {
      log_event("ocr_progress_not_recorded", {{"where", where}, {"reason", recorded.error().message}}, LogLevel::warn);
    }
  };
  Result<rag::FileReport> report = rag::FileReport{};
  {
    std::lock_guard writing(c.writer);  // one writer per collection in this process
    rag::Ingester ingester(*c.store, *c.bulk_encoder, ingest);
    report = ingester.ingest_bytes(name, (*task)->bytes, text::document_format(name),
                                   jobs::upload_metadata((*task)->job, file));
  }
  if (!report) return retry(report.error().message);  // the collection's failure (its store out of reach)
  if (report->status == rag::FileStatus::failed && report->stopped) return retry(report->error);
  std::string status = rag::to_string(report->status);
  std::size_t chunks = report->chunks;
  if (report->status == rag::FileStatus::unchanged && entry.attempts > 1) {
    // An earlier attempt committed it and died before recording so: it was indexed, once.
    status = "indexed";
    if (auto stored = c.store->find_document(name); stored && *stored)
      chunks = static_cast<std::size_t>((*stored)->chunk_count);
  }
  if (auto recorded = jobs_.finish_file(job_id, file, status, chunks, report->error, ocr); !recorded) {
    return retry(recorded.error().message);  // the document is stored; the next attempt finds it unchanged
  }
  (void)queue.acknowledge(entry);  // lost: delivered again, and acknowledged then without work
  if (status == "indexed")
    ++counters_.indexed;
  else if (status == "unchanged")
    ++counters_.unchanged;
  else
    ++counters_.failed;
  counters_.chunks += chunks;
  log_event("file_done", {{"where", where}, {"status", status}, {"chunks", chunks}});
}

}  // namespace kotae::worker
