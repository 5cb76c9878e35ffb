#include "server/queued_jobs.h"

#include <algorithm>

#include "core/log.h"
#include "server/job_record.h"
#include "server/shared_job_records.h"

namespace kotae::server {

namespace {

Result<JobStatus> parse_record(std::string_view text) {
  const auto record = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto job = record.is_object() ? job_from_record(record) : std::nullopt;
  if (!job) return make_error(ErrorCode::corrupt, "a job record in PostgreSQL is not one");
  return std::move(*job);
}

}  // namespace

bool job_file_done(const JobFile& file) {
  return file.status != "queued" && file.status != "indexing";
}

void settle_job(JobStatus& job, bool cancel_requested) {
  job.files_done = static_cast<std::size_t>(std::count_if(job.files.begin(), job.files.end(), job_file_done));
  if (job.files_done < job.files.size()) return;
  const auto count = [&](const char* status) {
    return std::count_if(job.files.begin(), job.files.end(), [&](const JobFile& f) { return f.status == status; });
  };
  const auto failures = count("failed");
  const auto files = static_cast<long>(job.files.size());
  if (cancel_requested && count("cancelled") > 0)
    job.state = "cancelled";
  else
    job.state = failures == files ? "failed" : failures > 0 ? "partial" : "succeeded";
  if (job.finished == 0) job.finished = unix_seconds();
}

QueuedJobs::QueuedJobs(std::shared_ptr<store::PgPool> pool, std::shared_ptr<queue::WorkQueuePool> queue,
                       QueuedJobsOptions options)
    : pool_(std::move(pool)), queue_(std::move(queue)), options_(options) {}

Result<queue::QueueStats> QueuedJobs::stats() {
  return queue_->stats(options_.stats_ttl);
}

Result<JobStatus> QueuedJobs::submit(const std::string& tenant, const std::string& collection,
                                     const std::vector<UploadedFile>& files, queue::Priority priority) {
  if (options_.max_waiting > 0) {
    const auto figures = KOTAE_TRY_VALUE(stats());
    if (static_cast<std::size_t>(figures.waiting) + files.size() > options_.max_waiting) {
      return make_error(ErrorCode::overloaded, "the ingestion queue holds " + std::to_string(figures.waiting) +
                                                   " files waiting, its bound is " +
                                                   std::to_string(options_.max_waiting) + ": try again later");
    }
  }
  JobStatus job;
  job.id = IngestJobs::new_id();
  job.tenant = tenant;
  job.collection = collection;
  job.created = unix_seconds();
  for (const auto& f : files) {
    JobFile file;
    file.name = f.name;
    file.bytes = f.body.size();
    job.bytes_total += file.bytes;
    job.files.push_back(std::move(file));
  }
  {
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto transaction = KOTAE_TRY_VALUE(store::PgTransaction::begin(*lease));
    KOTAE_TRY(lease->query("INSERT INTO jobs(id, tenant, collection, replica, record) VALUES ($1, $2, $3, 'queue', $4)",
                           store::PgParams().add(job.id).add(tenant).add(collection).add(job_record(job).dump())));
    for (std::size_t i = 0; i < files.size(); ++i) {
      const auto& body = files[i].body;
      KOTAE_TRY(lease->query("INSERT INTO uploads(job_id, file, bytes) VALUES ($1, $2, $3)",
                             store::PgParams()
                                 .add(job.id)
                                 .add(static_cast<std::int64_t>(i))
                                 .add_bytes(std::as_bytes(std::span(body.data(), body.size())))));
    }
    KOTAE_TRY(transaction.commit());
    // Where a tenant adds jobs, its oldest finished ones beyond the bound go (a failure only delays that).
    (void)forget_finished_jobs(*lease, tenant, options_.finished_kept);
  }
  std::vector<queue::Fields> entries;
  for (std::size_t i = 0; i < files.size(); ++i)
    entries.push_back({{kJobField, job.id}, {kFileField, std::to_string(i)}});
  // Sent again after a lost reply, an entry may be queued twice: the second finds its file done.
  auto queued =
      queue_->with_queue([&](queue::WorkQueue& queue) { return queue.enqueue_all(priority, tenant, entries); });
  if (!queued) {  // never acknowledged: nothing of it stays
    if (auto lease = pool_->acquire())
      (void)(*lease)->query("DELETE FROM jobs WHERE id = $1", store::PgParams().add(job.id));
    return queued.error();
  }
  return job;
}

Result<std::optional<JobStatus>> QueuedJobs::update(const std::string& job_id,
                                                    const std::function<void(JobStatus&, bool)>& change,
                                                    std::optional<std::size_t> drop_upload) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto transaction = KOTAE_TRY_VALUE(store::PgTransaction::begin(*lease));
  auto rows = KOTAE_TRY_VALUE(lease->query(
      "SELECT record, cancel_requested::int::int8 FROM jobs WHERE id = $1 FOR UPDATE", store::PgParams().add(job_id)));
  if (rows.rows() == 0) return std::optional<JobStatus>();
  JobStatus job = KOTAE_TRY_VALUE(parse_record(rows.text(0, 0)));
  change(job, rows.int64(0, 1) != 0);
  KOTAE_TRY(lease->query("UPDATE jobs SET record = $2, updated_at = now() WHERE id = $1",
                         store::PgParams().add(job_id).add(job_record(job).dump())));
  if (drop_upload) {
    const auto file = static_cast<std::int64_t>(*drop_upload);
    if (*drop_upload < job.files.size() &&
        (job.files[*drop_upload].status == "indexed" || job.files[*drop_upload].status == "unchanged")) {
      // The indexed file is kept as its document's, in the collection (server/document_files.h).
      KOTAE_TRY(
          lease->query("INSERT INTO document_files(collection_id, path, bytes) "
                       "SELECT k.id, $5, u.bytes FROM uploads u JOIN collections k ON k.tenant = $3 AND k.name = $4 "
                       "WHERE u.job_id = $1 AND u.file = $2 "
                       "ON CONFLICT (collection_id, path) DO UPDATE SET bytes = excluded.bytes",
                       store::PgParams()
                           .add(job_id)
                           .add(file)
                           .add(job.tenant)
                           .add(job.collection)
                           .add(job.files[*drop_upload].name)));
    }
    KOTAE_TRY(
        lease->query("DELETE FROM uploads WHERE job_id = $1 AND file = $2", store::PgParams().add(job_id).add(file)));
  }
  KOTAE_TRY(transaction.commit());
  return std::optional<JobStatus>(std::move(job));
}

Result<std::optional<JobStatus>> QueuedJobs::cancel(const std::string& id, const std::string& tenant) {
  {
    auto lease = KOTAE_TRY_VALUE(pool_->acquire());
    auto rows = KOTAE_TRY_VALUE(
        lease->query("UPDATE jobs SET cancel_requested = true WHERE id = $1 AND tenant = $2 RETURNING id",
                     store::PgParams().add(id).add(tenant)));
    if (rows.rows() == 0) return std::optional<JobStatus>();
  }
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
      s.state = "running";
      if (s.started == 0) s.started = unix_seconds();
      work = true;
    }
    settle_job(s, cancel_requested);
  }));
  if (!job || !work) return std::optional<FileTask>();
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query("SELECT bytes FROM uploads WHERE job_id = $1 AND file = $2",
                                           store::PgParams().add(job_id).add(static_cast<std::int64_t>(file))));
  if (rows.rows() == 0) return make_error(ErrorCode::not_found, "the upload's bytes are gone from the store");
  const auto bytes = rows.bytes(0, 0);
  return std::optional<FileTask>(
      FileTask{std::move(*job), file, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
}

Result<JobStatus> QueuedJobs::finish_file(const std::string& job_id, std::size_t file, const std::string& status,
                                          std::size_t chunks, const std::string& error) {
  auto job = KOTAE_TRY_VALUE(update(
      job_id,
      [&](JobStatus& s, bool cancel_requested) {
        if (file >= s.files.size() || job_file_done(s.files[file])) return;
        auto& f = s.files[file];
        f.status = status;
        f.chunks = chunks;
        f.error = error;
        s.chunks += chunks;
        s.bytes_done += f.bytes;
        settle_job(s, cancel_requested);
      },
      file));
  if (!job) return make_error(ErrorCode::not_found, "no job '" + job_id + "'");
  return std::move(*job);
}

Result<void> QueuedJobs::retry_file(const std::string& job_id, std::size_t file, const std::string& error) {
  KOTAE_TRY(update(job_id, [&](JobStatus& s, bool) {
    if (file >= s.files.size() || job_file_done(s.files[file])) return;
    s.files[file].status = "queued";
    s.files[file].error = error;
  }));
  return {};
}

Result<std::string> QueuedJobs::last_error(const std::string& job_id, std::size_t file) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query("SELECT record FROM jobs WHERE id = $1", store::PgParams().add(job_id)));
  if (rows.rows() == 0) return std::string();
  const JobStatus job = KOTAE_TRY_VALUE(parse_record(rows.text(0, 0)));
  return file < job.files.size() ? job.files[file].error : std::string();
}

}  // namespace kotae::server
