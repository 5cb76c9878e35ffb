// Uploads and the ingestion jobs they start:
//   POST   /v1/collections/{name}/documents   multipart/form-data, one or more files → 202 {job}
//   GET    /v1/jobs                           this tenant's jobs, newest first
//   GET    /v1/jobs/{id}                      progress and per-file results
//   DELETE /v1/jobs/{id}                      cancel (stops before its next file)

#include <fstream>

#include "server/json_body.h"
#include "server/server_context.h"
#include "server/upload_request.h"

namespace kotae::server {
namespace {

namespace fs = std::filesystem;

nlohmann::json to_json(const JobStatus& s) {
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
           {{"files_done", s.files_done}, {"files_total", s.files.size()}, {"chunks", s.chunks},
            {"bytes_done", s.bytes_done}, {"bytes_total", s.bytes_total}}},
          {"created_at", s.created},
          {"started_at", time(s.started)},
          {"finished_at", time(s.finished)}};
}

// The tenant's quota (its key's), checked before anything of the upload is stored.
void check_quota(const Call& call, ServerContext& context, const std::vector<UploadedFile>& files) {
  const TenantQuota& q = call.quota;
  if (q.queued_jobs && context.jobs->active(call.tenant) >= q.queued_jobs) {
    throw ApiError{429, "quota_exceeded", "tenant '" + call.tenant + "' has " + std::to_string(q.queued_jobs) +
                                              " jobs queued or running, its quota: wait for one to finish"};
  }
  if (!q.stored_bytes && !q.documents) return;
  std::uintmax_t bytes = 0;
  for (const auto& f : files) bytes += f.body.size();
  const auto used = context.collections->usage(call.tenant);
  if (q.stored_bytes && used.bytes + bytes > q.stored_bytes) {
    throw ApiError{413, "quota_exceeded", "tenant '" + call.tenant + "' stores " + std::to_string(used.bytes) +
                                              " bytes; this upload would pass its quota of " + std::to_string(q.stored_bytes)};
  }
  if (q.documents && used.documents + files.size() > q.documents) {
    throw ApiError{413, "quota_exceeded", "tenant '" + call.tenant + "' has " + std::to_string(used.documents) +
                                              " documents; this upload would pass its quota of " + std::to_string(q.documents)};
  }
}

void upload(Call& call, ServerContext& context) {
  const auto files = read_upload(call.request);
  auto collection = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
  check_quota(call, context, files);

  // Saved before answering: once the client has its 202, the job has everything it needs.
  const fs::path incoming = collection->store->dir() / "uploads" / ".incoming" / random_id("");
  std::error_code ec;
  fs::create_directories(incoming, ec);
  std::vector<std::string> names;
  for (const auto& [name, body] : files) {
    std::ofstream out(incoming / name, std::ios::binary);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.close();
    if (!out) {
      fs::remove_all(incoming, ec);
      throw ApiError{507, "insufficient_storage", "cannot save '" + name + "' (the disk may be full)"};
    }
    names.push_back(name);
  }
  const auto job = context.jobs->submit(collection, incoming, std::move(names));
  auto response = json_response(202, to_json(job));
  response.headers.emplace_back("Location", "/v1/jobs/" + job.id);
  call.responder->send(std::move(response));
}

}  // namespace

void add_job_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/collections/{name}/documents", [&context](Call& call) { upload(call, context); }, {.upload = true});

  router.add("GET", "/v1/jobs", [&context](Call& call) {
    nlohmann::json data = nlohmann::json::array();
    for (const auto& job : context.jobs->list(call.tenant)) data.push_back(to_json(job));
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/jobs/{id}", [&context](Call& call) {
    const auto& id = call.request.path_params.at("id");
    auto job = context.jobs->get(id, call.tenant);
    if (!job) throw ApiError{404, "not_found", "no job '" + id + "'"};
    call.responder->send(json_response(200, to_json(*job)));
  });

  router.add("DELETE", "/v1/jobs/{id}", [&context](Call& call) {
    const auto& id = call.request.path_params.at("id");
    auto job = context.jobs->cancel(id, call.tenant);
    if (!job) throw ApiError{404, "not_found", "no job '" + id + "'"};
    call.responder->send(json_response(202, to_json(*job)));
  });
}

}  // namespace kotae::server
