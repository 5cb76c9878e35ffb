#pragma once
// API keys, from a JSON file that stores only their SHA-256:
//   {"keys": [{"name": "alice-laptop", "tenant": "alice", "sha256": "9f86d0...", "rate_per_second": 20, "burst": 40,
//              "quota": {"queued_jobs": 4, "stored_bytes": 1000000000, "documents": 10000}},
//             {"name": "ci-reader", "tenant": "alice", "role": "reader", "sha256": "..."},
//             {"name": "ops", "admin": true, "sha256": "..."}]}
// Each key belongs to a tenant and sees only that tenant's collections, jobs and conversations, with a
// role over all of them (server/auth/role.h; "admin", the tenant's admin, when not given: what keys
// could always do). An operator key ("admin": true) may also read /metrics and act for any tenant
// (header X-Kotae-Tenant). `kotae keygen` makes keys.
// Over a shared store the same entries may also live in PostgreSQL (store/postgres_api_keys.h), so
// every replica knows every key and its quota.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "server/auth/role.h"
#include "server/tenant_name.h"

namespace kotae::server {

// What a tenant may keep and queue; 0: not limited. Checked at upload: a job past them is refused
// (429 for queued jobs, 413 for bytes and documents) before anything is stored.
struct TenantQuota {
  std::uint64_t queued_jobs = 0;   // jobs queued or running at once
  std::uint64_t stored_bytes = 0;  // the tenant's collections on disk, the upload included
  std::uint64_t documents = 0;     // documents in all its collections, the upload's files included
};

struct ApiKey {
  std::string name;            // for logs and rate limits; never the key itself
  std::string tenant;          // letters, digits, '_' and '-'
  bool admin = false;          // the operator's: metrics, and any tenant
  Role role = Role::admin;     // over its tenant's collections
  double rate_per_second = 0;  // 0: not limited
  double burst = 0;            // bucket size (at least 1 when limited)
  TenantQuota quota;           // "quota": {"queued_jobs", "stored_bytes", "documents"}
};

class ApiKeys {
 public:
  static Result<ApiKeys> load(const std::filesystem::path& file);
  // From the entries of a "keys" list (JSON objects as in the file); `source` names them in errors.
  static Result<ApiKeys> from_entries(const nlohmann::json& entries, const std::string& source);
  // Adds another set's keys; the same hash in both is an error.
  Result<void> add(const ApiKeys& more, const std::string& source);
  bool empty() const { return by_hash_.empty(); }
  // The key whose SHA-256 matches what the client presented, or null.
  const ApiKey* find(std::string_view presented) const;

 private:
  std::map<std::string, ApiKey> by_hash_;
};

}  // namespace kotae::server
