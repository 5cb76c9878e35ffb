#include "jobs/ingest_jobs.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <mutex>

#include "core/log.h"
#include "core/random_id.h"
#include "jobs/job_status.h"
#include "jobs/shared_job_records.h"
#include "rag/ingester.h"
#include "store/atomic_file.h"
#include "store/writer_lock.h"
#include "text/loaders/loader.h"

namespace kotae::jobs {
namespace {

namespace fs = std::filesystem;

// How often, at most, a file's OCR progress is written to the job's record (its status in memory,
// which GET /v1/jobs and the events stream read, follows every page).
constexpr auto kOcrRecordInterval = std::chrono::seconds(1);

bool finished(const std::string& state) {
  return state != "queued" && state != "running";
}
bool file_done(const JobFile& f) {
  return f.status != "queued" && f.status != "indexing";
}
// A file that will be indexed again from its start.
void requeue(JobFile& f) {
  f.status = "queued";
  f.ocr_pages = f.ocr_pages_done = 0;
}

fs::path uploads_dir(const assembly::ServedCollection& c) {
  return c.folder / "uploads";
}

// Creates `dir` and makes its entry in its parent durable.
Result<void> create_synced_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  fs::create_directories(dir, ec);
  if (ec) return make_error(ErrorCode::io, "cannot create " + dir.string() + ": " + ec.message());
  return store::sync_folder(dir.parent_path());
}

store::JobRow row_of(const JobStatus& status) {
  return {status.id, status.tenant, status.collection, job_record(status).dump()};
}

rag::FileReport index_upload(rag::Ingester& ingester, const fs::path& file, const std::string& name,
                             const std::string& metadata_json) {
  rag::FileReport failed;
  failed.path = name;
  std::ifstream in(file, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in && !in.eof()) {
    failed.error = "cannot read the upload back";
    return failed;
  }
  auto report = ingester.ingest_bytes(name, bytes, text::document_format(name), metadata_json);
  if (!report) {
    failed.error = report.error().message;
    return failed;
  }
  return *report;
}

// The upload's file: still in the incoming folder (moved, synced, into uploads/ now), or already moved
// there by a run a crash interrupted.
Result<fs::path> stored_upload(const assembly::ServedCollection& c, const std::string& job_id,
                               const std::string& name) {
  const fs::path uploads = uploads_dir(c), stored = uploads / name;
  const fs::path incoming = IngestJobs::incoming_dir(c, job_id) / name;
  std::error_code ec;
  if (fs::exists(incoming, ec)) {
    fs::rename(incoming, stored, ec);
    if (ec) return make_error(ErrorCode::io, "cannot store the upload: " + ec.message());
    if (auto synced = store::sync_folder(uploads); !synced) return synced.error();
    return stored;
  }
  if (fs::exists(stored, ec)) return stored;
  return make_error(ErrorCode::not_found, "the uploaded file is gone from " + uploads.string());
}

}  // namespace

IngestJobs::IngestJobs(IngestJobsOptions options, std::shared_ptr<store::JobRecordStore> records)
    : options_(std::move(options)), records_(std::move(records)) {
  const bool express_lane = options_.express_bytes > 0;
  workers_left_ = std::max<std::size_t>(options_.threads, 1) + (express_lane ? 1 : 0);
  for (std::size_t i = 0; i < workers_left_; ++i) {
    const bool express = express_lane && i == 0;
    threads_.emplace_back([this, express] { work(express); });
  }
}

IngestJobs::~IngestJobs() {
  request_stop();
  {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return workers_left_ == 0; });
  }
  for (auto& t : threads_) t.join();
}

fs::path IngestJobs::incoming_dir(const assembly::ServedCollection& collection, const std::string& id) {
  return uploads_dir(collection) / ".incoming" / id;
}

Result<JobStatus> IngestJobs::submit(const std::string& id, std::shared_ptr<assembly::ServedCollection> collection,
                                     std::vector<JobFile> files, std::string metadata_json) {
  auto job = std::make_shared<Job>();
  job->status.id = id;
  job->status.tenant = collection->tenant;
  job->status.collection = collection->name;
  job->status.created = unix_seconds();
  job->status.metadata_json = std::move(metadata_json);
  const fs::path incoming = incoming_dir(*collection, id);
  std::error_code ec;
  for (auto& file : files) {
    file.bytes = fs::file_size(incoming / file.name, ec);
    job->status.bytes_total += file.bytes;
    job->status.files.push_back(std::move(file));
  }
  job->collection = std::move(collection);
  if (auto saved = records_->save(row_of(job->status)); !saved) return saved.error();
  publish(job->status);
  enqueue(job);
  return job->status;
}

void IngestJobs::recover(const std::shared_ptr<assembly::ServedCollection>& collection) {
  std::vector<std::shared_ptr<Job>> unfinished, done;
  if (auto imported = records_->import_0_1_records(collection->folder, collection->tenant, collection->name);
      !imported) {
    log_event("job_records_not_imported", {{"collection", collection->name}, {"reason", imported.error().message}},
              LogLevel::warn);
  } else if (*imported > 0) {
    log_event("job_records_imported", {{"collection", collection->name}, {"records", *imported}});
  }
  auto records = records_->of_collection(collection->tenant, collection->name);
  if (!records) {
    log_event("job_records_unreadable", {{"collection", collection->name}, {"reason", records.error().message}},
              LogLevel::error);
  }
  for (const auto& record : records ? *records : std::vector<std::string>()) {
    const auto parsed = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
    auto status = parsed.is_object() ? job_from_record(parsed) : std::nullopt;
    if (!status || status->tenant != collection->tenant || status->collection != collection->name) {
      log_event("job_record_unreadable", {{"collection", collection->name}}, LogLevel::warn);
      continue;
    }
    auto job = std::make_shared<Job>();
    job->status = std::move(*status);
    job->collection = collection;
    if (finished(job->status.state)) {
      done.push_back(std::move(job));
      continue;
    }
    job->status.state = "queued";
    for (auto& f : job->status.files) {
      if (f.status == "indexing") requeue(f);  // its transaction never committed, or committed whole
    }
    unfinished.push_back(std::move(job));
  }
  // Incoming folders of uploads that were never acknowledged (the server died before its 202).
  const fs::path incoming = uploads_dir(*collection) / ".incoming";
  std::error_code ec;
  for (fs::directory_iterator it(incoming, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string id = it->path().filename().string();
    const bool named =
        std::any_of(unfinished.begin(), unfinished.end(), [&](const auto& j) { return j->status.id == id; });
    if (named) continue;
    std::error_code removed;
    fs::remove_all(it->path(), removed);
    log_event("upload_discarded", {{"path", it->path().string()}, {"reason", "no job records it"}}, LogLevel::warn);
  }
  std::sort(done.begin(), done.end(),
            [](const auto& a, const auto& b) { return a->status.finished < b->status.finished; });
  std::sort(unfinished.begin(), unfinished.end(),
            [](const auto& a, const auto& b) { return a->status.created < b->status.created; });
  for (auto& job : done) {
    std::lock_guard lock(mutex_);
    jobs_[job->status.id] = job;
    remember_finished(job);
  }
  for (auto& job : unfinished) {
    log_event("job_resumed",
              {{"id", job->status.id}, {"tenant", job->status.tenant}, {"collection", job->status.collection}});
    enqueue(job);
  }
}

void IngestJobs::enqueue(std::shared_ptr<Job> job) {
  std::lock_guard lock(mutex_);
  jobs_[job->status.id] = job;
  queue_.push_back(std::move(job));
  wake_.notify_all();  // the express lane may not take it: every worker looks
}

std::optional<JobStatus> IngestJobs::get(const std::string& id, const std::string& tenant) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->status.tenant != tenant) return std::nullopt;
  return it->second->status;
}

std::size_t IngestJobs::active(const std::string& tenant) const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(jobs_.begin(), jobs_.end(), [&](const auto& entry) {
    const auto& s = entry.second->status;
    return s.tenant == tenant && !finished(s.state);
  }));
}

std::vector<JobStatus> IngestJobs::list(const std::string& tenant) const {
  std::lock_guard lock(mutex_);
  std::vector<JobStatus> out;
  for (const auto& [id, job] : jobs_) {
    if (job->status.tenant == tenant) out.push_back(job->status);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created > b.created; });
  return out;
}

void IngestJobs::publish(const JobStatus& status) const {
  if (!shared_) return;
  if (auto published = shared_->publish(status); !published) {
    log_event("job_record_not_shared", {{"id", status.id}, {"reason", published.error().message}}, LogLevel::warn);
  }
}

bool IngestJobs::cancelled_elsewhere(const std::string& id) const {
  if (!shared_) return false;
  auto asked = shared_->cancel_requested(id);
  return asked && *asked;
}

std::optional<JobStatus> IngestJobs::cancel(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->status.tenant != tenant) return std::nullopt;
  if (!finished(it->second->status.state)) {
    it->second->cancelled = true;
    it->second->stop = true;
  }
  return it->second->status;
}

void IngestJobs::request_stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  for (auto& [id, job] : jobs_) job->stop = true;
  wake_.notify_all();
}

bool IngestJobs::wait_stopped(std::chrono::milliseconds deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, deadline, [this] { return workers_left_ == 0; });
}

std::shared_ptr<IngestJobs::Job> IngestJobs::take_next(bool express) {
  auto best = queue_.end();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    const Job& job = **it;
    if (express && job.status.bytes_total > options_.express_bytes) continue;
    if (writing_.contains(job.collection.get())) continue;
    if (best == queue_.end() || served_[job.status.tenant] < served_[(*best)->status.tenant]) best = it;
  }
  if (best == queue_.end()) return nullptr;
  std::shared_ptr<Job> job = *best;
  queue_.erase(best);
  served_[job->status.tenant] = ++turns_;
  writing_.insert(job->collection.get());
  return job;
}

void IngestJobs::work(bool express) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (job = take_next(express)) != nullptr; });
      if (stopping_) {
        if (job) queue_.push_front(job);  // what waits stays queued in its record
        break;
      }
    }
    const auto writing = job->collection;  // finishing drops job->collection; held until it is unmarked
    run(job);
    std::lock_guard lock(mutex_);
    writing_.erase(writing.get());
    wake_.notify_all();  // a job of that collection may go now
  }
  std::lock_guard lock(mutex_);
  --workers_left_;
  idle_.notify_all();
}

void IngestJobs::forget_collection(const std::string& tenant, const std::string& collection) {
  if (auto removed = records_->remove_collection(tenant, collection); !removed) {
    log_event("job_records_not_removed", {{"collection", collection}, {"reason", removed.error().message}},
              LogLevel::warn);
  }
}

std::size_t IngestJobs::active_on(const std::string& tenant, const std::string& collection) const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(jobs_.begin(), jobs_.end(), [&](const auto& entry) {
    const auto& s = entry.second->status;
    return s.tenant == tenant && s.collection == collection && !finished(s.state);
  }));
}

Result<void> IngestJobs::rename_collection(const std::string& tenant, const std::string& from, const std::string& to) {
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, job] : jobs_) {
      if (job->status.tenant == tenant && job->status.collection == from) job->status.collection = to;
    }
  }
  return records_->rename_collection(tenant, from, to);
}

void IngestJobs::remember_finished(const std::shared_ptr<Job>& job) {
  job->collection.reset();  // a finished job needs it no more; a rename or removal waits for nobody
  auto& kept = finished_[job->status.tenant];
  kept.push_back(job);
  while (kept.size() > options_.finished_kept) {
    const auto& oldest = kept.front();
    if (auto removed = records_->remove(oldest->status.id); !removed) {
      log_event("job_record_not_removed", {{"id", oldest->status.id}, {"reason", removed.error().message}},
                LogLevel::warn);
    }
    jobs_.erase(oldest->status.id);
    kept.pop_front();
  }
}

void IngestJobs::run(const std::shared_ptr<Job>& shared_job) {
  Job& job = *shared_job;
  const auto collection = job.collection;  // held to the end: finishing drops job.collection
  assembly::ServedCollection& c = *collection;
  std::lock_guard writing(c.writer);  // one writer per collection in this process; later jobs on it wait here
  auto update = [&](auto&& change) {
    std::lock_guard lock(mutex_);
    change(job.status);
  };
  auto snapshot = [&] {
    std::lock_guard lock(mutex_);
    return job.status;
  };
  auto record = [&](const JobStatus& now) {
    if (c.deleted) return;  // its records are going with it
    if (auto saved = records_->save(row_of(now)); !saved) {
      log_event("job_record_not_saved", {{"id", now.id}, {"reason", saved.error().message}}, LogLevel::warn);
    }
    publish(now);
  };
  auto save = [&] { record(snapshot()); };
  // A client sees the job finished only once all of its ending is done: its record saved, its
  // incoming folder removed, and its tenant's oldest finished jobs beyond the bound forgotten.
  auto conclude = [&](auto&& change) {
    JobStatus ended = snapshot();
    change(ended);
    ended.finished = unix_seconds();
    record(ended);
    std::error_code ec;
    fs::remove_all(incoming_dir(c, ended.id), ec);
    std::lock_guard lock(mutex_);
    job.status = std::move(ended);
    remember_finished(shared_job);
  };
  auto end_all = [&](const std::string& status, const std::string& error, const std::string& state) {
    conclude([&](JobStatus& s) {
      for (auto& f : s.files) {
        if (file_done(f)) continue;
        f.status = status;
        f.error = error;
      }
      s.state = state;
    });
  };
  // Stopped: by its client (it ends as cancelled), or by a shutdown (its record stays unfinished).
  auto stopped = [&] {
    std::lock_guard lock(mutex_);
    return job.cancelled;
  };
  if (c.deleted) return end_all("failed", "the collection was deleted before this job ran", "failed");

  const StopWhen stop(&job.stop, 0);
  auto lock = store::WriterLock::acquire(c.folder, "kotae serve, job " + job.status.id, options_.writer_wait, stop);
  if (!lock && lock.error().code == ErrorCode::stopped) {
    if (stopped()) end_all("cancelled", "", "cancelled");
    return;
  }
  if (!lock) return end_all("failed", lock.error().message, "failed");

  update([](JobStatus& s) {
    s.state = "running";
    if (s.started == 0) s.started = unix_seconds();
  });
  save();
  if (auto made = create_synced_dir(uploads_dir(c)); !made) return end_all("failed", made.error().message, "failed");
  rag::IngestOptions options;
  options.chunking.max_tokens = c.store->info().chunk_tokens;
  options.chunking.overlap_tokens = c.store->info().overlap_tokens;
  options.max_seconds_per_file = options_.max_seconds_per_file;
  options.cancelled = &job.stop;
  options.limits.ocr_languages = options_.ocr_languages;
  options.limits.ocr_threads = static_cast<std::uint32_t>(options_.threads);  // a scan's pages, as many as jobs
  // The file being indexed, its OCR so far and when its record was last saved: the loader reports
  // every page, from its OCR threads, one call at a time.
  struct OcrProgress {
    std::size_t file = 0;
    OcrTally tally;
    std::chrono::steady_clock::time_point saved;
  };
  std::mutex ocr_mutex;
  OcrProgress ocr;
  options.limits.on_ocr_page = [&](std::uint32_t done, std::uint32_t total) {
    std::lock_guard guard(ocr_mutex);
    ocr.tally.report(done, total);
    update([&](JobStatus& s) {
      s.files[ocr.file].ocr_pages = ocr.tally.pages;
      s.files[ocr.file].ocr_pages_done = ocr.tally.done;
    });
    if (const auto now = std::chrono::steady_clock::now(); now - ocr.saved >= kOcrRecordInterval) {
      ocr.saved = now;
      save();
    }
  };
  rag::Ingester ingester(*c.store, *c.bulk_encoder, options);
  bool interrupted = false;
  for (std::size_t i = 0; i < job.status.files.size(); ++i) {
    if (file_done(snapshot().files[i])) continue;  // done before a restart
    if (cancelled_elsewhere(job.status.id)) {
      std::lock_guard guard(mutex_);
      job.cancelled = true;
      job.stop = true;
    }
    if (job.stop || c.deleted) {
      interrupted = true;
      break;
    }
    const std::string name = job.status.files[i].name;
    auto stored = stored_upload(c, job.status.id, name);
    if (!stored) {
      update([&](JobStatus& s) {
        s.files[i].status = "failed";
        s.files[i].error = stored.error().message;
        ++s.files_done;
      });
      save();
      continue;
    }
    {
      std::lock_guard guard(ocr_mutex);
      ocr = {i, {}, std::chrono::steady_clock::now()};  // its record saved a second in at the earliest
    }
    update([&](JobStatus& s) {
      s.files[i].status = "indexing";
      s.files[i].ocr_pages = s.files[i].ocr_pages_done = 0;
    });
    // Indexed under its file name (what the user uploaded), not the server's path to it.
    const auto start = std::chrono::steady_clock::now();
    auto report = index_upload(ingester, *stored, name, upload_metadata(snapshot(), i));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (report.status == rag::FileStatus::failed && job.stop) {  // stopped part-way: nothing of it was stored
      update([&](JobStatus& s) { requeue(s.files[i]); });
      interrupted = true;
      break;
    }
    if (report.status == rag::FileStatus::indexed) c.generation++;  // cached answers of this collection are stale now
    if (report.status == rag::FileStatus::failed) {
      std::error_code ec;
      fs::remove(*stored, ec);  // keep only what the collection holds
    }
    if (observer_ && report.status == rag::FileStatus::indexed) observer_(report.bytes, report.chunks, seconds);
    if (keeper_ && report.status != rag::FileStatus::failed) {
      if (auto kept = keeper_(c, name, *stored); !kept) {  // indexed all the same; only this replica can show it
        log_event("upload_not_shared", {{"file", name}, {"reason", kept.error().message}}, LogLevel::warn);
      }
    }
    update([&](JobStatus& s) {
      s.files[i].status = rag::to_string(report.status);
      s.files[i].chunks = report.chunks;
      s.files[i].error = report.error;
      s.chunks += report.chunks;
      ++s.files_done;
      s.bytes_done += s.files[i].bytes;
    });
    save();
  }
  auto saved = c.store->save_vector_index();
  if (interrupted && !stopped() && !c.deleted) return save();  // a shutdown: the next start goes on from here
  if (interrupted) return end_all("cancelled", "", "cancelled");
  conclude([&](JobStatus& s) {
    if (!saved) {  // the vectors are stored; the index file catches up from the change log at the next open
      for (auto& f : s.files) {
        if (f.error.empty() && f.status == "indexed")
          f.error = "saved, but the vector index was not: " + saved.error().message;
      }
    }
    const auto failures =
        std::count_if(s.files.begin(), s.files.end(), [](const JobFile& f) { return f.status == "failed"; });
    s.state = failures == static_cast<long>(s.files.size()) ? "failed" : failures > 0 ? "partial" : "succeeded";
  });
}

}  // namespace kotae::jobs
