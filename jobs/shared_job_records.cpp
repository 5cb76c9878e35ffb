#include "jobs/shared_job_records.h"

#include "jobs/job_status.h"

namespace kotae::jobs {

namespace {

// nullopt for no record, and for a JSON object that is not a job's (written by something else).
Result<std::optional<JobStatus>> parse_if_any(const std::optional<std::string>& text) {
  if (!text) return std::optional<JobStatus>();
  const auto record = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return make_error(ErrorCode::corrupt, "a job record in PostgreSQL is not JSON");
  return job_from_record(record);
}

}  // namespace

SharedJobRecords::SharedJobRecords(std::shared_ptr<store::PgPool> pool, std::string replica, std::size_t finished_kept)
    : records_(std::move(pool), std::move(replica)), finished_kept_(finished_kept) {}

Result<void> SharedJobRecords::publish(const JobStatus& status) {
  KOTAE_TRY(records_.save({status.id, status.tenant, status.collection, job_record(status).dump()}));
  if (status.finished > 0) KOTAE_TRY(records_.forget_finished(status.tenant, finished_kept_));
  return {};
}

Result<std::optional<JobStatus>> SharedJobRecords::get(const std::string& id, const std::string& tenant) {
  return parse_if_any(KOTAE_TRY_VALUE(records_.get(id, tenant)));
}

Result<std::vector<JobStatus>> SharedJobRecords::list(const std::string& tenant, std::size_t limit) {
  std::vector<JobStatus> jobs;
  for (const auto& text : KOTAE_TRY_VALUE(records_.list(tenant, limit))) {
    if (auto job = KOTAE_TRY_VALUE(parse_if_any(text))) jobs.push_back(std::move(*job));
  }
  return jobs;
}

Result<std::optional<JobStatus>> SharedJobRecords::request_cancel(const std::string& id, const std::string& tenant) {
  return parse_if_any(KOTAE_TRY_VALUE(records_.request_cancel(id, tenant)));
}

Result<bool> SharedJobRecords::cancel_requested(const std::string& id) {
  return records_.cancel_requested(id);
}

Result<std::size_t> SharedJobRecords::active(const std::string& tenant) {
  return records_.active(tenant);
}

Result<std::size_t> SharedJobRecords::active_on(const std::string& tenant, const std::string& collection) {
  return records_.active_on(tenant, collection);
}

Result<void> SharedJobRecords::rename_collection(const std::string& tenant, const std::string& from,
                                                 const std::string& to) {
  return records_.rename_collection(tenant, from, to);
}

}  // namespace kotae::jobs
