#include "store/postgres_job_records.h"

#include <span>

namespace kotae::store {

const SchemaSteps& postgres_jobs_schema() {
  // Version 1: each job's record, and the queued files' bytes until a worker is done with them.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS jobs(
  id text PRIMARY KEY,
  tenant text NOT NULL,
  collection text NOT NULL,
  replica text NOT NULL,
  record text NOT NULL,
  cancel_requested boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs(tenant, created_at);
CREATE TABLE IF NOT EXISTS uploads(
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  file bigint NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (job_id, file));
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"jobs", kSteps};
  return schema;
}

namespace {

std::vector<std::string> texts(const PgResult& rows) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rows.rows(); ++i) out.emplace_back(rows.text(i, 0));
  return out;
}

std::optional<std::string> first_text(const PgResult& rows) {
  if (rows.rows() == 0) return std::nullopt;
  return std::string(rows.text(0, 0));
}

Result<void> forget_finished_jobs(PgConnection& connection, const std::string& tenant, std::size_t kept) {
  KOTAE_TRY(
      connection.query("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE tenant = $1 AND record::json ->> "
                       "'finished_at' IS NOT NULL "
                       "ORDER BY (record::json ->> 'finished_at')::float8 DESC, id OFFSET $2)",
                       PgParams().add(tenant).add(static_cast<std::int64_t>(kept))));
  return {};
}

}  // namespace

Result<void> PostgresJobRecords::save(const JobRow& job) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(
      "INSERT INTO jobs(id, tenant, collection, replica, record) VALUES ($1, $2, $3, $4, $5) "
      "ON CONFLICT (id) DO UPDATE SET record = excluded.record, replica = excluded.replica, updated_at = now()",
      PgParams().add(job.id).add(job.tenant).add(job.collection).add(replica_).add(job.record)));
  return {};
}

Result<std::optional<std::string>> PostgresJobRecords::get(const std::string& id, const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return first_text(KOTAE_TRY_VALUE(
      lease->query("SELECT record FROM jobs WHERE id = $1 AND tenant = $2", PgParams().add(id).add(tenant))));
}

Result<std::optional<std::string>> PostgresJobRecords::get(const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return first_text(KOTAE_TRY_VALUE(lease->query("SELECT record FROM jobs WHERE id = $1", PgParams().add(id))));
}

Result<std::vector<std::string>> PostgresJobRecords::list(const std::string& tenant, std::size_t limit) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return texts(
      KOTAE_TRY_VALUE(lease->query("SELECT record FROM jobs WHERE tenant = $1 ORDER BY created_at DESC LIMIT $2",
                                   PgParams().add(tenant).add(static_cast<std::int64_t>(limit)))));
}

Result<std::vector<std::string>> PostgresJobRecords::of_collection(const std::string& tenant,
                                                                   const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return texts(KOTAE_TRY_VALUE(
      lease->query("SELECT record FROM jobs WHERE tenant = $1 AND collection = $2 ORDER BY created_at, id",
                   PgParams().add(tenant).add(collection))));
}

Result<void> PostgresJobRecords::remove_collection(const std::string& tenant, const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(
      lease->query("DELETE FROM jobs WHERE tenant = $1 AND collection = $2", PgParams().add(tenant).add(collection)));
  return {};
}

Result<void> PostgresJobRecords::rename_collection(const std::string& tenant, const std::string& from,
                                                   const std::string& to) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(
      "UPDATE jobs SET collection = $1, record = jsonb_set(record::jsonb, '{collection}', to_jsonb($1::text))::text, "
      "updated_at = now() WHERE tenant = $2 AND collection = $3",
      PgParams().add(to).add(tenant).add(from)));
  return {};
}

Result<std::optional<std::string>> PostgresJobRecords::request_cancel(const std::string& id,
                                                                      const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return first_text(KOTAE_TRY_VALUE(
      lease->query("UPDATE jobs SET cancel_requested = true WHERE id = $1 AND tenant = $2 RETURNING record",
                   PgParams().add(id).add(tenant))));
}

Result<bool> PostgresJobRecords::cancel_requested(const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query("SELECT 1::bigint FROM jobs WHERE id = $1 AND cancel_requested", PgParams().add(id)));
  return rows.rows() > 0;
}

Result<std::size_t> PostgresJobRecords::active(const std::string& tenant) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(
      "SELECT count(*) FROM jobs WHERE tenant = $1 AND (record::json ->> 'state') IN ('queued', 'running')",
      PgParams().add(tenant)));
  return static_cast<std::size_t>(rows.int64(0, 0));
}

Result<std::size_t> PostgresJobRecords::active_on(const std::string& tenant, const std::string& collection) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->query("SELECT count(*) FROM jobs WHERE tenant = $1 AND collection = $2 AND (record::json ->> 'state') IN "
                   "('queued', 'running')",
                   PgParams().add(tenant).add(collection)));
  return static_cast<std::size_t>(rows.int64(0, 0));
}

Result<void> PostgresJobRecords::forget_finished(const std::string& tenant, std::size_t kept) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  return forget_finished_jobs(*lease, tenant, kept);
}

Result<void> PostgresJobRecords::insert_queued(const JobRow& job, const std::vector<std::string_view>& files) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  KOTAE_TRY(lease->query("INSERT INTO jobs(id, tenant, collection, replica, record) VALUES ($1, $2, $3, 'queue', $4)",
                         PgParams().add(job.id).add(job.tenant).add(job.collection).add(job.record)));
  for (std::size_t i = 0; i < files.size(); ++i) {
    KOTAE_TRY(lease->query(
        "INSERT INTO uploads(job_id, file, bytes) VALUES ($1, $2, $3)",
        PgParams().add(job.id).add(static_cast<std::int64_t>(i)).add_bytes(std::as_bytes(std::span(files[i])))));
  }
  return transaction.commit();
}

Result<void> PostgresJobRecords::remove(const std::string& id) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query("DELETE FROM jobs WHERE id = $1", PgParams().add(id)));
  return {};
}

Result<std::optional<std::string>> PostgresJobRecords::update(const std::string& id, const Change& change) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  auto rows = KOTAE_TRY_VALUE(lease->query(
      "SELECT record, cancel_requested::int::int8 FROM jobs WHERE id = $1 FOR UPDATE", PgParams().add(id)));
  if (rows.rows() == 0) return std::optional<std::string>();
  JobChange changed = KOTAE_TRY_VALUE(change(std::string(rows.text(0, 0)), rows.int64(0, 1) != 0));
  KOTAE_TRY(lease->query("UPDATE jobs SET record = $2, updated_at = now() WHERE id = $1",
                         PgParams().add(id).add(changed.record)));
  if (changed.drop_file) {
    const auto file = static_cast<std::int64_t>(*changed.drop_file);
    if (changed.keep_as_document) {
      // The indexed file is kept as its document's, in the job's collection (store/postgres_document_files.h).
      KOTAE_TRY(
          lease->query("INSERT INTO document_files(collection_id, path, bytes) "
                       "SELECT k.id, $3, u.bytes FROM uploads u JOIN jobs j ON j.id = u.job_id "
                       "JOIN collections k ON k.tenant = j.tenant AND k.name = j.collection "
                       "WHERE u.job_id = $1 AND u.file = $2 "
                       "ON CONFLICT (collection_id, path) DO UPDATE SET bytes = excluded.bytes",
                       PgParams().add(id).add(file).add(changed.document_path)));
    }
    KOTAE_TRY(lease->query("DELETE FROM uploads WHERE job_id = $1 AND file = $2", PgParams().add(id).add(file)));
  }
  KOTAE_TRY(transaction.commit());
  return std::optional<std::string>(std::move(changed.record));
}

Result<std::optional<std::string>> PostgresJobRecords::upload(const std::string& id, std::size_t file) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query("SELECT bytes FROM uploads WHERE job_id = $1 AND file = $2",
                                           PgParams().add(id).add(static_cast<std::int64_t>(file))));
  if (rows.rows() == 0) return std::optional<std::string>();
  const auto bytes = rows.bytes(0, 0);
  return std::optional<std::string>(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace kotae::store
