#pragma once
// Who is calling, however they proved it: an API key (a service principal of its tenant) or a bearer
// token from the OpenID provider (a person or a service of the provider's). The server decides it once
// per request (KotaeServer::identify) and every check after reads this.

#include <string>
#include <vector>

#include "server/api_keys.h"
#include "server/auth/openid_provider.h"
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
  std::string via = "key";                // how they proved it: "key", "token", "session" (the page), "proxy", "local"
  std::string session;                    // a session's id hash (for sign-out)
  std::string email;

  static Principal of_key(const ApiKey& key) {
    Principal who;
    who.tenant = key.tenant;
    who.actor = "key:" + key.name;
    who.name = key.name;
    who.role = key.admin ? Role::admin : key.role;
    who.operator_key = key.admin;
    who.quota = key.quota;
    who.rate_per_second = key.rate_per_second;
    who.burst = key.burst;
    return who;
  }
};

// A person or service a bearer token of the provider names.
inline Principal token_principal(const auth::TokenPrincipal& token) {
  Principal who;
  who.tenant = token.identity.tenant;
  who.actor = "user:" + token.identity.user;
  who.name = token.identity.name;
  who.role = token.role;
  who.groups = token.identity.groups;
  who.via = "token";
  who.email = token.identity.email;
  return who;
}

// The one principal of a server without keys or a provider: the local tenant's operator.
inline Principal local_principal(const std::string& tenant) {
  Principal who;
  who.tenant = tenant;
  who.actor = who.name = "local";
  who.via = "local";
  who.role = Role::admin;
  who.operator_key = true;
  return who;
}

}  // namespace kotae::server
