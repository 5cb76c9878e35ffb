#pragma once
// API keys, from a JSON file that stores only their SHA-256:
//   {"keys": [{"name": "alice-laptop", "tenant": "alice", "sha256": "9f86d0...", "rate_per_second": 20, "burst": 40},
//             {"name": "ops", "admin": true, "sha256": "..."}]}
// Each key belongs to a tenant and sees only that tenant's collections, jobs and conversations. An admin
// key may also read /metrics and act for any tenant (header X-Kotae-Tenant). `kotae keygen` makes keys.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace kotae::server {

struct ApiKey {
  std::string name;    // for logs and rate limits; never the key itself
  std::string tenant;  // letters, digits, '_' and '-'
  bool admin = false;
  double rate_per_second = 0;  // 0: not limited
  double burst = 0;            // bucket size (at least 1 when limited)
};

class ApiKeys {
 public:
  static Result<ApiKeys> load(const std::filesystem::path& file);
  bool empty() const { return by_hash_.empty(); }
  // The key whose SHA-256 matches what the client presented, or null.
  const ApiKey* find(std::string_view presented) const;

 private:
  std::map<std::string, ApiKey> by_hash_;
};

bool valid_tenant(std::string_view tenant);

}  // namespace kotae::server
