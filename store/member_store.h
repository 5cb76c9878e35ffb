#pragma once
// Who may use a collection besides its tenant's admins: its members, each a user, a group, an API key
// or the whole tenant, with a role (reader, editor, owner). A collection created through the API gets
// its creator as owner, so it starts private; one without members (made before members existed, or by
// `kotae index`) is open to the tenant as before. SQLite's server.db (store/sqlite_members.h) or
// PostgreSQL for every replica (store/postgres_members.h).

#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace kotae::store {

struct CollectionMember {
  std::string kind;      // "user", "group", "key" or "tenant"
  std::string subject;   // the user's id, the group's name, the key's name; "" for the tenant
  std::string role;      // "reader", "editor" or "owner"
  double added_at = 0;   // unix seconds
  std::string added_by;  // the actor who shared it ("user:ID", "key:NAME")
};

class MemberStore {
 public:
  virtual ~MemberStore() = default;
  // A collection's members, by kind then subject.
  virtual Result<std::vector<CollectionMember>> members(const std::string& tenant, const std::string& collection) = 0;
  // Every collection of the tenant that has members, with them.
  virtual Result<std::map<std::string, std::vector<CollectionMember>>> all(const std::string& tenant) = 0;
  // Adds the member, or changes its role.
  virtual Result<void> put(const std::string& tenant, const std::string& collection,
                           const CollectionMember& member) = 0;
  // Whether there was such a member.
  virtual Result<bool> remove(const std::string& tenant, const std::string& collection, const std::string& kind,
                              const std::string& subject) = 0;
  // A deleted collection's members go with it (a new one of that name starts private again).
  virtual Result<void> remove_collection(const std::string& tenant, const std::string& collection) = 0;
  // Replaces `to`'s members with copies of `from`'s, in one transaction (`from` keeps its own). A
  // rename copies them before the collection moves and removes the old name's after, so at no moment
  // is the collection, under either name, without its members (which would open it to the tenant).
  virtual Result<void> copy_collection(const std::string& tenant, const std::string& from, const std::string& to) = 0;
};

}  // namespace kotae::store
