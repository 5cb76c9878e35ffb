// Uploads and the ingestion jobs they start:
//   POST   /v1/collections/{name}/documents   multipart/form-data, one or more files → 202 {job}
//   GET    /v1/jobs                           this tenant's jobs, newest first
//   GET    /v1/jobs/{id}                      progress and per-file results
//   GET    /v1/jobs/{id}/events               the same as Server-Sent Events, one "job" event per change,
//                                             until it finishes
//   DELETE /v1/jobs/{id}                      cancel (stops at its next page or batch of chunks)
// With a work queue (serve --queue) an upload is stored in PostgreSQL and queued for the workers
// (jobs/queued_jobs.h); ?priority=bulk queues it behind interactive uploads (re-indexing). The form's
// metadata fields (server/upload_request.h) travel in the job's record to whoever indexes its files.

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "core/log.h"
#include "jobs/job_status.h"
#include "server/collection_roles.h"
#include "server/json_body.h"
#include "server/server_context.h"
#include "server/upload_request.h"
#include "store/atomic_file.h"

namespace kotae::server {
namespace {

constexpr std::size_t kSharedJobsListed = 1000;               // a tenant's most recent jobs from the shared records
constexpr auto kEventsPoll = std::chrono::milliseconds(200);  // how often an events stream reads the record
constexpr auto kEventsLimit = std::chrono::hours(1);          // an events stream ends after this (reconnect)

namespace fs = std::filesystem;

// The tenant's quota (its key's), checked before anything of the upload is stored.
void check_quota(const Call& call, ServerContext& context, const std::vector<jobs::UploadedFile>& files) {
  const TenantQuota& q = call.quota;
  // Over a shared store, the tenant's jobs on every replica.
  const std::size_t active = context.shared_jobs ? value_or_throw(context.shared_jobs->active(call.tenant))
                                                 : context.jobs->active(call.tenant);
  if (q.queued_jobs && active >= q.queued_jobs) {
    throw ApiError{429, "quota_exceeded",
                   "tenant '" + call.tenant + "' has " + std::to_string(q.queued_jobs) +
                       " jobs queued or running, its quota: wait for one to finish"};
  }
  if (!q.stored_bytes && !q.documents) return;
  std::uintmax_t bytes = 0;
  for (const auto& f : files) bytes += f.body.size();
  const auto used = context.collections->usage(call.tenant);
  if (q.stored_bytes && used.bytes + bytes > q.stored_bytes) {
    throw ApiError{413, "quota_exceeded",
                   "tenant '" + call.tenant + "' stores " + std::to_string(used.bytes) +
                       " bytes; this upload would pass its quota of " + std::to_string(q.stored_bytes)};
  }
  if (q.documents && used.documents + files.size() > q.documents) {
    throw ApiError{413, "quota_exceeded",
                   "tenant '" + call.tenant + "' has " + std::to_string(used.documents) +
                       " documents; this upload would pass its quota of " + std::to_string(q.documents)};
  }
}

queue::Priority priority_of(const HttpRequest& request) {
  const std::string priority = request.query_value("priority", "interactive");
  if (priority == "interactive") return queue::Priority::interactive;
  if (priority == "bulk") return queue::Priority::bulk;
  throw ApiError{400, "invalid_request", "priority must be interactive or bulk"};
}

void upload(Call& call, ServerContext& context) {
  const Upload form = read_upload(call.request);
  const auto& files = form.files;
  const queue::Priority priority = priority_of(call.request);
  auto collection = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
  check_quota(call, context, files);
  if (context.queued_jobs) {  // acknowledged once the files are in PostgreSQL and their entries in Redis
    const jobs::JobStatus job =
        value_or_throw(context.queued_jobs->submit(call.tenant, collection->name, files, form.metadata_json, priority));
    auto response = json_response(202, jobs::job_json(job));
    response.headers.emplace_back("Location", "/v1/jobs/" + job.id);
    return call.responder->send(std::move(response));
  }

  // Saved and synced before answering: once the client has its 202, the job survives a crash.
  const std::string id = jobs::new_job_id();
  const fs::path incoming = jobs::IngestJobs::incoming_dir(*collection, id);
  auto fail = [&](const Error& error) {
    std::error_code ec;
    fs::remove_all(incoming, ec);
    log_event("upload_not_saved", {{"collection", collection->name}, {"reason", error.message}}, LogLevel::warn);
    return ApiError{507, "insufficient_storage", "cannot save the upload (the disk may be full)"};
  };
  std::error_code ec;
  fs::create_directories(incoming, ec);
  if (ec) throw fail(make_error(ErrorCode::io, ec.message()));
  std::vector<jobs::JobFile> names;
  for (const auto& file : files) {
    if (auto written = store::write_file_synced(incoming / file.name, file.body); !written) throw fail(written.error());
    jobs::JobFile named;
    named.name = file.name;
    named.metadata_json = file.metadata_json;
    names.push_back(std::move(named));
  }
  for (fs::path dir = incoming; dir != collection->folder.parent_path(); dir = dir.parent_path()) {
    if (auto synced = store::sync_folder(dir); !synced) throw fail(synced.error());
  }
  auto submitted = context.jobs->submit(id, collection, std::move(names), form.metadata_json);
  if (!submitted) throw fail(submitted.error());
  const jobs::JobStatus& job = *submitted;
  auto response = json_response(202, jobs::job_json(job));
  response.headers.emplace_back("Location", "/v1/jobs/" + job.id);
  call.responder->send(std::move(response));
}

std::optional<jobs::JobStatus> find_job(ServerContext& context, const std::string& id, const std::string& tenant) {
  auto job = context.jobs->get(id, tenant);
  if (!job && context.shared_jobs) job = value_or_throw(context.shared_jobs->get(id, tenant));
  return job;
}

// The collection of the job the path names, for the access check (server/router.h); none when there is
// no such job (the handler answers 404).
CollectionOf job_collection(ServerContext& context) {
  return [&context](const Call& call) -> std::optional<std::string> {
    auto job = find_job(context, call.request.path_params.at("id"), call.tenant);
    return job ? std::optional(job->collection) : std::nullopt;
  };
}

// Polls the record (the local one, or PostgreSQL's, which any replica or worker may be changing) and
// sends it whenever it changed, until the job finishes, the client goes, or the stream's time is up.
void job_events(Call& call, ServerContext& context) {
  const auto& id = call.request.path_params.at("id");
  auto job = find_job(context, id, call.tenant);
  if (!job) throw ApiError{404, "not_found", "no job '" + id + "'"};
  Responder& out = *call.responder;
  out.begin_events();
  const auto until = std::chrono::steady_clock::now() + kEventsLimit;
  std::string sent;
  for (;;) {
    const auto record = jobs::job_json(*job);
    if (std::string now = record.dump(); now != sent) {
      if (!out.event("job", now)) return;  // the client went away
      sent = std::move(now);
    }
    if (job->state != "queued" && job->state != "running") break;
    if (std::chrono::steady_clock::now() > until || out.client_gone()) break;
    std::this_thread::sleep_for(kEventsPoll);
    try {
      if (auto again = find_job(context, id, call.tenant)) job = std::move(again);
    } catch (const ApiError&) {  // the store is out of reach for a moment: try again at the next poll
    }
  }
  out.end_events();
}

}  // namespace

void add_job_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/collections/{name}/documents", [&context](Call& call) { upload(call, context); },
             {.needs = Role::editor, .upload = true, .audit = "document.upload"});

  // This replica's jobs first; over a shared store, any replica's (a load balancer may send the poll
  // of a job anywhere).
  // Only the jobs of collections the caller may read.
  router.add("GET", "/v1/jobs", [&context](Call& call) {
    nlohmann::json data = nlohmann::json::array();
    std::set<std::string> listed;
    const CollectionRoles roles(call.who, value_or_throw(context.members->all(call.tenant)));
    for (const auto& job : context.jobs->list(call.tenant)) {
      listed.insert(job.id);
      if (roles.of(job.collection)) data.push_back(jobs::job_json(job));
    }
    if (context.shared_jobs) {
      for (const auto& job : value_or_throw(context.shared_jobs->list(call.tenant, kSharedJobsListed))) {
        if (!listed.contains(job.id) && roles.of(job.collection)) data.push_back(jobs::job_json(job));
      }
    }
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/jobs/{id}", {.collection = job_collection(context)}, [&context](Call& call) {
    const auto& id = call.request.path_params.at("id");
    auto job = find_job(context, id, call.tenant);
    if (!job) throw ApiError{404, "not_found", "no job '" + id + "'"};
    call.responder->send(json_response(200, jobs::job_json(*job)));
  });

  router.add("GET", "/v1/jobs/{id}/events", {.collection = job_collection(context)},
             [&context](Call& call) { job_events(call, context); });

  router.add("DELETE", "/v1/jobs/{id}",
             [&context](Call& call) {
               const auto& id = call.request.path_params.at("id");
               auto job = context.jobs->cancel(id, call.tenant);
               if (!job && context.queued_jobs) job = value_or_throw(context.queued_jobs->cancel(id, call.tenant));
               if (!job && context.shared_jobs)
                 job = value_or_throw(context.shared_jobs->request_cancel(id, call.tenant));
               if (!job) throw ApiError{404, "not_found", "no job '" + id + "'"};
               call.responder->send(json_response(202, jobs::job_json(*job)));
             },
             {.needs = Role::editor, .audit = "job.cancel", .collection = job_collection(context)});
}

}  // namespace kotae::server
