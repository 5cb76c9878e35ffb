#include "server/shared_job_records.h"

#include "server/job_record.h"

namespace kotae::server {

namespace {

Result<std::optional<JobStatus>> parse(const store::PgResult& rows, std::size_t row) {
  const auto record = nlohmann::json::parse(rows.text(row, 0), nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return make_error(ErrorCode::corrupt, "a job record in PostgreSQL is not JSON");
  return job_from_record(record);
}

}  // namespace

Result<void> forget_finished_jobs(store::PgConnection& connection, const std::string& tenant, std::size_t kept) {
  KOTAE_TRY(
      connection.query("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE tenant = $1 AND record::json ->> "
                       "'finished_at' IS NOT NULL "
                       "ORDER BY (record::json ->> 'finished_at')::float8 DESC, id OFFSET $2)",
                       store::PgParams().add(tenant).add(static_cast<std::int64_t>(kept))));
  return {};
}

SharedJobRecords::SharedJobRecords(std::shared_ptr<store::PgPool> pool, std::string replica, std::size_t finished_kept)
    : pool_(std::move(pool)), replica_(std::move(replica)), finished_kept_(finished_kept) {}

Result<void> SharedJobRecords::publish(const JobStatus& status) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(
      "INSERT INTO jobs(id, tenant, collection, replica, record) VALUES ($1, $2, $3, $4, $5) "
      "ON CONFLICT (id) DO UPDATE SET record = excluded.record, replica = excluded.replica, updated_at = now()",
      store::PgParams()
          .add(status.id)
          .add(status.tenant)
          .add(status.collection)
          .add(replica_)
          .add(job_record(status).dump())));
  if (status.finished > 0) KOTAE_TRY(forget_finished_jobs(*lease, status.tenant, finished_kept_));
  return {};
}

Result<std::optional<JobStatus>> SharedJobRecords::get(const std::string& id, const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query("SELECT record FROM jobs WHERE id = $1 AND tenant = $2", store::PgParams().add(id).add(tenant)));
  if (rows.rows() == 0) return std::optional<JobStatus>();
  return parse(rows, 0);
}

Result<std::vector<JobStatus>> SharedJobRecords::list(const std::string& tenant, std::size_t limit) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->query("SELECT record FROM jobs WHERE tenant = $1 ORDER BY created_at DESC LIMIT $2",
                                   store::PgParams().add(tenant).add(static_cast<std::int64_t>(limit))));
  std::vector<JobStatus> jobs;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    if (auto job = KOTAE_TRY_VALUE(parse(rows, i))) jobs.push_back(std::move(*job));
  }
  return jobs;
}

Result<std::optional<JobStatus>> SharedJobRecords::request_cancel(const std::string& id, const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query("UPDATE jobs SET cancel_requested = true WHERE id = $1 AND tenant = $2 RETURNING record",
                   store::PgParams().add(id).add(tenant)));
  if (rows.rows() == 0) return std::optional<JobStatus>();
  return parse(rows, 0);
}

Result<bool> SharedJobRecords::cancel_requested(const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query("SELECT 1::bigint FROM jobs WHERE id = $1 AND cancel_requested", store::PgParams().add(id)));
  return rows.rows() > 0;
}

Result<std::size_t> SharedJobRecords::active(const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(
      "SELECT count(*) FROM jobs WHERE tenant = $1 AND (record::json ->> 'state') IN ('queued', 'running')",
      store::PgParams().add(tenant)));
  return static_cast<std::size_t>(rows.int64(0, 0));
}

}  // namespace kotae::server
