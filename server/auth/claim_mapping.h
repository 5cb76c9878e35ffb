#pragma once
// Who a verified token (or an authenticating proxy's headers) says the caller is: the claims named in
// the configuration read into a person. Providers put them in different places (Keycloak's groups
// under "groups" by a mapper, Entra ID's user in "oid" and tenant in "tid"), so each name may be a
// dotted path ("realm_access.roles").

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace kotae::server::auth {

inline constexpr std::size_t kMaxGroups = 256;
inline constexpr std::size_t kMaxClaimBytes = 256;

struct ClaimNames {
  std::string user = "sub";
  std::string name = "name";  // falls back to preferred_username, then the user id
  std::string email = "email";
  std::string tenant;  // empty: the tenant comes from `tenant_of_issuer` or the mapping below
  std::string groups = "groups";
};

struct TokenIdentity {
  std::string user;  // the provider's stable id for the person or service
  std::string name;
  std::string email;
  std::string tenant;
  std::vector<std::string> groups;
};

// How a person's tenant is decided when the token does not carry it: a fixed tenant, or a claim's
// value (e.g. Entra's "tid") mapped to a tenant.
struct TenantMapping {
  std::string fixed;                        // every user of this provider is in this tenant
  std::map<std::string, std::string> from;  // claim value → tenant
};

// invalid_argument when the user id is missing, a value is too long, there are too many groups, or no
// tenant can be decided (a user is never placed in a tenant by accident).
Result<TokenIdentity> identity_from_claims(const nlohmann::json& claims, const ClaimNames& names,
                                           const TenantMapping& tenants);

}  // namespace kotae::server::auth
