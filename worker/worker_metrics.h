#pragma once
// A worker process's figures for Prometheus (GET /metrics on its status port: server/status_endpoints.h).

#include <string>

#include "worker/ingest_worker.h"

namespace kotae::worker {

std::string ingest_metrics_text(const IngestWorker& worker);

}  // namespace kotae::worker
