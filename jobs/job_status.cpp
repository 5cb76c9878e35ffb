#include "jobs/job_status.h"

#include <algorithm>

#include "core/log.h"
#include "core/random_id.h"
#include "text/document_metadata.h"

namespace kotae::jobs {

std::string new_job_id() {
  return random_id("job_");
}

namespace {

nlohmann::json metadata_object(const std::string& text) {
  auto metadata = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return metadata.is_object() ? metadata : nlohmann::json::object();
}

}  // namespace

std::string upload_metadata(const JobStatus& job, std::size_t file) {
  nlohmann::json metadata = job.metadata_json.empty() ? nlohmann::json::object() : metadata_object(job.metadata_json);
  if (file < job.files.size() && !job.files[file].metadata_json.empty()) {
    const nlohmann::json own = metadata_object(job.files[file].metadata_json);  // its keys win
    for (const auto& [key, value] : own.items()) metadata[key] = value;
  }
  metadata[text::kSourceKey] = "upload";
  return metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

nlohmann::json job_json(const JobStatus& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files) {
    nlohmann::json file{{"name", f.name}, {"status", f.status}, {"chunks", f.chunks}, {"bytes", f.bytes}};
    if (!f.error.empty()) file["error"] = f.error;
    if (f.ocr_pages > 0) {
      file["ocr_pages"] = f.ocr_pages;
      file["ocr_pages_done"] = f.ocr_pages_done;
    }
    if (!f.metadata_json.empty()) file["metadata"] = metadata_object(f.metadata_json);
    files.push_back(std::move(file));
  }
  auto time = [](double t) { return t > 0 ? nlohmann::json(t) : nlohmann::json(nullptr); };
  nlohmann::json job{{"id", s.id},
                     {"object", "job"},
                     {"collection", s.collection},
                     {"state", s.state},
                     {"files", files},
                     {"progress",
                      {{"files_done", s.files_done},
                       {"files_total", s.files.size()},
                       {"chunks", s.chunks},
                       {"bytes_done", s.bytes_done},
                       {"bytes_total", s.bytes_total}}},
                     {"created_at", s.created},
                     {"started_at", time(s.started)},
                     {"finished_at", time(s.finished)}};
  if (!s.metadata_json.empty()) job["metadata"] = metadata_object(s.metadata_json);
  return job;
}

nlohmann::json job_record(const JobStatus& job) {
  nlohmann::json record = job_json(job);
  record["tenant"] = job.tenant;
  return record;
}

std::optional<JobStatus> job_from_record(const nlohmann::json& r) {
  try {
    JobStatus s;
    s.id = r.at("id").get<std::string>();
    s.tenant = r.at("tenant").get<std::string>();
    s.collection = r.at("collection").get<std::string>();
    s.state = r.at("state").get<std::string>();
    for (const auto& f : r.at("files")) {
      JobFile file;
      file.name = f.at("name").get<std::string>();
      file.status = f.at("status").get<std::string>();
      file.chunks = f.at("chunks").get<std::size_t>();
      file.bytes = f.at("bytes").get<std::uint64_t>();
      file.error = f.value("error", "");
      file.ocr_pages = f.value("ocr_pages", std::uint32_t{0});
      file.ocr_pages_done = std::min(f.value("ocr_pages_done", std::uint32_t{0}), file.ocr_pages);
      if (const auto m = f.find("metadata"); m != f.end() && m->is_object()) file.metadata_json = m->dump();
      s.files.push_back(std::move(file));
    }
    const auto& p = r.at("progress");
    s.files_done = p.at("files_done").get<std::size_t>();
    s.chunks = p.at("chunks").get<std::size_t>();
    s.bytes_done = p.at("bytes_done").get<std::uint64_t>();
    s.bytes_total = p.at("bytes_total").get<std::uint64_t>();
    auto time = [&](const char* key) { return r.at(key).is_number() ? r.at(key).get<double>() : 0.0; };
    s.created = time("created_at");
    s.started = time("started_at");
    s.finished = time("finished_at");
    if (const auto m = r.find("metadata"); m != r.end() && m->is_object()) s.metadata_json = m->dump();
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Result<JobStatus> parse_job_record(std::string_view text) {
  const auto record = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto job = record.is_object() ? job_from_record(record) : std::nullopt;
  if (!job) return make_error(ErrorCode::corrupt, "a job record in the store is not one");
  return std::move(*job);
}

}  // namespace kotae::jobs
