#pragma once
// What a worker process answers on its status port (--listen), for probes and Prometheus:
//   GET /healthz  the process answers
//   GET /readyz   200 while it reaches Redis and PostgreSQL, 503 while it cannot
//   GET /metrics  its files by outcome, retries, dead letters, chunks, and the queue's figures

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http_server.h"
#include "worker/ingest_worker.h"

namespace kotae::worker {

// Listens on HOST:PORT until destroyed; `ready` says whether the worker reaches what it needs, and
// `queue_metrics` gives the queue's figures as text ("" when Redis is out of reach).
Result<std::unique_ptr<server::HttpServer>> serve_status(const std::string& host, unsigned short port,
                                                         const IngestWorker& worker, std::function<bool()> ready,
                                                         std::function<std::string()> queue_metrics);

std::string worker_metrics_text(const WorkerCounters& counters);

}  // namespace kotae::worker
