#include "app/serve_command.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "assembly/model_files.h"
#include "assembly/model_pool.h"
#include "cli/report_error.h"
#include "core/log.h"
#include "core/paths.h"
#include "core/random_id.h"
#include "core/sha256.h"
#include "platform/service_manager.h"
#include "queue/redis_connection.h"
#include "server/api_keys.h"
#include "store/conversation_store.h"
#include "store/postgres_api_keys.h"
#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"
#include "store/sqlite_api_keys.h"
#include "store/sqlite_schema.h"

namespace kotae::app {

using cli::report_error;
namespace {

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host.starts_with("127.");
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeOptions& serve) {
  auto* cmd =
      app.add_subcommand("serve", "the HTTP API: collections, uploads, search, answers, OpenAI-compatible endpoints");
  add_serve_options(*cmd, serve);
  return cmd;
}

void add_serve_options(CLI::App& command, ServeOptions& serve) {
  auto* cmd = &command;
  auto& o = serve.server;
  auto& b = o.models.backends;
  b.niceness = 10;  // a server's quick requests go before generation's next step
  auto flag = [&](const char* name, auto& value, const char* env, const char* help) {
    return cmd->add_option(name, value, help)->envname(env)->capture_default_str();
  };
  flag("--host", o.http.host, "KOTAE_HOST", "address to listen on");
  flag("--port", o.http.port, "KOTAE_PORT", "port (0: any free one; the log says which)");
  flag("--api-keys", o.api_keys_file, "KOTAE_API_KEYS",
       "JSON file of API keys, stored hashed (see kotae keygen); none: one open local tenant");
  flag("--io-threads", o.http.io_threads, "KOTAE_IO_THREADS", "threads reading and writing HTTP")
      ->check(CLI::Range(1, 64));
  flag("--workers", o.workers, "KOTAE_WORKERS", "threads running requests (0: four per core, at least 8)")
      ->check(CLI::Range(0, 1024));
  flag("--max-queued", o.max_queued, "KOTAE_MAX_QUEUED", "requests waiting for a worker before 503");
  flag("--max-body-bytes", o.http.max_body_bytes, "KOTAE_MAX_BODY_BYTES", "largest upload body (413 beyond)");
  flag("--max-json-bytes", o.limits.max_json_bytes, "KOTAE_MAX_JSON_BYTES", "largest JSON request body (413 beyond)");
  flag("--max-connections", o.http.max_connections, "KOTAE_MAX_CONNECTIONS",
       "open connections at once (more are closed)");
  flag("--max-connections-per-client", o.http.max_connections_per_client, "KOTAE_MAX_CONNECTIONS_PER_CLIENT",
       "open connections from one client address");
  flag("--cors-origin", o.cors_origins, "KOTAE_CORS_ORIGIN",
       "origins whose web pages may call the API (CORS); none by default");
  flag("--conversations-per-tenant", o.conversations_per_tenant, "KOTAE_CONVERSATIONS_PER_TENANT",
       "conversations stored per tenant (they do not expire; beyond this the least recently updated go)")
      ->check(CLI::Range(1, 1000000));
  add_access_flags(*cmd, o.audit, serve.oidc, serve.proxy);
  flag("--finished-jobs-per-tenant", o.ingest.finished_kept, "KOTAE_FINISHED_JOBS_PER_TENANT",
       "finished ingestion jobs kept per tenant")
      ->check(CLI::Range(1, 1000000));
  flag("--ingest-threads", o.ingest.threads, "KOTAE_INGEST_THREADS",
       "ingestion jobs of any size running at once (small jobs have a lane of their own besides)")
      ->check(CLI::Range(1, 64));
  flag("--ingest-express-bytes", o.ingest.express_bytes, "KOTAE_INGEST_EXPRESS_BYTES",
       "the largest job (bytes uploaded) the express lane runs beside big ones; 0: no express lane");
  flag("--ocr-languages", o.ingest.ocr_languages, "KOTAE_OCR_LANGUAGES",
       "Tesseract languages for scanned PDF pages and images, joined by '+' (eng+deu); \"\" for no OCR");
  flag("--ingest-seconds-per-file", o.ingest.max_seconds_per_file, "KOTAE_INGEST_SECONDS_PER_FILE",
       "an uploaded file still loading or embedding after this long fails; its job goes on (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0));
  flag("--queue", o.work_queue, "KOTAE_QUEUE",
       "Redis work queue (redis://HOST:PORT or unix:///SOCKET) beside a --store postgres://: uploads are queued for "
       "`kotae worker` processes");
  flag("--queue-max-waiting", o.queued_jobs.max_waiting, "KOTAE_QUEUE_MAX_WAITING",
       "files waiting in the queue beyond which uploads are refused with 503 and Retry-After (0: no bound)");
  flag("--answer-wait", serve.answer_wait_s, "KOTAE_ANSWER_WAIT",
       "seconds a question waits for an answer worker to start it (the workers back-end), then the next back-end "
       "answers")
      ->check(CLI::Range(0.1, 3600.0));
  flag("--answer-silence", serve.answer_silence_s, "KOTAE_ANSWER_SILENCE",
       "seconds an answer worker may go without a piece before the next back-end answers in its place")
      ->check(CLI::Range(0.1, 3600.0));
  flag("--cache-size", o.cache.capacity, "KOTAE_CACHE_SIZE", "answers kept in the answer cache (0: none)");
  flag("--cache-ttl", o.cache_ttl_s, "KOTAE_CACHE_TTL", "seconds a cached answer is served");
  flag("--embedder", o.models.embedder, "KOTAE_EMBEDDER", "embedding model loaded at start (empty: all-minilm-l6-v2)");
  flag("--rerank", o.models.reranker, "KOTAE_RERANK", "cross-encoder model to rerank with");
  auto& rs = o.models.rerank_service;
  flag("--rerank-url", rs.url, "KOTAE_RERANK_URL",
       "reranking service to rerank with instead of a local --rerank model: TEI's http://HOST/rerank, Cohere's or "
       "Jina's …/v1/rerank, Cohere's …/v2/rerank; when it fails, answers and searches keep the fused order");
  flag("--rerank-api", serve.rerank_api, "KOTAE_RERANK_API",
       "the API --rerank-url speaks: tei, cohere (also jina-v1), cohere-v2 (empty: from the URL's path)")
      ->check(CLI::IsMember({"", "tei", "cohere", "cohere-v1", "jina-v1", "cohere-v2"}));
  flag("--rerank-model", rs.model, "KOTAE_RERANK_MODEL", "model name sent to the reranking service (empty: none)");
  flag("--rerank-key-env", serve.rerank_key_env, "KOTAE_RERANK_KEY_ENV",
       "environment variable holding the reranking service's API key, sent as a bearer token (empty: none)");
  flag("--rerank-timeout-ms", rs.timeout_ms, "KOTAE_RERANK_TIMEOUT_MS",
       "milliseconds one request to the reranking service may take; past it the rerank is skipped")
      ->check(CLI::Range(1L, 600000L));
  flag("--rerank-batch", rs.max_batch, "KOTAE_RERANK_BATCH",
       "passages per request to the reranking service; more are sent as several requests at once")
      ->check(CLI::Range(1, 10000));
  flag("--rerank-cool-down-ms", rs.cool_down_ms, "KOTAE_RERANK_COOL_DOWN_MS",
       "after 3 failed calls in a row the reranking service is skipped this long, then tried again")
      ->check(CLI::Range(0L, 3600000L));
  flag("--alias", o.models.aliases, "KOTAE_ALIAS",
       "NAME=MODEL: another model name the OpenAI- and TEI-style endpoints accept (repeatable), e.g. "
       "gpt-4o-mini=smollm2-135m-instruct");
  flag("--backend", b.order, "KOTAE_BACKEND",
       "answer back-ends in order: llama, openai, workers (answer workers through --queue), extractive");
  flag("--model", b.model, "KOTAE_MODEL", "installed GGUF model for the llama back-end (kotae model add)");
  flag("--chat-template", b.chat_template, "KOTAE_CHAT_TEMPLATE", "llama.cpp built-in chat template");
  flag("--context", b.context, "KOTAE_CONTEXT", "context tokens of each of the generator's slots");
  flag("--parallel", b.parallel, "KOTAE_PARALLEL",
       "questions the local model answers at once, continuously batched (0: as many as its KV cache budget allows, up "
       "to 8)")
      ->check(CLI::Range(0, 64));
  flag("--max-queued-generations", b.max_queued, "KOTAE_MAX_QUEUED_GENERATIONS",
       "questions waiting for one of the local model's slots; more are refused with 503 and Retry-After");
  flag("--threads", b.threads, "KOTAE_THREADS", "generation threads (0: all cores)");
  flag("--generation-niceness", b.niceness, "KOTAE_GENERATION_NICENESS",
       "added to the generation threads' nice value, so embeddings and searches go first on shared cores (0: as any "
       "thread)")
      ->check(CLI::Range(0, 19));
  flag("--gpu-layers", b.gpu_layers, "KOTAE_GPU_LAYERS",
       "generator layers on the GPU (-1: all, 0: none; needs scripts/setup --cuda)");
  flag("--openai-url", b.openai_url, "KOTAE_OPENAI_URL", "OpenAI-compatible server, up to /v1");
  flag("--openai-model", b.openai_model, "KOTAE_OPENAI_MODEL", "model name to send to that server");
  flag("--openai-key-env", serve.openai_key_env, "KOTAE_OPENAI_KEY_ENV", "environment variable holding its API key");
  flag("--shutdown-deadline", serve.shutdown_deadline_s, "KOTAE_SHUTDOWN_DEADLINE",
       "seconds in-flight requests and ingestion get at shutdown");
  cmd->add_flag("--allow-open", serve.allow_open, "listen beyond loopback without API keys")
      ->envname("KOTAE_ALLOW_OPEN");
  flag("--trusted-keys", serve.trusted_keys, "KOTAE_TRUSTED_KEYS",
       "public keys (.pub files or folders, ':'-separated) one of which must sign every model; also DATA/trusted_keys");
  // How the embedders and the reranker run (ONNX Runtime), and how their requests are batched.
  auto& session = o.models.encoder.session;
  flag("--providers", session.providers, "KOTAE_PROVIDERS",
       "ONNX Runtime execution providers in priority order (tensorrt, cuda, cpu); one that cannot load is skipped")
      ->delimiter(',')
      ->check(CLI::IsMember({"tensorrt", "cuda", "cpu"}));
  flag("--precision", serve.precision, "KOTAE_PRECISION",
       "the embedders' precision: auto (static INT8 where the CPU has VNNI, else FP32), fp32, int8, fp16 (GPUs)")
      ->check(CLI::IsMember({"auto", "fp32", "int8", "fp16"}));
  flag("--intra-op-threads", session.intra_op_threads, "KOTAE_INTRA_OP_THREADS",
       "threads each model run uses (0: one per core)")
      ->check(CLI::Range(0, 1024));
  flag("--graph-optimization", serve.graph_optimization, "KOTAE_GRAPH_OPTIMIZATION",
       "ONNX Runtime graph optimisation: none, basic, extended, all")
      ->check(CLI::IsMember({"none", "basic", "extended", "all"}));
  cmd->add_flag("--deterministic", session.deterministic,
                "deterministic kernels (the same bits run to run, a little slower)")
      ->envname("KOTAE_DETERMINISTIC");
  flag("--batch-window-us", serve.batch_window_us, "KOTAE_BATCH_WINDOW_US",
       "microseconds a model batch waits for more requests while they arrive faster than that")
      ->check(CLI::Range(0L, 1000000L));
  flag("--batch-max-items", o.models.batch.max_items, "KOTAE_BATCH_MAX_ITEMS", "requests in one model batch")
      ->check(CLI::Range(1, 4096));
  flag("--batch-max-tokens", o.models.batch.max_tokens, "KOTAE_BATCH_MAX_TOKENS", "tokens in one model batch")
      ->check(CLI::Range(1, 1 << 24));
  flag("--batch-max-queued", o.models.batch.max_queued, "KOTAE_BATCH_MAX_QUEUED",
       "requests waiting for a model; more are refused with 503")
      ->check(CLI::Range(1, 1 << 24));
}

Result<void> check_serve_settings(const ServeOptions& options) {
  KOTAE_TRY(oidc_options(options.oidc));
  KOTAE_TRY(sign_in_options(options.oidc));
  KOTAE_TRY(proxy_options(options.proxy, options.oidc));
  const auto& o = options.server;
  const auto& data = o.models.data_dir;
  KOTAE_TRY(assembly::require_installed_model(data, "--embedder", o.models.embedder, "embedding",
                                              "scripts/setup --model NAME installs one"));
  KOTAE_TRY(assembly::require_installed_model(data, "--rerank", o.models.reranker, "reranker",
                                              "scripts/setup --model NAME installs one"));
  KOTAE_TRY(assembly::require_installed_model(data, "--model", o.models.backends.model, "generator",
                                              "kotae model add FILE.gguf --name NAME installs one"));
  if (const auto& rerank_url = o.models.rerank_service.url; !rerank_url.empty()) {
    if (!o.models.reranker.empty()) {
      return make_error(ErrorCode::invalid_argument,
                        "--rerank " + o.models.reranker +
                            " and --rerank-url: give one (a local cross-encoder or a reranking service), not both");
    }
    const auto api =
        options.rerank_api.empty() ? rerank_api_from_url(rerank_url) : parse_rerank_api(options.rerank_api);
    if (!api) return api.error();
    auto probe = o.models.rerank_service;
    probe.url = rerank_url;
    if (auto checked = RerankServiceClient::create(probe); !checked) return checked.error();
  }
  const auto& url = o.models.backends.openai_url;
  if (!url.empty()) {
    const auto scheme_end = url.find("://");
    const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    if ((scheme != "http" && scheme != "https") || url.size() <= scheme_end + 3 || url[scheme_end + 3] == '/') {
      return make_error(ErrorCode::invalid_argument, "--openai-url " + url +
                                                         ": not an http:// or https:// URL with a host "
                                                         "(e.g. http://127.0.0.1:8080/v1)");
    }
  }
  if (!o.work_queue.empty()) {
    if (auto parsed = queue::parse_redis_url(o.work_queue); !parsed) {
      return make_error(ErrorCode::invalid_argument, "--queue " + o.work_queue + ": " + parsed.error().message);
    }
  }
  if (!o.api_keys_file.empty() && !std::ifstream(o.api_keys_file)) {
    return make_error(ErrorCode::invalid_argument, "--api-keys " + o.api_keys_file.string() + ": cannot be read");
  }
  return {};
}

int run_keygen(const KeygenOptions& options) {
  if (!server::valid_tenant(options.tenant)) {
    return report_error(make_error(ErrorCode::invalid_argument, "--tenant: letters, digits, '_' and '-'"));
  }
  const std::string key = random_id("kt_");
  nlohmann::json entry{{"name", options.name.empty() ? options.tenant : options.name},
                       {"tenant", options.tenant},
                       {"sha256", sha256_hex(key)}};
  if (options.admin) entry["admin"] = true;
  if (!server::role_named(options.role)) {
    return report_error(make_error(ErrorCode::invalid_argument, "--role: reader, editor, owner or admin"));
  }
  if (options.role != "admin") entry["role"] = options.role;
  if (options.rate > 0) {
    entry["rate_per_second"] = options.rate;
    entry["burst"] = options.burst > 0 ? options.burst : options.rate;
  }
  nlohmann::json quota = nlohmann::json::object();
  for (auto [field, value] : {std::pair{"queued_jobs", options.queued_jobs},
                              {"stored_bytes", options.stored_bytes},
                              {"documents", options.documents}}) {
    if (value > 0) quota[field] = value;
  }
  if (!quota.empty()) entry["quota"] = quota;
  const bool shared = store::is_postgres_url(options.store);
  if (!options.store.empty()) {
    auto stored = [&]() -> Result<void> {
      if (!shared) return KOTAE_TRY_VALUE(store::SqliteApiKeys::open(options.store))->put(entry);
      auto connection = KOTAE_TRY_VALUE(store::PgConnection::connect(options.store));
      KOTAE_TRY(store::migrate_postgres_schema(*connection));
      return store::PostgresApiKeys(std::make_shared<store::PgPool>(options.store, 1)).put(entry);
    }();
    if (!stored) return report_error(stored.error());
  }
  std::printf("%s\n", nlohmann::json{{"key", key}, {"entry", entry}}.dump(2).c_str());
  if (shared) {
    std::fprintf(stderr,
                 "kotae: give the key to its user; it is stored (as its hash) in PostgreSQL, and every replica "
                 "knows it within a second\n");
  } else if (!options.store.empty()) {
    std::fprintf(stderr,
                 "kotae: give the key to its user; it is stored (as its hash) in %s, and a server on that folder "
                 "knows it within a second\n",
                 store::server_database_file(options.store).string().c_str());
  } else {
    std::fprintf(stderr,
                 "kotae: give the key to its user; add the entry to the \"keys\" list of the --api-keys file "
                 "(the server stores only its hash), or run this with --store to store it\n");
  }
  return 0;
}

int run_serve(ServeOptions options) {
  if (auto checked = check_serve_settings(options); !checked) return report_error(checked.error());
  auto& encoder = options.server.models.encoder;
  if (options.precision == "fp16") {
    encoder.precision = EncoderOptions::Precision::fp16;
  } else if (options.precision != "auto") {
    ::setenv("KOTAE_PRECISION", options.precision.c_str(), 1);  // load_best_encoder's choice (model/encoder_loading.h)
  }
  const std::map<std::string, GraphOptimization> levels{{"none", GraphOptimization::none},
                                                        {"basic", GraphOptimization::basic},
                                                        {"extended", GraphOptimization::extended},
                                                        {"all", GraphOptimization::all}};
  encoder.session.optimization = levels.at(options.graph_optimization);
  options.server.models.batch.window = std::chrono::microseconds(options.batch_window_us);
  options.server.oidc = oidc_options(options.oidc).value();  // checked above
  options.server.sign_in = sign_in_options(options.oidc).value();
  options.server.proxy = proxy_options(options.proxy, options.oidc).value();
  auto& http = options.server.http;
  if (!is_loopback(http.host) && !options.allow_open && options.server.api_keys_file.empty() && !options.server.oidc &&
      !options.server.proxy) {
    return report_error(make_error(ErrorCode::invalid_argument,
                                   "listening on " + http.host +
                                       " would serve anyone who can reach it: give API keys "
                                       "(--api-keys FILE), or pass --allow-open to serve an open API on purpose"));
  }
  if (const char* key = std::getenv(options.openai_key_env.c_str()))
    options.server.models.backends.openai_api_key = key;
  if (auto& rs = options.server.models.rerank_service; !rs.url.empty()) {
    rs.api = (options.rerank_api.empty() ? rerank_api_from_url(rs.url) : parse_rerank_api(options.rerank_api)).value();
    if (!options.rerank_key_env.empty()) {
      const char* key = std::getenv(options.rerank_key_env.c_str());
      if (!key || !*key) {
        return report_error(make_error(ErrorCode::invalid_argument,
                                       "--rerank-key-env " + options.rerank_key_env + ": the variable is not set"));
      }
      rs.api_key = key;
    }
  }
  // The model loaders read the trusted keys where every command does (model/model_integrity.h); a flag
  // or config file value joins them through the same variable, set before any thread starts.
  if (!options.trusted_keys.empty()) ::setenv("KOTAE_TRUSTED_KEYS", options.trusted_keys.c_str(), 1);
  const auto key_ids = assembly::trusted_key_ids(options.server.models.data_dir);
  if (!key_ids) return report_error(key_ids.error());

  // Signals are taken by sigwait below, so every thread the server starts must have them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  options.server.cache.ttl = std::chrono::seconds(static_cast<long long>(options.server.cache_ttl_s));
  auto& workers = options.server.answer_workers;
  workers.wait = std::chrono::milliseconds(static_cast<long long>(options.answer_wait_s * 1000));
  workers.silence = std::chrono::milliseconds(static_cast<long long>(options.answer_silence_s * 1000));
  auto server = server::KotaeServer::start(options.server);
  if (!server) return report_error(server.error());
  log_lifecycle("listening", {{"host", http.host}, {"port", (*server)->port()}});
  log_event("model_integrity", {{"signatures_required", !key_ids->empty()}, {"trusted_keys", *key_ids}});
  if (auto ready = (*server)->wait_until_ready(); !ready) {
    (*server)->shutdown(std::chrono::milliseconds(0));
    return report_error(ready.error());
  }
  log_lifecycle("ready", {{"port", (*server)->port()}});
  notify_service_manager("READY=1\nSTATUS=serving on port " + std::to_string((*server)->port()));

  int signal = 0;
  for (sigwait(&signals, &signal); signal == SIGHUP; sigwait(&signals, &signal)) {  // reload: the keys again
    auto reloaded = (*server)->reload_keys();
    if (reloaded)
      log_lifecycle("api_keys_reloaded", {{"file", options.server.api_keys_file.string()}});
    else
      log_event("api_keys_not_reloaded", {{"reason", reloaded.error().message}}, LogLevel::error);
  }
  notify_service_manager("STOPPING=1");
  log_lifecycle("shutting_down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  if (!(*server)->shutdown(std::chrono::milliseconds(static_cast<long long>(options.shutdown_deadline_s * 1000)))) {
    // Ingestion did not stop in time. Every commit is whole and every job's record says where it was:
    // leaving now is as safe as a crash, and the next start resumes the jobs.
    log_lifecycle("stopped", {{"ingestion", "interrupted; its jobs resume at the next start"}});
    std::fflush(nullptr);
    std::_Exit(0);
  }
  log_lifecycle("stopped", nlohmann::json::object());
  return 0;
}

}  // namespace kotae::app
