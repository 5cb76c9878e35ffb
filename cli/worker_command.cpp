#include "cli/worker_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <future>

#include "cli/collection_access.h"
#include "queue/queue_metrics.h"
#include "server/json_log.h"
#include "server/model_pool.h"
#include "store/postgres_connection.h"
#include "worker/worker_status.h"

namespace kotae::cli {

namespace {

using server::log_event;

std::string this_process() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(::getpid());
}

Result<std::pair<std::string, unsigned short>> host_and_port(const std::string& listen) {
  const auto colon = listen.rfind(':');
  try {
    if (colon != std::string::npos) {
      const int port = std::stoi(listen.substr(colon + 1));
      if (port >= 0 && port <= 65535) return std::pair{listen.substr(0, colon), static_cast<unsigned short>(port)};
    }
  } catch (...) {
  }
  return make_error(ErrorCode::invalid_argument, "--listen wants HOST:PORT, got '" + listen + "'");
}

}  // namespace

CLI::App* add_worker_command(CLI::App& app, WorkerOptions& o) {
  auto* cmd = app.add_subcommand("worker", "ingest what the API replicas queued (needs --store postgres://… and --queue)");
  auto flag = [&](const char* name, auto& value, const char* env, const char* help) {
    return cmd->add_option(name, value, help)->envname(env)->capture_default_str();
  };
  flag("--queue", o.ingest.queue_url, "KOTAE_QUEUE", "Redis work queue: redis://[:PASSWORD@]HOST[:PORT][/DB] or unix:///SOCKET")
      ->required();
  flag("--concurrency", o.ingest.concurrency, "KOTAE_WORKER_CONCURRENCY", "files indexed at once")->check(CLI::Range(1, 256));
  flag("--listen", o.listen, "KOTAE_WORKER_LISTEN", "HOST:PORT for /healthz, /readyz and /metrics (empty: none)");
  flag("--embedder", o.embedder, "KOTAE_EMBEDDER", "embedding model loaded at start (others as collections need them)");
  flag("--claim-idle", o.claim_idle_s, "KOTAE_QUEUE_CLAIM_IDLE",
       "seconds an entry's worker may be silent before another claims it (doubled for each attempt made)")
      ->check(CLI::Range(0.05, 86400.0));
  flag("--max-attempts", o.ingest.queue.max_attempts, "KOTAE_QUEUE_MAX_ATTEMPTS",
       "attempts at a file before it goes to the dead-letter stream")->check(CLI::Range(1, 100));
  flag("--seconds-per-file", o.ingest.max_seconds_per_file, "KOTAE_INGEST_SECONDS_PER_FILE",
       "an attempt still loading or embedding after this long fails and is retried (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0));
  flag("--shutdown-deadline", o.shutdown_deadline_s, "KOTAE_SHUTDOWN_DEADLINE",
       "seconds the files being indexed get to finish at shutdown (then they are left to other workers)");
  return cmd;
}

int run_worker(WorkerOptions options) {
  if (!store::is_postgres_url(options.where.store)) {
    return report_error(make_error(ErrorCode::invalid_argument,
                                   "a worker needs the shared store: --store postgres://… (KOTAE_STORE), as the API replicas use"));
  }
  options.ingest.queue.claim_idle = std::chrono::milliseconds(static_cast<long long>(options.claim_idle_s * 1000));
  if (options.ingest.consumer.empty()) options.ingest.consumer = this_process();

  // Signals are taken by sigwait below, so every thread started here must have them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto catalog = store::Catalog::open(options.where);
  if (!catalog) return report_error(catalog.error());
  auto reachable = queue::RedisConnection::connect(options.ingest.queue_url);
  if (!reachable) return report_error(reachable.error());
  server::ModelPoolOptions models;
  models.data_dir = options.where.data_dir;
  models.backends.data_dir = options.where.data_dir;
  models.backends.order = {"extractive"};  // a worker generates nothing
  models.embedder = options.embedder;
  auto pool = server::ModelPool::load(models);
  if (!pool) return report_error(pool.error());
  server::CollectionRegistry collections(**catalog, **pool);
  auto queues = std::make_shared<queue::WorkQueuePool>(options.ingest.queue_url, options.ingest.queue);
  auto store_pool = std::make_shared<store::PgPool>((*catalog)->url());
  server::QueuedJobs jobs(store_pool, queues);
  worker::IngestWorker worker(options.ingest, collections, jobs);

  std::unique_ptr<server::HttpServer> status;
  if (!options.listen.empty()) {
    auto where = host_and_port(options.listen);
    if (!where) return report_error(where.error());
    // Ready while the threads reach Redis and a round trip to PostgreSQL succeeds now.
    auto ready = [&worker, store_pool] {
      if (!worker.ready()) return false;
      auto lease = store_pool->acquire(std::chrono::milliseconds(500));
      return lease && (*lease)->query("SELECT 1::bigint").ok();
    };
    auto started = worker::serve_status(where->first, where->second, worker, ready, [&jobs] {
      auto figures = jobs.stats();
      return figures ? queue::queue_metrics_text(jobs.queue_name(), *figures) : std::string();
    });
    if (!started) return report_error(started.error());
    status = std::move(*started);
    log_event("listening", {{"host", where->first}, {"port", status->port()}});
  }
  log_event("worker_started", {{"consumer", options.ingest.consumer}, {"concurrency", options.ingest.concurrency},
                               {"store", (*catalog)->description()},
                               {"queue", queue::redacted_redis_url(options.ingest.queue_url)}});

  int signal = 0;
  sigwait(&signals, &signal);
  log_event("shutting_down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  auto stopped = std::async(std::launch::async, [&worker] { worker.stop(); });
  const auto deadline = std::chrono::milliseconds(static_cast<long long>(options.shutdown_deadline_s * 1000));
  if (stopped.wait_for(deadline) != std::future_status::ready) {
    // A file still being indexed: its entry stays pending and another worker claims it. Every commit
    // is whole, so leaving now is as safe as a crash.
    log_event("stopped", {{"ingestion", "interrupted; other workers take its files"}});
    std::fflush(nullptr);
    std::_Exit(0);
  }
  log_event("stopped", nlohmann::json::object());
  return 0;
}

}  // namespace kotae::cli
