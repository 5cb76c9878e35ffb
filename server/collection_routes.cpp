// Collections and their documents:
//   POST   /v1/collections                          create {name, embedder?, chunk_tokens?, overlap_tokens?}
//   GET    /v1/collections                          list (those the caller may read)
//   GET    /v1/collections/{name}                   describe
//   DELETE /v1/collections/{name}                   delete, with everything in it (its conversations too)
// Their documents: document_routes.cpp.

#include "core/log.h"  // unix_seconds
#include "server/collection_request.h"
#include "server/collection_roles.h"
#include "server/json_body.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

namespace fs = std::filesystem;

nlohmann::json describe(const assembly::ServedCollection& c, const assembly::CollectionRegistry& registry) {
  const auto& info = c.store->info();
  return {{"name", c.name},
          {"object", "collection"},
          {"embedder", c.embedder_model},
          {"embedder_id", info.embedder_id},
          {"dimension", info.dimension},
          {"chunk_tokens", info.chunk_tokens},
          {"overlap_tokens", info.overlap_tokens},
          {"documents", c.store->document_count()},
          {"chunks", c.store->chunk_count()},
          {"size_bytes", registry.stored_bytes(c)}};
}

}  // namespace

void add_collection_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/collections",
             [&context](Call& call) {
               const auto spec = read_new_collection(parse_json_object(call.request));
               auto created = value_or_throw(context.collections->create(call.tenant, spec));
               // Private to its creator until they share it (an open server has no one to keep it from).
               if (call.actor != "local") {
                 const auto [kind, subject] = member_subject(call.who);
                 ok_or_throw(context.members->put(call.tenant, spec.name,
                                                  {kind, subject, "owner", unix_seconds(), call.actor}));
               }
               call.responder->send(json_response(201, describe(*created, *context.collections)));
             },
             {.needs = Role::editor, .audit = "collection.create"});

  router.add("GET", "/v1/collections", [&context](Call& call) {
    nlohmann::json data = nlohmann::json::array();
    const CollectionRoles roles(call.who, value_or_throw(context.members->all(call.tenant)));
    for (const auto& name : value_or_throw(context.collections->names(call.tenant))) {
      if (!roles.of(name)) continue;  // not theirs to see
      auto opened = context.collections->get(call.tenant, name);
      if (opened)
        data.push_back(
            describe(**opened, *context.collections));  // one that cannot be opened now is left out of the list
    }
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/collections/{name}", [&context](Call& call) {
    auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
    call.responder->send(json_response(200, describe(*c, *context.collections)));
  });

  router.add("DELETE", "/v1/collections/{name}",
             [&context](Call& call) {
               const auto& name = call.request.path_params.at("name");
               ok_or_throw(context.collections->remove(call.tenant, name));
               ok_or_throw(context.conversations->remove_collection(call.tenant, name));  // they quote its documents
               ok_or_throw(context.members->remove_collection(call.tenant, name));
               if (context.jobs) context.jobs->forget_collection(call.tenant, name);
               call.responder->send(json_response(200, {{"name", name}, {"object", "collection"}, {"deleted", true}}));
             },
             {.needs = Role::owner, .audit = "collection.delete"});
}

}  // namespace kotae::server
