#pragma once
// The role a principal has over one collection (docs/auth.md): a tenant admin has every role over
// every collection; a collection without members (made before members, or by `kotae index`) gives
// each principal their tenant role; otherwise the best role of the members that name them (as a
// user, a key, one of their groups, or the whole tenant), and none at all (the collection is as
// absent as one that never was) when no member does.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/principal.h"
#include "store/member_store.h"

namespace kotae::server {

// What a principal is as a member: {"key", NAME} or {"user", ID}.
std::pair<std::string, std::string> member_subject(const Principal& who);

std::optional<Role> role_over(const Principal& who, const std::vector<store::CollectionMember>& members);

// Roles over every collection of the caller's tenant, from one read of the members (lists).
class CollectionRoles {
 public:
  CollectionRoles(const Principal& who, std::map<std::string, std::vector<store::CollectionMember>> members)
      : who_(who), members_(std::move(members)) {}
  std::optional<Role> of(const std::string& collection) const;

 private:
  const Principal& who_;
  std::map<std::string, std::vector<store::CollectionMember>> members_;
};

}  // namespace kotae::server
