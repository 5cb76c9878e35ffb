#pragma once
// The audit trail: who did what, when, from where, and how it ended (sign-ins, uploads, deletions,
// shares, key use, questions), per tenant. SQLite's server.db (store/sqlite_audit_trail.h) or
// PostgreSQL for every replica (store/postgres_audit_trail.h); the server writes events in batches
// and reads them back newest first for GET /v1/audit. Bounded: trimmed by age and by count.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae::store {

struct AuditEvent {
  std::int64_t seq = 0;  // set by the store: the event's place in the trail
  double at = 0;         // unix seconds
  std::string tenant;
  std::string actor;    // "key:NAME", "user:ID" or "anonymous"
  std::string address;  // the client's IP address
  std::string action;   // "document.upload", "collection.delete", "ask", "key.refused" …
  std::string target;   // the collection, "COLLECTION/DOCUMENT", a job or conversation id; may be ""
  std::string outcome;  // "ok", "denied" (refused: 401/403/404/429) or "failed"
  int status = 0;       // the HTTP status answered
  std::string request_id;
  std::string detail;  // a JSON object: the question's text when configured, a role given …
};

struct AuditQuery {
  std::string tenant;                  // required
  std::string actor, action, outcome;  // "": any
  double since = 0;                    // at >= since
  double until = 0;                    // at < until; 0: no bound
  std::int64_t before_seq = 0;         // paging: events older than this one; 0: from the newest
  std::size_t limit = 100;
};

class AuditTrail {
 public:
  virtual ~AuditTrail() = default;
  // Appends the events in one transaction.
  virtual Result<void> record(const std::vector<AuditEvent>& events) = 0;
  // Newest first.
  virtual Result<std::vector<AuditEvent>> find(const AuditQuery& query) = 0;
  // Removes events older than `before` (unix seconds) and all but the newest `keep` (0: no count bound).
  virtual Result<void> trim(double before, std::size_t keep) = 0;
};

}  // namespace kotae::store
