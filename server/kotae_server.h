#pragma once
// `kotae serve`: the HTTP server, the API routes, the models and collections behind them. Start-up
// listens first (so /healthz and /readyz answer while models load), then loads and warms up the
// models; shutdown stops accepting, lets requests in flight and ingestion stop within a deadline, then
// closes.

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "assembly/model_pool.h"
#include "core/result.h"
#include "queue/queued_generator.h"
#include "rag/answer_cache.h"
#include "server/api_keys.h"
#include "server/audit_recorder.h"
#include "server/auth/openid_provider.h"
#include "server/http_server.h"
#include "server/principal.h"
#include "server/router.h"
#include "server/server_context.h"
#include "server/trusted_proxy.h"
#include "server/web_sessions.h"

namespace kotae::server {

struct ServerOptions {
  HttpServerOptions http;
  assembly::ModelPoolOptions models;
  ApiLimits limits;
  // Threads running handlers and the stages between model calls (0: four per core, at least 8). They
  // never wait on a model (batchers and generators call back), only on the store (a PostgreSQL round
  // trip, an upload's fsync), so a few per core keep the cores busy through those waits.
  std::size_t workers = 0;
  std::size_t max_queued = 256;  // requests waiting for a worker; beyond it: 503
  jobs::IngestJobsOptions ingest;
  std::size_t conversations_per_tenant = 1000;  // stored per tenant; beyond it the least recently updated go
  std::filesystem::path api_keys_file;          // empty: no keys, one open local tenant
  std::vector<std::string> cors_origins;        // origins whose pages may call the API (server/origin_policy.h)
  AuditOptions audit;                           // the audit trail: questions' text, retention
  // The company's OpenID provider (--oidc-issuer): bearer tokens beside API keys; the server then
  // needs a key or a token for every request, as with keys.
  std::optional<auth::OpenIdOptions> oidc;
  std::optional<SignInOptions> sign_in;      // the web page's sign-in with that provider (--oidc-client-id)
  std::optional<TrustedProxyOptions> proxy;  // an authenticating proxy in front (--trusted-proxy)
  rag::AnswerCacheOptions cache;
  double cache_ttl_s = 600;     // the flag's form of cache.ttl
  store::CatalogOptions store;  // where the collections are (--store, --index-cache); its data_dir: models.data_dir
  // Over a shared store, how often every open collection is checked for others' commits even
  // without a notification (one lost while the connection was down).
  std::chrono::milliseconds follow_period{1000};
  // A Redis work queue (redis://… or unix://…, --queue) beside a PostgreSQL store: uploads are stored
  // and queued for `kotae worker` processes instead of being indexed by this one.
  std::string work_queue;
  queue::WorkQueueOptions work_queue_options;
  jobs::QueuedJobsOptions queued_jobs;
  // With a work queue, the "workers" answer back-end: generation by `kotae worker --answers` processes.
  queue::QueuedGeneratorOptions answer_workers;
};

class KotaeServer {
 public:
  // Listening when it returns; the models load in the background (see wait_until_ready).
  static Result<std::unique_ptr<KotaeServer>> start(const ServerOptions& options);
  ~KotaeServer();

  unsigned short port() const;
  // Blocks until the models are loaded (or failed to load: the error).
  Result<void> wait_until_ready();
  // false when ingestion was still running at the deadline: the caller may exit anyway (the jobs'
  // records say where to resume), and destroying the server waits for it.
  bool shutdown(std::chrono::milliseconds deadline);
  // The --api-keys file read again (SIGHUP, `systemctl reload kotae`): its keys replace those read
  // before. A file that no longer reads leaves the old keys in force (the error says why).
  Result<void> reload_keys();

 private:
  KotaeServer() = default;
  // Before the body is read: where the request comes from, whether the caller is known, how large a
  // body the route takes.
  Admission admit(const HttpRequest& head);
  void handle(HttpRequest request, std::shared_ptr<Responder> responder);
  // The caller (an API key, or a bearer token from the OpenID provider), and the refusal when there is
  // one (401 without a valid key or token; 403 when the caller may not do what the route needs, 400
  // for a bad tenant header: with the caller).
  struct Identity {
    std::optional<Principal> principal;
    std::optional<HttpResponse> refusal;
  };
  Identity identify(const HttpRequest& request, const RouteOptions& route) const;
  // The refusal when the call is about a collection (RouteOptions::collection) the caller has no role
  // over (404, as if it did not exist) or too small a role (403); the role it read goes in
  // call.collection_role.
  std::optional<HttpResponse> authorize_collection(Call& call, const RouteOptions& route) const;
  // Records a call refused at admission in the audit trail.
  void audit_refusal(const HttpRequest& head, const Identity& identity, const char* action,
                     const std::string& request_id);
  // Over a shared store: the keys again, the file's and PostgreSQL's (the change follower calls it).
  void refresh_keys();
  // Sets the call's tenant from its API key; the refusal (401, 403, 429) when there is one.
  std::optional<HttpResponse> authenticate(Call& call, const RouteOptions& route);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kotae::server
