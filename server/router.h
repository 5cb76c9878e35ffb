#pragma once
// Maps a method and a path to a handler. Patterns are literal segments and {name} segments, e.g.
// "/v1/collections/{name}/documents"; a {name} matches one non-empty segment.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/generator.h"
#include "server/api_keys.h"  // TenantQuota, Role
#include "server/http_message.h"
#include "server/principal.h"
#include "store/conversation_store.h"

namespace kotae::server {

// One request on its way through the API: who asked (the tenant their key belongs to) and how to answer.
struct Call {
  HttpRequest request;
  std::shared_ptr<Responder> responder;
  std::string tenant;
  bool admin = false;
  Role role = Role::admin;  // over the tenant's collections; every role in open mode
  std::string actor;        // who, in the audit trail: "key:NAME", or "local" in open mode
  TenantQuota quota;        // the caller's key's; none in open mode
  Principal who;            // the caller as identified (its groups among the rest)
  // Its role over the collection the route acts on, once the access check has read it (unset in open
  // mode, and for routes about no collection).
  std::optional<Role> collection_role;
};

// Whose conversations a call reads and writes: the caller's own (a server without keys has one
// tenant-wide set).
inline store::ConversationOwner conversation_owner(const Call& call) {
  return {call.tenant, call.actor == "local" ? "" : call.actor};
}

// Generation on the caller's behalf: KV cache reuse only within the tenant, the tenant's turn in the
// answer queue, and given up when the client goes away (unless `detached`: an async question, whose
// client leaves by design).
inline void on_behalf_of(GenerationOptions& options, const Call& call, bool detached = false) {
  options.cache_owner = call.tenant;
  options.tenant = call.tenant;
  if (!detached) options.wanted = [responder = call.responder] { return !responder->client_gone(); };
}

using Handler = std::function<void(Call& call)>;

// Who may call a route when the server has API keys: anyone (health, the API's description), any key
// (its tenant's data), or an admin key (metrics).
enum class Access { open, tenant, admin };

// The collection a call is about, for the access check before its handler: nothing when there is none
// (a job that does not exist: the handler answers 404).
using CollectionOf = std::function<std::optional<std::string>(const Call& call)>;
// The body's "collection" (search, ask, grounded chat).
CollectionOf collection_in_body();

struct RouteOptions {
  bool quick = false;  // answered on the I/O thread (cheap, never blocks); else on the work pool
  Access access = Access::tenant;
  Role needs = Role::reader;  // the caller's role the route needs (Access::tenant routes)
  bool upload = false;        // takes a multipart upload (up to --max-body-bytes); else a JSON body (--max-json-bytes)
  // The action its calls are recorded as in the audit trail ("document.upload"); none: not recorded.
  const char* audit = nullptr;
  // The collection it acts on: `needs` is then the caller's role over that collection, not over the
  // tenant. Routes with {name} in their path get the path's (Router::add).
  CollectionOf collection = nullptr;
};

class Router {
 public:
  void add(std::string method, std::string pattern, Handler handler, RouteOptions options = {});
  // The same with what the route needs written first.
  void add(std::string method, std::string pattern, RouteOptions options, Handler handler) {
    add(std::move(method), std::move(pattern), std::move(handler), std::move(options));
  }

  struct Match {
    const Handler* handler = nullptr;  // null: no route
    RouteOptions options;
    std::string pattern;      // the matched route's pattern, e.g. "/v1/jobs/{id}"
    bool path_known = false;  // the path matched with another method (405, not 404)
    std::string allowed;      // the methods the path has, for the Allow header
  };
  // Fills request.path_params on a match.
  Match match(HttpRequest& request) const;
  // The same without taking the path's parameters (deciding on a request before its body is read).
  Match match(const std::string& method, const std::string& path) const;

 private:
  Match match(const std::string& method, const std::string& path, std::map<std::string, std::string>* params) const;
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
    RouteOptions options;
  };
  std::vector<Route> routes_;
};

}  // namespace kotae::server
