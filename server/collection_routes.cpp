// Collections and their documents:
//   POST   /v1/collections                          create {name, embedder?, chunk_tokens?, overlap_tokens?}
//   GET    /v1/collections                          list (those the caller may read)
//   GET    /v1/collections/{name}                   describe
//   PATCH  /v1/collections/{name}                   rename {name}: owners; its members, conversations, job
//                                                   records and kept files follow it (not while a job is
//                                                   queued or running on it: 409)
//   DELETE /v1/collections/{name}                   delete, with everything in it (its conversations too)
// Their documents: document_routes.cpp.

#include "core/log.h"  // unix_seconds, log_event
#include "server/collection_request.h"
#include "server/collection_roles.h"
#include "server/json_body.h"
#include "server/server_context.h"
#include "store/catalog.h"

namespace kotae::server {
namespace {

namespace fs = std::filesystem;

// `role`: the caller's over it (reader, editor, owner or admin), so a client shows only what they may do.
nlohmann::json describe(const assembly::ServedCollection& c, const assembly::CollectionRegistry& registry,
                        std::optional<Role> role = std::nullopt) {
  const auto& info = c.store->info();
  nlohmann::json described = {{"name", c.name},
                              {"object", "collection"},
                              {"embedder", c.embedder_model},
                              {"embedder_id", info.embedder_id},
                              {"dimension", info.dimension},
                              {"chunk_tokens", info.chunk_tokens},
                              {"overlap_tokens", info.overlap_tokens},
                              {"documents", c.store->document_count()},
                              {"chunks", c.store->chunk_count()},
                              {"size_bytes", registry.stored_bytes(c)}};
  if (role) described["role"] = name_of(*role);
  return described;
}

// A rename waits for no ingestion: one queued or running on it (here, or on any replica) refuses it.
void refuse_while_ingesting(ServerContext& context, const std::string& tenant, const std::string& name) {
  std::size_t active = context.jobs ? context.jobs->active_on(tenant, name) : 0;
  if (context.shared_jobs) active += value_or_throw(context.shared_jobs->active_on(tenant, name));
  if (active > 0) {
    throw ApiError{409, "ingestion_running",
                   "collection '" + name + "' has an ingestion job queued or running; rename it once the job is done"};
  }
}

// Logged, not thrown: the collection has moved by then, and these records only follow it.
void follow_rename(const char* what, const Result<void>& done, const std::string& from, const std::string& to) {
  if (!done) {
    log_event("rename_not_followed",
              {{"what", what}, {"collection", from}, {"to", to}, {"reason", done.error().message}}, LogLevel::warn);
  }
}

// The collection and everything that names it: members first copied to the new name (the collection
// is never without them, so never open to the whole tenant), then the move, then the old name's
// members removed and conversations and job records renamed. Document files move with it (the
// collection's folder, or PostgreSQL rows by the collection's id). Over a shared store the old name's
// members stay: another replica serves the old name until it hears of the rename (milliseconds; at
// most its follow period), and without them it would be open to the tenant meanwhile. A collection
// later created under that name clears them (POST /v1/collections).
std::shared_ptr<assembly::ServedCollection> rename_collection(ServerContext& context, const std::string& tenant,
                                                              const std::string& from, const std::string& to) {
  refuse_while_ingesting(context, tenant, from);
  assembly::RenameSteps steps;
  steps.before = [&] { return context.members->copy_collection(tenant, from, to); };
  steps.undo_before = [&] {
    if (auto undone = context.members->remove_collection(tenant, to); !undone)
      follow_rename("members_undo", undone, from, to);
  };
  steps.after = [&] {
    if (!context.collections->catalog().shared())
      follow_rename("members", context.members->remove_collection(tenant, from), from, to);
    follow_rename("conversations", context.conversations->rename_collection(tenant, from, to), from, to);
    if (context.jobs) follow_rename("jobs", context.jobs->rename_collection(tenant, from, to), from, to);
    if (context.shared_jobs)
      follow_rename("shared_jobs", context.shared_jobs->rename_collection(tenant, from, to), from, to);
  };
  return value_or_throw(context.collections->rename(tenant, from, to, steps));
}

}  // namespace

void add_collection_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/collections",
             [&context](Call& call) {
               const auto spec = read_new_collection(parse_json_object(call.request));
               auto created = value_or_throw(context.collections->create(call.tenant, spec));
               // Members the name kept from a collection renamed away over a shared store (or left by a
               // failure) are not this one's.
               ok_or_throw(context.members->remove_collection(call.tenant, spec.name));
               // Private to its creator until they share it (an open server has no one to keep it from).
               if (call.actor != "local") {
                 const auto [kind, subject] = member_subject(call.who);
                 ok_or_throw(context.members->put(call.tenant, spec.name,
                                                  {kind, subject, "owner", unix_seconds(), call.actor}));
               }
               // Its creator owns it (a tenant admin stays admin; so does an open server's one caller).
               const Role role = call.role == Role::admin ? Role::admin : Role::owner;
               call.responder->send(json_response(201, describe(*created, *context.collections, role)));
             },
             {.needs = Role::editor, .audit = "collection.create"});

  router.add("GET", "/v1/collections", [&context](Call& call) {
    nlohmann::json data = nlohmann::json::array();
    const CollectionRoles roles(call.who, value_or_throw(context.members->all(call.tenant)));
    for (const auto& name : value_or_throw(context.collections->names(call.tenant))) {
      const auto role = roles.of(name);
      if (!role) continue;  // not theirs to see
      // One that cannot be opened now is left out of the list.
      auto opened = context.collections->get(call.tenant, name);
      if (opened) data.push_back(describe(**opened, *context.collections, role));
    }
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("GET", "/v1/collections/{name}", [&context](Call& call) {
    auto c = value_or_throw(context.collections->get(call.tenant, call.request.path_params.at("name")));
    // The role the access check read (open mode has none: the one caller is the local admin).
    call.responder->send(
        json_response(200, describe(*c, *context.collections, call.collection_role.value_or(call.role))));
  });

  router.add("PATCH", "/v1/collections/{name}",
             [&context](Call& call) {
               const auto& name = call.request.path_params.at("name");
               const std::string to = read_collection_rename(parse_json_object(call.request));
               if (!store::valid_collection_name(to)) {
                 throw bad_request(
                     "'name': use letters, digits, '.', '_' and '-' (not starting with '.'), at most 100 characters");
               }
               auto renamed = to == name ? value_or_throw(context.collections->get(call.tenant, name))
                                         : rename_collection(context, call.tenant, name, to);
               // As GET describes it: the caller's role is the one checked (members moved with it).
               call.responder->send(json_response(
                   200, describe(*renamed, *context.collections, call.collection_role.value_or(call.role))));
             },
             {.needs = Role::owner, .audit = "collection.rename"});

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
