#pragma once
// Who is calling, however they proved it: an API key (a service principal of its tenant) or a bearer
// token from the OpenID provider (a person or a service of the provider's). The server decides it once
// per request (KotaeServer::identify) and every check after reads this.

#include <string>
#include <vector>

#include "server/api_keys.h"
#include "server/auth/role.h"

namespace kotae::server {

struct Principal {
  std::string tenant;
  std::string actor;          // "key:NAME" or "user:ID": who, in the audit trail and the logs
  std::string name;           // for people: their name
  Role role = Role::reader;   // over the tenant's collections
  bool operator_key = false;  // an API key with "admin": /metrics, any tenant (X-Kotae-Tenant)
  std::vector<std::string> groups;
  TenantQuota quota;
  double rate_per_second = 0, burst = 0;  // 0: not limited

  static Principal of_key(const ApiKey& key) {
    return {key.tenant, "key:" + key.name,   key.name, key.admin ? Role::admin : key.role, key.admin, {},
            key.quota,  key.rate_per_second, key.burst};
  }
};

}  // namespace kotae::server
