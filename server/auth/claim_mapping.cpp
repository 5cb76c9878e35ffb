#include "server/auth/claim_mapping.h"

#include "server/tenant_name.h"

namespace kotae::server::auth {
namespace {

const nlohmann::json* claim_at(const nlohmann::json& claims, const std::string& path) {
  const nlohmann::json* at = &claims;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const auto part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object()) return nullptr;
    const auto it = at->find(part);
    if (it == at->end()) return nullptr;
    at = &*it;
    if (dot == std::string::npos) return at;
    start = dot + 1;
  }
}

Result<std::string> string_claim(const nlohmann::json& claims, const std::string& path) {
  if (path.empty()) return std::string();
  const auto* value = claim_at(claims, path);
  if (!value || value->is_null()) return std::string();
  if (!value->is_string()) return make_error(ErrorCode::invalid_argument, "the claim \"" + path + "\" is not a string");
  if (value->get_ref<const std::string&>().size() > kMaxClaimBytes) {
    return make_error(ErrorCode::invalid_argument,
                      "the claim \"" + path + "\" is longer than " + std::to_string(kMaxClaimBytes) + " bytes");
  }
  return value->get<std::string>();
}

}  // namespace

Result<TokenIdentity> identity_from_claims(const nlohmann::json& claims, const ClaimNames& names,
                                           const TenantMapping& tenants) {
  TokenIdentity identity;
  identity.user = KOTAE_TRY_VALUE(string_claim(claims, names.user));
  if (identity.user.empty())
    return make_error(ErrorCode::invalid_argument, "the token names no user (" + names.user + ")");
  identity.email = KOTAE_TRY_VALUE(string_claim(claims, names.email));
  identity.name = KOTAE_TRY_VALUE(string_claim(claims, names.name));
  if (identity.name.empty()) identity.name = KOTAE_TRY_VALUE(string_claim(claims, "preferred_username"));
  if (identity.name.empty()) identity.name = identity.user;
  if (const auto* groups = names.groups.empty() ? nullptr : claim_at(claims, names.groups);
      groups && !groups->is_null()) {
    if (!groups->is_array() || groups->size() > kMaxGroups) {
      return make_error(ErrorCode::invalid_argument, "the claim \"" + names.groups + "\" must be a list of at most " +
                                                         std::to_string(kMaxGroups) + " groups");
    }
    for (const auto& group : *groups) {
      if (!group.is_string() || group.get_ref<const std::string&>().empty() ||
          group.get_ref<const std::string&>().size() > kMaxClaimBytes) {
        return make_error(ErrorCode::invalid_argument,
                          "the claim \"" + names.groups + "\" holds a group that is not a short string");
      }
      identity.groups.push_back(group.get<std::string>());
    }
  }
  const std::string claimed = KOTAE_TRY_VALUE(string_claim(claims, names.tenant));
  if (!tenants.from.empty()) {
    const auto it = tenants.from.find(claimed);
    identity.tenant = it == tenants.from.end() ? "" : it->second;
  } else {
    identity.tenant = claimed.empty() ? tenants.fixed : claimed;
  }
  if (!valid_tenant(identity.tenant)) {
    return make_error(ErrorCode::invalid_argument,
                      identity.tenant.empty() ? "no tenant is configured for this user (claim \"" + names.tenant + "\")"
                                              : "the user's tenant is not letters, digits, '_' and '-'");
  }
  return identity;
}

}  // namespace kotae::server::auth
