#pragma once
// The audit trail in the SQLite back-end's own file (FOLDER/server.db, table `audit_events`,
// store/audit_trail.h). One connection, one call at a time.

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/audit_trail.h"
#include "store/schema_steps.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Its tables (store/sqlite_schema.h).
const SchemaSteps& sqlite_audit_schema();

class SqliteAuditTrail final : public AuditTrail {
 public:
  static Result<std::unique_ptr<SqliteAuditTrail>> open(const std::filesystem::path& folder);

  Result<void> record(const std::vector<AuditEvent>& events) override;
  Result<std::vector<AuditEvent>> find(const AuditQuery& query) override;
  Result<void> trim(double before, std::size_t keep) override;

 private:
  explicit SqliteAuditTrail(std::unique_ptr<Database> db) : db_(std::move(db)) {}

  std::mutex mutex_;  // guards the connection
  std::unique_ptr<Database> db_;
};

}  // namespace kotae::store
