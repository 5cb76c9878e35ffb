#include "jobs/queued_jobs.h"

#include <algorithm>

#include "core/log.h"
#include "jobs/job_status.h"
#include "jobs/shared_job_records.h"

namespace kotae::jobs {

QueuedJobs::QueuedJobs(std::shared_ptr<store::PgPool> pool, std::shared_ptr<queue::WorkQueuePool> queue,
                       QueuedJobsOptions options)
    : pool_(pool), records_(std::move(pool)), queue_(std::move(queue)), options_(options) {}

Result<queue::QueueStats> QueuedJobs::stats() {
  return queue_->stats(options_.stats_ttl);
}

Result<JobStatus> QueuedJobs::submit(const std::string& tenant, const std::string& collection,
                                     const std::vector<UploadedFile>& files, const std::string& metadata_json,
                                     queue::Priority priority) {
  if (options_.max_waiting > 0) {
    const auto figures = KOTAE_TRY_VALUE(stats());
    if (static_cast<std::size_t>(figures.waiting) + files.size() > options_.max_waiting) {
      return make_error(ErrorCode::overloaded, "the ingestion queue holds " + std::to_string(figures.waiting) +
                                                   " files waiting, its bound is " +
                                                   std::to_string(options_.max_waiting) + ": try again later");
    }
  }
  JobStatus job;
  job.id = new_job_id();
  job.tenant = tenant;
  job.collection = collection;
  job.created = unix_seconds();
  job.metadata_json = metadata_json;
  for (const auto& f : files) {
    JobFile file;
    file.name = f.name;
    file.metadata_json = f.metadata_json;
    file.bytes = f.body.size();
    job.bytes_total += file.bytes;
    job.files.push_back(std::move(file));
  }
  std::vector<std::string_view> bytes;
  for (const auto& f : files) bytes.push_back(f.body);
  KOTAE_TRY(records_.insert_queued({job.id, tenant, collection, job_record(job).dump()}, bytes));
  // Where a tenant adds jobs, its oldest finished ones beyond the bound go (a failure only delays that).
  (void)records_.forget_finished(tenant, options_.finished_kept);
  std::vector<queue::Fields> entries;
  for (std::size_t i = 0; i < files.size(); ++i)
    entries.push_back({{kJobField, job.id}, {kFileField, std::to_string(i)}});
  // Sent again after a lost reply, an entry may be queued twice: the second finds its file done.
  auto queued =
      queue_->with_queue([&](queue::WorkQueue& queue) { return queue.enqueue_all(priority, tenant, entries); });
  if (!queued) {  // never acknowledged: nothing of it stays
    (void)records_.remove(job.id);
    return queued.error();
  }
  return job;
}

Result<std::optional<JobStatus>> QueuedJobs::update(const std::string& job_id,
                                                    const std::function<void(JobStatus&, bool)>& change,
                                                    std::optional<std::size_t> drop_upload) {
  std::optional<JobStatus> changed;
  KOTAE_TRY(records_.update(job_id, [&](const std::string& record, bool cancel_requested) -> Result<store::JobChange> {
    JobStatus job = KOTAE_TRY_VALUE(parse_job_record(record));
    change(job, cancel_requested);
    store::JobChange stored{job_record(job).dump(), drop_upload, false, {}};
    if (drop_upload && *drop_upload < job.files.size()) {
      const auto& file = job.files[*drop_upload];
      // The indexed file is kept as its document's, in the collection (server/document_files.h).
      stored.keep_as_document = file.status == "indexed" || file.status == "unchanged";
      stored.document_path = file.name;
    }
    changed = std::move(job);
    return stored;
  }));
  return changed;
}

Result<std::optional<JobStatus>> QueuedJobs::cancel(const std::string& id, const std::string& tenant) {
  if (!KOTAE_TRY_VALUE(records_.request_cancel(id, tenant))) return std::optional<JobStatus>();
  return update(id, [](JobStatus& job, bool cancel_requested) {
    for (auto& f : job.files) {
      if (f.status == "queued") f.status = "cancelled";  // a worker that takes its entry skips it
    }
    settle_job(job, cancel_requested);
  });
}

Result<std::optional<FileTask>> QueuedJobs::begin_file(const std::string& job_id, std::size_t file) {
  bool work = false;
  auto job = KOTAE_TRY_VALUE(update(job_id, [&](JobStatus& s, bool cancel_requested) {
    if (file >= s.files.size() || job_file_done(s.files[file])) return;
    if (cancel_requested) {
      s.files[file].status = "cancelled";
    } else {
      s.files[file].status = "indexing";
      s.files[file].ocr_pages = s.files[file].ocr_pages_done = 0;  // an attempt reads its pages afresh
      s.state = "running";
      if (s.started == 0) s.started = unix_seconds();
      work = true;
    }
    settle_job(s, cancel_requested);
  }));
  if (!job || !work) return std::optional<FileTask>();
  auto bytes = KOTAE_TRY_VALUE(records_.upload(job_id, file));
  if (!bytes) return make_error(ErrorCode::not_found, "the upload's bytes are gone from the store");
  return std::optional<FileTask>(FileTask{std::move(*job), file, std::move(*bytes)});
}

Result<JobStatus> QueuedJobs::finish_file(const std::string& job_id, std::size_t file, const std::string& status,
                                          std::size_t chunks, const std::string& error, const OcrTally& ocr) {
  auto job = KOTAE_TRY_VALUE(update(
      job_id,
      [&](JobStatus& s, bool cancel_requested) {
        if (file >= s.files.size() || job_file_done(s.files[file])) return;
        auto& f = s.files[file];
        f.status = status;
        f.chunks = chunks;
        f.error = error;
        if (ocr.pages > 0) {
          f.ocr_pages = ocr.pages;
          f.ocr_pages_done = ocr.done;
        }
        s.chunks += chunks;
        s.bytes_done += f.bytes;
        settle_job(s, cancel_requested);
      },
      file));
  if (!job) return make_error(ErrorCode::not_found, "no job '" + job_id + "'");
  return std::move(*job);
}

Result<void> QueuedJobs::ocr_progress(const std::string& job_id, std::size_t file, std::uint32_t pages_done,
                                      std::uint32_t pages) {
  KOTAE_TRY(update(job_id, [&](JobStatus& s, bool) {
    if (file >= s.files.size() || s.files[file].status != "indexing") return;
    s.files[file].ocr_pages = pages;
    s.files[file].ocr_pages_done = pages_done;
  }));
  return {};
}

Result<void> QueuedJobs::retry_file(const std::string& job_id, std::size_t file, const std::string& error) {
  KOTAE_TRY(update(job_id, [&](JobStatus& s, bool) {
    if (file >= s.files.size() || job_file_done(s.files[file])) return;
    s.files[file].status = "queued";
    s.files[file].error = error;
    s.files[file].ocr_pages = s.files[file].ocr_pages_done = 0;
  }));
  return {};
}

Result<std::string> QueuedJobs::last_error(const std::string& job_id, std::size_t file) {
  const auto record = KOTAE_TRY_VALUE(records_.get(job_id));
  if (!record) return std::string();
  const JobStatus job = KOTAE_TRY_VALUE(parse_job_record(*record));
  return file < job.files.size() ? job.files[file].error : std::string();
}

}  // namespace kotae::jobs
