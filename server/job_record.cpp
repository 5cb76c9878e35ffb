#include "server/job_record.h"

namespace kotae::server {

nlohmann::json job_json(const JobStatus& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files) {
    nlohmann::json file{{"name", f.name}, {"status", f.status}, {"chunks", f.chunks}, {"bytes", f.bytes}};
    if (!f.error.empty()) file["error"] = f.error;
    files.push_back(std::move(file));
  }
  auto time = [](double t) { return t > 0 ? nlohmann::json(t) : nlohmann::json(nullptr); };
  return {{"id", s.id},
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
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace kotae::server
