#pragma once
// What a worker process answers on its status port (--listen), for probes and Prometheus:
//   GET /healthz  the process answers
//   GET /readyz   200 once it reaches Redis, 503 while it cannot
//   GET /metrics  its files by outcome, retries, dead letters, chunks, and the queue's figures

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http_server.h"
#include "worker/ingest_worker.h"

namespace kotae::worker {

// Listens on HOST:PORT until destroyed; `queue_metrics` gives the queue's figures as text ("" when
// Redis is out of reach).
Result<std::unique_ptr<server::HttpServer>> serve_status(const std::string& host, unsigned short port,
                                                         const IngestWorker& worker,
                                                         std::function<std::string()> queue_metrics);

std::string worker_metrics_text(const WorkerCounters& counters);

}  // namespace kotae::worker
