#include "server/kotae_server.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/log.h"
#include "core/random_id.h"
#include "queue/answer_task.h"
#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/collection_roles.h"
#include "server/origin_policy.h"
#include "server/rate_limiter.h"
#include "server/trusted_proxy.h"
#include "server/web_sessions.h"
#include "server/work_pool.h"
#include "store/change_follower.h"
#include "store/server_records.h"

namespace kotae::server {

struct KotaeServer::State {
  ServerOptions options;
  ServerContext context;
  Router router;
  // The keys requests are checked against: the --api-keys file's and the store's (store/api_key_store.h),
  // swapped whole when refreshed. Whether keys are needed at all (`keyed`) is decided at
  // start and never changes: a server started open stays open to loopback only.
  ApiKeys file_keys;
  std::shared_ptr<const ApiKeys> keys = std::make_shared<const ApiKeys>();
  mutable std::mutex keys_mutex;
  bool keyed = false;
  bool keys_refreshed = true;  // the last refresh worked (a failure is logged once, not every second)
  std::shared_ptr<store::ApiKeyStore> stored_keys;
  std::unique_ptr<auth::OpenIdProvider> provider;  // with --oidc-issuer
  std::unique_ptr<WebSessions> sessions;           // with --oidc-client-id: the web page's sign-in
  std::unique_ptr<TrustedProxy> proxy;             // with --trusted-proxy
  std::shared_ptr<store::PgPool> shared_pool;      // over a shared store: every replica's jobs and the work queue
  OriginPolicy origins;
  RateLimiter limiter;
  std::unique_ptr<WorkPool> work;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<store::Catalog> catalog;
  std::unique_ptr<store::ChangeFollower> follower;  // other processes' commits
  std::shared_ptr<store::JobRecordStore> own_jobs;  // the records of the jobs this process runs
  std::filesystem::path records_folder;             // where server.db is
  std::thread loader;
  std::promise<Result<void>> loaded;
  std::shared_future<Result<void>> loaded_future = loaded.get_future().share();
};

namespace {

// Where the SQLite back-end keeps server.db: beside the collections (the --store folder, else the data
// directory); over PostgreSQL, on this machine's data directory.
std::filesystem::path server_records_folder(const store::CatalogOptions& where, bool shared) {
  return shared || where.store.empty() ? where.data_dir : std::filesystem::path(where.store);
}

// Who this process is, in the shared job records: host name and process id.
std::string replica_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid());
}

// The client's X-Request-Id when it is a sensible one (a proxy's or a caller's trace id), else a new
// one; either way it is logged and returned, so one id follows a request through every log.
std::string request_id_of(const HttpRequest& request) {
  const auto given = request.header("x-request-id");
  constexpr std::string_view allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-";
  if (!given.empty() && given.size() <= 128 && given.find_first_not_of(allowed) == std::string_view::npos)
    return std::string(given);
  return random_id("req-");
}

void log_request(const std::string& method, const std::string& route, const std::string& path, int status, double ms,
                 const std::string& request_id, const std::string& tenant) {
  // A 503 is the server protecting itself (loading, busy): worth a look, not an error.
  const LogLevel level = status == 503 ? LogLevel::warn : status >= 500 ? LogLevel::error : LogLevel::info;
  log_event("request",
            {{"method", method},
             {"route", route},
             {"path", path},
             {"status", status},
             {"ms", std::round(ms * 1000) / 1000},
             {"request_id", request_id},
             {"tenant", tenant}},
            level);
}

// Passes everything through, and when the response is complete records it: metrics by endpoint and
// status, and a structured log line.
class MeteredResponder final : public Responder {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  MeteredResponder(std::shared_ptr<Responder> inner, ServerMetrics& metrics, std::string method, std::string path,
                   std::string route, std::string request_id, Headers added)
      : inner_(std::move(inner)),
        metrics_(metrics),
        method_(std::move(method)),
        path_(std::move(path)),
        route_(std::move(route)),
        request_id_(std::move(request_id)),
        added_(std::move(added)) {
    added_.emplace_back("X-Request-Id", request_id_);
  }
  void set_tenant(std::string tenant) { tenant_ = std::move(tenant); }
  const std::string& request_id() const { return request_id_; }
  // Called once with the status when the response is complete (the audit trail's record of the call).
  void on_done(std::function<void(int)> callback) { on_done_ = std::move(callback); }
  ~MeteredResponder() override {
    if (!done_) done(status_ ? status_ : 500);
  }
  // Counted and logged before the reply goes: a client that has its answer finds it in /metrics.
  void send(HttpResponse response) override {
    done(response.status);
    response.headers.insert(response.headers.end(), added_.begin(), added_.end());
    inner_->send(std::move(response));
  }
  void begin_events(Headers headers) override {
    status_ = 200;
    headers.insert(headers.end(), added_.begin(), added_.end());
    inner_->begin_events(std::move(headers));
  }
  bool event(std::string_view name, std::string_view data) override { return inner_->event(name, data); }
  void end_events() override {
    done(200);
    inner_->end_events();
  }
  bool client_gone() const override { return inner_->client_gone(); }

 private:
  void done(int status) {
    if (done_) return;
    done_ = true;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    metrics_.request_done(method_, route_, status, seconds);
    log_request(method_, route_, path_, status, seconds * 1000, request_id_, tenant_);
    if (on_done_) on_done_(status);
  }

  std::shared_ptr<Responder> inner_;
  ServerMetrics& metrics_;
  std::string method_, path_, route_, request_id_, tenant_;
  Headers added_;  // on every response: CORS for a listed origin
  std::function<void(int)> on_done_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int status_ = 0;
  bool done_ = false;
};

// 404, or 405 with the methods the path has.
HttpResponse unrouted(const Router::Match& match, const HttpRequest& request) {
  if (!match.path_known) return error_response({404, "not_found", "no endpoint " + request.path});
  auto response = error_response({405, "method_not_allowed", request.method + " is not allowed on " + request.path});
  response.headers.emplace_back("Allow", match.allowed);
  return response;
}

void run_handler(const Handler& handler, Call& call) {
  try {
    handler(call);
  } catch (const ApiError& e) {
    call.responder->send(error_response(e));
  } catch (const std::exception& e) {
    call.responder->send(error_response({500, "internal", std::string("the server failed: ") + e.what()}));
  }
}

}  // namespace

Result<std::unique_ptr<KotaeServer>> KotaeServer::start(const ServerOptions& options) {
  std::unique_ptr<KotaeServer> server(new KotaeServer());
  auto& s = *(server->state_ = std::make_unique<State>());
  s.options = options;
  s.context.limits = options.limits;
  s.context.answer_cache = std::make_unique<rag::AnswerCache>(options.cache);
  if (!options.api_keys_file.empty()) {
    auto keys = ApiKeys::load(options.api_keys_file);
    if (!keys) return keys.error();
    s.file_keys = std::move(*keys);
  }
  store::CatalogOptions where = options.store;
  if (where.data_dir.empty()) where.data_dir = options.models.data_dir;
  auto catalog = store::Catalog::open(where);  // a wrong URL or a server that is down: said now
  if (!catalog) return catalog.error();
  s.catalog = std::move(*catalog);
  s.records_folder = server_records_folder(where, s.catalog->shared());
  auto records = store::open_server_records(*s.catalog, s.records_folder, options.conversations_per_tenant);
  if (!records) return records.error();
  s.context.conversations = std::move(records->conversations);
  s.context.document_files = std::make_unique<DocumentFiles>(records->document_files);
  s.stored_keys = std::move(records->api_keys);
  s.shared_pool = std::move(records->shared_pool);
  s.own_jobs = std::move(records->own_jobs);
  s.context.audit = std::make_unique<AuditRecorder>(std::move(records->audit), options.audit);
  s.context.members = std::move(records->members);
  s.keys = std::make_shared<const ApiKeys>(s.file_keys);
  server->refresh_keys();
  if (!s.keys_refreshed)
    return make_error(ErrorCode::unavailable, "cannot read the API keys in " + s.catalog->description());
  if (!options.work_queue.empty()) {
    if (!s.catalog->shared()) {
      return make_error(ErrorCode::invalid_argument,
                        "a work queue (--queue) needs a shared store (--store postgres://…): "
                        "the workers read the uploads from it");
    }
    auto queues = std::make_shared<queue::WorkQueuePool>(options.work_queue, options.work_queue_options);
    if (auto reachable = queues->acquire(); !reachable) return reachable.error();  // a wrong URL: said now
    jobs::QueuedJobsOptions queued = options.queued_jobs;
    queued.finished_kept = options.ingest.finished_kept;  // one bound, however the jobs run
    s.context.queued_jobs = std::make_shared<jobs::QueuedJobs>(s.shared_pool, std::move(queues), queued);
    queue::WorkQueueOptions answers = options.work_queue_options;
    answers.name = queue::kAnswerQueue;
    s.context.answer_queues = std::make_shared<queue::WorkQueuePool>(options.work_queue, answers);
    auto generator = options.answer_workers;
    generator.context_tokens = static_cast<std::size_t>(options.models.backends.context);
    s.options.models.backends.workers = std::make_shared<queue::QueuedGenerator>(s.context.answer_queues, generator);
  }
  s.context.ask_tasks = std::make_shared<jobs::AskTasks>(s.context.answer_queues);
  if (options.oidc) s.provider = std::make_unique<auth::OpenIdProvider>(*options.oidc);
  if (options.sign_in) {
    if (!s.provider) return make_error(ErrorCode::invalid_argument, "sign-in needs the provider: --oidc-issuer");
    s.sessions = std::make_unique<WebSessions>(*options.sign_in, *s.provider, records->sessions);
    // Sessions the provider ended or changed, in the audit trail (a JSON log line, then a row).
    s.sessions->on_revalidated([audit = s.context.audit.get()](const std::string& tenant, const std::string& actor,
                                                               const char* action, const std::string& why) {
      store::AuditEvent event;
      event.at = unix_seconds();
      event.tenant = tenant;
      event.actor = actor;
      event.action = action;
      event.outcome = "ok";
      event.detail = nlohmann::json{{"reason", why}}.dump();
      audit->record(std::move(event));
    });
    s.context.sessions = s.sessions.get();
  }
  if (options.proxy) s.proxy = std::make_unique<TrustedProxy>(*options.proxy);
  s.keyed = !s.keys->empty() || s.provider || s.proxy;
  s.origins = OriginPolicy(!s.keyed, is_loopback_host(options.http.host), options.cors_origins);
  const std::size_t workers = options.workers > 0
                                  ? options.workers
                                  : std::max<std::size_t>(8, 4 * std::max(1u, std::thread::hardware_concurrency()));
  s.work = std::make_unique<WorkPool>(workers, options.max_queued);
  s.context.work = s.work.get();
  add_health_routes(s.router, s.context);
  add_collection_routes(s.router, s.context);
  add_document_routes(s.router, s.context);
  add_search_routes(s.router, s.context);
  add_ask_routes(s.router, s.context);
  add_openai_routes(s.router, s.context);
  add_rerank_routes(s.router, s.context);
  add_tei_routes(s.router, s.context);
  add_job_routes(s.router, s.context);
  add_conversation_routes(s.router, s.context);
  add_audit_routes(s.router, s.context);
  add_member_routes(s.router, s.context);
  add_session_routes(s.router, s.context);
  add_web_routes(s.router);
  s.options.models.on_gpu_failure = [&s](const std::string& model, const GpuFailure& failure) {
    s.context.metrics.gpu_failover(model, failure.from, failure.to);
  };
  s.options.models.on_model_loaded = [&s](const std::string& model, const std::string& provider) {
    s.context.metrics.model_loaded(model, provider);
    return s.context.metrics.batch_observer(model);
  };

  auto http = HttpServer::start(
      options.http,
      [self = server.get()](HttpRequest request, std::shared_ptr<Responder> responder) {
        self->handle(std::move(request), std::move(responder));
      },
      [self = server.get()](const HttpRequest& head) { return self->admit(head); });
  if (!http) return http.error();
  s.http = std::move(*http);

  s.loader = std::thread([&s, self = server.get()] {
    auto models = assembly::ModelPool::load(s.options.models);
    if (!models) return s.loaded.set_value(models.error());
    s.context.models = std::move(*models);
    s.context.collections = std::make_unique<assembly::CollectionRegistry>(*s.catalog, *s.context.models);
    const auto opened = s.context.collections->open_all();
    auto follower = store::follow_changes(*s.catalog, s.records_folder, s.options.follow_period, [&s, self] {
      s.context.collections->follow_changes();
      if (s.keyed) self->refresh_keys();
    });
    if (!follower) return s.loaded.set_value(follower.error());
    s.follower = std::move(*follower);
    s.context.jobs = std::make_unique<jobs::IngestJobs>(s.options.ingest, s.own_jobs);
    if (s.catalog->shared()) {
      s.context.shared_jobs =
          std::make_shared<jobs::SharedJobRecords>(s.shared_pool, replica_name(), s.options.ingest.finished_kept);
      s.context.jobs->share_records(s.context.shared_jobs);
      s.context.jobs->set_keeper(
          [&s](const assembly::ServedCollection& c, const std::string& name, const std::filesystem::path& file) {
            return s.context.document_files->keep(c, name, file);
          });
    }
    s.context.jobs->set_observer([&s](std::uint64_t bytes, std::size_t chunks, double seconds) {
      s.context.metrics.ingested(bytes, chunks, seconds);
    });
    for (const auto& collection : opened) s.context.jobs->recover(collection);
    s.context.ready = true;
    s.loaded.set_value({});
  });
  return server;
}

KotaeServer::~KotaeServer() {
  shutdown(std::chrono::milliseconds(0));
}

unsigned short KotaeServer::port() const {
  return state_->http->port();
}

Result<void> KotaeServer::wait_until_ready() {
  return state_->loaded_future.get();
}

bool KotaeServer::shutdown(std::chrono::milliseconds deadline) {
  if (!state_ || !state_->http) return true;
  const auto end = std::chrono::steady_clock::now() + deadline;
  if (state_->context.jobs) state_->context.jobs->request_stop();
  state_->http->shutdown(deadline);
  if (state_->loader.joinable()) state_->loader.join();
  if (state_->context.jobs) state_->context.jobs->request_stop();  // one the loader started meanwhile
  state_->follower.reset();
  state_->context.work = nullptr;
  state_->work.reset();  // runs what was queued (their clients are gone; writes are dropped)
  state_->http.reset();
  auto& jobs = state_->context.jobs;
  const auto left = std::max(std::chrono::steady_clock::duration::zero(), end - std::chrono::steady_clock::now());
  if (jobs && !jobs->wait_stopped(std::chrono::duration_cast<std::chrono::milliseconds>(left))) return false;
  jobs.reset();  // what the jobs committed is whole; what they did not finish resumes at the next start
  return true;
}

void KotaeServer::refresh_keys() {
  auto& s = *state_;
  auto read = [&]() -> Result<ApiKeys> {
    const auto entries = KOTAE_TRY_VALUE(s.stored_keys->entries());
    ApiKeys keys = [&] {
      std::lock_guard lock(s.keys_mutex);  // reload_keys() may be replacing them
      return s.file_keys;
    }();
    const std::string where = "the API keys in " + s.catalog->description();
    KOTAE_TRY(keys.add(KOTAE_TRY_VALUE(ApiKeys::from_entries(entries, where)), where));
    return keys;
  };
  auto keys = read();
  if (!keys) {
    if (s.keys_refreshed) log_event("api_keys_not_refreshed", {{"reason", keys.error().message}}, LogLevel::warn);
    s.keys_refreshed = false;
    return;  // the keys known before stay in force
  }
  s.keys_refreshed = true;
  auto fresh = std::make_shared<const ApiKeys>(std::move(*keys));
  std::lock_guard lock(s.keys_mutex);
  s.keys = std::move(fresh);
}

Result<void> KotaeServer::reload_keys() {
  auto& s = *state_;
  if (s.options.api_keys_file.empty()) return {};  // started without a keys file: nothing to read again
  auto keys = KOTAE_TRY_VALUE(ApiKeys::load(s.options.api_keys_file));
  {
    std::lock_guard lock(s.keys_mutex);
    s.file_keys = std::move(keys);
  }
  refresh_keys();  // the file's and the store's together
  return {};
}

KotaeServer::Identity KotaeServer::identify(const HttpRequest& request, const RouteOptions& route) const {
  auto& s = *state_;
  std::string_view presented = request.header("x-api-key");
  if (const auto authorization = request.header("authorization"); authorization.starts_with("Bearer ")) {
    presented = authorization.substr(7);
  }
  std::shared_ptr<const ApiKeys> keys;
  {
    std::lock_guard lock(s.keys_mutex);
    keys = s.keys;
  }
  std::optional<Principal> principal;
  if (const ApiKey* key = keys->find(presented)) {
    principal = Principal::of_key(*key);
  } else if (s.provider && auth::OpenIdProvider::looks_like_jwt(presented)) {
    auto token = s.provider->verify_access_token(presented);
    if (!token) {
      const bool down = token.error().code == ErrorCode::unavailable;
      auto response = error_response({down ? 503 : 401, down ? "unavailable" : "invalid_token", token.error().message});
      if (!down) response.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      return {std::nullopt, std::move(response)};
    }
    principal = token_principal(*token);
  } else if (presented.empty() && s.proxy && s.proxy->names_a_user(request)) {
    // Believed only from the proxy (handle() also removes them from anyone else's request).
    if (!s.proxy->trusts(request.remote_address)) {
      return {std::nullopt, error_response({401, "untrusted_proxy_headers",
                                            "the user headers are believed only from the trusted proxy"})};
    }
    auto named = s.proxy->principal(request);
    if (!named) return {std::nullopt, error_response({401, "invalid_proxy_headers", named.error().message})};
    // A change from a browser must come from the page's own origin: the proxy's cookie rides along on
    // another site's form too.
    const auto origin = request.header("origin");
    const bool reads = request.method == "GET" || request.method == "HEAD";
    if (!reads && !origin.empty() && !same_origin(origin, request.header("host"))) {
      return {std::nullopt,
              error_response({403, "csrf_failed", "a change through the proxy must come from this server's own page"})};
    }
    principal = std::move(*named);
  } else if (presented.empty() && s.sessions) {
    // The web page's session cookie. A session authenticates only requests that carry its CSRF token
    // when they change something: another site's page can make the browser send the cookie (a GET, or
    // a top-level POST form the cookie's SameSite=Lax lets through), never the header.
    auto session = s.sessions->find(cookie_value(request.header("cookie"), kSessionCookie));
    if (!session) return {std::nullopt, error_response(from_error(session.error()))};
    if (*session) {
      const bool reads = request.method == "GET" || request.method == "HEAD";
      if (!reads && request.header("x-csrf-token") != (*session)->csrf) {
        return {std::nullopt, error_response({403, "csrf_failed",
                                              "a signed-in request that changes something needs the page's "
                                              "X-CSRF-Token header"})};
      }
      principal = (*session)->principal;
    }
  }
  if (!principal) {
    auto response =
        error_response({401, "invalid_api_key",
                        presented.empty() ? "send an API key: Authorization: Bearer KEY" : "the API key is not valid"});
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return {std::nullopt, std::move(response)};
  }
  auto refused = [&](const ApiError& error) { return Identity{principal, error_response(error)}; };
  if (route.access == Access::admin && !principal->operator_key)
    return refused({403, "forbidden", "this endpoint needs an admin key"});
  // The one place a route's role is checked: every call passes here before its handler runs.
  // (A route about one collection checks the caller's role over it instead: authorize_collection.)
  if (route.access == Access::tenant && !route.collection && principal->role < route.needs) {
    return refused({403, "forbidden",
                    std::string("this needs the role ") + name_of(route.needs) + "; " + principal->actor + " is a " +
                        name_of(principal->role)});
  }
  if (const auto tenant = request.header("x-kotae-tenant"); !tenant.empty()) {
    if (!principal->operator_key) return refused({403, "forbidden", "only an admin key may act for another tenant"});
    if (!valid_tenant(tenant)) return refused({400, "invalid_request", "X-Kotae-Tenant: letters, digits, '_' and '-'"});
  }
  return {std::move(principal), std::nullopt};
}

Admission KotaeServer::admit(const HttpRequest& head) {
  auto& s = *state_;
  if (auto preflight = s.origins.preflight(head)) return {std::move(preflight), 0};
  const auto match = s.router.match(head.method, head.path);
  const std::string request_id = request_id_of(head);
  auto refuse = [&](HttpResponse refusal) {
    const std::string route = match.handler ? match.pattern : "unmatched";
    s.context.metrics.request_done(head.method, route, refusal.status, 0);
    log_request(head.method, route, head.path, refusal.status, 0, request_id, "");
    refusal.headers.emplace_back("X-Request-Id", request_id);
    return Admission{std::move(refusal), 0};
  };
  if (auto refused = s.origins.check(head)) return refuse(std::move(*refused));
  if (!match.handler) return refuse(unrouted(match, head));  // their bodies are not worth reading
  if (s.keyed && match.options.access != Access::open) {
    auto identity = identify(head, match.options);
    if (identity.refusal) {
      audit_refusal(head, identity, match.options.audit, request_id);
      return refuse(std::move(*identity.refusal));
    }
    // An upload's collection is checked before its body is read (it may be large).
    if (match.options.upload && match.options.collection) {
      Call probe{head,
                 nullptr,
                 identity.principal->tenant,
                 false,
                 identity.principal->role,
                 identity.principal->actor,
                 {},
                 *identity.principal,
                 std::nullopt};
      s.router.match(probe.request);
      if (auto refused = authorize_collection(probe, match.options)) {
        const char* action = match.options.audit ? match.options.audit : "access.denied";
        s.context.audit->finish(
            s.context.audit->call_event(probe.request, action, probe.tenant, probe.actor, request_id), refused->status);
        return refuse(std::move(*refused));
      }
    }
  }
  return {std::nullopt, match.options.upload ? s.options.http.max_body_bytes : s.options.limits.max_json_bytes};
}

void KotaeServer::audit_refusal(const HttpRequest& head, const Identity& identity, const char* action,
                                const std::string& request_id) {
  auto& audit = *state_->context.audit;
  const int status = identity.refusal->status;
  if (!identity.principal) {
    const auto body = nlohmann::json::parse(identity.refusal->body, nullptr, false);
    const std::string reason = body.is_object() && body.contains("error") ? body["error"].value("message", "") : "";
    return audit.record_refusal(head, status, reason, request_id);
  }
  // A known key refused (a reader uploading): the route's action, denied, in its tenant's trail.
  HttpRequest request = head;
  state_->router.match(request);  // the path's parameters name the target
  const auto& who = *identity.principal;
  audit.finish(audit.call_event(request, action ? action : "access.denied", who.tenant, who.actor, request_id), status);
}

std::optional<HttpResponse> KotaeServer::authorize_collection(Call& call, const RouteOptions& route) const {
  auto& s = *state_;
  if (!route.collection || !s.keyed) return std::nullopt;
  const auto name = route.collection(call);
  if (!name) return std::nullopt;
  auto members = s.context.members->members(call.tenant, *name);
  if (!members) return error_response(from_error(members.error()));
  const auto role = role_over(call.who, *members);
  call.collection_role = role;  // for the handler to report (a collection's description says it)
  // Not theirs: the same answer as a collection that does not exist.
  if (!role)
    return error_response(
        {404, "not_found", "no collection '" + name->substr(0, 200) + "' (create it with POST /v1/collections)"});
  if (*role < route.needs) {
    return error_response({403, "forbidden",
                           std::string("this needs the role ") + name_of(route.needs) + " over collection '" + *name +
                               "'; " + call.actor + " is a " + name_of(*role) + " there"});
  }
  return std::nullopt;
}

std::optional<HttpResponse> KotaeServer::authenticate(Call& call, const RouteOptions& route) {
  auto& s = *state_;
  auto identity = identify(call.request, route);
  if (identity.refusal) return std::move(*identity.refusal);
  const Principal& who = *identity.principal;
  call.who = who;
  call.tenant = who.tenant;
  call.admin = who.operator_key;
  call.role = who.role;
  call.actor = who.actor;
  call.quota = who.quota;
  if (const auto tenant = call.request.header("x-kotae-tenant"); !tenant.empty())
    call.tenant = call.who.tenant = tenant;
  if (s.context.audit->key_use_due(who.actor)) {
    auto used = s.context.audit->call_event(call.request, who.actor.starts_with("key:") ? "key.use" : "token.use",
                                            call.tenant, call.actor, "");
    used.target = who.name;
    used.detail = "{}";
    s.context.audit->finish(std::move(used), 200);
  }
  if (const auto wait = s.limiter.take(who.actor, who.rate_per_second, who.burst)) {
    auto response = error_response({429, "rate_limited", "too many requests for " + who.actor + "; retry shortly"});
    for (auto& [name, value] : response.headers) {
      if (name == "Retry-After") value = std::to_string(static_cast<long>(std::ceil(*wait)));
    }
    return response;
  }
  return std::nullopt;
}

void KotaeServer::handle(HttpRequest request, std::shared_ptr<Responder> responder) {
  auto& s = *state_;
  if (s.proxy && !s.proxy->trusts(request.remote_address)) s.proxy->strip(request);  // nobody else names users
  Call call{std::move(request),
            nullptr,
            store::kLocalTenant,
            true,
            Role::admin,
            "local",
            {},
            local_principal(store::kLocalTenant),
            std::nullopt};
  const auto match = s.router.match(call.request);
  auto metered =
      std::make_shared<MeteredResponder>(std::move(responder), s.context.metrics, call.request.method,
                                         call.request.path, match.handler ? match.pattern : "unmatched",
                                         request_id_of(call.request), s.origins.response_headers(call.request));
  call.responder = metered;
  if (!match.handler) return call.responder->send(unrouted(match, call.request));
  if (s.keyed && match.options.access != Access::open) {
    call.tenant.clear();  // a refused key has no tenant; a valid one sets it
    auto refused = authenticate(call, match.options);
    metered->set_tenant(call.tenant);
    if (refused) return call.responder->send(std::move(*refused));
  } else if (s.keyed) {
    // An open route with keys configured: anyone may call it, but only an admin key sees the details.
    auto identity = identify(call.request, RouteOptions{});
    const bool known = identity.principal && !identity.refusal;
    call.admin = known && identity.principal->operator_key;
    call.tenant = known ? identity.principal->tenant : "";
  }
  metered->set_tenant(call.tenant);
  if (match.options.audit) {
    metered->on_done([audit = s.context.audit.get(),
                      event = s.context.audit->call_event(call.request, match.options.audit, call.tenant, call.actor,
                                                          metered->request_id())](int status) mutable {
      audit->finish(std::move(event), status);
    });
  }
  if (match.options.quick) return run_handler(*match.handler, call);
  if (!s.context.ready.load()) {
    return call.responder->send(error_response({503, "not_ready", "the server is still loading its models"}));
  }
  // The caller's role over the collection the call is about is checked here, on the work pool (it may
  // ask the store), before the handler: never by a handler.
  auto task = [this, handler = match.handler, options = match.options, call]() mutable {
    run_handler(
        [&](Call& authorized) {
          if (auto refused = authorize_collection(authorized, options))
            return authorized.responder->send(std::move(*refused));
          (*handler)(authorized);
        },
        call);
  };
  if (!s.work->try_post(std::move(task))) {
    call.responder->send(error_response(
        {503, "overloaded",
         "the server is busy (" + std::to_string(s.work->queued()) + " requests waiting); retry shortly"}));
  }
}

}  // namespace kotae::server
