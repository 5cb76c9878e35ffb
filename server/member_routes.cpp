// A collection's members (docs/auth.md): who may read, edit or own it besides the tenant's admins.
//   GET    /v1/collections/{name}/members              its members (a reader may see who else has it)
//   PUT    /v1/collections/{name}/members              {kind, id, role}: share it, or change a role (owner)
//   DELETE /v1/collections/{name}/members/{kind}/{id}  stop sharing it (owner); a collection keeps an owner

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/json_body.h"
#include "server/member_request.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

nlohmann::json member_json(const store::CollectionMember& m) {
  return {{"object", "member"}, {"kind", m.kind},         {"id", m.kind == "tenant" ? "*" : m.subject},
          {"role", m.role},     {"added_at", m.added_at}, {"added_by", m.added_by}};
}

// 404 for a collection the tenant does not have: no members are kept for one.
void require_collection(ServerContext& context, const Call& call, const std::string& name) {
  value_or_throw(context.collections->get(call.tenant, name));
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void add_member_routes(Router& router, ServerContext& context) {
  router.add("GET", "/v1/collections/{name}/members", [&context](Call& call) {
    const auto& name = call.request.path_params.at("name");
    require_collection(context, call, name);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& m : value_or_throw(context.members->members(call.tenant, name))) data.push_back(member_json(m));
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("PUT", "/v1/collections/{name}/members",
             [&context](Call& call) {
               const auto& name = call.request.path_params.at("name");
               require_collection(context, call, name);
               const auto request = read_member(parse_json_object(call.request));
               const auto members = value_or_throw(context.members->members(call.tenant, name));
               const bool last_owner = std::count_if(members.begin(), members.end(),
                                                     [](const auto& m) { return m.role == "owner"; }) == 1 &&
                                       std::any_of(members.begin(), members.end(), [&](const auto& m) {
                                         return m.role == "owner" && m.kind == request.kind && m.subject == request.id;
                                       });
               if (last_owner && request.role != "owner")
                 throw ApiError{409, "last_owner", "collection '" + name + "' must keep an owner: add another first"};
               const store::CollectionMember member{request.kind, request.id, request.role, unix_now(), call.actor};
               ok_or_throw(context.members->put(call.tenant, name, member));
               call.responder->send(json_response(200, member_json(member)));
             },
             {.needs = Role::owner, .audit = "member.put"});

  router.add("DELETE", "/v1/collections/{name}/members/{kind}/{id}",
             [&context](Call& call) {
               const auto& name = call.request.path_params.at("name");
               require_collection(context, call, name);
               const auto request =
                   read_member_path(call.request.path_params.at("kind"), call.request.path_params.at("id"));
               const auto members = value_or_throw(context.members->members(call.tenant, name));
               const auto owners =
                   std::count_if(members.begin(), members.end(), [](const auto& m) { return m.role == "owner"; });
               const bool is_owner = std::any_of(members.begin(), members.end(), [&](const auto& m) {
                 return m.role == "owner" && m.kind == request.kind && m.subject == request.id;
               });
               if (is_owner && owners == 1)
                 throw ApiError{409, "last_owner", "collection '" + name + "' must keep an owner: add another first"};
               if (!value_or_throw(context.members->remove(call.tenant, name, request.kind, request.id)))
                 throw ApiError{404, "not_found", "no such member of collection '" + name + "'"};
               call.responder->send(json_response(200, {{"object", "member"},
                                                        {"kind", request.kind},
                                                        {"id", request.kind == "tenant" ? "*" : request.id},
                                                        {"deleted", true}}));
             },
             {.needs = Role::owner, .audit = "member.remove"});
}

}  // namespace kotae::server
