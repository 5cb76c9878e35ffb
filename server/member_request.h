#pragma once
// PUT /v1/collections/{name}/members' body, {kind, id, role}, and the {kind}/{id} of DELETE's path:
// a member is a "user" (the provider's user id), a "group" (as the token names it), a "key" (an API
// key's name) or the whole "tenant" (id "*"), with the role "reader", "editor" or "owner". Throws an
// ApiError naming what is wrong.

#include <string>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace kotae::server {

inline constexpr std::size_t kMaxMemberIdBytes = 256;

struct MemberRequest {
  std::string kind;
  std::string id;    // "" for the tenant
  std::string role;  // empty when reading DELETE's path
};

MemberRequest read_member(const nlohmann::json& body);
MemberRequest read_member_path(const std::string& kind, const std::string& id);

}  // namespace kotae::server
