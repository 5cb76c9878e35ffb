#include "server/trusted_proxy.h"

#include <algorithm>

#include "server/auth/claim_mapping.h"  // kMaxGroups, kMaxClaimBytes
#include "server/tenant_name.h"

namespace kotae::server {

bool TrustedProxy::trusts(const std::string& address) const {
  return std::any_of(options_.from.begin(), options_.from.end(), [&](const auto& r) { return r.contains(address); });
}

bool TrustedProxy::names_a_user(const HttpRequest& request) const {
  return !request.header(options_.user_header).empty();
}

void TrustedProxy::strip(HttpRequest& request) const {
  std::erase_if(request.headers, [&](const auto& header) {
    const auto& name = header.first;
    return name == options_.user_header || name == options_.email_header || name == options_.name_header ||
           name == options_.groups_header || (!options_.tenant_header.empty() && name == options_.tenant_header);
  });
}

Result<std::optional<Principal>> TrustedProxy::principal(const HttpRequest& request) const {
  const auto user = request.header(options_.user_header);
  if (user.empty()) return std::optional<Principal>();
  auto bad = [](const std::string& why) {
    return make_error(ErrorCode::invalid_argument, "the proxy's headers: " + why);
  };
  const auto email = request.header(options_.email_header), name = request.header(options_.name_header);
  if (user.size() > auth::kMaxClaimBytes || email.size() > auth::kMaxClaimBytes || name.size() > auth::kMaxClaimBytes)
    return bad("a value is longer than " + std::to_string(auth::kMaxClaimBytes) + " bytes");
  Principal who;
  who.tenant = options_.tenant_header.empty() ? options_.tenant : std::string(request.header(options_.tenant_header));
  if (!valid_tenant(who.tenant)) return bad("no tenant of letters, digits, '_' and '-'");
  std::string_view groups = request.header(options_.groups_header);
  while (!groups.empty()) {
    const auto comma = groups.find(',');
    auto group = groups.substr(0, comma);
    while (!group.empty() && group.front() == ' ') group.remove_prefix(1);
    while (!group.empty() && group.back() == ' ') group.remove_suffix(1);
    if (group.size() > auth::kMaxClaimBytes)
      return bad("a group is longer than " + std::to_string(auth::kMaxClaimBytes) + " bytes");
    if (!group.empty()) who.groups.emplace_back(group);
    if (who.groups.size() > auth::kMaxGroups) return bad("more than " + std::to_string(auth::kMaxGroups) + " groups");
    if (comma == std::string_view::npos) break;
    groups.remove_prefix(comma + 1);
  }
  who.actor = "user:" + std::string(user);
  who.name = name.empty() ? std::string(user) : std::string(name);
  who.email = std::string(email);
  who.role = options_.roles.of(who.groups);
  who.via = "proxy";
  return std::optional(std::move(who));
}

}  // namespace kotae::server
