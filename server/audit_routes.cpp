#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/audit_request.h"
#include "server/json_body.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

nlohmann::json event_json(const store::AuditEvent& e) {
  nlohmann::json event{{"object", "audit_event"},
                       {"seq", e.seq},
                       {"at", e.at},
                       {"tenant", e.tenant},
                       {"actor", e.actor},
                       {"address", e.address},
                       {"action", e.action},
                       {"target", e.target},
                       {"outcome", e.outcome},
                       {"status", e.status},
                       {"request_id", e.request_id}};
  auto detail = nlohmann::json::parse(e.detail, nullptr, /*allow_exceptions=*/false);
  event["detail"] = detail.is_object() ? detail : nlohmann::json::object();
  return event;
}

}  // namespace

void add_audit_routes(Router& router, ServerContext& context) {
  // The caller's tenant's trail, newest first; an operator key may also read the refused sign-ins and
  // keys, which have no tenant (?unauthenticated=true).
  router.add("GET", "/v1/audit",
             [&context](Call& call) {
               auto query = read_audit_query(call.request);
               query.tenant = call.tenant;
               if (call.request.query_value("unauthenticated") == "true") {
                 if (!call.admin)
                   throw ApiError{403, "forbidden", "only an operator key reads the unauthenticated events"};
                 query.tenant.clear();
               }
               context.audit->flush();  // what this replica has recorded so far is in the answer
               const auto events = value_or_throw(context.audit->trail().find(query));
               nlohmann::json data = nlohmann::json::array();
               for (const auto& e : events) data.push_back(event_json(e));
               const bool more = events.size() == query.limit;
               call.responder->send(
                   json_response(200, {{"object", "list"},
                                       {"data", data},
                                       {"next_before", more ? nlohmann::json(events.back().seq) : nlohmann::json()}}));
             },
             {.needs = Role::admin});
}

}  // namespace kotae::server
