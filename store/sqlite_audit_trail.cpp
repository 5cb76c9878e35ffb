#include "store/sqlite_audit_trail.h"

#include "store/audit_sql.h"
#include "store/sqlite_schema.h"

namespace kotae::store {

const SchemaSteps& sqlite_audit_schema() {
  // Version 1: one row an event, paged by seq within a tenant.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE audit_events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at REAL NOT NULL,
  tenant TEXT NOT NULL,
  actor TEXT NOT NULL,
  address TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  outcome TEXT NOT NULL,
  status INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE INDEX audit_events_by_tenant ON audit_events(tenant, seq);
CREATE INDEX audit_events_by_time ON audit_events(at);
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"audit", kSteps};
  return schema;
}

Result<std::unique_ptr<SqliteAuditTrail>> SqliteAuditTrail::open(const std::filesystem::path& folder) {
  auto db = KOTAE_TRY_VALUE(open_server_database(folder, sqlite_audit_schema()));
  return std::unique_ptr<SqliteAuditTrail>(new SqliteAuditTrail(std::move(db)));
}

Result<void> SqliteAuditTrail::record(const std::vector<AuditEvent>& events) {
  std::lock_guard lock(mutex_);
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(*db_));
  auto insert = KOTAE_TRY_VALUE(db_->prepare(audit_sql::kInsert));
  for (const auto& e : events) {
    insert.reset();
    KOTAE_TRY(insert.bind(1, e.at)
                  .bind_text(2, e.tenant)
                  .bind_text(3, e.actor)
                  .bind_text(4, e.address)
                  .bind_text(5, e.action)
                  .bind_text(6, e.target)
                  .bind_text(7, e.outcome)
                  .bind(8, static_cast<std::int64_t>(e.status))
                  .bind_text(9, e.request_id)
                  .bind_text(10, e.detail)
                  .run());
  }
  return transaction.commit();
}

Result<std::vector<AuditEvent>> SqliteAuditTrail::find(const AuditQuery& q) {
  std::lock_guard lock(mutex_);
  auto select = KOTAE_TRY_VALUE(db_->prepare(audit_sql::kFind));
  select.bind_text(1, q.tenant)
      .bind_text(2, q.actor)
      .bind_text(3, q.action)
      .bind_text(4, q.outcome)
      .bind(5, q.since)
      .bind(6, q.until)
      .bind(7, q.before_seq)
      .bind(8, static_cast<std::int64_t>(q.limit));
  std::vector<AuditEvent> events;
  while (KOTAE_TRY_VALUE(select.step())) {
    events.push_back({select.column_int64(0), select.column_double(1), std::string(select.column_text(2)),
                      std::string(select.column_text(3)), std::string(select.column_text(4)),
                      std::string(select.column_text(5)), std::string(select.column_text(6)),
                      std::string(select.column_text(7)), static_cast<int>(select.column_int64(8)),
                      std::string(select.column_text(9)), std::string(select.column_text(10))});
  }
  return events;
}

Result<void> SqliteAuditTrail::trim(double before, std::size_t keep) {
  std::lock_guard lock(mutex_);
  auto older = KOTAE_TRY_VALUE(db_->prepare(audit_sql::kTrimOlder));
  KOTAE_TRY(older.bind(1, before).run());
  if (keep == 0) return {};
  auto beyond = KOTAE_TRY_VALUE(db_->prepare(audit_sql::kTrimBeyond));
  return beyond.bind(1, static_cast<std::int64_t>(keep)).run();
}

}  // namespace kotae::store
