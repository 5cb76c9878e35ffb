#pragma once
// A person's role over their tenant from their groups (--group-role GROUP=ROLE, --default-role): the
// highest role any of their groups is given, else the default. The same for bearer tokens, signed-in
// sessions and an authenticating proxy's users.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "server/auth/role.h"

namespace kotae::server::auth {

struct GroupRoles {
  std::map<std::string, Role> roles;
  Role default_role = Role::reader;

  Role of(const std::vector<std::string>& groups) const {
    Role role = default_role;
    for (const auto& group : groups) {
      if (const auto it = roles.find(group); it != roles.end()) role = std::max(role, it->second);
    }
    return role;
  }
};

}  // namespace kotae::server::auth
