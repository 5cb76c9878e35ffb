#include "server/collection_roles.h"

#include <algorithm>

namespace kotae::server {

std::pair<std::string, std::string> member_subject(const Principal& who) {
  const auto colon = who.actor.find(':');
  if (colon == std::string::npos) return {"", who.actor};
  return {who.actor.substr(0, colon), who.actor.substr(colon + 1)};
}

std::optional<Role> role_over(const Principal& who, const std::vector<store::CollectionMember>& members) {
  if (who.role == Role::admin) return Role::admin;
  if (members.empty()) return who.role;
  const auto [kind, subject] = member_subject(who);
  std::optional<Role> best;
  for (const auto& m : members) {
    const bool names_them =
        m.kind == "tenant" || (m.kind == kind && m.subject == subject) ||
        (m.kind == "group" && std::find(who.groups.begin(), who.groups.end(), m.subject) != who.groups.end());
    const auto role = names_them ? role_named(m.role) : std::nullopt;
    if (role && (!best || *role > *best)) best = role;
  }
  return best;
}

std::optional<Role> CollectionRoles::of(const std::string& collection) const {
  const auto it = members_.find(collection);
  return role_over(who_, it == members_.end() ? std::vector<store::CollectionMember>{} : it->second);
}

}  // namespace kotae::server
