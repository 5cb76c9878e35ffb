#include "store/postgres_audit_trail.h"

#include "store/audit_sql.h"

namespace kotae::store {

const SchemaSteps& postgres_audit_schema() {
  // Version 1: one row an event (times are unix seconds), paged by seq within a tenant.
  static constexpr const char* kVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS audit_events(
  seq bigserial PRIMARY KEY,
  at double precision NOT NULL,
  tenant text NOT NULL,
  actor text NOT NULL,
  address text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  outcome text NOT NULL,
  status bigint NOT NULL,
  request_id text NOT NULL,
  detail text NOT NULL);
CREATE INDEX IF NOT EXISTS audit_events_by_tenant ON audit_events(tenant, seq);
CREATE INDEX IF NOT EXISTS audit_events_by_time ON audit_events(at);
)sql";
  static constexpr const char* kSteps[] = {kVersion1};
  static const SchemaSteps schema{"audit", kSteps};
  return schema;
}

Result<void> PostgresAuditTrail::record(const std::vector<AuditEvent>& events) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  for (const auto& e : events) {
    KOTAE_TRY(lease->prepared(audit_sql::kInsert, PgParams()
                                                      .add_float64(e.at)
                                                      .add(e.tenant)
                                                      .add(e.actor)
                                                      .add(e.address)
                                                      .add(e.action)
                                                      .add(e.target)
                                                      .add(e.outcome)
                                                      .add(static_cast<std::int64_t>(e.status))
                                                      .add(e.request_id)
                                                      .add(e.detail)));
  }
  return transaction.commit();
}

Result<std::vector<AuditEvent>> PostgresAuditTrail::find(const AuditQuery& q) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query(audit_sql::kFind, PgParams()
                                                                 .add(q.tenant)
                                                                 .add(q.actor)
                                                                 .add(q.action)
                                                                 .add(q.outcome)
                                                                 .add_float64(q.since)
                                                                 .add_float64(q.until)
                                                                 .add(q.before_seq)
                                                                 .add(static_cast<std::int64_t>(q.limit))));
  std::vector<AuditEvent> events;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    events.push_back({rows.int64(i, 0), rows.float64(i, 1), std::string(rows.text(i, 2)), std::string(rows.text(i, 3)),
                      std::string(rows.text(i, 4)), std::string(rows.text(i, 5)), std::string(rows.text(i, 6)),
                      std::string(rows.text(i, 7)), static_cast<int>(rows.int64(i, 8)), std::string(rows.text(i, 9)),
                      std::string(rows.text(i, 10))});
  }
  return events;
}

Result<void> PostgresAuditTrail::trim(double before, std::size_t keep) {
  auto lease = KOTAE_TRY_VALUE(pool_->acquire());
  KOTAE_TRY(lease->query(audit_sql::kTrimOlder, PgParams().add_float64(before)));
  if (keep > 0) KOTAE_TRY(lease->query(audit_sql::kTrimBeyond, PgParams().add(static_cast<std::int64_t>(keep))));
  return {};
}

}  // namespace kotae::store
