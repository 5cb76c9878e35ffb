#include "server/kotae_server.h"

#include <cmath>
#include <cstdio>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/json_log.h"
#include "server/rate_limiter.h"
#include "server/work_pool.h"

namespace kotae::server {

struct KotaeServer::State {
  ServerOptions options;
  ServerContext context;
  Router router;
  ApiKeys keys;
  RateLimiter limiter;
  std::unique_ptr<WorkPool> work;
  std::unique_ptr<HttpServer> http;
  std::thread loader;
  std::promise<Result<void>> loaded;
  std::shared_future<Result<void>> loaded_future = loaded.get_future().share();
};

namespace {

// Passes everything through, and when the response is complete records it: metrics by endpoint and
// status, and a structured log line.
class MeteredResponder final : public Responder {
 public:
  MeteredResponder(std::shared_ptr<Responder> inner, ServerMetrics& metrics, std::string method, std::string path,
                   std::string route)
      : inner_(std::move(inner)), metrics_(metrics), method_(std::move(method)), path_(std::move(path)),
        route_(std::move(route)) {}
  ~MeteredResponder() override {
    if (!done_) done(status_ ? status_ : 500);
  }
  void send(HttpResponse response) override {
    const int status = response.status;
    inner_->send(std::move(response));
    done(status);
  }
  void begin_events(std::vector<std::pair<std::string, std::string>> headers) override {
    status_ = 200;
    inner_->begin_events(std::move(headers));
  }
  bool event(std::string_view name, std::string_view data) override { return inner_->event(name, data); }
  void end_events() override {
    inner_->end_events();
    done(200);
  }
  bool client_gone() const override { return inner_->client_gone(); }

 private:
  void done(int status) {
    if (done_) return;
    done_ = true;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    metrics_.request_done(method_, route_, status, seconds);
    log_event("request", {{"method", method_}, {"path", path_}, {"status", status}, {"ms", seconds * 1000}});
  }

  std::shared_ptr<Responder> inner_;
  ServerMetrics& metrics_;
  std::string method_, path_, route_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int status_ = 0;
  bool done_ = false;
};

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
    s.keys = std::move(*keys);
  }
  s.work = std::make_unique<WorkPool>(options.workers, options.max_queued);
  s.context.work = s.work.get();
  add_health_routes(s.router, s.context);
  add_collection_routes(s.router, s.context);
  add_search_routes(s.router, s.context);
  add_ask_routes(s.router, s.context);
  add_openai_routes(s.router, s.context);
  add_rerank_routes(s.router, s.context);
  add_job_routes(s.router, s.context);
  add_web_routes(s.router);
  s.options.models.on_model_loaded = [&s](const std::string& model, const std::string& provider) {
    s.context.metrics.model_loaded(model, provider);
    return s.context.metrics.batch_observer(model);
  };

  auto http = HttpServer::start(options.http, [self = server.get()](HttpRequest request, std::shared_ptr<Responder> responder) {
    self->handle(std::move(request), std::move(responder));
  });
  if (!http) return http.error();
  s.http = std::move(*http);

  s.loader = std::thread([&s] {
    auto models = ModelPool::load(s.options.models);
    if (!models) return s.loaded.set_value(models.error());
    s.context.models = std::move(*models);
    s.context.collections = std::make_unique<CollectionRegistry>(s.options.models.data_dir, *s.context.models);
    s.context.collections->open_all();
    s.context.jobs = std::make_unique<IngestJobs>(s.options.ingest_threads);
    s.context.jobs->set_observer([&s](std::uint64_t bytes, std::size_t chunks, double seconds) {
      s.context.metrics.ingested(bytes, chunks, seconds);
    });
    s.context.ready = true;
    s.loaded.set_value({});
  });
  return server;
}

KotaeServer::~KotaeServer() { shutdown(std::chrono::milliseconds(0)); }

unsigned short KotaeServer::port() const { return state_->http->port(); }

Result<void> KotaeServer::wait_until_ready() { return state_->loaded_future.get(); }

void KotaeServer::shutdown(std::chrono::milliseconds deadline) {
  if (!state_ || !state_->http) return;
  state_->http->shutdown(deadline);
  if (state_->loader.joinable()) state_->loader.join();
  state_->context.work = nullptr;
  state_->work.reset();  // runs what was queued (their clients are gone; writes are dropped)
  state_->context.jobs.reset();  // running jobs stop at their next file; what they indexed is committed
  state_->http.reset();
}

std::optional<HttpResponse> KotaeServer::authenticate(Call& call, Access access) {
  auto& s = *state_;
  std::string_view presented = call.request.header("x-api-key");
  if (const auto authorization = call.request.header("authorization"); authorization.starts_with("Bearer ")) {
    presented = authorization.substr(7);
  }
  const ApiKey* key = s.keys.find(presented);
  if (!key) {
    auto response = error_response({401, "invalid_api_key", presented.empty() ? "send an API key: Authorization: Bearer KEY"
                                                                             : "the API key is not valid"});
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return response;
  }
  if (access == Access::admin && !key->admin) return error_response({403, "forbidden", "this endpoint needs an admin key"});
  call.tenant = key->tenant;
  call.admin = key->admin;
  if (const auto tenant = call.request.header("x-kotae-tenant"); !tenant.empty()) {
    if (!key->admin) return error_response({403, "forbidden", "only an admin key may act for another tenant"});
    if (!valid_tenant(tenant)) return error_response({400, "invalid_request", "X-Kotae-Tenant: letters, digits, '_' and '-'"});
    call.tenant = std::string(tenant);
  }
  if (const auto wait = s.limiter.take(key->name, key->rate_per_second, key->burst)) {
    auto response = error_response({429, "rate_limited", "too many requests for key '" + key->name + "'; retry shortly"});
    for (auto& [name, value] : response.headers) {
      if (name == "Retry-After") value = std::to_string(static_cast<long>(std::ceil(*wait)));
    }
    return response;
  }
  return std::nullopt;
}

void KotaeServer::handle(HttpRequest request, std::shared_ptr<Responder> responder) {
  auto& s = *state_;
  Call call{std::move(request), nullptr, kLocalTenant, true};
  const auto match = s.router.match(call.request);
  call.responder = std::make_shared<MeteredResponder>(std::move(responder), s.context.metrics, call.request.method,
                                                      call.request.path, match.handler ? match.pattern : "unmatched");
  if (!match.handler) {
    if (match.path_known) {
      auto response = error_response({405, "method_not_allowed", call.request.method + " is not allowed on " + call.request.path});
      response.headers.emplace_back("Allow", match.allowed);
      return call.responder->send(std::move(response));
    }
    return call.responder->send(error_response({404, "not_found", "no endpoint " + call.request.path}));
  }
  if (!s.keys.empty() && match.options.access != Access::open) {
    if (auto refused = authenticate(call, match.options.access)) return call.responder->send(std::move(*refused));
  }
  if (match.options.quick) return run_handler(*match.handler, call);
  if (!s.context.ready.load()) {
    return call.responder->send(error_response({503, "not_ready", "the server is still loading its models"}));
  }
  auto task = [handler = match.handler, call]() mutable { run_handler(*handler, call); };
  if (!s.work->try_post(std::move(task))) {
    call.responder->send(error_response({503, "overloaded", "the server is busy (" + std::to_string(s.work->queued()) +
                                                                " requests waiting); retry shortly"}));
  }
}

}  // namespace kotae::server
