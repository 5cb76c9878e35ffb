#pragma once
// Over a shared store, the audit trail in PostgreSQL (table `audit_events`), so every replica's events
// are in one trail (store/audit_trail.h).

#include <memory>

#include "store/audit_trail.h"
#include "store/postgres_connection.h"
#include "store/postgres_schema.h"

namespace kotae::store {

// Its tables (store/postgres_schema.h).
const SchemaSteps& postgres_audit_schema();

class PostgresAuditTrail final : public AuditTrail {
 public:
  explicit PostgresAuditTrail(std::shared_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  Result<void> record(const std::vector<AuditEvent>& events) override;
  Result<std::vector<AuditEvent>> find(const AuditQuery& query) override;
  Result<void> trim(double before, std::size_t keep) override;

 private:
  std::shared_ptr<PgPool> pool_;
};

}  // namespace kotae::store
