#include "server/member_request.h"

#include "server/json_body.h"

namespace kotae::server {

MemberRequest read_member_path(const std::string& kind, const std::string& id) {
  if (kind != "user" && kind != "group" && kind != "key" && kind != "tenant")
    throw bad_request("'kind' must be user, group, key or tenant");
  if (kind == "tenant") {
    if (id != "*") throw bad_request("the whole tenant is the member of kind 'tenant' with id '*'");
    return {kind, "", ""};
  }
  if (id.empty() || id.size() > kMaxMemberIdBytes)
    throw bad_request("'id' must be 1 to " + std::to_string(kMaxMemberIdBytes) + " bytes");
  for (const unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) throw bad_request("'id' must not hold control characters");
  }
  return {kind, id, ""};
}

MemberRequest read_member(const nlohmann::json& body) {
  auto member = read_member_path(string_field(body, "kind"), string_field(body, "id", "*"));
  member.role = string_field(body, "role");
  if (member.role != "reader" && member.role != "editor" && member.role != "owner")
    throw bad_request("'role' must be reader, editor or owner");
  return member;
}

}  // namespace kotae::server
