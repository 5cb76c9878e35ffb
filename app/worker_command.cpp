#include "app/worker_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <future>

#include "assembly/answering.h"
#include "assembly/model_pool.h"
#include "cli/report_error.h"
#include "core/log.h"
#include "queue/queue_metrics.h"
#include "server/status_endpoints.h"
#include "store/postgres_connection.h"
#include "worker/worker_metrics.h"

namespace kotae::app {

using cli::report_error;

namespace {

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
  auto* cmd = app.add_subcommand("worker",
                                 "ingest what the API replicas queued (needs --store postgres://… and --queue), "
                                 "or with --answers generate the answers they queued");
  auto flag = [&](const char* name, auto& value, const char* env, const char* help) {
    return cmd->add_option(name, value, help)->envname(env)->capture_default_str();
  };
  flag("--queue", o.ingest.queue_url, "KOTAE_QUEUE",
       "Redis work queue: redis://[:PASSWORD@]HOST[:PORT][/DB] or unix:///SOCKET")
      ->required();
  cmd->add_flag("--answers", o.answers, "generate answers (with --model) instead of ingesting files")
      ->envname("KOTAE_WORKER_ANSWERS");
  flag("--concurrency", o.ingest.concurrency, "KOTAE_WORKER_CONCURRENCY",
       "files indexed at once (an answer worker generates one answer at a time)")
      ->check(CLI::Range(1, 256));
  flag("--listen", o.listen, "KOTAE_WORKER_LISTEN", "HOST:PORT for /healthz, /readyz and /metrics (empty: none)");
  flag("--embedder", o.embedder, "KOTAE_EMBEDDER", "embedding model loaded at start (others as collections need them)");
  flag("--claim-idle", o.claim_idle_s, "KOTAE_QUEUE_CLAIM_IDLE",
       "seconds an entry's worker may be silent before another claims it, doubled for each attempt made (0: 60 for "
       "files, 10 for answers)")
      ->check(CLI::Range(0.0, 86400.0));
  flag("--max-attempts", o.ingest.queue.max_attempts, "KOTAE_QUEUE_MAX_ATTEMPTS",
       "attempts at a file before it goes to the dead-letter stream")
      ->check(CLI::Range(1, 100));
  flag("--ocr-languages", o.ingest.ocr_languages, "KOTAE_OCR_LANGUAGES",
       "Tesseract languages for scanned PDF pages and images, joined by '+' (eng+deu); \"\" for no OCR");
  flag("--seconds-per-file", o.ingest.max_seconds_per_file, "KOTAE_INGEST_SECONDS_PER_FILE",
       "an attempt still loading or embedding after this long fails and is retried (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0));
  auto& g = o.generator;
  flag("--model", g.model, "KOTAE_MODEL", "with --answers: the installed GGUF model that generates (kotae model add)");
  flag("--chat-template", g.chat_template, "KOTAE_CHAT_TEMPLATE", "with --answers: a llama.cpp built-in chat template");
  flag("--context", g.context, "KOTAE_CONTEXT", "with --answers: context tokens of the model");
  flag("--threads", g.threads, "KOTAE_THREADS", "with --answers: generation threads (0: all cores)");
  flag("--gpu-layers", g.gpu_layers, "KOTAE_GPU_LAYERS", "with --answers: layers on the GPU (-1: all, 0: none)");
  flag("--shutdown-deadline", o.shutdown_deadline_s, "KOTAE_SHUTDOWN_DEADLINE",
       "seconds the work in hand gets to finish at shutdown (then it is left to other workers)");
  return cmd;
}

namespace {

// Serves the status endpoints when --listen asks for them; null (and no error) when it does not.
Result<std::unique_ptr<server::HttpServer>> status_endpoints(const std::string& listen, std::function<bool()> ready,
                                                             std::function<std::string()> metrics) {
  if (listen.empty()) return std::unique_ptr<server::HttpServer>();
  auto where = KOTAE_TRY_VALUE(host_and_port(listen));
  auto started = KOTAE_TRY_VALUE(server::serve_status(where.first, where.second, std::move(ready), std::move(metrics)));
  log_lifecycle("listening", {{"host", where.first}, {"port", started->port()}});
  return started;
}

// Until SIGTERM or SIGINT; then `stop` gets the shutdown deadline, after which the process leaves anyway.
int run_until_signalled(const sigset_t& signals, double deadline_s, const std::function<void()>& stop) {
  int signal = 0;
  sigwait(&signals, &signal);
  log_lifecycle("shutting_down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  auto stopped = std::async(std::launch::async, stop);
  const auto deadline = std::chrono::milliseconds(static_cast<long long>(deadline_s * 1000));
  if (stopped.wait_for(deadline) != std::future_status::ready) {
    // Work still in hand: its entry stays pending and another worker claims it. Every commit is whole,
    // and an answer's replica hears of it, so leaving now is as safe as a crash.
    log_lifecycle("stopped", {{"work", "interrupted; other workers take it"}});
    std::fflush(nullptr);
    std::_Exit(0);
  }
  log_lifecycle("stopped", nlohmann::json::object());
  return 0;
}

int run_answer_worker(WorkerOptions& options, const sigset_t& signals) {
  worker::AnswerWorkerOptions answers;
  answers.queue_url = options.ingest.queue_url;
  answers.consumer = options.ingest.consumer;
  if (options.claim_idle_s > 0) {
    answers.queue.claim_idle = std::chrono::milliseconds(static_cast<long long>(options.claim_idle_s * 1000));
  }
  auto reachable = queue::RedisConnection::connect(answers.queue_url);
  if (!reachable) return report_error(reachable.error());
  if (options.generator.model.empty()) {
    return report_error(
        make_error(ErrorCode::invalid_argument, "an answer worker needs a model: --model NAME (KOTAE_MODEL)"));
  }
  options.generator.order = {"llama"};
  auto generating = assembly::assemble_generator(options.generator, options.where.data_dir);
  if (!generating) return report_error(generating.error());
  Generator* model = generating->generator;
  worker::AnswerWorker worker(answers, *model);

  auto queues = std::make_shared<queue::WorkQueuePool>(answers.queue_url, answers.queue);
  auto status = status_endpoints(
      options.listen, [&worker] { return worker.ready(); },
      [&worker, queues] {
        auto figures = queues->stats();
        return worker::answer_metrics_text(worker) +
               (figures ? queue::queue_metrics_text({{queues->options().name, std::move(*figures)}}) : "");
      });
  if (!status) return report_error(status.error());
  log_lifecycle("worker_started", {{"consumer", answers.consumer},
                                   {"answers", model->id()},
                                   {"queue", queue::redacted_redis_url(answers.queue_url)}});
  return run_until_signalled(signals, options.shutdown_deadline_s, [&worker] { worker.stop(); });
}

int run_ingest_worker(WorkerOptions& options, const sigset_t& signals) {
  if (!store::is_postgres_url(options.where.store)) {
    return report_error(
        make_error(ErrorCode::invalid_argument,
                   "a worker needs the shared store: --store postgres://… (KOTAE_STORE), as the API replicas use"));
  }
  if (options.claim_idle_s > 0) {
    options.ingest.queue.claim_idle = std::chrono::milliseconds(static_cast<long long>(options.claim_idle_s * 1000));
  }
  auto catalog = store::Catalog::open(options.where);
  if (!catalog) return report_error(catalog.error());
  auto reachable = queue::RedisConnection::connect(options.ingest.queue_url);
  if (!reachable) return report_error(reachable.error());
  assembly::ModelPoolOptions models;
  models.data_dir = options.where.data_dir;
  models.backends.data_dir = options.where.data_dir;
  models.backends.order = {"extractive"};  // an ingestion worker generates nothing
  models.embedder = options.embedder;
  auto pool = assembly::ModelPool::load(models);
  if (!pool) return report_error(pool.error());
  assembly::CollectionRegistry collections(**catalog, **pool);
  auto queues = std::make_shared<queue::WorkQueuePool>(options.ingest.queue_url, options.ingest.queue);
  jobs::QueuedJobs jobs(std::make_shared<store::PgPool>((*catalog)->url()), queues);
  worker::IngestWorker worker(options.ingest, collections, jobs);

  // Ready while the threads reach Redis and a round trip to PostgreSQL succeeds now.
  auto ready = [&worker, &jobs] { return worker.ready() && jobs.store_reachable(); };
  auto status = status_endpoints(options.listen, ready, [&worker, &jobs] {
    auto figures = jobs.stats();
    return worker::ingest_metrics_text(worker) +
           (figures ? queue::queue_metrics_text({{jobs.queue_name(), std::move(*figures)}}) : "");
  });
  if (!status) return report_error(status.error());
  log_lifecycle("worker_started", {{"consumer", options.ingest.consumer},
                                   {"concurrency", options.ingest.concurrency},
                                   {"store", (*catalog)->description()},
                                   {"queue", queue::redacted_redis_url(options.ingest.queue_url)}});
  return run_until_signalled(signals, options.shutdown_deadline_s, [&worker] { worker.stop(); });
}

}  // namespace

int run_worker(WorkerOptions options) {
  if (options.ingest.consumer.empty()) options.ingest.consumer = this_process();
  // Signals are taken by sigwait, so every thread started here must have them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return options.answers ? run_answer_worker(options, signals) : run_ingest_worker(options, signals);
}

}  // namespace kotae::app
