#include "worker/worker_status.h"

#include "queue/queue_metrics.h"

namespace kotae::worker {

std::string ingest_metrics_text(const IngestWorker& worker) {
  const WorkerCounters& c = worker.counters();
  std::string out;
  queue::append_metric_header(out, "kotae_worker_files_total", "counter", "Files this worker finished, by outcome.");
  for (const auto& [outcome, value] :
       {std::pair{"indexed", &c.indexed}, {"unchanged", &c.unchanged}, {"failed", &c.failed}}) {
    out += "kotae_worker_files_total{outcome=\"";
    out += outcome;
    out += "\"} " + std::to_string(value->load()) + "\n";
  }
  auto one = [&](const char* name, const char* type, const char* help, std::uint64_t value) {
    queue::append_metric_header(out, name, type, help);
    out += name;
    out += ' ' + std::to_string(value) + '\n';
  };
  one("kotae_worker_retries_total", "counter", "Attempts that failed and wait for another.", c.retried.load());
  one("kotae_worker_dead_letters_total", "counter", "Entries this worker gave up and sent to the dead-letter stream.",
      c.dead_lettered.load());
  one("kotae_worker_chunks_total", "counter", "Chunks this worker stored.", c.chunks.load());
  one("kotae_worker_busy", "gauge", "Files being indexed now.", worker.busy());
  return out;
}

Result<std::unique_ptr<server::HttpServer>> serve_status(const std::string& host, unsigned short port,
                                                         std::function<bool()> ready,
                                                         std::function<std::string()> metrics) {
  server::HttpServerOptions http;
  http.host = host;
  http.port = port;
  http.io_threads = 1;
  http.max_body_bytes = 0;
  http.max_connections = 64;
  auto handle = [ready = std::move(ready), metrics = std::move(metrics)](server::HttpRequest request,
                                                                         std::shared_ptr<server::Responder> responder) {
    server::HttpResponse response;
    response.content_type = "text/plain; charset=utf-8";
    if (request.method != "GET") {
      response.status = 405;
      response.body = "GET only\n";
    } else if (request.path == "/healthz") {
      response.body = "ok\n";
    } else if (request.path == "/readyz") {
      const bool now = ready();
      response.status = now ? 200 : 503;
      response.body = now ? "ready\n" : "cannot reach what it needs (the queue; the store)\n";
    } else if (request.path == "/metrics") {
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = metrics();
    } else {
      response.status = 404;
      response.body = "not found: /healthz, /readyz, /metrics\n";
    }
    responder->send(std::move(response));
  };
  return server::HttpServer::start(http, std::move(handle));
}

}  // namespace kotae::worker
