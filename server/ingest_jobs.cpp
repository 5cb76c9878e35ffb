#include "server/ingest_jobs.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include "core/sha256.h"
#include "rag/ingester.h"
#include "server/json_log.h"
#include "text/loaders/loader.h"
#include "server/conversation_store.h"

namespace kotae::server {
namespace {

namespace fs = std::filesystem;

rag::FileReport index_upload(rag::Ingester& ingester, const fs::path& file, const std::string& name) {
  rag::FileReport failed;
  failed.path = name;
  std::ifstream in(file, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in && !in.eof()) {
    failed.error = "cannot read the upload back";
    return failed;
  }
  auto document = text::load_document_bytes(bytes, text::document_format(name));
  if (!document) {
    failed.error = document.error().message;
    return failed;
  }
  auto report = ingester.ingest_document(name, *document, sha256_hex(bytes), R"({"source":"upload"})");
  if (!report) {
    failed.error = report.error().message;
    return failed;
  }
  report->bytes = bytes.size();
  return *report;
}

}  // namespace

IngestJobs::IngestJobs(std::size_t threads, std::size_t finished_kept) : finished_kept_(finished_kept) {
  for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) threads_.emplace_back([this] { work(); });
}

IngestJobs::~IngestJobs() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) job->cancel = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

JobStatus IngestJobs::submit(std::shared_ptr<ServedCollection> collection, const fs::path& incoming,
                             std::vector<std::string> files) {
  auto job = std::make_shared<Job>();
  job->status.id = random_id("job_");
  job->status.tenant = collection->tenant;
  job->status.collection = collection->name;
  job->status.created = unix_seconds();
  std::error_code ec;
  for (auto& f : files) {
    JobFile file;
    file.name = std::move(f);
    file.bytes = fs::file_size(incoming / file.name, ec);
    job->status.bytes_total += file.bytes;
    job->status.files.push_back(std::move(file));
  }
  job->collection = std::move(collection);
  job->incoming = incoming;
  std::lock_guard lock(mutex_);
  jobs_[job->status.id] = job;
  queue_.push_back(job);
  wake_.notify_one();
  return job->status;
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
    return s.tenant == tenant && (s.state == "queued" || s.state == "running");
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

std::optional<JobStatus> IngestJobs::cancel(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->status.tenant != tenant) return std::nullopt;
  it->second->cancel = true;
  return it->second->status;
}

void IngestJobs::work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
    }
    run(*job);
    std::error_code ec;
    fs::remove_all(job->incoming, ec);
    std::lock_guard lock(mutex_);
    auto& finished = finished_order_[job->status.tenant];
    finished.push_back(job->status.id);
    while (finished.size() > finished_kept_) {
      jobs_.erase(finished.front());
      finished.pop_front();
    }
  }
}

void IngestJobs::run(Job& job) {
  ServedCollection& c = *job.collection;
  std::lock_guard writing(c.writer);  // one writer per collection; later jobs on it wait here
  auto update = [&](auto&& change) {
    std::lock_guard lock(mutex_);
    change(job.status);
  };
  if (c.deleted) {
    return update([](JobStatus& s) {
      for (auto& f : s.files) {
        f.status = "failed";
        f.error = "the collection was deleted before this job ran";
      }
      s.state = "failed";
      s.finished = unix_seconds();
    });
  }
  update([](JobStatus& s) {
    s.state = "running";
    s.started = unix_seconds();
  });
  const fs::path uploads = c.store->dir() / "uploads";
  std::error_code ec;
  fs::create_directories(uploads, ec);
  rag::IngestOptions options;
  options.chunking.max_tokens = c.store->info().chunk_tokens;
  options.chunking.overlap_tokens = c.store->info().overlap_tokens;
  rag::Ingester ingester(*c.store, *c.bulk_encoder, options);
  bool failed = false, cancelled = false;
  for (std::size_t i = 0; i < job.status.files.size(); ++i) {
    bool cancel_now = false;
    {
      std::lock_guard lock(mutex_);
      cancel_now = job.cancel || c.deleted;
      if (cancel_now) {
        for (std::size_t j = i; j < job.status.files.size(); ++j) job.status.files[j].status = "cancelled";
      }
    }
    if (cancel_now) {
      cancelled = true;
      break;
    }
    const std::string name = job.status.files[i].name;
    const fs::path stored = uploads / name;
    fs::rename(job.incoming / name, stored, ec);
    if (ec) {
      failed = true;
      update([&](JobStatus& s) {
        s.files[i].status = "failed";
        s.files[i].error = "cannot store the upload: " + ec.message();
        ++s.files_done;
      });
      continue;
    }
    update([&](JobStatus& s) { s.files[i].status = "indexing"; });
    // Indexed under its file name (what the user uploaded), not the server's path to it.
    const auto start = std::chrono::steady_clock::now();
    auto report = index_upload(ingester, stored, name);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (report.status == rag::FileStatus::indexed) c.generation++;  // cached answers of this collection are stale now
    if (report.status == rag::FileStatus::failed) {
      failed = true;
      fs::remove(stored, ec);  // keep only what the collection holds
    }
    if (observer_ && report.status == rag::FileStatus::indexed) observer_(report.bytes, report.chunks, seconds);
    update([&](JobStatus& s) {
      s.files[i].status = rag::to_string(report.status);
      s.files[i].chunks = report.chunks;
      s.files[i].error = report.error;
      s.chunks += report.chunks;
    });
    update([&](JobStatus& s) {
      ++s.files_done;
      s.bytes_done += s.files[i].bytes;
    });
  }
  auto saved = c.store->save_vector_index();
  update([&](JobStatus& s) {
    if (!saved) {  // the vectors are stored; the index file catches up from the change log at the next open
      for (auto& f : s.files) {
        if (f.error.empty() && f.status == "indexed") f.error = "saved, but the vector index was not: " + saved.error().message;
      }
    }
    const auto failures = std::count_if(s.files.begin(), s.files.end(), [](const JobFile& f) { return f.status == "failed"; });
    s.state = cancelled                                          ? "cancelled"
              : failures == static_cast<long>(s.files.size()) ? "failed"
              : failed                                         ? "partial"
                                                               : "succeeded";
    s.finished = unix_seconds();
  });
}

}  // namespace kotae::server
