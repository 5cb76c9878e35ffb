// The conversations of POST /v1/ask, as stored (store/conversation_store.h), the caller's own only
// (another person's or tenant's is a 404, as an unknown one):
//   GET    /v1/conversations?collection=NAME&limit=N   summaries, most recently updated first
//   GET    /v1/conversations/{id}                      with every turn: question, answer, sources, citations
//   PATCH  /v1/conversations/{id}  {title}             rename
//   DELETE /v1/conversations/{id}                      delete
// An id is checked for its form before any store is asked.

#include "core/log.h"
#include "server/conversation_record.h"
#include "server/conversation_request.h"
#include "server/json_body.h"
#include "server/server_context.h"

namespace kotae::server {

void add_conversation_routes(Router& router, ServerContext& context) {
  router.add("GET", "/v1/conversations", [&context](Call& call) {
    const auto query = read_conversation_list_query(call.request);
    nlohmann::json data = nlohmann::json::array();
    for (const auto& c :
         value_or_throw(context.conversations->list(conversation_owner(call), query.collection, query.limit))) {
      data.push_back(summary_json(c));
    }
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/conversations/{id}", [&context](Call& call) {
    const auto& id = conversation_id(call.request.path_params.at("id"));
    auto record = value_or_throw(context.conversations->get(conversation_owner(call), id));
    if (!record) throw unknown_conversation(id);
    call.responder->send(json_response(200, conversation_json(*record)));
  });

  router.add("PATCH", "/v1/conversations/{id}",
             [&context](Call& call) {
               const auto title = read_conversation_title(parse_json_object(call.request));
               const auto& id = conversation_id(call.request.path_params.at("id"));
               auto renamed =
                   value_or_throw(context.conversations->rename(conversation_owner(call), id, title, unix_seconds()));
               if (!renamed) throw unknown_conversation(id);
               call.responder->send(json_response(200, summary_json(*renamed)));
             },
             {.audit = "conversation.rename"});

  router.add("DELETE", "/v1/conversations/{id}",
             [&context](Call& call) {
               const auto& id = conversation_id(call.request.path_params.at("id"));
               if (!value_or_throw(context.conversations->remove(conversation_owner(call), id)))
                 throw unknown_conversation(id);
               call.responder->send(json_response(200, {{"id", id}, {"object", "conversation"}, {"deleted", true}}));
             },
             {.audit = "conversation.delete"});
}

}  // namespace kotae::server
