#pragma once
// What a principal may do, in rising order: a `reader` searches, asks and opens sources; an `editor`
// also uploads and deletes documents (and creates collections); an `owner` also shares, renames and
// deletes a collection; a tenant `admin` manages every collection of the tenant and reads its audit
// trail. Each route declares the role it needs (server/router.h); the server checks it in one place.

#include <optional>
#include <string_view>

namespace kotae::server {

enum class Role { reader, editor, owner, admin };

inline std::optional<Role> role_named(std::string_view name) {
  if (name == "reader") return Role::reader;
  if (name == "editor") return Role::editor;
  if (name == "owner") return Role::owner;
  if (name == "admin") return Role::admin;
  return std::nullopt;
}

inline const char* name_of(Role role) {
  switch (role) {
    case Role::reader: return "reader";
    case Role::editor: return "editor";
    case Role::owner: return "owner";
    case Role::admin: return "admin";
  }
  return "reader";
}

}  // namespace kotae::server
