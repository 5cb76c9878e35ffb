#pragma once
// What a worker process answers on its status port (kotae worker --listen), for probes and Prometheus:
//   GET /healthz  the process answers
//   GET /readyz   200 while it reaches what it needs (Redis; PostgreSQL for ingestion), 503 while it cannot
//   GET /metrics  its work by outcome (files, or answers), and the queue's figures

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http_server.h"

namespace kotae::server {

// Listens on HOST:PORT until destroyed; `ready` says whether the worker reaches what it needs, and
// `metrics` gives the Prometheus text (the worker's figures, then the queue's).
Result<std::unique_ptr<HttpServer>> serve_status(const std::string& host, unsigned short port,
                                                 std::function<bool()> ready, std::function<std::string()> metrics);

}  // namespace kotae::server
