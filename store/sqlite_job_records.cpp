#include "store/sqlite_job_records.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "store/sqlite_schema.h"

namespace kotae::store {
namespace {

std::vector<std::string> texts(Statement& select) {
  std::vector<std::string> out;
  while (true) {
    auto row = select.step();
    if (!row || !*row) break;
    out.emplace_back(select.column_text(0));
  }
  return out;
}

}  // namespace

const SchemaSteps& sqlite_jobs_schema() {
  // Version 1: each job's record, looked up by id, by tenant (newest first) and by collection.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE jobs(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order jobs were submitted in
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  collection TEXT NOT NULL,
  record TEXT NOT NULL);
CREATE INDEX jobs_by_tenant ON jobs(tenant, seq);
CREATE INDEX jobs_by_collection ON jobs(tenant, collection, seq);
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"jobs", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteJobRecords>> SqliteJobRecords::open(const std::filesystem::path& folder) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_jobs_schema()));
  return std::unique_ptr<SqliteJobRecords>(new SqliteJobRecords(std::move(db)));
}

Result<void> SqliteJobRecords::save(const JobRow& job) {
  std::lock_guard lock(mutex_);
  auto upsert =
      KOTAE_TRY_VALUE(db_->prepare("INSERT INTO jobs(id, tenant, collection, record) VALUES (?1, ?2, ?3, ?4) "
                                   "ON CONFLICT (id) DO UPDATE SET record = excluded.record"));
  return upsert.bind_text(1, job.id)
      .bind_text(2, job.tenant)
      .bind_text(3, job.collection)
      .bind_text(4, job.record)
      .run();
}

Result<std::optional<std::string>> SqliteJobRecords::get(const std::string& id, const std::string& tenant) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare("SELECT record FROM jobs WHERE id = ?1 AND tenant = ?2"));
  select.bind_text(1, id).bind_text(2, tenant);
  if (!KOTAE_TRY_VALUE(select.step())) return std::optional<std::string>();
  return std::optional<std::string>(select.column_text(0));
}

Result<std::vector<std::string>> SqliteJobRecords::list(const std::string& tenant, std::size_t limit) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare("SELECT record FROM jobs WHERE tenant = ?1 ORDER BY seq DESC LIMIT ?2"));
  select.bind_text(1, tenant).bind(2, static_cast<std::int64_t>(limit));
  return texts(select);
}

Result<std::vector<std::string>> SqliteJobRecords::of_collection(const std::string& tenant,
                                                                 const std::string& collection) {
  std::lock_guard lock(mutex_);
  auto select =
      KOTAE_TRY_VALUE(db_->prepare("SELECT record FROM jobs WHERE tenant = ?1 AND collection = ?2 ORDER BY seq"));
  select.bind_text(1, tenant).bind_text(2, collection);
  return texts(select);
}

Result<void> SqliteJobRecords::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare("DELETE FROM jobs WHERE id = ?1"));
  return remove.bind_text(1, id).run();
}

Result<void> SqliteJobRecords::remove_collection(const std::string& tenant, const std::string& collection) {
  std::lock_guard lock(mutex_);
  auto remove = KOTAE_TRY_VALUE(db_->prepare("DELETE FROM jobs WHERE tenant = ?1 AND collection = ?2"));
  return remove.bind_text(1, tenant).bind_text(2, collection).run();
}

Result<void> SqliteJobRecords::rename_collection(const std::string& tenant, const std::string& from,
                                                 const std::string& to) {
  std::lock_guard lock(mutex_);
  auto rename =
      KOTAE_TRY_VALUE(db_->prepare("UPDATE jobs SET collection = ?1, record = json_set(record, '$.collection', ?1) "
                                   "WHERE tenant = ?2 AND collection = ?3"));
  return rename.bind_text(1, to).bind_text(2, tenant).bind_text(3, from).run();
}

Result<void> SqliteJobRecords::forget_finished(const std::string& tenant, std::size_t kept) {
  std::lock_guard lock(mutex_);
  auto remove =
      KOTAE_TRY_VALUE(db_->prepare("DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE tenant = ?1 AND "
                                   "json_extract(record, '$.finished_at') IS NOT NULL "
                                   "ORDER BY json_extract(record, '$.finished_at') DESC, id LIMIT -1 OFFSET ?2)"));
  return remove.bind_text(1, tenant).bind(2, static_cast<std::int64_t>(kept)).run();
}

Result<std::size_t> SqliteJobRecords::import_0_1_records(const std::filesystem::path& collection_folder,
                                                         const std::string& tenant, const std::string& collection) {
  namespace fs = std::filesystem;
  const fs::path dir = collection_folder / "jobs";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::size_t{0};
  std::size_t imported = 0;
  bool left = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream in(it->path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto record = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (it->path().extension() != ".json" || !record.is_object() || !record.contains("id") ||
        record["id"] != it->path().stem().string()) {
      left = true;
      continue;
    }
    KOTAE_TRY(save({it->path().stem().string(), tenant, collection, text}));
    ++imported;
  }
  if (ec) return make_error(ErrorCode::io, "cannot read " + dir.string() + ": " + ec.message());
  // Only once every record is in the table: a crash in between imports them again, which is harmless.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && !left) fs::remove(it->path(), ec);
  }
  if (!left) fs::remove(dir, ec);
  return imported;
}

}  // namespace kotae::store
